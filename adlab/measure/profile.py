"""Where the time goes: the primal and a derivative, operation by operation.

A ratio (the gradient costs 7x the primal) cannot say whether it could cost
4x. ``profile`` runs both under JAX's profiler and lists, for each operation
XLA executes (a fusion, a dot, a copy: one thunk of the CPU runtime), the
wall time it took per call, XLA's flop count and the bytes it reads and
writes (``hlo_ops``). An operation whose flop rate falls far below the
primal's is where the derivative loses time (``Profile.slow_ops``).

How the times are read: the profiler records one event per thunk per call,
on whichever thread ran it. XLA runs independent thunks concurrently and
some (Eigen's dot) asynchronously, so each call's wall time from its first
thunk to its last is shared out: while several thunks run at once, each
gets an equal part; a gap while an asynchronous thunk is still in flight is
that thunk's; other gaps (threads waking up) are nobody's. An operation's
``time_s`` is the mean of its share over the typical calls (those whose
total lies between the quartiles of all profiled calls), so the times add
up to a typical call's wall time, which ``primal_s`` and ``derivative_s``
give as ``adlab.time_call`` measures it (outside the profiler).

JAX on the CPU only, jitted: other devices lay out their traces differently.
PyTorch, eagerly, is profiled with ``torch.profiler`` (``profile_torch``).
"""

from __future__ import annotations

import dataclasses
import glob
import math
import os
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..catalog import resolve_model
from ..engine.backends import DEFAULT, KNOWN, with_fact
from ..engine.derivative import prepare
from ..engine.model.source import Model, normalize_wrt
from .hlo_ops import HloOp, hlo_ops
from .timing import time_call

#: profiled calls per program (after one uncounted call inside the trace)
CALLS = 10


@dataclass(frozen=True)
class OpCost:
    """One operation of a compiled program, as profiled.

    Attributes:
        name: the operation as XLA names it, and what it computes
            (``ynn_fusion (dot, add)``: a fusion holding a dot, whose root is an add).
        time_s: wall seconds per call spent in it, a mean over typical calls (see the
            module docstring).
        flops: XLA's flop count for it (transcendentals such as tanh not included);
            on PyTorch, FlopCounterMode's (matrix products; NaN for other operations).
        bytes: bytes it reads and writes, XLA's count (NaN on PyTorch: not counted).

    Example:
        >>> op = adlab.profile("rosenbrock", 10, calls=2).derivative[0]
        >>> isinstance(op, adlab.OpCost), op.time_s >= 0
        (True, True)
    """

    name: str
    time_s: float
    flops: float
    bytes: float

    @property
    def flop_rate(self) -> float:
        """flops per second (NaN when it took no measurable time)."""
        return self.flops / self.time_s if self.time_s > 0 else math.nan


@dataclass(frozen=True)
class Profile:
    """The primal and a derivative of one model at one size, operation by operation.

    Attributes:
        model, n, mode, scheme, precision, backend: what was profiled.
        primal, derivative: the operations, longest first.
        primal_s, derivative_s: median seconds per call, measured by
            ``adlab.time_call`` outside the profiler; on a steady machine the
            operations' times add up to about these.
        calls: profiled calls per program.
        primal_traced_s, derivative_traced_s: wall seconds of a typical profiled call,
            timed in the profile itself (the very calls the operations come from), so the
            operations add up to at most this, whatever the load; ``primal_s`` and
            ``derivative_s`` are timed apart, and a load that comes and goes between the
            two (PyTorch's threads on a busy machine: the same call took 3 ms and 90 ms
            within a second) can set them far from the operations' sum.

    Example:
        >>> prof = adlab.profile("rosenbrock", 10, calls=2)
        >>> prof.mode, len(prof.primal) > 0
        ('reverse', True)
    """

    model: str
    n: int
    mode: str
    scheme: str | None
    precision: str
    backend: str
    primal: list[OpCost]
    derivative: list[OpCost]
    primal_s: float
    derivative_s: float
    calls: int
    primal_traced_s: float = math.nan
    derivative_traced_s: float = math.nan

    @property
    def primal_ops_s(self) -> float:
        """Sum of the primal's operation times."""
        return sum(op.time_s for op in self.primal)

    @property
    def derivative_ops_s(self) -> float:
        """Sum of the derivative's operation times."""
        return sum(op.time_s for op in self.derivative)

    @property
    def primal_rate(self) -> float:
        """The primal's flops per second over its operations' time."""
        return _rate(self.primal)

    @property
    def derivative_rate(self) -> float:
        """The derivative's flops per second over its operations' time."""
        return _rate(self.derivative)

    def slow_ops(self, factor: float = 2.0, min_share: float = 0.01) -> list[OpCost]:
        """Derivative operations whose flop rate is below the primal's divided by ``factor``.

        Operations taking less than ``min_share`` of the derivative's time are
        left out (timer noise on a few microseconds); an operation without
        flops that takes time (a broadcast, a copy) is slow by this rule: it
        moves memory and computes nothing. Longest first.
        """
        if not factor > 0:
            raise ValueError(f"factor must be > 0, got {factor}")
        total = self.derivative_ops_s
        limit = self.primal_rate / factor
        return [op for op in self.derivative
                if op.time_s >= min_share * total and op.flop_rate < limit]  # fmt: skip


