// Builds src/index.js -- TensorFlow.js core with its gradients, the cpu, wasm and webgl
// backends, and the wasm binaries as base64 -- into one minified file for Node and the
// browser, adlab/engine/backends/tfjs/static/tfjs.min.js, which is committed: installing
// adlab needs no npm and the page loads it offline. It defines `tf` (a classic script's
// global; `module.exports` where there is a module). Run `npm ci && npm run build` after
// changing src/ or the pinned versions; tests/engine/test_backend_tfjs.py checks that the
// bundle's first line carries the hash of the sources it was built from.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const static_ = join(here, "..", "..", "adlab", "engine", "backends", "tfjs", "static");
const out = join(static_, "tfjs.min.js");
const licenses = join(static_, "tfjs.LICENSES.txt");
// the same files, in the same order, as SOURCES in tests/engine/test_backend_tfjs.py
const sources = ["package.json", "package-lock.json", "src/index.js", "src/util.js"];

// Node's `util`, which the packages map to nothing in a browser build, from src/util.js;
// node-fetch is the fetch Node and browsers have built in
const nodeUtil = {
  name: "node-util",
  setup(b) {
    b.onResolve({ filter: /^util$/ }, () => ({ path: join(here, "src", "util.js") }));
    b.onResolve({ filter: /^node-fetch$/ }, () => ({ path: "fetch", namespace: "global" }));
    b.onLoad({ filter: /.*/, namespace: "global" }, () => ({
      contents: "module.exports = (...a) => globalThis.fetch(...a);",
    }));
  },
};

const hash = createHash("sha256");
for (const name of sources) {
  hash.update(name + "\0");
  hash.update(readFileSync(join(here, name)));
}
const result = await build({
  entryPoints: [join(here, "src", "index.js")],
  bundle: true,
  format: "iife",
  globalName: "tf",
  platform: "browser", // Node's modules (fs, util, worker_threads) left out, as the packages ask
  loader: { ".wasm": "base64" },
  minify: true,
  target: "es2020",
  legalComments: "none",
  footer: { js: 'if (typeof module === "object" && module.exports) module.exports = tf;' },
  write: false,
  metafile: true,
  plugins: [nodeUtil],
});
const header = `// TensorFlow.js 4.22.0 (Apache-2.0) for adlab: built by js/tfjs/build.mjs; sources sha256 ${hash.digest("hex")}\n`;
writeFileSync(out, header + result.outputFiles[0].text);

// TensorFlow.js is Apache-2.0 (its wasm binaries include XNNPACK and Emscripten's
// runtime, under their own permissive licenses, named in the packages): notices travel along
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
writeFileSync(licenses, "Third-party code in tfjs.min.js\n\n" + notices.join("\n" + "-".repeat(72) + "\n\n"));
console.log(`wrote ${out} and ${licenses} (${packages.size} packages)`);
