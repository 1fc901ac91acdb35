"""Question 1's series replayed in headless Chromium (``js_frame.py --chromium``).

The programs are prepared in Python and loaded and called in Node once, with every
request kept (``Recorder``); a page served from localhost then replays those requests
in the runtime's own files (``runtime.js``, ``timing.js``, TF.js's), hosted by the Lab
page runner's stand-ins for Node (``adlab/lab/static/page_runner.js``'s ``boot``), and
times each program with ``timing.js`` in turn with the others.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from importlib import resources

from adlab.catalog import load_model
from adlab.measure.series import parse_variant, sweep_precision


class Recorder:
    """Node, with every request kept: the messages a page replays."""

    where = "node"

    def __init__(self, inner) -> None:
        self.inner, self.sent = inner, []

    generation = property(lambda self: self.inner.generation)
    version = property(lambda self: self.inner.version)

    def request(self, msg: dict, timeout: float = 300.0) -> dict:
        self.sent.append(msg)
        return self.inner.request(msg, timeout)

    def ensure(self) -> int:
        return self.inner.ensure()

    def forget(self, generation: int, program: int) -> None:
        self.inner.forget(generation, program)


PAGE = """<!doctype html><html><body><script>
%(runner)s
const payload = %(payload)s;
let rt = null;
let waiting = null;
// one request at a time: its answer resolves it (now, or later for a TF.js load)
const ask = (msg) => new Promise((resolve) => {
  waiting = resolve;
  rt.line(JSON.stringify({ ...msg, seq: 1 }));
});
async function main() {
  rt = boot(payload.modules, "runtime", (line) => {
    const w = waiting;
    waiting = null;
    w(JSON.parse(line));
  });
  for (const msg of payload.replay) {
    const a = await ask(msg);
    if (a.error) throw new Error(`replaying ${msg.op} ${msg.id}: ${a.error}`);
  }
  const out = { describe: await ask({ op: "describe" }), sizes: {} };
  for (const [n, ids] of Object.entries(payload.sizes)) {
    const got = {};
    for (const [label, id] of Object.entries(ids)) {
      const s = await ask({ op: "time_start", id, target_s: 0.002, budget_s: 1.0 });
      got[label] = s.error ? { error: s.error } : { first_s: s.first_s, samples: [s.sample_s] };
    }
    for (let r = 0; r < 14; r++) {
      for (const [label, id] of Object.entries(ids)) {
        if (got[label].error) continue;
        got[label].samples.push(...(await ask({ op: "time_repeats", id, k: 1 })).samples_s);
      }
    }
    out.sizes[n] = got;
  }
  return out;
}
main().catch((err) => ({ error: String(err.stack || err) }))
  .then((out) => fetch("/result", { method: "POST", body: JSON.stringify(out) }));
</script></body></html>
"""


def serve_once(
    page: str,
    isolated: bool,
    run: list[str],
    timeout: float = 900.0,
    files: dict[str, str] | None = None,
) -> dict:
    """Serve ``page`` on localhost, start ``run`` + its address, return what it POSTs.
    ``files``: more to serve, by path (``/grad.mjs``: a module the page imports, which
    Chromium refuses from ``file://``)."""
    import http.server
    import threading

    got: dict = {}
    done = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def _headers(self, kind: str) -> None:
            self.send_header("Content-Type", kind)
            if isolated:  # what makes a page cross-origin isolated (a 5 us clock)
                self.send_header("Cross-Origin-Opener-Policy", "same-origin")
                self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.end_headers()

        def do_GET(self) -> None:
            self.send_response(200)
            extra = (files or {}).get(self.path)
            self._headers("text/html; charset=utf-8" if extra is None
                          else "text/javascript; charset=utf-8")  # fmt: skip
            self.wfile.write((page if extra is None else extra).encode())

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.update(json.loads(body))
            self.send_response(204)
            self._headers("text/plain")
            done.set()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.Popen([*run, f"--user-data-dir={profile}", url],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            if not done.wait(timeout):
                got = {"error": f"no result from Chromium within {timeout:.0f} s"}
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            server.shutdown()
    return got


def chromium() -> list[str] | None:
    """Headless Chromium's command (the page's address goes last), or None: none here."""
    import shutil

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    return exe and [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def page_runner() -> str:
    """The Lab page runner's ``boot`` (the runtime's stand-ins for Node), as a classic script."""
    runner = resources.files("adlab.lab").joinpath("static/page_runner.js").read_text()
    if "function boot(" not in runner:
        raise RuntimeError("the page runner has no boot() to host the runtime")
    return runner[: runner.index("export default")]  # a classic script: no module


def recorded(model: str, sizes: list[int], modes: list[str]) -> dict:
    """The series' programs prepared and called once in Node, every request kept: what a
    page replays (``replay``), the runtime's files (``modules``), and the program of each
    series at each size (``sizes``: n -> label -> the runtime's program id)."""
    import adlab
    from adlab.engine.backends import with_fact
    from adlab.engine.backends.js.node import node
    from adlab.engine.backends.js.transport import running_in
    from adlab.lab.page_runner import runtime_modules

    m = load_model(model)
    rec = Recorder(node())
    keep, ids = [], {}
    with running_in(rec):
        for n in sizes:
            args = m.setup(n)
            for label in modes:
                v = parse_variant(label)
                if v.backend not in with_fact("traced"):  # JavaScript's backends
                    continue
                precision = v.precision or sweep_precision(v.backend, "float64")
                p = adlab.prepare(m, *args, mode=v.mode, scheme=v.scheme or "central",
                                  backend=v.backend, device=v.device, jit=v.jit,
                                  precision=precision)  # fmt: skip
                p(*p.inputs)
                keep.append(p)  # alive: its program stays loaded until the replay is sent
                ids.setdefault(str(n), {})[label] = p.timer.fn.last.id
    replay = [{k: v for k, v in msg.items() if k != "seq"} for msg in rec.sent
              if msg.get("op") in ("load", "call")]  # fmt: skip
    return {"modules": runtime_modules(), "replay": replay, "sizes": ids}


def in_chromium(sizes: list[int], modes: list[str], isolated: bool = False) -> dict | str:
    """The series' programs replayed and timed in headless Chromium; or why not."""
    run = chromium()
    if run is None:
        return "no chromium on the PATH"
    try:
        runner = page_runner()
    except RuntimeError as err:
        return str(err)
    payload = recorded("g9_graphics", sizes, ["primal(js)", *modes])
    page = PAGE % {"runner": runner, "payload": json.dumps(payload).replace("</", "<\\/")}
    out = serve_once(page, isolated, run)
    return out.get("error") or out
