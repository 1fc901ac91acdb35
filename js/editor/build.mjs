// Builds src/index.js and its CodeMirror dependencies into one minified ES module,
// adlab/lab/static/editor.js, which is committed: the Lab then works offline and
// installing adlab needs no npm. Run `npm ci && npm run build` after changing
// src/ or the pinned versions; tests/test_lab_editor.py checks that the bundle's
// first line carries the hash of the sources it was built from.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const static_ = join(here, "..", "..", "adlab", "lab", "static");
const out = join(static_, "editor.js");
const licenses = join(static_, "editor.LICENSES.txt");
// the same files, in the same order, as SOURCES in tests/test_lab_editor.py
const sources = ["package.json", "package-lock.json", "src/index.js"];

const hash = createHash("sha256");
for (const name of sources) {
  hash.update(name + "\0");
  hash.update(readFileSync(join(here, name)));
}
const result = await build({
  entryPoints: [join(here, "src", "index.js")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  legalComments: "none",
  write: false,
  metafile: true,
});
const header = `// adlab model editor (CodeMirror 6, MIT): built by js/editor/build.mjs; sources sha256 ${hash.digest("hex")}\n`;
writeFileSync(out, header + result.outputFiles[0].text);

// CodeMirror and Lezer are MIT-licensed: their notices travel with the bundle.
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) packages.add(m[1]);
}
const notices = [...packages].sort().map((name) => {
  const dir = join(here, "node_modules", name);
  const { version, license } = JSON.parse(readFileSync(join(dir, "package.json")));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  const text = file ? readFileSync(join(dir, file), "utf8").trim() : `${license} (no license file shipped)`;
  return `${name} ${version}\n\n${text}\n`;
});
writeFileSync(licenses, "Third-party code in editor.js\n\n" + notices.join("\n" + "-".repeat(72) + "\n\n"));
console.log(`wrote ${out} and ${licenses} (${packages.size} packages)`);
