// Builds src/index.js -- jax-js (@jax-js/jax, pinned in package.json) with adlab's two
// additions (src/index.js says which) -- into one minified file for Node and the browser,
// adlab/engine/backends/jaxjs/static/jaxjs.min.js, which is committed: installing adlab
// needs no npm and the page loads it offline. It defines `jaxjs` (a classic script's
// global; `module.exports` where there is a module): the Lab's page evaluates its modules
// as scripts, and Chromium refuses ES module imports from a notebook's file:// or blob
// origin. Run `npm ci && npm run build` after changing src/ or the pinned version;
// tests/engine/test_backend_jaxjs.py checks that the bundle's first line carries the hash
// of the sources it was built from.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const static_ = join(here, "..", "..", "adlab", "engine", "backends", "jaxjs", "static");
const out = join(static_, "jaxjs.min.js");
const licenses = join(static_, "jaxjs.LICENSES.txt");
// the same files, in the same order, as SOURCES in tests/engine/test_backend_jaxjs.py
const sources = ["package.json", "package-lock.json", "build.mjs", "src/index.js",
                 "src/float16.js", "src/memory.js"];

// jax-js 0.1.25's own leaks, mended in its source as it is bundled (each text must be
// found, or the build stops): see README.md, "What is changed"
const MENDS = [
  // the JVP of reciprocal (every division: x / y is x * reciprocal(y)) takes a new reference
  // to x and never gives back the one it was handed: one buffer leaked per division, per
  // pass of jvp, grad or vjp
  ["const xRecip = reciprocal$1(x.ref);", "const xRecip = reciprocal$1(x);"],
  // under jit, padding (a slice's transpose: grad of x[1:]; each part of a concatenate)
  // masks the arrays an expression reads (its views); an expression that reads none (a
  // constant broadcast: grad's cotangent of a sum, a literal) was left unmasked, so its
  // value filled the padding too. `padded` masks it (defined before the rules, below).
  ["src.push(reshapeViews(AluExp.cast(dtypeOut, exps[i]), (st) => st.pad(padding)));",
   "src.push(padded(AluExp.cast(dtypeOut, exps[i]), avals[i].shape, padding));"],
  ['["pad"]: reshapeJit((st, { width }) => st.pad(width)),',
   '["pad"]: ([a], [as], { width }) => ({ exp: [padded(a, as.shape, width)] }),'],
  ["function reshapeJit(fn) {", `function padded(exp, shape, width) {
	if (exp.some((e) => e.op === "GlobalView")) return reshapeViews(exp, (st) => st.pad(width));
	const st = ShapeTracker.fromShape(shape).pad(width);
	const [index, valid] = st.toAluExp(unravelAlu(st.shape, AluVar.gidx));
	return AluExp.where(valid, exp.substitute({ gidx: index }), AluExp.const(exp.dtype, 0));
}
function reshapeJit(fn) {`],
];
const mend = {
  name: "mend",
  setup(b) {
    b.onLoad({ filter: /@jax-js[\\/]jax[\\/]dist[\\/]index\.js$/ }, (args) => {
      let text = readFileSync(args.path, "utf8");
      for (const [was, now] of MENDS) {
        if (!text.includes(was)) throw new Error(`jax-js's source no longer has: ${was}`);
        text = text.replace(was, now);
      }
      return { contents: text, loader: "js" };
    });
  },
};

const hash = createHash("sha256");
for (const name of sources) {
  hash.update(name + "\0");
  hash.update(readFileSync(join(here, name)));
}
const pkg = JSON.parse(readFileSync(join(here, "node_modules", "@jax-js", "jax", "package.json")));
const result = await build({
  entryPoints: [join(here, "src", "index.js")],
  bundle: true,
  format: "iife", // its dynamic imports (the webgl and webgpu backends) bundled in
  globalName: "jaxjs",
  platform: "browser",
  minify: true,
  target: "es2022", // jax-js's classes have private fields
  legalComments: "none",
  define: { ADLAB_JAXJS_VERSION: JSON.stringify(pkg.version) },
  footer: { js: 'if (typeof module === "object" && module.exports) module.exports = jaxjs;' },
  write: false,
  plugins: [mend],
});
const header = `// jax-js ${pkg.version} (MIT) for adlab: built by js/jaxjs/build.mjs; sources sha256 ${hash.digest("hex")}\n`;
writeFileSync(out, header + result.outputFiles[0].text);

// jax-js has no dependencies: its licence alone travels along
const text = readFileSync(join(here, "node_modules", "@jax-js", "jax", "LICENSE"), "utf8").trim();
writeFileSync(licenses, `Third-party code in jaxjs.min.js\n\n@jax-js/jax ${pkg.version}\n\n${text}\n`);
console.log(`wrote ${out} and ${licenses}`);
