// adlab's JavaScript runtime: runs programs emitted from a model's jaxprs (emit.py) in Node.
//
// One request per line on stdin, one answer per line on stdout, in JSON. Arrays travel
// as base64 of little-endian float64 bytes: exact, and NaN and Infinity survive.
// The process ends when stdin closes (its Python parent ended or closed the pipe).
//
// A program is a factory `(C) => function(...inputs) -> [outputs]` whose buffers are
// allocated once; the drivers below are the modes that run outside the emitted code
// (a JVP per column, a VJP per row, finite differences, G9's gradient).
"use strict";

const readline = require("readline");
const timing = require("./timing.js");

console.log = console.error; // stdout carries the answers alone

const programs = new Map();

function decode(text) {
  const bytes = Buffer.from(text, "base64");
  const out = new Float64Array(bytes.length / 8);
  new Uint8Array(out.buffer).set(bytes); // a copy: Buffer's offset may not be 8-aligned
  return out;
}

function encode(array) {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString("base64");
}

// backends "tfjs"'s and "jaxjs"'s programs: their runtimes (and bundles), required on first use
const RUNTIMES = { tfjs: () => require("../tfjs/runtime_tfjs.js"),
                   jaxjs: () => require("../jaxjs/runtime_jaxjs.js") };
const runtimes = {};
const runtime = (kind) => runtimes[kind] || (runtimes[kind] = RUNTIMES[kind]());
const tfjs = () => runtime("tfjs");

function load(msg) {
  if (msg.kind in RUNTIMES) { // a promise
    return runtime(msg.kind).load(msg, { programs, DRIVERS, g9Gradient, numeric, g9 });
  }
  const consts = msg.consts.map(decode);
  const factory = (0, eval)(msg.source);
  programs.set(msg.id, {
    fn: factory(consts),
    driver: msg.driver,
    inputs: new Array(msg.n_inputs).fill(null),
  });
  return {};
}

// ---------------------------------------------------------------- drivers
function runOnce(p) {
  return p.fn(...p.inputs).map((a) => Float64Array.from(a));
}

// forward mode: the JVP program once per column e_j; J[i, j] = (J e_j)[i]
function columns(p, d) {
  const n = d.n, m = d.m;
  const v = new Float64Array(n);
  const args = [...p.inputs, v];
  const out = new Float64Array(m * n);
  for (let j = 0; j < n; j++) {
    v[j] = 1;
    const t = p.fn(...args)[0];
    for (let i = 0; i < m; i++) out[i * n + j] = t[i];
    v[j] = 0;
  }
  return [out];
}

// reverse mode of a vector f: the VJP program once per row e_i
function rows(p, d) {
  const n = d.n, m = d.m;
  const c = new Float64Array(m);
  const args = [...p.inputs, c];
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++) {
    c[i] = 1;
    out.set(p.fn(...args)[0], i * n);
    c[i] = 0;
  }
  return [out];
}

