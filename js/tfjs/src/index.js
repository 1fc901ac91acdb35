// TensorFlow.js for adlab: core with every gradient registered (core registers none by
// itself), the cpu, wasm and webgl backends, and the wasm binaries inside this file
// (base64), so that nothing is fetched from a server: it runs offline, in Node and in
// a page. `tf.adlabDevice(name)` selects a backend and waits until it is ready.
import * as core from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-core/dist/register_all_gradients";
// tensor methods (x.reshape(...)): some gradients call them (Prod's), and core alone
// leaves them out
import "@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops";
import "@tensorflow/tfjs-backend-cpu";
import "@tensorflow/tfjs-backend-webgl";
import { setWasmPaths } from "@tensorflow/tfjs-backend-wasm";
import plain from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm";
import simd from "@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm";

export * from "@tensorflow/tfjs-core";

const BINARIES = {
  "tfjs-backend-wasm.wasm": plain,
  "tfjs-backend-wasm-simd.wasm": simd,
  // never loaded (threads are off below): named because setWasmPaths wants all three
  "tfjs-backend-wasm-threaded-simd.wasm": simd,
};
const inNode = typeof process !== "undefined" && process.versions != null &&
  process.versions.node != null;
let wasmPaths = false;

function bytes(base64) {
  if (inNode) return Buffer.from(base64, "base64");
  const text = atob(base64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

// the binaries handed over as blob URLs (a page) or data URLs (Node's fetch reads
// those, not blob URLs), fetched through the platform's fetch
function giveWasmPaths() {
  if (wasmPaths) return;
  const paths = {};
  for (const [name, base64] of Object.entries(BINARIES)) {
    paths[name] = inNode
      ? `data:application/wasm;base64,${base64}`
      : URL.createObjectURL(new Blob([bytes(base64)], { type: "application/wasm" }));
  }
  // threads need workers and a cross-origin isolated page (JupyterLab's is not): the
  // single-threaded binaries, everywhere, so that Node and the page run the same code
  core.env().set("WASM_HAS_MULTITHREAD_SUPPORT", false);
  setWasmPaths(paths, true);
  wasmPaths = true;
}

/** Select backend `name` ("cpu", "wasm", "webgl") and wait until it is ready. */
export async function adlabDevice(name) {
  if (name === "wasm") giveWasmPaths();
  if (name === "webgl" && inNode) throw new Error("webgl runs in a browser only, not in Node");
  const ok = await core.setBackend(name);
  if (!ok) throw new Error(`TF.js could not start its ${name} backend here`);
  await core.ready();
  return core.getBackend();
}

export const adlabVersions = { tfjs: core.version_core };
