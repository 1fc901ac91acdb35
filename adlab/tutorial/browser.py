"""Questions 1 and 5 in the askers' own runtime: plain JavaScript, TF.js and jax-js.

The series run in Node under a script or nbval, and in the Lab's own page when ticked
there (``Record.where`` says which); they are timed inside that runtime (``timing.js``).
Each function reads records a sweep measured, or computes a fact that holds on every
machine (agreement with JAX, tensors left after calls). Nothing here times anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._format import error_text, seconds
from .._vocab import Record
from ..accuracy.reference import max_relative_error
from ..catalog import resolve_model
from ..engine.backends import DEFAULT, FACTS, JAVASCRIPT, JAXJS, TFJS, get_backend
from ..engine.derivative import derivative, prepare
from ..engine.model.source import Model
from ..measure import parse_variant
from ..report.table import Table

#: Question 1's figures (TensorFlow.js forum): milliseconds per gradient, G9.js-style
#: finite differences in plain JavaScript and tf.grads on TF.js's cpu backend, by n
QUESTION_1_MS = {
    1: (0.002, 0.43), 10: (0.002, 0.41), 50: (0.05, 0.36), 100: (0.21, 0.36),
    200: (0.67, 0.33), 500: (3.7, 0.50), 1000: (14.6, 0.71),
}  # fmt: skip
#: how close a float32 derivative must come to JAX's float64 one to agree (TF.js's float32)
FLOAT32_AGREES = 1e-4
#: how close a float64 one must come (plain JavaScript runs JAX's own gradient program)
FLOAT64_AGREES = 1e-10


def _measured(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if not r.skipped and r.median_s is not None]


def _ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.3g}"


def _find(records: list[Record], n: int, mode: str, backend: str, scheme: str | None = None,
          device: str = "cpu") -> Record | None:  # fmt: skip
    for r in records:
        if (r.n, r.mode, r.backend, r.device) == (n, mode, backend, device) and (
            scheme is None or r.scheme == scheme
        ):
            return r
    return None


def asker_table(records: Iterable[Record]) -> Table:
    """Question 1's table beside this machine's: per n, G9's differences and ``tf.grad`` on
    TF.js's cpu backend as the asker timed them and as measured here, with jax-js's
    ``jit(grad)`` and its ``jvp`` per parameter (g9jax's way, under ``jit``) on its wasm
    backend, and the emitted JavaScript gradient (``reverse(js)``) beside them;
    milliseconds per gradient."""
    got = _measured(records)
    rows, where = [], set()
    for n in sorted({r.n for r in got}):
        g9 = _find(got, n, "numeric", JAVASCRIPT, "g9")
        tf_grad = _find(got, n, "reverse", TFJS)
        jax_grad = _find(got, n, "reverse", JAXJS, device="wasm")
        jax_jvp = _find(got, n, "forward", JAXJS, device="wasm")
        emitted = _find(got, n, "reverse", JAVASCRIPT)
        asked = QUESTION_1_MS.get(n, (None, None))
        found = (g9, tf_grad, jax_grad, jax_jvp, emitted)
        where |= {r.where for r in found if r is not None}
        times = [_ms(r.median_s if r else None) for r in found]
        rows.append((n, "-" if asked[0] is None else f"{asked[0]:g}", times[0],
                     "-" if asked[1] is None else f"{asked[1]:g}", *times[1:]))  # fmt: skip
    return Table.of(("n", "G9 differences: asker", "here", "tf.grad (cpu): asker", "here",
                     "jax-js jit(grad)", "jax-js jvp", "reverse(js) here"), rows,
                    title="Milliseconds per gradient of g9_graphics",
                    notes=[f"here: in {', '.join(sorted(w or '?' for w in where))}"])  # fmt: skip


def javascript_agreement(variants: Sequence[str], n: int, model: str | Model) -> Table:
    """Each JavaScript series' derivative against JAX's float64 one, at its own precision:
    float64 (plain JavaScript) to 1e-10, float32 (TF.js) to 1e-4. Run where a script runs
    (Node)."""
    m = resolve_model(model)
    point = m.setup(n)
    exact = derivative(m, *point, mode="reverse", backend=DEFAULT, precision="float64")
    rows = []
    for spec in variants:
        v = parse_variant(spec)
        # its own precision, else its framework's first (TF.js, jax-js: float32)
        precision = v.precision or FACTS[v.backend or DEFAULT].precisions[0]
        value = derivative(m, *point, mode=v.mode, scheme=v.scheme or "central",
                           backend=v.backend or DEFAULT, device=v.device, jit=v.jit,
                           precision=precision)  # fmt: skip
        single = precision == "float32"
        limit = FLOAT32_AGREES if single else FLOAT64_AGREES
        agrees = max_relative_error(value, exact) < limit
        rows.append((spec, "float32" if single else "float64", f"{limit:.0e}",
                     "yes" if agrees else "no"))  # fmt: skip
    return Table.of(("series", "computes in", "within", "agrees with JAX float64"), rows,
                    title=f"{m.name} at n = {n}")  # fmt: skip


def devices_table(records: Iterable[Record]) -> Table:
    """TF.js per device and n: the load (translating, sending and building the program), the
    first call (the backend's first kernels: wasm's, WebGL's shader compiles, V8's first
    compiles) apart from the steady call, and how many steady calls the first costs."""
    rows = []
    for r in _measured(records):
        if r.backend != TFJS or r.mode == "primal":
            continue
        first = r.first_call_s
        rows.append((r.label, r.device or "-", r.where or "-", r.n,
                     seconds(r.compile_s) if r.compile_s else "-", seconds(first),
                     seconds(r.median_s), f"{first / r.median_s:,.0f}" if first else "-",
                     error_text(r.error)))  # fmt: skip
    return Table.of(("series", "device", "where", "n", "load", "first call", "steady call",
                     "first / steady", "error"), rows)  # fmt: skip


def tidy_check(model: str | Model, n: int, devices: Sequence[str] = ("cpu", "wasm"),
               calls: int = 20) -> Table:  # fmt: skip
    """TF.js's tensors before and after ``calls`` more gradients, per device: every call runs
    in ``tf.tidy``, so the count stays where the first call left it (the program's constants)."""
    backend = get_backend(TFJS)
    m = resolve_model(model)
    rows = []
    for device in devices:
        p = prepare(m, *m.setup(n), backend=TFJS, device=device)
        p(*p.inputs)
        before = backend.tensors()
        for _ in range(calls):
            p(*p.inputs)
        after = backend.tensors()
        rows.append((device, calls, "yes" if after == before else f"no: {after - before:+d}"))
    return Table.of(("device", "gradients", "tensors unchanged"), rows,
                    title=f"tf.memory().numTensors, {m.name} at n = {n}")  # fmt: skip


def question_1_crossovers(records: Iterable[Record]) -> Table:
    """Where G9's differences stop winning: against ``tf.grad`` on TF.js's cpu backend (the
    asker's pair: n = 100-200 on their machine), jax-js's gradients and the emitted one."""
    from .readings import crossover_table

    got = _measured(records)
    g9 = next((r.label for r in got
               if (r.mode, r.scheme, r.backend) == ("numeric", "g9", JAVASCRIPT)),
              "numeric[g9](js)")  # fmt: skip
    rivals = [r.label for r in got if (r.mode == "reverse" and r.device == "cpu"
              and r.backend in (TFJS, JAVASCRIPT)) or (r.backend == JAXJS and r.mode in (
                  "reverse", "forward"))]  # fmt: skip
    return crossover_table(got, [(g9, label) for label in dict.fromkeys(rivals)])


def levels_table(records: Iterable[Record]) -> Table:
    """Each series with two derivative levels (a model's own ``grad`` inside f, a second
    derivative): which framework takes each (``Record.levels``)."""
    seen = {r.label: r.levels for r in records if r.levels}
    rows = []
    for label, levels in seen.items():  # "outer: ...; inner: ...[; one program, ...]"
        outer, inner, *rest = levels.split("; ")
        rows.append((label, outer.removeprefix("outer: "),
                     "; ".join([inner.removeprefix("inner: "), *rest])))  # fmt: skip
    return Table.of(("series", "outer level", "inner level"), rows)
