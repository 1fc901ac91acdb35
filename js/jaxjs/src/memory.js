// jax-js's own count of its memory, read where it is kept: each backend (cpu, wasm, webgl,
// webgpu) holds its buffers in slots, each with a reference count, through three calls of
// its Backend interface (malloc, incRef, decRef) and keeps the count in a private map. The
// same three calls are watched here, so the live slots and their bytes are jax-js's own
// (a slot that two arrays share, a reshape's view, counted once), and so is the most bytes
// held at once since `resetPeak`.
const live = new Map(); // "device:slot" -> [references, bytes]
let bytes = 0;
let peak = 0;

export function watch(backend) {
  if (backend.adlabWatched) return;
  const { malloc, incRef, decRef } = backend;
  const key = (slot) => `${backend.type}:${slot}`;
  backend.malloc = function (size, initialData) {
    const slot = malloc.call(this, size, initialData);
    live.set(key(slot), [1, size]);
    bytes += size;
    if (bytes > peak) peak = bytes;
    return slot;
  };
  backend.incRef = function (slot) {
    incRef.call(this, slot);
    const entry = live.get(key(slot));
    if (entry) entry[0]++;
  };
  backend.decRef = function (slot) {
    decRef.call(this, slot);
    const entry = live.get(key(slot));
    if (entry && --entry[0] === 0) {
      live.delete(key(slot));
      bytes -= entry[1];
    }
  };
  backend.adlabWatched = true;
}

/** The slots jax-js holds now, their bytes, and the most bytes held since `resetPeak`. */
export function memory() {
  return { slots: live.size, bytes, peak };
}

export function resetPeak() {
  peak = bytes;
}
