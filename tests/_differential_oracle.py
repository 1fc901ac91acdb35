"""The differential test's oracle: run one model through adlab's public API on every
backend x mode (and the second-order and sparse variants) and judge each result.

The reference is JAX's reverse mode in float64 (and ``jax.hessian``'s composition,
forward-over-reverse, for second order), itself checked against Richardson
differences of NumPy's own f where f is smooth. "NumPy's own f" is the model's
source run with the real ``numpy`` module as ``np``, not adlab's NumPy backend.
Where JAX refuses the model, the differences are the reference.

Each result is one ``Verdict``:
- ``agree``: within 1e-8 relative (1e-5 for finite differences), with an absolute
  floor of that times max |reference| (so exact zeros compare), or
- ``refused``: an ``adlab.ModelError`` that names a line of the model;
- ``flagged``: a value that disagrees, but which adlab itself reported as
  ``trusted=False`` with both numbers (its cross-check against JAX's checked
  reference): a framework's own bug, caught and said, as issue 23 allows;
- anything else is a failure: ``wrong`` (a value that disagrees, reported trusted),
  ``no line`` (a ModelError naming no line), ``raw`` (any other exception),
  ``crash`` (the worker process died or hung).

``Worker`` runs ``evaluate`` in a long-lived child process (spawned, so one crash or
hang of a framework costs a restart, not the test session).
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

FIRST = ("primal", "forward", "reverse", "numeric", "complex-step")
#: what each framework runs of FIRST (NumPy has no AD)
FIRST_ON = {
    "jax": FIRST,
    "torch": FIRST,
    "tensorflow": FIRST,
    "autograd": FIRST,
    "numpy": ("primal", "numeric", "complex-step"),
}
if shutil.which("node"):  # backend='js' runs the model's jaxprs in Node: no complex numbers
    FIRST_ON["js"] = ("primal", "forward", "reverse", "numeric")
COMPOSITIONS = ("forward-over-reverse", "reverse-over-forward", "reverse-over-reverse",
                "forward-over-forward", "numeric", "complex-step")  # fmt: skip
#: the Hessian compositions each framework runs (adlab.engine.modes.hessian.ON)
SECOND_ON = {
    "jax": COMPOSITIONS,
    "torch": COMPOSITIONS[:5],
    "tensorflow": COMPOSITIONS[:5],
    "autograd": COMPOSITIONS,
}
RTOL = 1e-8
RTOL_DIFFERENCES = 1e-5
FLOOR = 1e-6  # the smallest scale an absolute floor is taken from (all-zero references)


def first_order_runs() -> list[str]:
    return [f"{b} {m}" for b, modes in FIRST_ON.items() for m in modes]


def second_order_runs() -> list[str]:
    """Hessians, HVPs and sparse derivatives: for scalar f only."""
    runs = []
    for b, comps in SECOND_ON.items():
        runs += [f"{b} hessian {c}" for c in comps]
        runs += [f"{b} hvp {c}" for c in comps if c != "complex-step"]
    runs += [f"jax sparse-hessian {c}" for c in COMPOSITIONS[:5]]
    return runs


SPARSE_JACOBIANS = ["jax sparse forward", "jax sparse reverse"]


@dataclass(frozen=True)
class Verdict:
    run: str
    status: str  # agree, refused, wrong, flagged, no line, raw, crash, unchecked
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in ("agree", "refused", "flagged", "unchecked")


# ----------------------------------------------------------------------- oracle
def numpy_f(source: str):
    """f as NumPy runs it: the model's source with the real numpy as np."""
    namespace: dict[str, Any] = {"np": np}
    exec(compile(source, "<model>", "exec"), namespace)
    return namespace["f"]


def richardson(g, x: np.ndarray) -> np.ndarray:
    """dg/dx by central differences at h and h/2, extrapolated (error O(h^4)); (m, n)."""
    cols = []
    for i in range(x.size):
        h = 1e-3 * max(1.0, abs(x[i]))

        def d(h, i=i):
            e = np.zeros_like(x)
            e[i] = h
            return (np.asarray(g(x + e), float) - np.asarray(g(x - e), float)) / (2 * h)

        cols.append((4 * d(h / 2) - d(h)) / 3)
    return np.stack(cols, axis=-1)


