// Bundles the web client (src/app.js and what it imports) into dist/app.js, the file the
// weft binary embeds (app-server/src/web/assets.rs):
//
//   node web/build.mjs           write dist/app.js
//   node web/build.mjs --check   fail unless dist/app.js is what the source builds to
//
// The dependencies come from web/package-lock.json (`npm ci --ignore-scripts` in web/, as
// tests/install.sh does). The output is minified; the licenses of what it bundles stay at its
// end.

import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, "dist", "app.js");

const result = await build({
  entryPoints: [path.join(here, "src", "app.js")],
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "eof",
  charset: "utf8",
  write: false,
  absWorkingDir: here,
});
const built = result.outputFiles[0].contents;

if (process.argv.includes("--check")) {
  const embedded = await readFile(out).catch(() => Buffer.alloc(0));
  if (!Buffer.from(built).equals(embedded)) {
    console.error("web/dist/app.js is not what web/src builds to: run `node web/build.mjs`");
    process.exit(1);
  }
  console.log("web/dist/app.js matches web/src");
} else {
  await writeFile(out, built);
  console.log(`wrote ${path.relative(process.cwd(), out)} (${built.length} bytes)`);
}
