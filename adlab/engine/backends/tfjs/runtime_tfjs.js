// adlab's TF.js runtime: runs programs translated from a model's jaxprs (translate.py) on
// TensorFlow.js, inside runtime.js (backend "js"'s runtime, in Node or in the Lab's page),
// which requires this file on the first TF.js program it loads.
//
// A program is a factory `(tf, C, H) => function(...tensors) -> [tensors]`. Its drivers
// are the modes run here, each call inside tf.tidy (no tensor outlives a call but the
// program's constants and the arguments it keeps while they are the same arrays):
//   tfjs_once     f itself;
//   tfjs_grad     tf.grad of f: TF.js's own reverse mode;
//   tfjs_rows     the Jacobian of a vector f, one tf.grad (with dy = e_i) per row;
//   tfjs_numeric  finite differences on f, x held in float32 as TF.js holds it;
//   tfjs_g9       G9.js's gradient (runtime.js's g9, line for line) on f;
//   tfjs_hvp, tfjs_hessian  tf.grad of tf.grad (runtime_tfjs_nested.js).
// Arrays come and go as runtime.js's Float64Arrays; TF.js computes in float32.
"use strict";

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.adlabTfjs = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  let tf = null;
  let H = null;

  // the bundle, loaded on first use (its parse takes ~0.1 s): a page may have it already
  function bundle() {
    if (tf !== null) return tf;
    const given = typeof globalThis !== "undefined" && globalThis.tf;
    tf = given && given.adlabDevice ? given : require("./static/tfjs.min.js");
    // tf.stopGradient does not exist: the identity whose gradient is zero
    const stopFloat = tf.customGrad((x) => ({ value: tf.clone(x), gradFunc: (dy) => [tf.zerosLike(dy)] }));
    H = { stop: (x) => (x.dtype === "float32" ? stopFloat(x) : x), reduce: shared };
    zeroGradients();
    integerGradients();
    return tf;
  }

  // TF.js 4.22 has no gradient for these (comparisons and logic: their outputs are bool).
  // Where one lies on a path from x to f (x < 1e-8 choosing an output, as ht's guard),
  // tf.grad throws "gradient function not found"; their derivative is zero, as JAX's.
  const NO_GRADIENT = {
    Less: ["a", "b"], LessEqual: ["a", "b"], Greater: ["a", "b"], Equal: ["a", "b"],
    NotEqual: ["a", "b"], LogicalAnd: ["a", "b"], LogicalOr: ["a", "b"], LogicalNot: ["x"],
    All: ["x"], Any: ["x"],
  };

  function zeroGradients() {
    for (const [kernelName, inputs] of Object.entries(NO_GRADIENT)) {
      if (tf.getGradient(kernelName) != null) continue; // a later TF.js has its own
      tf.registerGradient({
        kernelName, inputsToSave: inputs,
        gradFunc: (dy, saved) => Object.fromEntries(
          inputs.map((name, k) => [name, () => tf.zeros(saved[k].shape, "float32")])),
      });
    }
  }

  // TF.js 4.22's gradients of these hand an integer input an integer "gradient" (GatherV2
  // its indices themselves, ArgMax and ArgMin zerosLike of an integer x), which its tape
  // refuses ("must have 'float32' dtype") where integers computed from x reach them
  // (x[np.clip((3 * x).astype(int), 0, n - 1)]). JAX's derivative through an integer is
  // zero (and the cast that made it stops the gradient: rules.py): float32 zeros there.
  const INTEGER_INPUTS = ["GatherV2", "ArgMax", "ArgMin"];

  function integerGradients() {
    for (const kernelName of INTEGER_INPUTS) {
      const given = tf.getGradient(kernelName);
      if (given == null || given.adlabFloat) continue;
      tf.registerGradient({
        ...given, adlabFloat: true,
        gradFunc: (dy, saved, attrs) => Object.fromEntries(
          Object.entries(given.gradFunc(dy, saved, attrs)).map(([name, dx]) => [name, () => {
            const g = dx();
            return g.dtype === "float32" ? g : tf.zeros(g.shape, "float32");
          }])),
      });
    }
  }

  // tf.max and tf.min of a float32 x with JAX's gradient: TF.js 4.22's hands dy whole to
  // every tied extreme (k ties: k dy, no derivative of any kind); JAX's shares it among
  // them. `H.reduce("max", axes)` is that function of x, made once per kind and axes.
  const reductions = new Map();

  function shared(kind, axes) {
    const key = `${kind}:${axes.join(",")}`;
    if (!reductions.has(key)) {
      reductions.set(key, tf.customGrad((x, save) => {
        const value = tf[kind](x, axes);
        save([x, value]);
        return {
          value,
          gradFunc: (dy, [x, value]) => {
            const kept = x.shape.map((n, d) => (axes.includes(d) ? 1 : n));
            const hit = tf.cast(tf.equal(x, tf.reshape(value, kept)), "float32");
            return [tf.mul(tf.reshape(dy, kept), tf.div(hit, tf.sum(hit, axes, true)))];
          },
        };
      }));
    }
    return reductions.get(key);
  }

  function decode64(text) {
    // base64 of little-endian float64, as runtime.js's decode (Buffer in Node, a stand-in in a page)
    const bytes = Buffer.from(text, "base64");
    const out = new Float64Array(bytes.length / 8);
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }

  function typed(values, dtype) {
    if (dtype === "int32") return Int32Array.from(values);
    if (dtype === "bool") return Uint8Array.from(values, (v) => (v !== 0 ? 1 : 0));
    return Float32Array.from(values);
  }

  function tensor(values, shape, dtype) {
    return tf.tensor(typed(values, dtype), shape, dtype);
  }

  // the program's backend, made current: initialized when the program was loaded, so
  // setBackend switches at once (its promise has nothing left to wait for)
  function use(p) {
    if (tf.getBackend() !== p.tfjs.device) tf.setBackend(p.tfjs.device);
  }

  // the tensors of f's arguments, x's left out: kept between calls while the same arrays
  function args(p) {
    const s = p.tfjs;
    const out = new Array(s.shapes.length).fill(null); // f's arguments (a step array after them)
    for (let k = 0; k < s.shapes.length; k++) {
      if (k === p.driver.x) continue;
      const a = p.inputs[k];
      if (s.seen[k] !== a) {
        if (s.kept[k]) s.kept[k].dispose();
        s.kept[k] = tf.keep(tensor(a, s.shapes[k], s.dtypes[k]));
        s.seen[k] = a;
      }
      out[k] = s.kept[k];
    }
    return out;
  }

  const read = (t) => Float64Array.from(t.dataSync());

  function once(p, d) {
    use(p);
    return tf.tidy(() => {
      const t = args(p);
      t[d.x] = tensor(p.inputs[d.x], p.tfjs.shapes[d.x], "float32");
      return p.fn(...t).map(read);
    });
  }

  // f of the flat float32 x alone, the other arguments bound (for the derivatives)
  function fOfX(p, d, t) {
    const shape = p.tfjs.shapes[d.x];
    return (xt) => {
      t[d.x] = tf.reshape(xt, shape);
      return p.fn(...t)[0];
    };
  }

  // TF.js refuses the gradient of an f that does not depend on x: it is zero. Only that
  // refusal: "Cannot compute gradient: gradient function not found for <op>" is an
  // operation TF.js cannot differentiate, and a zero there would be a wrong number
  function gradOrZero(g, x, dy) {
    try {
      return dy === undefined ? g(x) : g(x, dy);
    } catch (err) {
      if (/Cannot compute gradient of y=f\(x\)/.test(String(err && err.message))) return tf.zerosLike(x);
      throw err;
    }
  }

  function grad(p, d) {
    use(p);
    return tf.tidy(() => {
      const g = tf.grad(fOfX(p, d, args(p)));
      return [read(gradOrZero(g, tf.tensor1d(typed(p.inputs[d.x], "float32"))))];
    });
  }

  function rows(p, d) {
    use(p);
    const n = d.n, m = d.m;
    const out = new Float64Array(m * n);
    const e = new Float32Array(m);
    for (let i = 0; i < m; i++) {
      e[i] = 1;
      tf.tidy(() => {
        const g = tf.grad(fOfX(p, d, args(p)));
        const x = tf.tensor1d(typed(p.inputs[d.x], "float32"));
        out.set(gradOrZero(g, x, tf.tensor(e, d.out_shape, "float32")).dataSync(), i * n);
      });
      e[i] = 0;
    }
    return [out];
  }

  // f's values (float64 copies) at a float32 x
  function valueAt(p, d, x) {
    return tf.tidy(() => {
      const t = args(p);
      t[d.x] = tf.tensor(x, p.tfjs.shapes[d.x], "float32");
      return read(p.fn(...t)[0]);
    });
  }

  // finite differences as runtime.js's numeric takes them, x held in float32: the
  // perturbed coordinate rounded to float32, each slope divided by the distance taken
  function numeric(p, d) {
    use(p);
    const x = Float32Array.from(p.inputs[d.x]), n = x.length, m = d.m;
    const step = d.step ? p.inputs[d.step] : null;
    const value = new Float64Array(m * n);
    const error = d.scheme === "richardson" ? new Float64Array(m * n) : null;
    const f0 = d.scheme === "forward" ? valueAt(p, d, x) : null;
    const at = (j, xj) => { x[j] = xj; const v = valueAt(p, d, x); return [v, x[j]]; };
    for (let j = 0; j < n; j++) {
      const xj = x[j];
      const s = step ? step[j] : d.scale * Math.max(Math.abs(xj), 1.0);
      const [fa, ahead] = at(j, xj + s);
      if (d.scheme === "forward") {
        for (let i = 0; i < m; i++) value[i * n + j] = (fa[i] - f0[i]) / (ahead - xj);
      } else {
        const h = ahead - xj;
        const [fb, back] = at(j, xj - h);
        if (d.scheme === "central") {
          for (let i = 0; i < m; i++) value[i * n + j] = (fa[i] - fb[i]) / (ahead - back);
        } else {
          const [fh, half] = at(j, xj + h / 2);
          const [fl, low] = at(j, xj - (half - xj));
          for (let i = 0; i < m; i++) {
            const d1 = (fa[i] - fb[i]) / (ahead - back);
            const d2 = (fh[i] - fl[i]) / (half - low);
            const correction = (d2 - d1) / 3;
            value[i * n + j] = d2 + correction;
            error[i * n + j] = Math.abs(correction);
          }
        }
      }
      x[j] = xj;
    }
    return error ? [value, error] : [value];
  }

  // G9.js's gradient on f (runtime.js's), x held in float32
  function g9(p, d, g9Gradient) {
    use(p);
    const x = Float32Array.from(p.inputs[d.x]);
    return [g9Gradient(() => valueAt(p, d, x)[0], x)];
  }

  // Load a program: its backend started (a wasm instantiation, WebGL's setup: awaited),
  // its constants made tensors on it. `host` is runtime.js's: its programs, its drivers
  // (these are added to them) and its g9Gradient.
  async function load(msg, host) {
    bundle();
    if (!("tfjs_once" in host.DRIVERS)) {
      Object.assign(host.DRIVERS, {
        tfjs_once: once, tfjs_grad: grad, tfjs_rows: rows, tfjs_numeric: numeric,
        tfjs_g9: (p, d) => g9(p, d, host.g9Gradient),
        ...require("./runtime_tfjs_nested.js")(tf, { use, args, fOfX, gradOrZero, typed, read }),
      });
    }
    const device = msg.device || "cpu";
    const backend = await tf.adlabDevice(device);
    const consts = msg.consts.map((c) => tf.keep(tensor(decode64(c.data), c.shape, c.dtype)));
    const n = msg.n_inputs;
    const p = {
      fn: (0, eval)(msg.source)(tf, consts, H),
      driver: msg.driver,
      inputs: new Array(n).fill(null),
      tfjs: { device, shapes: msg.shapes, dtypes: msg.dtypes, consts,
              seen: new Array(n).fill(null), kept: new Array(n).fill(null) },
      dispose() {
        for (const t of [...consts, ...this.tfjs.kept]) if (t) t.dispose();
      },
    };
    host.programs.set(msg.id, p);
    return describe(backend);
  }

  // the backend in use, TF.js's version, and the bits WebGL computes in
  function describe(backend) {
    const facts = { tfjs_backend: backend, tfjs_version: tf.version_core, float_bits: 32 };
    if (backend === "webgl" && !tf.env().getBool("WEBGL_RENDER_FLOAT32_CAPABLE")) facts.float_bits = 16;
    return facts;
  }

  // tensors TF.js holds now (a program's constants and kept arguments among them)
  function memory() {
    if (tf === null) return { tensors: 0, loaded: false };
    return { tensors: tf.memory().numTensors, loaded: true };
  }

  // ------------------------------------------------------------- memory
  // One call of a program's driver (`run`: runtime.js's work) measured by TF.js's own
  // counters, at the inputs its last call sent. The peak: tf.profile's peakBytes (the
  // engine's numBytes after each kernel, engine.ts) less tf.memory().numBytes before.
  // numBytes counts every live tensor's bytes, so a reshape or a clone sharing a buffer
  // counts again. `reverse`: also the tape's residuals (tapeBytes).
  async function measure(p, run, reverse) {
    bundle();
    const before = tf.memory().numBytes;
    const info = await tf.profile(() => { run(); });
    const peak = Number.isFinite(info.peakBytes) ? Math.max(0, info.peakBytes - before) : 0;
    return { peak_bytes: peak, residual_bytes: reverse ? tapeBytes(p, p.driver) : null };
  }

  const BYTES_PER_ELEMENT = { float32: 4, int32: 4, bool: 1, complex64: 8 };

  // What TF.js's tape keeps from one forward pass (of tf.grad; a vector f: its first row)
  // for the backward pass. In TF.js 4.22 (engine.ts, gradients) f runs in tidy("forward"):
  // every tensor f makes is disposed when it returns but those its kernels saved for their
  // gradients (saveTensorsForBackwardMode: kept clones of the inputs and outputs each
  // gradient names, inputsToSave/outputsToSave; customGrad's save), which live on the tape
  // until tidy("backward") ends. They are read off the tape (tf.engine().state.activeTape)
  // as the backward pass starts, by a probe whose gradient runs first, each data buffer
  // once (a clone shares its original's), those held before the call (x, f's other
  // arguments, the program's constants) not counted.
  function tapeBytes(p, d) {
    use(p);
    const engine = tf.engine();
    let bytes = null;
    const probe = tf.customGrad((y) => ({
      value: tf.clone(y),
      gradFunc: (dy) => {
        const held = new Set([...p.tfjs.consts, ...p.tfjs.kept, x].filter((t) => t).map((t) => t.dataId));
        const kept = new Map();
        for (const node of engine.state.activeTape || []) {
          for (const t of node.saved || []) {
            if (!held.has(t.dataId)) kept.set(t.dataId, t.size * BYTES_PER_ELEMENT[t.dtype]);
          }
        }
        bytes = [...kept.values()].reduce((a, b) => a + b, 0);
        return [dy];
      },
    }));
    let x = null;
    tf.tidy(() => {
      const f = fOfX(p, d, args(p));
      x = tf.tensor1d(typed(p.inputs[d.x], "float32"));
      const dy = d.kind === "tfjs_rows"
        ? tf.tensor(Float32Array.from({ length: d.m }, (_, i) => (i === 0 ? 1 : 0)), d.out_shape, "float32")
        : undefined;
      gradOrZero(tf.grad((xt) => probe(f(xt))), x, dy);
    });
    return bytes === null ? 0 : bytes; // null: f does not depend on x, and nothing is taped
  }

  return { load, memory, measure };
});
