// adlab's timing loop for JavaScript series: the same file in Node (require) and in a page
// (a <script>, which sets globalThis.adlabTiming).
//
// The rules are those of adlab's Python series (adlab/measure/timing.py): the first call
// kept apart (it pays for V8's first compile, a wasm instantiation, WebGL's shaders),
// warm-up until a call is steady, a loop count calibrated so one repeat lasts about
// 2 ms, then repeats, each the loop's time over its count. performance.now() is read
// around loops of calls, never around a single call past the first: in a page without
// cross-origin isolation (JupyterLab sets none) it ticks at 0.1 ms, longer than most calls.
//
//   const w = new adlabTiming.Watch(() => program(x), { targetS: 0.002 });
//   w.start();                 // { first_s, warm_s, loops, sample_s }: the first repeat
//   w.repeats(5);              // five more, seconds per call
//
// A repeat's calls are the call given, as it is: what it allocates or copies is timed.
"use strict";

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.adlabTiming = api;
})(typeof globalThis !== "undefined" ? globalThis : this, function () {
  //: a warm-up loop within this factor of the one before it is steady (timing.py's STEADY)
  const STEADY = 2.0;
  //: warm-up loops at the most, when calls never settle
  const MAX_WARMUPS = 20;
  //: a calibration trial of at least this fraction of the target is the first repeat
  const ENOUGH = 0.7;
  //: seconds per repeat (a sweep's TARGET_S)
  const TARGET_S = 0.002;
  //: a loop is timed over at least this many ticks of the clock (a tick's error: 5%)
  const MIN_TICKS = 20;
  //: warm-up runs at least this many repeats' worth of calls (V8 compiles in tiers)
  const WARM_REPEATS = 5;

  const hasPerformance = typeof performance !== "undefined" && typeof performance.now === "function";
  // milliseconds, as performance.now() gives them
  const clock = hasPerformance ? () => performance.now() : () => Date.now();

  // The clock's resolution in seconds: the smallest step between two readings that differ.
  function resolution(samples = 25, now = clock) {
    let best = Infinity;
    for (let i = 0; i < samples; i++) {
      const t0 = now();
      let t1 = now();
      while (t1 === t0) t1 = now();
      if (t1 - t0 < best) best = t1 - t0;
    }
    return best / 1e3;
  }

  // Whether the page is cross-origin isolated (its clock then ticks finer); null outside a page.
  function isolated() {
    return typeof crossOriginIsolated === "undefined" ? null : Boolean(crossOriginIsolated);
  }

  // What the records' env says of this runtime.
  function describe(resolutionS) {
    const node = typeof process !== "undefined" && process.versions && process.versions.node;
    return {
      runtime: node ? "node" : "browser",
      runtime_version: node ? process.version
        : (typeof navigator !== "undefined" ? navigator.userAgent : null),
      timer: hasPerformance ? "performance.now()" : "Date.now()",
      timer_resolution_s: resolutionS === undefined ? resolution() : resolutionS,
      cross_origin_isolated: isolated(),
    };
  }

  let sink = null; // each loop's last result is kept: no engine may drop the calls as dead

  // Seconds for `count` calls of `call`, read around the whole loop (`now`: a clock in ms).
  function loop(call, count, now = clock) {
    let out = null;
    const t0 = now();
    for (let i = 0; i < count; i++) out = call();
    const t = now() - t0;
    sink = out;
    return t / 1e3;
  }

  // The trivial call the floor is made of (x + 1 on a scalar, into a buffer made once):
  // the fixed cost of one call through this loop.
  function trivial() {
    const x = new Float64Array(1);
    const out = new Float64Array(1);
    return () => { out[0] = x[0] + 1; return out; };
  }

  // One callable timed a repeat at a time (timing.py's Stopwatch), so that a caller can
  // take the repeats of several in turn.
  class Watch {
    // options: targetS, budgetS (seconds of calls after the first), resolutionS, and
    // clock (milliseconds, as performance.now(); the tests' own)
    constructor(call, options = {}) {
      this.call = call;
      this.clock = options.clock || clock;
      this.targetS = options.targetS || TARGET_S;
      this.budgetS = options.budgetS === undefined ? Infinity : options.budgetS;
      this.resolutionS = options.resolutionS === undefined ? resolution(25, this.clock)
        : options.resolutionS;
      this.firstS = null;
      this.warmS = []; // seconds per call of each warm-up loop
      this.loops = 0;
      this.spentS = 0; // seconds of calls after the first
    }

    // The first call alone: one-off work (a compile) that no later call repeats.
    first() {
      this.firstS = loop(this.call, 1, this.clock);
      return this.firstS;
    }

    // Warm-up in loops of about a repeat (their count from the last loop's time per call),
    // until one lasts at least ENOUGH of the target, is within STEADY of the loop before
    // it, and WARM_REPEATS repeats' worth of calls have run: that loop is the first repeat.
    // V8 runs a new function interpreted, then compiles it in tiers as its calls add up
    // (an emitted gradient: 8 us a call for its first few hundred calls, 0.09 us after):
    // two single calls alike say nothing of the calls after them.
    start() {
      if (this.firstS === null) this.first();
      const target = Math.max(this.targetS, MIN_TICKS * this.resolutionS);
      let perCall = this.firstS;
      let count = 1;
      let before = null;
      for (let i = 0; i < MAX_WARMUPS; i++) {
        count = perCall > 0 ? Math.max(1, Math.ceil(target / perCall)) : count * 16;
        const t = loop(this.call, count, this.clock);
        this.spentS += t;
        perCall = t / count;
        this.warmS.push(perCall);
        const long = t >= ENOUGH * target;
        const steady = before !== null && perCall <= STEADY * before && before <= STEADY * perCall;
        if ((long && steady && this.spentS >= WARM_REPEATS * this.targetS) ||
            this.spentS + perCall > this.budgetS) break;
        before = perCall;
      }
      this.loops = count;
      return this._started(perCall);
    }

    _started(sample) {
      return { first_s: this.firstS, warm_s: this.warmS.slice(), loops: this.loops,
               sample_s: sample, resolution_s: this.resolutionS };
    }

    // k more repeats of `loops` calls: seconds per call of each.
    repeats(k) {
      const out = [];
      for (let i = 0; i < k; i++) {
        const t = loop(this.call, this.loops, this.clock);
        this.spentS += t;
        out.push(t / this.loops);
      }
      return out;
    }
  }

  // A whole series at once: started, then k - 1 more repeats (for a page or a script that
  // has no other series to take turns with).
  function series(call, k = 5, options = {}) {
    const w = new Watch(call, options);
    const started = w.start();
    return { ...started, samples_s: [started.sample_s, ...w.repeats(Math.max(0, k - 1))] };
  }

  return { Watch, series, loop, trivial, resolution, isolated, describe,
           TARGET_S, STEADY, MAX_WARMUPS, ENOUGH, MIN_TICKS, WARM_REPEATS,
           get sink() { return sink; } };
});