def close(got: Any, ref: np.ndarray, rtol: float) -> str | None:
    """None where got matches ref, else why not."""
    got = np.asarray(got, dtype=float) if not hasattr(got, "toarray") else got.toarray()
    if got.shape != ref.shape:
        return f"shape {got.shape}, reference {ref.shape}"
    scale = max(float(np.max(np.abs(ref), initial=0.0)), FLOOR)
    err = np.abs(got - ref)
    if np.all(err <= rtol * np.abs(ref) + rtol * scale):  # NaN anywhere fails
        return None
    return f"got {np.array2string(got, precision=6)} vs {np.array2string(ref, precision=6)}"


def _call(run: str, model, x, v):
    """(value, trusted) of one run through the public API."""
    import adlab

    backend, kind, *rest = run.split(" ")
    if kind in FIRST:
        return adlab.derivative(model, x, mode=kind, backend=backend, full_output=True)
    if kind == "sparse":
        return adlab.derivative(model, x, mode=rest[0], backend=backend, sparse=True,
                                full_output=True)  # fmt: skip
    if kind == "hessian":
        return adlab.hessian(model, x, mode=rest[0], backend=backend, full_output=True)
    if kind == "sparse-hessian":
        return adlab.hessian(model, x, mode=rest[0], backend=backend, sparse=True,
                             full_output=True)  # fmt: skip
    assert kind == "hvp", run
    return adlab.hvp(model, x, v, mode=rest[0], backend=backend, full_output=True)


def _outcome(run: str, model, x, v) -> tuple[str, Any, bool]:
    """("value", value, trusted) or (status, message, False) for an exception."""
    import adlab

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # untrusted results say so in info.trusted
            with np.errstate(all="ignore"):
                value, info = _call(run, model, x, v)
        return "value", value, bool(info.trusted)
    except adlab.ModelError as exc:
        named = exc.lineno is not None and exc.line
        return ("refused" if named else "no line"), str(exc), False
    except Exception as exc:  # a raw framework error: where it came from helps the fix
        where = traceback.extract_tb(exc.__traceback__)[-1]
        place = f"{os.path.relpath(where.filename)}:{where.lineno}"
        return "raw", f"{type(exc).__name__}: {str(exc)[:300]} (at {place})", False


@dataclass
class References:
    """What each run is held to: f(x), the gradient (Jacobian) and the Hessian."""

    fx: np.ndarray
    grad: np.ndarray | None  # None: no reference (both JAX and the differences failed)
    grad_rtol: float
    hess: np.ndarray | None = None
    hess_rtol: float = RTOL
    note: str = ""


def references(model, x, f_np, smooth: bool, second: bool) -> tuple[References, list[Verdict]]:
    """The references, and verdicts on JAX's own reverse mode and Hessian against the
    differences of NumPy's f (where f is smooth: near a kink they are not held)."""
    import adlab

    fx = np.asarray(f_np(x), dtype=float)
    differences = richardson(f_np, x)
    if fx.ndim == 0:
        differences = differences.reshape(x.shape)
    refs = References(fx, differences, RTOL_DIFFERENCES, note="differences of NumPy's f")
    verdicts = []
    status, grad, grad_trusted = _outcome("jax reverse", model, x, None)
    if status == "value":
        grad = np.asarray(grad, dtype=float)
        # near a kink differences are not held to 1e-5; but NaN is never right where
        # the differences are finite
        nan = not np.all(np.isfinite(grad)) and np.all(np.isfinite(differences))
        why = close(grad, differences, RTOL_DIFFERENCES) if smooth or nan else None
        if why:  # the reference itself disputed: say so, and judge against NumPy's f
            verdicts.append(Verdict("jax reverse", "wrong" if grad_trusted else "flagged",
                                    "vs differences of NumPy's f: " + why))  # fmt: skip
        else:
            refs = References(fx, grad, RTOL, note="JAX reverse")
    if not second:
        return refs, verdicts
    status, hess, hess_trusted = _outcome("jax hessian forward-over-reverse", model, x, None)
    grad_program = None
    if refs.note == "JAX reverse":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grad_program = adlab.prepare(model, x, mode="reverse")
    hdiff = None
    if grad_program is not None and smooth:
        with np.errstate(all="ignore"):
            hdiff = richardson(lambda y: np.asarray(grad_program(y)), x)
    if status == "value":
        hess = np.asarray(hess, dtype=float)
        why = close(hess, hdiff, RTOL_DIFFERENCES) if hdiff is not None else None
        if why is None and not np.all(np.isfinite(hess)):
            why = "not finite"
        if why:
            verdicts.append(Verdict("jax hessian forward-over-reverse",
                                    "wrong" if hess_trusted else "flagged",
                                    "vs differences of JAX's gradient: " + why))  # fmt: skip
            refs.hess, refs.hess_rtol = hdiff, RTOL_DIFFERENCES
        else:
            refs.hess = hess
    elif hdiff is not None:
        refs.hess, refs.hess_rtol = hdiff, RTOL_DIFFERENCES
    elif smooth and fx.ndim == 0:  # neither JAX's gradient nor its Hessian: differences twice
        refs.hess = richardson(lambda y: richardson(f_np, y).reshape(x.shape), x)
        refs.hess_rtol = RTOL_DIFFERENCES
    return refs, verdicts


