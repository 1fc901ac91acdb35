"""The shared vocabulary of adlab: the words every other module uses.

Kept in one place (as optax's ``base.py`` does) so that a reader meets each
concept once, before anything uses it.
"""

from __future__ import annotations

from typing import Literal

#: How a derivative is taken. ``numeric`` is finite differences.
Mode = Literal["forward", "reverse", "numeric", "complex-step"]
MODES: tuple[str, ...] = ("forward", "reverse", "numeric", "complex-step")

#: Every mode ``prepare`` takes, each a rule registered in ``adlab.engine.modes``
#: (``adlab.ALL_MODES`` is read from that registry): the first-order ``MODES``,
#: ``primal`` (f itself, timed the same way, for ratios), and the second-order ones,
#: whose ``scheme`` is a ``Composition``. ``mode`` means this everywhere.
AnyMode = Literal[
    "forward", "reverse", "numeric", "complex-step", "primal",
    "hessian", "hvp", "gradient-and-hvp", "gradient-over-hvp",
]  # fmt: skip

#: How a second derivative composes modes, the outer one first: the ``scheme`` of the
#: modes ``hessian`` and ``hvp`` (``adlab.hessian(f, x, scheme=...)``).
Composition = Literal[
    "forward-over-reverse", "reverse-over-forward", "reverse-over-reverse",
    "forward-over-forward", "numeric", "complex-step",
]  # fmt: skip

#: The mode of the derivatives a model takes inside f with the provided ``grad(fn)``.
Inner = Literal["reverse", "forward"]

#: Finite-difference schemes for ``mode="numeric"``. ``g9`` is G9.js's own gradient
#: (central differences with a step shrunk until its slopes agree), on js and numpy.
Scheme = Literal["forward", "central", "richardson", "g9"]
SCHEMES: tuple[str, ...] = ("forward", "central", "richardson", "g9")

#: Floating-point precision of one call. Set per call, never globally.
Precision = Literal["float32", "float64"]
PRECISIONS: tuple[str, ...] = ("float32", "float64")

#: Where the arithmetic runs: the framework whose NumPy-like namespace the model's
#: ``np`` is, and whose AD and compiler take the derivative. ``numpy`` is the
#: framework-free baseline (no AD: finite differences and complex step only). ``js`` is
#: plain JavaScript emitted from f's JAX programs, run in Node; ``tfjs`` is TensorFlow.js,
#: f's JAX program translated to its operations, differentiated by TF.js (float32);
#: ``jaxjs`` is jax-js, the same translation differentiated by jax-js's own transforms.
Backend = Literal["jax", "numpy", "torch", "tensorflow", "autograd", "js", "tfjs", "jaxjs"]
BACKENDS: tuple[str, ...] = ("jax", "numpy", "torch", "tensorflow", "autograd", "js", "tfjs",
                             "jaxjs")  # fmt: skip

#: What a JavaScript backend's programs run on: TF.js's cpu, wasm or webgl backend, jax-js's
#: wasm, cpu, webgl or webgpu (plain JavaScript: cpu). The Python frameworks run where they
#: put themselves.
Device = Literal["cpu", "wasm", "webgl", "webgpu"]
DEVICES: tuple[str, ...] = ("cpu", "wasm", "webgl", "webgpu")

#: Where a JavaScript backend's programs run: Node (started by adlab), or the browser
#: that shows the Lab (only while its page is attached).
Where = Literal["node", "browser"]
WHERES: tuple[str, ...] = ("node", "browser")

#: One frame of an interactive 60 Hz page: the budget of question 1.
FRAME_S = 0.016


