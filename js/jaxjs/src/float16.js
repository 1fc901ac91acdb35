// jax-js reads the global Float16Array (`data instanceof Float16Array` on every np.array),
// which Node 20 lacks: a stand-in that nothing is ever an instance of. adlab computes in
// float32 and float64, so jax-js never makes one.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array {
    constructor() {
      throw new Error("float16 arrays need a runtime with Float16Array (Node 20 has none)");
    }
  };
}
