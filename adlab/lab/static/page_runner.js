// adlab's page runner: the JavaScript runtime of backend "js" (and "tfjs"), hosted in the
// Lab's own page instead of Node.
//
// Python sends the runtime's own files (runtime.js and the modules it requires) once per
// page; they run here unchanged, with Node's few globals played by small stand-ins: stdin
// lines are the kernel's messages, stdout lines go back to the kernel. So the page speaks
// exactly the Node protocol (node.py), and whatever the runtime does in Node (load, call,
// its timing loops) it does here.
//
// Messages from Python: {op: "boot", modules: {name: source}, main: name, seq} starts (or
// restarts) the runtime; {op: "line", line} is one request line. To Python: {op: "hello",
// facts} when the page is ready; {op: "line", line} for each answer; {op: "booted", seq}.

function bytesOf(text) {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

function base64Of(bytes) {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    raw += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(raw);
}

// Node's Buffer, as far as the runtime uses it: base64 in and out of bytes
class PageBuffer extends Uint8Array {
  static from(a, b, c) {
    if (typeof a === "string") {
      const bytes = bytesOf(a);
      return new PageBuffer(bytes.buffer, 0, bytes.length);
    }
    if (a instanceof ArrayBuffer) return new PageBuffer(a, b || 0, c === undefined ? a.byteLength - (b || 0) : c);
    return new PageBuffer(Uint8Array.from(a).buffer);
  }
  toString(encoding) {
    if (encoding === "base64") return base64Of(this);
    return new TextDecoder().decode(this);
  }
}

// The facts the Lab shows and records keep: the browser, its timer, its isolation, WebGL.
function timerResolution() {
  // the smallest step performance.now() takes, seen over ~20 ms
  let best = Infinity;
  const end = performance.now() + 20;
  let last = performance.now();
  while (last < end) {
    const now = performance.now();
    if (now > last) {
      best = Math.min(best, now - last);
      last = now;
    }
  }
  return best;
}

function webgl() {
  try {
    const canvas = document.createElement("canvas");
    const gl = canvas.getContext("webgl2") || canvas.getContext("webgl");
    if (!gl) return { available: false, renderer: null, software: null };
    const info = gl.getExtension("WEBGL_debug_renderer_info");
    const renderer = String(info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL)
                                 : gl.getParameter(gl.RENDERER));
    const vendor = String(info ? gl.getParameter(info.UNMASKED_VENDOR_WEBGL)
                               : gl.getParameter(gl.VENDOR));
    const software = /swiftshader|llvmpipe|software|softpipe|basic render/i.test(renderer);
    const version = gl instanceof WebGL2RenderingContext ? 2 : 1;
    return { available: true, renderer, vendor, software, version };
  } catch (err) {
    return { available: false, renderer: null, software: null, error: String(err) };
  }
}

function facts() {
  return {
    user_agent: navigator.userAgent,
    cross_origin_isolated: Boolean(self.crossOriginIsolated),
    timer_resolution_ms: timerResolution(),
    hardware_concurrency: navigator.hardwareConcurrency || null,
    webgl: webgl(),
  };
}

// One runtime per page: the same files Node runs, with stand-ins for Node's globals.
function boot(modules, main, answer) {
  let onLine = null;
  let onClose = null;
  const cache = new Map();
  const console_ = Object.assign({}, console); // runtime.js sets its log: not the page's
  const process_ = {
    version: navigator.userAgent,
    versions: {},
    platform: "browser",
    env: {},
    argv: [],
    exit: () => {},
    on: () => {},
    hrtime: { bigint: () => BigInt(Math.round(performance.now() * 1e6)) },
    stdout: { write: (text) => { for (const l of String(text).split("\n")) if (l) answer(l); return true; } },
    stderr: { write: (text) => { console.debug("[adlab runtime]", String(text)); return true; } },
    stdin: {},
  };
  const builtins = {
    readline: {
      createInterface: () => ({
        on(event, fn) {
          if (event === "line") onLine = fn;
          if (event === "close") onClose = fn;
          return this;
        },
      }),
    },
    perf_hooks: { performance },
    fs: { readFileSync: () => { throw new Error("no files in the page"); } },
    path: { join: (...p) => p.join("/"), dirname: (p) => p.replace(/\/[^/]*$/, "") },
  };
  function require_(name) {
    if (name in builtins) return builtins[name];
    // by file name: "./timing.js", "../tfjs/runtime_tfjs.js", "./static/tfjs.min.js"
    const key = name.split("/").pop().replace(/\.js$/, "");
    if (cache.has(key)) return cache.get(key).exports;
    if (!(key in modules)) throw new Error(`the page has no module ${name}`);
    const module = { exports: {} };
    cache.set(key, module);
    const run = new Function("require", "module", "exports", "process", "Buffer", "console",
                             "__dirname", "__filename", modules[key]);
    run(require_, module, module.exports, process_, PageBuffer, console_, ".", key + ".js");
    return module.exports;
  }
  require_(main);
  if (!onLine) throw new Error(`${main} did not listen for lines`);
  return { line: (text) => onLine(text), close: () => onClose && onClose() };
}

function start(model) {
  let runtime = null;
  const send = (content) => model.send(content);
  model.on("msg:custom", (msg) => {
    if (msg.op === "boot") {
      try {
        runtime = boot(msg.modules, msg.main, (line) => send({ op: "line", line }));
        send({ op: "booted", seq: msg.seq });
      } catch (err) {
        runtime = null;
        send({ op: "booted", seq: msg.seq, error: String(err && err.stack ? err.stack : err) });
      }
    } else if (msg.op === "line") {
      if (runtime === null) {
        send({ op: "line", line: JSON.stringify({ error: "the page's runtime is not started", kind: "lost", seq: JSON.parse(msg.line).seq }) });
        return;
      }
      // a new task: the kernel's message handler returns first
      setTimeout(() => runtime.line(msg.line), 0);
    } else if (msg.op === "facts") {
      send({ op: "hello", facts: facts() });
    }
  });
  send({ op: "hello", facts: facts() });
}

function initialize({ model }) {
  start(model);
}

function render({ model, el }) {
  el.classList.add("adlab-page-runner");
  const show = () => { el.textContent = model.get("shown"); };
  model.on("change:shown", show);
  show();
}

export default { initialize, render };