class ModelError(ValueError):
    """A problem in the user's model, pointing at the user's own line.

    Attributes:
        lineno: line number in the model source, or None when unknown.
        line: the text of that line, or None.
        hint: what to do next.

    Example:
        >>> source = ("def setup(n, rng):\\n    return (rng.normal(size=n),)\\n"
        ...           "def f(x):\\n    return np.sum(x +\\n")
        >>> try:
        ...     adlab.Model.from_source(source)
        ... except adlab.ModelError as e:
        ...     print(str(e).splitlines()[0])
        line 4: SyntaxError: '(' was never closed
    """

    def __init__(
        self,
        message: str,
        *,
        lineno: int | None = None,
        line: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.lineno = lineno
        self.line = line
        self.hint = hint
        self.reason = message
        text = message
        if lineno is not None:
            text = f"line {lineno}: {message}"
            if line:
                text += f"\n    {lineno} | {line.strip()}"
        if hint:
            text += f"\n  What to do: {hint}"
        super().__init__(text)


# ---------------------------------------------------------------- measurement
# The record is the contract between the measurement layer, reports, plots,
# the Lab and the CLI's JSON: field names here are public API.

from dataclasses import asdict, dataclass, field  # noqa: E402
from typing import Any  # noqa: E402


@dataclass(frozen=True)
class Timing:
    """Steady-state timing of one callable, compile time kept apart.

    Attributes:
        compile_s: trace + lower + compile seconds (0.0 when nothing is compiled).
        first_call_s: the untimed warm-up call, for the curious.
        min_s, median_s, iqr_s: per-call seconds over ``repeats`` repeats.
        loops: calls per repeat, chosen so that a repeat lasts about its target.
        repeats: number of repeats.
        unstable: True when the spread (IQR / median) is large.
        median_lo_s, median_hi_s: a 95% bootstrap interval of the median, from the
            per-repeat times (``adlab.measure.intervals.median_interval``).

    Example:
        >>> t = adlab.time_call(sum, ([1.0, 2.0],), repeats=3, target_s=0.001)
        >>> t.median_s > 0, t.repeats >= 3
        (True, True)
    """

    compile_s: float
    first_call_s: float
    min_s: float
    median_s: float
    iqr_s: float
    loops: int
    repeats: int
    unstable: bool
    median_lo_s: float | None = None
    median_hi_s: float | None = None


@dataclass(frozen=True)
class Record:
    """One measured (or skipped) point of a sweep: model x mode x options x n.

    ``None`` marks a value that does not apply (e.g. XLA flops for NumPy) or
    was not measured (a skipped point).

    The repeats of all series of one size are taken in turn, so a change of
    load hits them alike. ``median_lo_s`` and ``median_hi_s`` bound the median
    (a 95% bootstrap interval over the repeats): two series differ only where
    these intervals say so (``adlab.measure.findings.compare``). ``min_s`` is
    the estimate least moved by noise, which only ever adds time. ``at_floor``
    marks a point within noise of the dispatch floor (``floor_s``, a trivial call,
    ``x + 1``, in the point's own framework as its users run it, measured alongside
    at the same size): its time is the cost of a call, not of its arithmetic, and
    its ratio to the primal says nothing.
    ``async_floor_s`` is the same for a program JAX's CPU client hands to a
    worker thread (``dispatch == "async"``), measured beside the points of a
    size that have one, and the floor such a point is marked against: that
    hand-off swings most with the load.
    ``env["noise"]`` is how noisy the machine was as the sweep began (see
    ``adlab.measure.floor.machine_noise``; the floor beside the first size's
    points), ``env["noise_alone"]`` the same of the floor timed alone where that
    was over the limit (a warning needs both), ``env["sweep"]`` an id shared by
    the records of one sweep.

    A second derivative has ``order`` 2, ``mode`` "hessian" or "hvp", and its
    composition of modes in ``scheme`` (e.g. "forward-over-reverse"); ``levels`` says which
    framework takes each level of it, and of a model's own ``grad`` inside f. A sparse
    derivative (label "...(sparse)") has the ``colors`` and ``nnz`` of its pattern.

    ``where`` is where a JavaScript series ran: "node" (Node.js, started by adlab) or
    "browser" (the Lab's own page); None for the Python frameworks. Such a series is
    timed inside its runtime (``performance.now()`` around loops of calls, no pipe
    timed); ``env`` names the runtime and its version (Node's, or the browser's user
    agent), the timer's resolution and whether the page is cross-origin isolated.
    ``device`` is what the program ran on: "cpu", "wasm" or "webgl" for TF.js, "cpu"
    for plain JavaScript, and for the Python frameworks the device they report
    (JAX's "cpu", PyTorch's "cpu" or "cuda"); None where unknown.

    Example:
        >>> r = next(iter(adlab.bench("rosenbrock", sizes=[3], modes=["reverse"], warn=False)))
        >>> r.model, r.mode, r.n, r.backend
        ('rosenbrock', 'primal', 3, 'jax')
        >>> r.median_s > 0
        True
    """

    model: str
    mode: str
    n: int
    label: str  # the series this point belongs to, e.g. "numeric[central]"
    scheme: str | None
    jit: bool
    precision: str
    backend: str
    order: int = 1  # 2: a Hessian or HVP, whose ``scheme`` names the composition of modes
    # which framework takes each level of a nested derivative, outermost first ("outer:
    # jax-js's grad (reverse); inner: JAX's grad (reverse), traced into f and translated to
    # jax-js operations"); None: one framework takes the one level (``backends.levels``)
    levels: str | None = None
    device: str | None = None  # what it ran on: "cpu", "wasm", "webgl", "cuda" ...
    where: str | None = None  # JavaScript: "node" or "browser"; None for Python frameworks
    # timing
    compile_s: float | None = None
    # True: compile_s is the time to load the program from adlab's cache, not to compile it
    compile_loaded: bool | None = None
    first_call_s: float | None = None
    min_s: float | None = None
    median_s: float | None = None
    iqr_s: float | None = None
    loops: int | None = None
    repeats: int | None = None
    unstable: bool | None = None
    primal_s: float | None = None
    ratio_to_primal: float | None = None
    floor_s: float | None = None
    median_lo_s: float | None = None  # 95% bootstrap interval of median_s ...
    median_hi_s: float | None = None  # ... over the repeats
    at_floor: bool | None = None  # within noise of floor_s: a call's cost, not arithmetic
    async_floor_s: float | None = None  # the floor of a program run on a worker thread
    # cost
    f_evals: int | None = None
    flops: float | None = None
    primal_flops: float | None = None
    flops_ratio: float | None = None
    # which counter gave flops: XLA's cost analysis (every operation) or PyTorch's
    # FlopCounterMode (matrix products only); compare flops of one counter only
    flops_counter: str | None = None
    bytes_accessed: float | None = None
    temp_bytes: float | None = None
    dispatch: str | None = None  # "inline" or "async": how JAX's CPU client runs it (see env)
    # memory (measured once per point, outside the timed loop; ``Prepared.memory``)
    peak_bytes: float | None = None  # the most one call holds at once, above its inputs
    # reverse mode (and a composition's reverse part): what the forward pass keeps for the
    # backward pass, each buffer once, f's own arguments not counted; None: no reverse part
    residual_bytes: float | None = None
    memory_counter: str | None = None  # how peak_bytes and residual_bytes were measured
    colors: int | None = None  # a sparse derivative: its pattern's colors (passes) ...
    nnz: int | None = None  # ... and nonzeros; None when dense
    # accuracy
    error: float | None = None  # max componentwise relative error vs reference
    error_norm: float | None = None  # normwise relative error vs reference
    error_estimate: float | None = None  # the method's own estimate (Richardson)
    reference_trusted: bool | None = None
    # False: the derivative disagrees with the checked reference beyond its mode's
    # tolerance (``adlab.engine.compare.tolerance``; ``note`` gives both numbers)
    trusted: bool | None = None
    # bookkeeping
    skipped: str | None = None
    note: str | None = None  # a caveat on a measured point (e.g. one call only: over budget)
    settings: dict[str, Any] = field(default_factory=dict)  # the model's UPPERCASE settings
    env: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A plain, JSON-ready dict of the fields."""
        return asdict(self)


@dataclass(frozen=True)
class StepRecord:
    """One point of a step-size sweep: the error of ``scheme`` at step ``h``.

    Attributes:
        scheme: "forward", "central", "richardson" or "complex-step".
        h: the step, as adlab's defaults use it: for finite differences relative
            (the step of component i is h * max(|x_i|, 1)); for complex step
            absolute (its default is 1e-20, whatever x is).
        error: max componentwise relative error against the reference (inf when
            the derivative is not finite, e.g. the step vanished: x + h == x).
        error_norm: normwise relative error against the reference.
        is_default: True at the step adlab uses when ``step=None``.
        optimal_h: the theoretical optimal step for this scheme and precision
            (None for complex step, where every h below ~sqrt(eps) is optimal).
        error_estimate: Richardson's own error estimate, on the scale of ``error``.
        reference_trusted: whether forward and reverse mode agreed on the
            reference (None: not checked); see ``adlab.accuracy.reference.Reference``.
        reference_mismatch: their normwise relative difference.

    Example:
        >>> r = next(adlab.step_errors("rosenbrock", 3, schemes=["central"], steps=[1e-5]))
        >>> r.scheme, r.h, r.error < 1e-6
        ('central', 1e-05, True)
    """

    model: str
    n: int
    precision: str
    scheme: str
    h: float
    error: float
    error_norm: float
    is_default: bool = False
    optimal_h: float | None = None
    error_estimate: float | None = None  # Richardson's own estimate, when it has one
    reference_trusted: bool | None = None
    reference_mismatch: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