def judge(run: str, outcome: tuple[str, Any, bool], refs: References, v) -> Verdict:
    status, value, trusted = outcome
    if status != "value":
        return Verdict(run, status, value)
    backend, kind, *rest = run.split(" ")
    differences = kind == "numeric" or rest == ["numeric"]
    if kind == "primal":
        ref, rtol = refs.fx, RTOL
    elif kind in ("hessian", "sparse-hessian", "hvp"):
        if refs.hess is None:
            return Verdict(run, "unchecked", "no Hessian reference")
        ref, rtol = refs.hess, refs.hess_rtol
        if kind == "hvp":
            ref = refs.hess @ v
    else:
        if refs.grad is None:
            return Verdict(run, "unchecked", "no reference")
        ref, rtol = refs.grad, refs.grad_rtol
        if kind == "sparse":  # a csr_array: a scalar f's gradient is its one row
            ref = ref.reshape(-1, x_size) if (x_size := ref.shape[-1]) else ref
    why = close(value, ref, max(rtol, RTOL_DIFFERENCES if differences else RTOL))
    if why is None:
        return Verdict(run, "agree")
    return Verdict(run, "wrong" if trusted else "flagged", why)


def evaluate(case: dict) -> list[dict]:
    """Every run of ``case`` (a ``Case`` as a dict, plus ``runs``), judged."""
    import adlab

    model = adlab.Model.from_source(case["source"], "fuzz")
    (x,) = model.setup(case["n"], seed=case["seed"])
    x = np.asarray(x, dtype=float)
    f_np = numpy_f(case["source"])
    runs = case["runs"]
    with np.errstate(all="ignore"):
        finite = np.all(np.isfinite(f_np(x)))
    if not finite:  # the grammar's hole, not adlab's: nothing to compare with
        return [asdict(Verdict(run, "unchecked", "f(x) is not finite")) for run in runs]
    second = any(r.split(" ")[1] in ("hessian", "hvp", "sparse-hessian") for r in runs)
    with np.errstate(all="ignore"):
        refs, verdicts = references(model, x, f_np, case["smooth"], second)
    v = np.random.default_rng(case["seed"] + 1).normal(size=x.shape)
    for run in runs:
        start = time.perf_counter()
        verdict = judge(run, _outcome(run, model, x, v), refs, v)
        verdicts.append(replace(verdict, seconds=time.perf_counter() - start))
    return [asdict(v) for v in verdicts]


# ----------------------------------------------------------------------- worker
def _serve(conn) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            conn.send(evaluate(case))
        except Exception as exc:  # the oracle's own failure: reported, the worker lives on
            conn.send([asdict(Verdict("oracle", "raw", traceback.format_exc()[-2000:]))])
            del exc


class Worker:
    """A child process that evaluates cases one after another; restarted when it dies."""

    def __init__(self, timeout_s: float = 600.0) -> None:
        self.timeout_s = timeout_s
        self._proc = None

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self._proc.start()
        child.close()

    def evaluate(self, case: dict) -> list[Verdict]:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send(case)
        why = None
        try:
            if self._conn.poll(self.timeout_s):
                return [Verdict(**v) for v in self._conn.recv()]
            why = f"the worker hung (over {self.timeout_s:.0f} s)"
        except (EOFError, OSError):
            why = "the worker died"
        code = self.close(kill=True)
        return [Verdict("worker", "crash", f"{why} on this model (exit code {code})")]

    def close(self, kill: bool = False) -> int | None:
        if self._proc is None:
            return
        if not kill and self._proc.is_alive():
            self._conn.send(None)
            self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        code = self._proc.exitcode
        self._proc = None
        return code