// finite differences on the emitted f, as adlab.engine.modes.numeric takes them: the step
// rounded to a distance x can move, each slope divided by the distance actually taken
// (x may be a Float32Array, as jax-js's float32 programs hold it: each point is the one
// x holds once moved there)
function numeric(p, d) {
  const x = p.inputs[d.x], n = x.length, m = d.m;
  const step = d.step ? p.inputs[d.step] : null;
  const value = new Float64Array(m * n);
  const error = d.scheme === "richardson" ? new Float64Array(m * n) : null;
  // f's values at the stencil's points, kept in buffers made once per call
  const kept = [0, 1, 2, 3].map(() => new Float64Array(m));
  let next = 0;
  const f = (into) => { into.set(p.fn(...p.inputs)[0]); return into; };
  const f0 = d.scheme === "forward" ? f(new Float64Array(m)) : null;
  const at = (j, xj) => { x[j] = xj; return [f(kept[next++]), x[j]]; };
  for (let j = 0; j < n; j++) {
    const xj = x[j];
    next = 0;
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

// G9.js's gradient (bijection/g9, src/minimize.js, from numeric.js), line for line, of f()
// as x[i] moves (x perturbed in place and restored; a Float32Array where TF.js computes).
// One check is adlab's: a step that no longer moves x in its own precision is refused, where
// G9 would take its equal values for slopes that agree and answer 0.
function g9Gradient(f, x) {
  const dim = x.length;
  const { max, abs, min } = Math;
  const f1 = f();
  if (isNaN(f1)) throw new G9Error("f is NaN at x, so G9's gradient refuses it");
  const grad = new Float64Array(dim);
  for (let i = 0; i < dim; i++) {
    const xi = x[i];
    let delta = max(1e-6 * f1, 1e-8);
    for (let k = 0; ; k++) {
      if (k === 20) {
        x[i] = xi;
        throw new G9Error(`G9's gradient failed at index ${i}: its slopes never agreed ` +
                          "within 20 shrinks of the step");
      }
      x[i] = xi + delta;
      if (x[i] === xi) {
        const bits = x instanceof Float32Array ? "float32, which TF.js computes in" : "float64";
        throw new G9Error(`G9's step (${delta.toExponential(1)}) does not move x[${i}] = ` +
                          `${xi} in ${bits}: its slopes would be 0`);
      }
      const f0 = f();
      x[i] = xi - delta;
      const f2 = f();
      x[i] = xi;
      if (!(isNaN(f0) || isNaN(f2))) {
        grad[i] = (f0 - f2) / (2 * delta);
        const t0 = xi - delta, t1 = xi, t2 = xi + delta;
        const d1 = (f0 - f1) / delta;
        const d2 = (f1 - f2) / delta;
        const err = min(max(abs(d1 - grad[i]), abs(d2 - grad[i]), abs(d1 - d2)), delta);
        const normalize = max(abs(grad[i]), abs(f0), abs(f1), abs(f2), abs(t0), abs(t1),
                              abs(t2), 1e-8);
        if (err / normalize < 1e-3) break;
      }
      delta /= 16;
    }
  }
  return grad;
}

function g9(p, d) {
  return [g9Gradient(() => p.fn(...p.inputs)[0][0], p.inputs[d.x])];
}

class G9Error extends Error {}

const DRIVERS = { once: runOnce, columns, rows, numeric, g9 };

// the driver's work at the inputs last sent: what a timed loop calls (its outputs left as
// the program made them: no copy, no encoding)
function work(p) {
  const d = p.driver;
  if (d.kind === "once") return () => p.fn(...p.inputs);
  const run = DRIVERS[d.kind];
  return () => run(p, d);
}

// runs `fn` with x restored where it throws (drivers perturb x in place), a G9Error as its answer
function guarded(p, fn) {
  const x = p.inputs[p.driver.x];
  const saved = x ? Float64Array.from(x) : null;
  try {
    return fn();
  } catch (err) {
    if (saved) x.set(saved);
    if (err instanceof G9Error) return { error: err.message, kind: "g9" };
    throw err;
  }
}

function call(msg) {
  const p = programs.get(msg.id);
  if (p === undefined) return { error: `no program ${msg.id}`, kind: "lost" };
  const d = p.driver;
  for (const [slot, data] of Object.entries(msg.inputs)) p.inputs[Number(slot)] = decode(data);
  return guarded(p, () => {
    if (p.firstS !== undefined) return { out: DRIVERS[d.kind](p, d).map(encode) };
    // the program's first call, alone: V8 compiles it (the timing's first_s)
    const t0 = performance.now();
    const out = DRIVERS[d.kind](p, d);
    p.firstS = (performance.now() - t0) / 1e3;
    return { out: out.map(encode) };
  });
}

// ----------------------------------------------------------------- timing
let resolutionS = null; // the clock's, measured once

function describe() {
  if (resolutionS === null) resolutionS = timing.resolution();
  return timing.describe(resolutionS);
}

// A program timed at the inputs its last call sent (timing.js): its first call (made by
// that `call`) apart, warmed up, a loop count for repeats of target_s; the first repeat.
function timeStart(msg) {
  const p = programs.get(msg.id);
  if (p === undefined) return { error: `no program ${msg.id}`, kind: "lost" };
  const env = describe();
  const w = new timing.Watch(work(p), { targetS: msg.target_s,
    budgetS: msg.budget_s === null ? Infinity : msg.budget_s, resolutionS: env.timer_resolution_s });
  if (p.firstS !== undefined) w.firstS = p.firstS;
  p.watch = w;
  return guarded(p, () => ({ ...w.start(), env }));
}

// k more repeats of the program timeStart calibrated: seconds per call of each
function timeRepeats(msg) {
  const p = programs.get(msg.id);
  if (p === undefined || p.watch === undefined) {
    return { error: `no timed program ${msg.id}`, kind: "lost" };
  }
  return guarded(p, () => ({ samples_s: p.watch.repeats(msg.k) }));
}

// a TF.js or jax-js program's memory over one call of its driver, by that framework's own
// counters (TF.js's: a promise); a plain program's buffers are counted by its emitter, in
// Python (js/memory.py)
function memory(msg) {
  const p = programs.get(msg.id);
  if (p === undefined) return { error: `no program ${msg.id}`, kind: "lost" };
  const kind = p.tfjs ? "tfjs" : p.jaxjs ? "jaxjs" : null;
  if (!kind) return { error: `program ${msg.id} is no TF.js or jax-js program`, kind: "js" };
  return runtime(kind).measure(p, work(p), Boolean(msg.reverse));
}

function drop(msg) {
  const p = programs.get(msg.id);
  if (p !== undefined && p.dispose) p.dispose(); // a TF.js program's tensors
  programs.delete(msg.id);
  return {};
}

const OPS = { load, call, drop, tfjs_memory: () => (runtimes.tfjs ? tfjs().memory() : { tensors: 0 }),
              jaxjs_memory: () => (runtimes.jaxjs ? runtime("jaxjs").memory() : { slots: 0, bytes: 0 }),
              ping: () => ({ pong: process.version, programs: programs.size }),
              describe, time_start: timeStart, time_repeats: timeRepeats, memory };

function answered(msg, answer) {
  answer.seq = msg.seq;
  process.stdout.write(JSON.stringify(answer) + "\n");
}

const failed = (err) => ({ error: String(err && err.stack ? err.stack : err), kind: "js" });

// Requests in order: one that answers a promise (a TF.js load awaits its backend) holds
// the ones after it until it is answered.
let pending = null;
function handle(line) {
  let msg = {};
  let answer;
  try {
    msg = JSON.parse(line);
    answer = OPS[msg.op](msg);
  } catch (err) {
    answer = failed(err);
  }
  if (answer && typeof answer.then === "function") {
    return answer.then((a) => answered(msg, a), (err) => answered(msg, failed(err)));
  }
  answered(msg, answer);
  return null;
}

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  pending = pending === null ? handle(line) : pending.then(() => handle(line));
  if (pending !== null) {
    const mine = pending;
    mine.then(() => { if (pending === mine) pending = null; });
  }
});
lines.on("close", () => process.exit(0));
