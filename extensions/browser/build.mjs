// Builds the unpacked extension into dist/: the static files (manifest, locales, popup page,
// icons), the service worker and the popup bundled from TypeScript, and the in-page agent
// (crates/suzent-browser/js/agent.js, the same file the Rust backends embed). `cargo build` of
// suzent-server packs dist/ into the ZIP the app ships.
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
const agent = join(here, "..", "..", "crates", "suzent-browser", "js", "agent.js");

if (!existsSync(agent)) {
  console.error(`the in-page agent is missing: ${agent}`);
  process.exit(1);
}
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
cpSync(join(here, "static"), dist, { recursive: true });

const common = { bundle: true, target: "chrome120", legalComments: "none", logLevel: "warning" };
await build({ ...common, entryPoints: [join(here, "src", "background.ts")], outfile: join(dist, "background.js"), format: "esm" });
await build({ ...common, entryPoints: [join(here, "src", "popup.ts")], outfile: join(dist, "popup.js"), format: "iife" });
// A classic script for chrome.scripting.executeScript({files}) in the content-script world.
await build({ ...common, entryPoints: [agent], outfile: join(dist, "agent.js"), format: "iife" });
console.log(`built ${dist}`);