def _rate(ops: Sequence[OpCost]) -> float:
    seconds = sum(op.time_s for op in ops)
    flops = sum(op.flops for op in ops if math.isfinite(op.flops))
    return flops / seconds if seconds > 0 else math.nan


def profile(
    model: str | Model,
    n: int,
    mode: str = "reverse",
    backend: str = DEFAULT,
    *,
    scheme: str = "central",
    precision: str = "float64",
    jit: bool | None = None,
    wrt: int | tuple[int, ...] | None = None,
    seed: int = 0,
    calls: int = CALLS,
) -> Profile:
    """Profile the primal and the derivative of ``model`` at size ``n``, operation by operation.

    Args:
        model: a catalog name, a path to a model file, or a ``Model`` (with its settings).
        n: the size passed to the model's setup.
        mode, scheme, precision, wrt: as in ``adlab.prepare``.
        backend: "jax" (XLA's operations) or "torch" (PyTorch's, eagerly:
            ``profile_torch``).
        jit: as each framework is profiled (None): JAX jitted, the operations of XLA's
            compiled program; PyTorch eager, its own operations.
        seed: seed for the model's setup.
        calls: profiled calls per program (the typical ones are averaged).

    Returns:
        A ``Profile``; see its ``slow_ops``.

    Example:
        >>> prof = adlab.profile("rosenbrock", 10, mode="reverse", calls=2)
        >>> isinstance(prof.slow_ops(), list)
        True
    """
    import jax

    profiler = _check(backend, jit)
    if profiler == "xla" and jax.default_backend() != "cpu":
        raise ValueError(
            f"profile reads the CPU runtime's trace; JAX runs on {jax.default_backend()!r} "
            "here (set JAX_PLATFORMS=cpu to profile on the CPU)"
        )
    if calls < 1:
        raise ValueError(f"calls must be >= 1, got {calls}")
    m = resolve_model(model)
    if wrt is not None:  # the arguments are cast for the wrt being profiled
        m = dataclasses.replace(m, wrt=normalize_wrt(wrt))
    point = m.setup(n, seed)
    ops = {}
    timed = {}
    traced = {}
    for which in ("primal", mode):
        p = prepare(m, *point, mode=which, precision=precision, scheme=scheme, backend=backend)
        # Timed first: its warm-up calls also warm the program up for the profiled calls
        # (traced right after compiling, the first calls ran 10-50% slower). p.inputs:
        # cast and on the device, so the calls run the program p.compiled is.
        timed[which] = time_call(p, p.inputs).median_s
        if profiler == "torch.profiler":
            from .profile_torch import torch_ops

            ops[which], traced[which] = torch_ops(p, p.inputs, calls)
        else:
            ops[which], traced[which] = _profiled(p, p.inputs, hlo_ops(p.compiled), calls)
    return Profile(
        model=m.name, n=n, mode=mode, scheme=scheme if mode == "numeric" else None,
        precision=precision, backend=backend, primal=ops["primal"], derivative=ops[mode],
        primal_s=timed["primal"], derivative_s=timed[mode], calls=calls,
        primal_traced_s=traced["primal"], derivative_traced_s=traced[mode],
    )  # fmt: skip


def _check(backend: str, jit: bool | None) -> str:
    """How ``backend`` is profiled (its entry's ``profiler``); refuse what cannot be, saying
    what can."""
    known = KNOWN.get(backend)
    if known is None or known.profiler is None:
        why = known.profile_refusal if known else f"{backend!r} is not a backend adlab has"
        can = with_fact("profiler")
        raise ValueError(
            f"profiling is for {' and '.join(KNOWN[c].label for c in can)} "
            f"(backend={backend!r}): {why}; use {' or '.join(f'backend={c!r}' for c in can)}"
        )
    if known.profiler == "xla" and jit is False:
        raise ValueError(
            f"profile needs jit=True on {known.label}: it lists the operations of XLA's "
            "compiled program, which an eager run does not have"
        )
    if known.profiler == "torch.profiler" and jit:
        raise ValueError(
            f"profile runs {known.label} eagerly (jit=False): torch.profiler names "
            f"{known.label}'s own operations, which {known.compiler}'s kernels replace; "
            "leave jit unset"
        )
    return known.profiler


