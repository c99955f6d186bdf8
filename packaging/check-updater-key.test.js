// node --test packaging/: check-updater-key.js accepts a signature made by the configured key and
// refuses one made by another (the checked-in placeholder), naming both key ids. The fixtures are
// a throwaway key's public half and a signature made with it; the private half was discarded.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const here = __dirname;
const sig = path.join(here, "fixtures", "artifact.tar.gz.sig");
const run = (conf, ...files) =>
  spawnSync(process.execPath, [path.join(here, "check-updater-key.js"), conf, ...files], {
    encoding: "utf8",
  });
const confWith = (pubkey) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "updater-key-"));
  const file = path.join(dir, "tauri.conf.json");
  fs.writeFileSync(file, JSON.stringify({ plugins: { updater: { pubkey } } }));
  return file;
};

test("a signature by the configured key passes", () => {
  const pubkey = fs.readFileSync(path.join(here, "fixtures", "throwaway.pub"), "utf8");
  const r = run(confWith(pubkey), sig);
  assert.equal(r.status, 0, r.stderr);
});

test("a signature by another key than the shipped one is refused with both key ids", () => {
  const r = run(path.join(here, "..", "tauri.conf.json"), sig);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /signed by key 6E89D017E459BCDA, but .* is key 2AFAFD5ACEAFAAEC/);
});

test("a config without an updater key is an error, not a pass", () => {
  const r = run(confWith(""), sig);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /plugins\.updater\.pubkey is not a minisign key/);
});
