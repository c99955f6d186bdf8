// Checks that updater signatures (.sig files from `tauri signer sign` / the bundler) were made by
// the key whose public half the app ships (plugins.updater.pubkey): a .sig from another key would
// make every update fail the app's check. Both are minisign files, base64-encoded by Tauri, whose
// key id is in clear: bytes 2..10 (little-endian) of the signature and of the public key.
//
//   node packaging/check-updater-key.js tauri.conf.json FILE.sig...
// Exits 1 naming each mismatched file, 2 on unreadable input.
"use strict";
const fs = require("fs");

function keyId(b64, what) {
  const text = Buffer.from(String(b64).trim(), "base64").toString("utf8");
  const line = text.split("\n").find((l) => l && !l.startsWith("untrusted comment:"));
  const raw = line && Buffer.from(line.trim(), "base64");
  if (!raw || raw.length < 10) throw new Error(`${what} is not a minisign key or signature`);
  return Buffer.from(raw.subarray(2, 10)).reverse().toString("hex").toUpperCase();
}

try {
  const [confPath, ...sigs] = process.argv.slice(2);
  const conf = JSON.parse(fs.readFileSync(confPath, "utf8"));
  const want = keyId(conf?.plugins?.updater?.pubkey ?? "", `${confPath} plugins.updater.pubkey`);
  let bad = 0;
  for (const sig of sigs) {
    const got = keyId(fs.readFileSync(sig, "utf8"), sig);
    if (got !== want) {
      console.error(
        `${sig} is signed by key ${got}, but ${confPath} plugins.updater.pubkey is key ${want}: ` +
          "the app would refuse this update (put your release key's public half in the config)",
      );
      bad = 1;
    }
  }
  process.exit(bad);
} catch (e) {
  console.error(`check-updater-key: ${e.message}`);
  process.exit(2);
}
