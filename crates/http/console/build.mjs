// Builds the console into dist/: one JavaScript bundle, one stylesheet and index.html, which
// the roomlink binary embeds (crates/http/src/routes/console.rs). Also writes
// dist/sources.sha256, the digest of everything the output is built from; a Rust test
// recomputes it, so committed assets that no longer match their sources fail `cargo test`.
//
// The digest: SHA-256 over, for each input file in byte order of its path relative to this
// directory, `path\n<length>\n<bytes>`.

import * as esbuild from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

const here = new URL(".", import.meta.url).pathname;
const dist = join(here, "dist");

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

export function inputs() {
  return [
    ...files(join(here, "src")),
    join(here, "package.json"),
    join(here, "package-lock.json"),
    join(here, "build.mjs"),
    join(here, "tsconfig.json"),
  ].map((p) => relative(here, p).split("\\").join("/")).sort();
}

export function digest() {
  const hash = createHash("sha256");
  for (const path of inputs()) {
    const bytes = readFileSync(join(here, path));
    hash.update(`${path}\n${bytes.length}\n`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "assets"), { recursive: true });
const version = digest();

await esbuild.build({
  entryPoints: [join(here, "src/main.ts")],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  outfile: join(dist, "assets/app.js"),
  legalComments: "eof",
  // The bundled library's notice, which its source carries as a plain comment (minified away).
  banner: {
    js: "/*! roomlink console. Includes qrcode-generator: Copyright (c) 2009 Kazuhiko Arase, " +
      "MIT license (http://www.opensource.org/licenses/mit-license.php). */",
  },
  logLevel: "warning",
});
await esbuild.build({
  entryPoints: [join(here, "src/style.css")],
  bundle: true,
  minify: true,
  outfile: join(dist, "assets/app.css"),
  logLevel: "warning",
});
const short = version.slice(0, 12);
const index = readFileSync(join(here, "src/index.html"), "utf8")
  .replace("APP_CSS", `app.css?v=${short}`)
  .replace("APP_JS", `app.js?v=${short}`);
writeFileSync(join(dist, "index.html"), index);
writeFileSync(join(dist, "sources.sha256"), `${version}\n`);
console.log(`console: built dist/ (sources ${short})`);
