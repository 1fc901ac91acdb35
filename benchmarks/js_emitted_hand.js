// The hand-written JavaScript that benchmarks/js_emitted.py times the emitted programs
// against: each model's f and gradient as a careful person writes them, textbook loops.
// hand[model].f(ins, t) returns f; hand[model].grad(ins, g, t) fills g with the gradient
// in its first argument. ins are the model's arguments, as the emitted program takes
// them; t is scratch made once per size (scratch(ins)), so a call allocates nothing.

const hand = {};

hand.rosenbrock = {
  scratch: () => ({}),
  f(ins) {
    const x = ins[0];
    let s = 0;
    for (let i = 0; i < x.length - 1; i++) {
      const a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
      s += 100 * a * a + b * b;
    }
    return s;
  },
  grad(ins, g) {
    const x = ins[0];
    g.fill(0);
    for (let i = 0; i < x.length - 1; i++) {
      const a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
      g[i + 1] += 200 * a;
      g[i] += -400 * a * x[i] - 2 * b;
    }
  },
};

// mlp_batched: a 1 -> N1 -> N2 -> 1 tanh net, loss = sum of squared outputs over the
// samples xs; the parameters one flat vector (w1, b1, w2 row-major N1 x N2, b2, w3, b3).
// By hand: one sample at a time, its activations in scratch, the gradient accumulated.
const N1 = 1000, N2 = 20;
const W1 = 0, B1 = N1, W2 = 2 * N1, B2 = W2 + N1 * N2, W3 = B2 + N2, B3 = W3 + N2;

function mlpForward(p, x, h1, h2) {
  for (let j = 0; j < N1; j++) h1[j] = Math.tanh(x * p[W1 + j] + p[B1 + j]);
  h2.fill(0);
  for (let j = 0; j < N1; j++) {
    const h = h1[j], row = W2 + j * N2;
    for (let k = 0; k < N2; k++) h2[k] += h * p[row + k];
  }
  let out = 0;
  for (let k = 0; k < N2; k++) {
    h2[k] = Math.tanh(h2[k] + p[B2 + k]);
    out += h2[k] * p[W3 + k];
  }
  return out + p[B3];
}

hand.mlp_batched = {
  scratch: () => ({ h1: new Float64Array(N1), h2: new Float64Array(N2),
                    d2: new Float64Array(N2) }),
  f(ins, t) {
    const p = ins[0], xs = ins[1];
    let loss = 0;
    for (let s = 0; s < xs.length; s++) {
      const out = mlpForward(p, xs[s], t.h1, t.h2);
      loss += out * out;
    }
    return loss;
  },
  grad(ins, g, t) {
    const p = ins[0], xs = ins[1];
    const { h1, h2, d2 } = t;
    g.fill(0);
    for (let s = 0; s < xs.length; s++) {
      const x = xs[s], out = mlpForward(p, x, h1, h2), dout = 2 * out;
      g[B3] += dout;
      for (let k = 0; k < N2; k++) {
        g[W3 + k] += dout * h2[k];
        d2[k] = dout * p[W3 + k] * (1 - h2[k] * h2[k]);
        g[B2 + k] += d2[k];
      }
      for (let j = 0; j < N1; j++) {
        const h = h1[j], row = W2 + j * N2;
        let dh = 0;
        for (let k = 0; k < N2; k++) {
          g[row + k] += h * d2[k];
          dh += p[row + k] * d2[k];
        }
        const d1 = dh * (1 - h * h);
        g[W1 + j] += d1 * x;
        g[B1 + j] += d1;
      }
    }
  },
};

// ode: S steps of RK4 of y_0' = x_0, y_i' = x_i y_{i-1} from y = 0; f = y(2)'s last
// component. One pass per step (the stages at i need theirs at i - 1, kept in scalars);
// the gradient keeps y at every step, recomputes a step's stages and runs its adjoint
// in one descending pass.
const S = 10, H = 2.0 / S;

function odeStep(x, y, o, yn, on, u2, u3, u4) {
  let p1 = 1, p2 = 1, p3 = 1, p4 = 1; // y, u2, u3, u4 at i - 1 (at i = 0: the rate's 1)
  for (let i = 0; i < x.length; i++) {
    const xi = x[i], yi = y[o + i];
    const k1 = xi * p1, a2 = yi + H * k1 / 2;
    const k2 = xi * p2, a3 = yi + H * k2 / 2;
    const k3 = xi * p3, a4 = yi + H * k3;
    const k4 = xi * p4;
    yn[on + i] = yi + H * (k1 + 2 * k2 + 2 * k3 + k4) / 6;
    p1 = yi; p2 = a2; p3 = a3; p4 = a4;
    if (u2 !== null) { u2[i] = a2; u3[i] = a3; u4[i] = a4; }
  }
}

hand.ode = {
  scratch: (ins) => {
    const x = ins[0];
    const n = x.length;
    return { y: new Float64Array(n), ys: new Float64Array((S + 1) * n),
             u2: new Float64Array(n), u3: new Float64Array(n), u4: new Float64Array(n),
             yb: new Float64Array(n), yn: new Float64Array(n) };
  },
  f(ins, t) {
    const x = ins[0];
    t.y.fill(0);
    for (let s = 0; s < S; s++) odeStep(x, t.y, 0, t.y, 0, null, null, null);
    return t.y[x.length - 1];
  },
  grad(ins, g, t) {
    const x = ins[0];
    const n = x.length, { ys, u2, u3, u4, yb, yn } = t;
    ys.fill(0, 0, n);
    for (let s = 0; s < S; s++) odeStep(x, ys, s * n, ys, (s + 1) * n, null, null, null);
    g.fill(0);
    yb.fill(0);
    yb[n - 1] = 1;
    for (let s = S - 1; s >= 0; s--) {
      const o = s * n;
      odeStep(x, ys, o, yn, 0, u2, u3, u4); // the step's stages again
      // n1..n4: the adjoints of y, u2, u3, u4 at i that the stages at i + 1 hand back
      let n1 = 0, n2 = 0, n3 = 0, n4 = 0;
      for (let i = n - 1; i >= 1; i--) {
        const c = H * yb[i] / 6;
        const kb4 = c, kb3 = 2 * c + H * n4, kb2 = 2 * c + H * n3 / 2, kb1 = c + H * n2 / 2;
        yb[i] += n4 + n3 + n2 + n1;
        g[i] += kb1 * ys[o + i - 1] + kb2 * u2[i - 1] + kb3 * u3[i - 1] + kb4 * u4[i - 1];
        const xi = x[i];
        n1 = kb1 * xi; n2 = kb2 * xi; n3 = kb3 * xi; n4 = kb4 * xi;
      }
      const c = H * yb[0] / 6; // i = 0: the rate there is x_0 * 1
      yb[0] += n4 + n3 + n2 + n1;
      g[0] += 6 * c + H * n4 + H * n3 / 2 + H * n2 / 2;
    }
  },
};

module.exports = { hand };
