// adlab's TF.js Hessians and HVPs, the drivers runtime_tfjs.js adds from here (handing over
// its helpers `h`): TF.js's reverse mode nested in itself (reverse-over-reverse; TF.js has
// no forward mode), each call inside tf.tidy:
//   tfjs_hvp      the Hessian times v: tf.grad of x => sum(tf.grad(f)(x) * v);
//   tfjs_hessian  n of those products, along e_1..e_n: the Hessian row by row.
"use strict";

module.exports = function nestedDrivers(tf, h) {
  const { use, args, fOfX, gradOrZero, typed, read } = h;

  // TF.js 4.22's gradients of these read their kernel's saved output (exp's: dy * exp(x)),
  // which tf.grad of tf.grad holds constant (the copy is taped before the kernel that made
  // it): a wrong second derivative (exp's: zero). While a nested driver runs, they save the
  // inputs (named here) and compute the output again from them, on the outer tape.
  const OUTPUT_SAVED = { Exp: ["x"], Sigmoid: ["x"], Tanh: ["x"], Elu: ["x"], Softmax: ["logits"],
                         Pow: ["a", "b"] };

  function nesting(work) {
    const given = Object.keys(OUTPUT_SAVED).map((k) => tf.getGradient(k)).filter((g) => g);
    for (const g of given) {
      const names = OUTPUT_SAVED[g.kernelName];
      tf.registerGradient({ kernelName: g.kernelName, inputsToSave: names, outputsToSave: [],
        gradFunc: (dy, saved, attrs) => {
          const inputs = Object.fromEntries(names.map((name, k) => [name, saved[k]]));
          const out = [tf.engine().runKernel(g.kernelName, inputs, attrs)].flat();
          const outs = out.filter((_, k) => g.outputsToSave[k]);
          return g.gradFunc(dy, [...(g.inputsToSave || []).map((n) => inputs[n]), ...outs], attrs);
        } });
    }
    try {
      return work();
    } finally {
      for (const g of given) tf.registerGradient(g); // first order: TF.js's own again
    }
  }

  // [gradient?, Hessian times v] at x: tf.grad of x => sum(tf.grad(f)(x) * v). The gradient
  // is the inner tf.grad's (the outer calls `along` once), kept from the outer tape's tidy
  // and disposed once read; f linear in x or free of it: zero, as JAX's
  function hvpAt(p, d, v, gradient) {
    let g = null;
    try {
      return tf.tidy(() => {
        const f = fOfX(p, d, args(p));
        const along = (y) => {
          const gy = gradOrZero(tf.grad(f), y);
          g = tf.keep(gy);
          return tf.sum(tf.mul(gy, tf.tensor1d(typed(v, "float32"))));
        };
        const hv = read(gradOrZero(tf.grad(along), tf.tensor1d(typed(p.inputs[d.x], "float32"))));
        return gradient ? [read(g), hv] : [hv];
      });
    } finally {
      if (g !== null) g.dispose();
    }
  }

  // the Hessian times v (f's argument d.v, which f ignores); with d.with_gradient the gradient
  // first. The Hessian: n products along e_i, row i is H e_i (H is symmetric)
  const hvp = (p, d) => (use(p), nesting(() => hvpAt(p, d, p.inputs[d.v], d.with_gradient)));

  function hessian(p, d) {
    use(p);
    const out = new Float64Array(d.n * d.n);
    const e = new Float64Array(d.n);
    nesting(() => e.forEach((_, i) => {
      e[i] = 1;
      out.set(hvpAt(p, d, e, false)[0], i * d.n);
      e[i] = 0;
    }));
    return [out];
  }

  return { tfjs_hvp: hvp, tfjs_hessian: hessian };
};
