// adlab's jax-js runtime: runs programs translated from a model's jaxprs (translate.py) on
// jax-js, inside runtime.js (backend "js"'s runtime, in Node or in the Lab's page), which
// requires this file on the first jax-js program it loads.
//
// A program is a factory `(jax, C) => function(...arrays) -> [arrays]` that follows
// jax-js's convention: it takes ownership of its arguments and hands its outputs over.
// Its drivers are the modes run here, each by jax-js's own transforms, under its `jit`
// where the program was loaded with `jit`:
//   jaxjs_once     f itself;
//   jaxjs_grad     grad of f: jax-js's reverse mode;
//   jaxjs_rows     the Jacobian of a vector f, one vjp (cotangent e_i) per row;
//   jaxjs_columns  forward mode: one jvp (tangent e_j) per input (g9jax's way);
//   jaxjs_numeric  finite differences on f (runtime.js's), x held in f's precision;
//   jaxjs_g9       G9.js's gradient (runtime.js's) on f.
//   jaxjs_hvp      the Hessian times v, by jax-js's own nesting of its transforms (d.scheme:
//                  jvp of grad, vjp of grad, grad of jvp, or jvp of the forward gradient);
//   jaxjs_hessian  n of those products, along e_1..e_n: the Hessian row by row.
// Arrays come and go as runtime.js's Float64Arrays. A call leaves jax-js's memory as it
// found it: the arrays a call makes are disposed by its end (memory() counts them).
"use strict";

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.adlabJaxjs = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  let jax = null;
  let np = null;

  // the bundle, loaded on first use: a page may have it already
  function bundle() {
    if (jax !== null) return jax;
    const given = typeof globalThis !== "undefined" && globalThis.jaxjs;
    jax = given && given.adlabDevice ? given : require("./static/jaxjs.min.js");
    np = jax.numpy;
    return jax;
  }

  function decode64(text) {
    // base64 of little-endian float64, as runtime.js's decode (Buffer in Node, a stand-in in a page)
    const bytes = Buffer.from(text, "base64");
    const out = new Float64Array(bytes.length / 8);
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }

  // f's precision, as a typed array of x: differences move x as f holds it
  const held = (values, dtype) => (dtype === "float32" ? Float32Array.from(values) : Float64Array.from(values));

  // a jax-js array of `values` (Float64Array); bool made from int32 (np.array takes no Uint8Array)
  function array(values, shape, dtype, device) {
    if (dtype === "bool") return np.astype(array(values, shape, "int32", device), "bool");
    const typed = dtype === "int32" ? Int32Array.from(values) : held(values, dtype);
    return np.array(typed, { shape, dtype, device });
  }

  // an array's values as a Float64Array (dataSync takes the reference: the array is gone)
  const read = (a) => Float64Array.from(a.dataSync());

  // the arrays of f's arguments, x's left out: kept between calls while the same
  // Float64Arrays, each handed over as a new reference
  function args(p) {
    const s = p.jaxjs;
    const out = new Array(s.shapes.length).fill(null);
    for (let k = 0; k < s.shapes.length; k++) {
      if (k === p.driver.x) continue;
      const a = p.inputs[k];
      if (s.seen[k] !== a) {
        if (s.kept[k]) s.kept[k].dispose();
        s.kept[k] = array(a, s.shapes[k], s.dtypes[k], s.device);
        s.seen[k] = a;
      }
      out[k] = s.kept[k].ref;
    }
    return out;
  }

  function xArray(p, values) {
    const s = p.jaxjs, x = p.driver.x;
    return array(values === undefined ? p.inputs[x] : values, s.shapes[x], s.dtypes[x], s.device);
  }

  // f of x alone, the other arguments (arrays, handed over) bound: its one output
  const fOfX = (fn, d, t) => (x) => {
    t[d.x] = x;
    return fn(...t)[0];
  };

  // f of x alone, t's other arguments bound: a nested transform may call it more than
  // once (the forward gradient: n times), so each call takes new references; t is the
  // caller's to dispose
  const bound = (fn, d, t) => (x) => fn(...t.map((a, k) => (k === d.x ? x : a.ref)))[0];

  // (gradient, Hessian times v) at x by `scheme`, jax-js's transforms nested; x and v owned.
  // Grad of jvp does not pass the gradient: it is taken apart where `gradient` asks (else null)
  function nested(scheme, fx, x, v, gradient) {
    if (scheme === "forward-over-reverse") return jax.jvp(jax.grad(fx), [x], [v]);
    if (scheme === "reverse-over-reverse") {
      const [g, back] = jax.vjp(jax.grad(fx), [x]);
      const [hv] = back(v);
      back.dispose();
      return [g, hv];
    }
    if (scheme === "reverse-over-forward") { // the gradient of f's derivative along v
      const along = (y) => {
        const [y0, dy] = jax.jvp(fx, [y], [v.ref]);
        y0.dispose();
        return dy;
      };
      const hv = jax.grad(along)(x.ref);
      v.dispose();
      if (gradient) return [jax.grad(fx)(x), hv];
      x.dispose();
      return [null, hv];
    }
    if (scheme === "forward-over-forward") { // jvp of the gradient of n jvps, one per e_j
      const n = x.size;
      const units = Array.from({ length: n }, (_, j) => {
        const e = new Float64Array(n);
        e[j] = 1;
        return array(e, x.shape, x.dtype, x.device);
      });
      const forwardGrad = (y) => {
        const cols = units.map((e) => {
          const [y0, dy] = jax.jvp(fx, [y.ref], [e.ref]);
          y0.dispose();
          return np.reshape(dy, [1]);
        });
        y.dispose();
        return np.reshape(np.concatenate(cols), x.shape);
      };
      const out = jax.jvp(forwardGrad, [x], [v]);
      units.forEach((e) => e.dispose());
      return out;
    }
    throw new Error(`jax-js nests no composition ${scheme} here`);
  }

  // The driver's work, a function of arrays (f's arguments; a unit direction after them
  // for rows and columns), under jit where asked. Each takes ownership of its arguments.
  function works(fn, d, jit) {
    const n = d.x;
    const once = (...t) => fn(...t);
    const grad = (...t) => jax.grad((...u) => fn(...u)[0], { argnums: n })(...t);
    const row = (...t) => {
      const ct = t.pop();
      const [y, back] = jax.vjp(fOfX(fn, d, t), [t[n]]);
      y.dispose();
      const [g] = back(ct);
      back.dispose();
      return g;
    };
    const column = (...t) => {
      const tangent = t.pop();
      const [y, dy] = jax.jvp(fOfX(fn, d, t), [t[n]], [tangent]);
      y.dispose();
      return dy;
    };
    const second = (...t) => { // f's arguments, then v: [HVP], or [gradient, HVP]
      const v = t.pop();
      const x = t[n];
      const [g, hv] = nested(d.scheme, bound(fn, d, t), x, v, Boolean(d.with_gradient));
      t.forEach((a, k) => k !== n && a.dispose());
      if (d.with_gradient) return [g, hv];
      if (g) g.dispose(); // a jitted function returns arrays only
      return [hv];
    };
    const kinds = { jaxjs_hvp: second, jaxjs_hessian: second, jaxjs_once: once,
                    jaxjs_numeric: once, jaxjs_g9: once, jaxjs_grad: grad,
                    jaxjs_rows: row, jaxjs_columns: column };
    const work = kinds[d.kind];
    return jit ? jax.jit(work) : work;
  }

  // f's outputs at the inputs last sent, x as given (typed values)
  function valueAt(p, d, x) {
    const t = args(p);
    t[d.x] = xArray(p, x);
    return p.jaxjs.work(...t).map(read);
  }

  function once(p, d) {
    return valueAt(p, d, p.inputs[d.x]);
  }

  function grad(p, d) {
    const t = args(p);
    t[d.x] = xArray(p);
    return [read(p.jaxjs.work(...t))];
  }

  // a unit direction, as an array: e_k of `shape`, in x's dtype
  function unit(p, k, size, shape) {
    const e = new Float64Array(size);
    e[k] = 1;
    return array(e, shape, p.jaxjs.dtypes[p.driver.x], p.jaxjs.device);
  }

  function rows(p, d) {
    const out = new Float64Array(d.m * d.n);
    for (let i = 0; i < d.m; i++) {
      const t = args(p);
      t[d.x] = xArray(p);
      out.set(read(p.jaxjs.work(...t, unit(p, i, d.m, d.out_shape))), i * d.n);
    }
    return [out];
  }

  function columns(p, d) {
    const out = new Float64Array(d.m * d.n);
    const shape = p.jaxjs.shapes[d.x];
    for (let j = 0; j < d.n; j++) {
      const t = args(p);
      t[d.x] = xArray(p);
      const dy = read(p.jaxjs.work(...t, unit(p, j, d.n, shape)));
      for (let i = 0; i < d.m; i++) out[i * d.n + j] = dy[i];
    }
    return [out];
  }

  // the Hessian times v (v: f's argument d.v, which f ignores); with d.with_gradient the
  // gradient first
  function hvp(p, d) {
    const t = args(p);
    t[d.x] = xArray(p);
    return p.jaxjs.work(...t, t[d.v].ref).map(read);
  }

  // the Hessian as n products along e_i: row i is H e_i (H is symmetric)
  function hessian(p, d) {
    const out = new Float64Array(d.n * d.n);
    const shape = p.jaxjs.shapes[d.x];
    for (let i = 0; i < d.n; i++) {
      const t = args(p);
      t[d.x] = xArray(p);
      const [hv] = p.jaxjs.work(...t, unit(p, i, d.n, shape));
      out.set(read(hv), i * d.n);
    }
    return [out];
  }

  // runtime.js's differences and G9's gradient, on f of typed inputs, x held as f holds it
  function plain(p, d) {
    const inputs = [...p.inputs];
    inputs[d.x] = held(p.inputs[d.x], p.driver.precision);
    return { inputs, fn: (...values) => valueAt(p, d, values[d.x]), driver: d };
  }

  // A GPU backend of the page checked once, before its first program: x * x and its grad
  // at [1, 2, 3] read back. On headless Chromium's software WebGPU adapter (SwiftShader)
  // jax-js's synchronous read gives zeros: such a backend is refused, never a wrong number.
  const checked = new Map();
  async function readsBack(device) {
    if (device === "wasm" || device === "cpu") return;
    if (!checked.has(device)) {
      const x = () => array(Float64Array.from([1, 2, 3]), [3], "float32", device);
      const a = x();
      const square = Array.from(np.multiply(a.ref, a).dataSync());
      const slope = Array.from(jax.grad((y) => np.sum(np.multiply(y.ref, y)))(x()).dataSync());
      const right = [1, 4, 9].every((v, i) => square[i] === v) && [2, 4, 6].every((v, i) => slope[i] === v);
      checked.set(device, right ? null : `x * x at [1, 2, 3] read back as [${square}] and its ` +
        `grad as [${slope}] (want [1,4,9] and [2,4,6])${await adapter(device)}`);
    }
    const wrong = checked.get(device);
    if (wrong) {
      throw new Error(`jax-js's ${device} backend gives wrong values in this page: ${wrong}. ` +
        "Its series is refused; use jax-js's wasm backend (device 'wasm')");
    }
  }

  // jax-js's backend started, or why not in words a person can act on
  async function start(device) {
    try {
      await jax.adlabDevice(device);
    } catch (err) {
      if (device !== "webgpu" || typeof navigator === "undefined") throw err;
      const why = navigator.gpu ? "the browser offers no WebGPU adapter (headless Chromium " +
        "without a GPU has none)" : "this page has no WebGPU (navigator.gpu)";
      throw new Error(`jax-js could not start its webgpu backend: ${why}; use jax-js's wasm ` +
        `backend (device 'wasm') [${err && err.message}]`);
    }
  }

  // what WebGPU's adapter is, for the refusal ("google swiftshader, a fallback adapter")
  async function adapter(device) {
    if (device !== "webgpu" || typeof navigator === "undefined" || !navigator.gpu) return "";
    const a = await navigator.gpu.requestAdapter();
    const info = a && a.info;
    if (!info) return "";
    const soft = info.isFallbackAdapter || /swiftshader/i.test(info.architecture || "");
    return `; its adapter is ${info.vendor} ${info.architecture}${soft ? ", software (a fallback adapter)" : ""}`;
  }

  // Load a program: its backend started (a wasm instantiation, WebGL's or WebGPU's setup:
  // awaited), its constants made arrays on it. `host` is runtime.js's: its programs, its
  // drivers (these are added to them), its differences and G9's gradient.
  async function load(msg, host) {
    bundle();
    if (!("jaxjs_once" in host.DRIVERS)) {
      Object.assign(host.DRIVERS, {
        jaxjs_once: once, jaxjs_grad: grad, jaxjs_rows: rows, jaxjs_columns: columns,
        jaxjs_hvp: hvp, jaxjs_hessian: hessian,
        jaxjs_numeric: (p, d) => host.numeric(plain(p, d), d),
        jaxjs_g9: (p, d) => host.g9(plain(p, d), d),
      });
    }
    const device = msg.device || "wasm";
    const t0 = performance.now();
    await start(device);
    await readsBack(device);
    const startS = (performance.now() - t0) / 1e3;
    const consts = msg.consts.map((c) => array(decode64(c.data), c.shape, c.dtype, device));
    const n = msg.n_inputs;
    const fn = (0, eval)(msg.source)(jax, consts);
    const work = works(fn, msg.driver, Boolean(msg.jit));
    const p = {
      driver: msg.driver,
      inputs: new Array(n).fill(null),
      jaxjs: { device, shapes: msg.shapes, dtypes: msg.dtypes, consts, work, fn,
               seen: new Array(n).fill(null), kept: new Array(n).fill(null) },
      dispose() {
        for (const a of [...consts, ...this.jaxjs.kept]) if (a) a.dispose();
        if (work.dispose) work.dispose(); // a jitted function's own constants
      },
    };
    host.programs.set(msg.id, p);
    return { jaxjs_backend: device, jaxjs_version: jax.adlabVersion, device_start_s: startS };
  }

  // jax-js's own count of what it holds now: buffers (slots) and their bytes
  function memory() {
    if (jax === null) return { slots: 0, bytes: 0, loaded: false };
    const { slots, bytes } = jax.adlabMemory();
    return { slots, bytes, loaded: true };
  }

  // ------------------------------------------------------------- memory
  // One call of a program's driver (`run`: runtime.js's work) measured by jax-js's own
  // count of its buffers, at the inputs its last call sent: the peak is the most bytes
  // held at once during the call less those held before. `reverse`: also what jax-js's
  // vjp keeps for the backward pass (its residuals): the bytes held once vjp has run the
  // forward pass, less those held before and less f's value (x, f's other arguments and
  // the program's constants are held before, so never counted).
  function measure(p, run, reverse) {
    bundle();
    const before = jax.adlabMemory().bytes;
    jax.adlabResetPeak();
    run();
    const peak = Math.max(0, jax.adlabMemory().peak - before);
    return { peak_bytes: peak, residual_bytes: reverse ? residuals(p, p.driver) : null };
  }

  function residuals(p, d) {
    const t = args(p);
    const x = xArray(p); // held through the measure, as f's other arguments are
    const before = jax.adlabMemory().bytes;
    const [y, back] = jax.vjp(fOfX(p.jaxjs.fn, d, t), [x.ref]);
    const yBytes = y.size * (y.dtype === "float64" ? 8 : 4);
    const kept = jax.adlabMemory().bytes - before - yBytes;
    y.dispose();
    back.dispose();
    x.dispose();
    return Math.max(0, kept);
  }

  return { load, memory, measure };
});