def _profiled(fn: Callable, args: tuple, costs: dict[str, HloOp],
              calls: int) -> tuple[list[OpCost], float]:  # fmt: skip
    """Each operation's time per call over ``calls`` profiled calls, with its XLA cost, and a
    typical call's wall time in the trace (its first thunk's start to its last's end)."""
    runs = _runs(_trace(fn, args, calls + 1), costs)
    runs = runs[1:] if len(runs) > calls else runs  # the first call of a trace starts it up
    if not runs:
        raise RuntimeError(
            "the profiler recorded no operation of the compiled program; this JAX "
            "version's CPU runtime may not trace its thunks"
        )
    shares = [_shares(*run) for run in runs]
    out = []
    for name, ns in typical_shares(shares).items():
        cost = costs[name]
        out.append(OpCost(cost.label, ns * 1e-9, cost.flops, cost.bytes))
    walls = [max(e for _, e, _ in spans) - min(s for s, _, _ in spans) for spans, _ in runs]
    traced = typical_mean(walls, [sum(share.values()) for share in shares]) * 1e-9
    return sorted(out, key=lambda op: op.time_s, reverse=True), traced


def typical_shares(shares: list[dict[str, float]]) -> dict[str, float]:
    """Each operation's mean share over the typical calls (total within the quartiles).

    Means, not medians: medians of the parts need not add up to a call (two
    operations that overlap in some calls and not in others both take their
    unshared time), means do. A call out of the quartiles (a load spike) is left out.
    """
    typical = [shares[i] for i in _typical_calls([sum(share.values()) for share in shares])]
    names = {name for share in shares for name in share}
    return {name: float(np.mean([s.get(name, 0.0) for s in typical])) for name in names}


def _typical_calls(totals: Sequence[float]) -> list[int]:
    """Indices of the typical calls: total within the quartiles (all, if none is)."""
    low, high = np.percentile(totals, [25, 75])
    return [i for i, t in enumerate(totals) if low <= t <= high] or list(range(len(totals)))


def typical_mean(values: Sequence[float], totals: Sequence[float]) -> float:
    """The mean of ``values`` over the calls that ``typical_shares`` averages (by ``totals``)."""
    return float(np.mean([values[i] for i in _typical_calls(totals)]))


def _trace(fn: Callable, args: tuple, calls: int) -> Any:
    """``jax.profiler.ProfileData`` of ``calls`` calls of ``fn(*args)``."""
    import jax

    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # Python frames would only slow the calls down
    with tempfile.TemporaryDirectory(prefix="adlab-profile-") as tmp:
        with jax.profiler.trace(tmp, profiler_options=options):
            for _ in range(calls):
                jax.block_until_ready(fn(*args))
        found = glob.glob(os.path.join(tmp, "plugins", "profile", "*", "*.xplane.pb"))
        if not found:
            raise RuntimeError(f"jax.profiler wrote no trace under {tmp}")
        return jax.profiler.ProfileData.from_file(found[0])


Span = tuple[int, int, str]  # start ns, end ns, operation


def _runs(data: Any, costs: dict[str, HloOp]) -> list[tuple[list[Span], list[Span]]]:
    """Per call, in order: (thunk spans, in-flight spans of asynchronous thunks).

    A thunk's event covers its launch; its flow's ``end:`` event marks its
    completion. An end after the launch event is over (on any thread) marks
    an asynchronous thunk, in flight until then.
    """
    plane = data.find_plane_with_name("/host:CPU")
    if plane is None:
        return []
    starts: dict[int, list[tuple[int, int, str, Any]]] = defaultdict(list)
    ends: dict[Any, int] = {}
    for line in plane.lines:
        for event in line.events:
            name = event.name
            if name.startswith("end: "):
                if name[5:] in costs:
                    flow = dict(event.stats).get("_c")
                    ends[flow] = event.start_ns
                continue
            if name not in costs:  # other events, and thunks nested in a loop's body
                continue
            stats = dict(event.stats)
            if stats.get("hlo_op") != name:
                continue
            start = int(event.start_ns)
            starts[stats.get("run_id")].append((start, start + int(event.duration_ns), name,
                                                stats.get("_p")))  # fmt: skip
    runs = []
    for events in sorted(starts.values(), key=lambda evs: min(e[0] for e in evs)):
        spans = [(s, e, name) for s, e, name, _ in events]
        flights = [(s, int(ends[flow]), name) for s, e, name, flow in events
                   if flow is not None and ends.get(flow, e) > e]  # fmt: skip
        runs.append((spans, flights))
    return runs


def _shares(spans: list[Span], flights: list[Span]) -> dict[str, float]:
    """Nanoseconds of the call's wall time per operation (see the module docstring)."""
    bounds = sorted({t for s, e, _ in spans for t in (s, e)})
    out: dict[str, float] = defaultdict(float)
    by_start = sorted(spans)
    active: list[Span] = []
    i = 0
    for a, b in zip(bounds, bounds[1:], strict=False):
        while i < len(by_start) and by_start[i][0] <= a:
            active.append(by_start[i])
            i += 1
        active = [s for s in active if s[1] > a]
        if active:
            for _, _, name in active:
                out[name] += (b - a) / len(active)
            continue
        flying = [f for f in flights if f[0] <= a and f[1] >= b]
        if flying:
            out[max(flying)[2]] += b - a  # the latest launched is the one being waited for
    return out
