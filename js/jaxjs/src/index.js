// jax-js for adlab: the library as published (@jax-js/jax, pinned in package.json), one
// file for Node and a page. Its additions: `adlabDevice(name)` starts one of its backends
// and waits until it is ready (a bare init() would try WebGPU too, which fails in Node on
// `navigator`), `adlabMemory()`, jax-js's own count of its buffers (memory.js), and
// `adlabVersion`.
import "./float16.js";
import * as jax from "@jax-js/jax";
// the module that holds jax-js's backends: the same file its index imports (one instance),
// reached by path because the package exports its index alone
import { s as getBackend } from "../node_modules/@jax-js/jax/dist/backend-CnjgxpXq.js";
import { memory, resetPeak, watch } from "./memory.js";

export * from "@jax-js/jax";

const inNode = typeof process !== "undefined" && process.versions != null &&
  process.versions.node != null;

/** Start jax-js's backend `name` ("cpu", "wasm", "webgl", "webgpu") and watch its memory. */
export async function adlabDevice(name) {
  if (inNode && (name === "webgl" || name === "webgpu")) {
    throw new Error(`${name} runs in a browser only, not in Node`);
  }
  const started = await jax.init(name);
  if (!started.includes(name)) throw new Error(`jax-js could not start its ${name} backend here`);
  watch(getBackend(name));
  return name;
}

/** jax-js's version, as the bundle pins it (build.mjs defines it from the package). */
// eslint-disable-next-line no-undef
export const adlabVersion = ADLAB_JAXJS_VERSION;
export const adlabMemory = memory;
export const adlabResetPeak = resetPeak;
