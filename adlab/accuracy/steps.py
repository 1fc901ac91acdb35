"""Accuracy: error against step size, float32 against float64, Richardson's own estimate.

A finite difference with step h makes two errors: truncation, which shrinks
as h**q (q = 1 forward, 2 central, 4 Richardson), and round-off, which grows
as eps / h because f(x + h) - f(x) cancels. Their sum is V-shaped in h, with
its bottom near h* ~ eps**(1 / (q + 1)) and error there ~ eps**(q / (q + 1)):
half the digits for forward differences, two thirds for central. Complex step
has no subtraction, so it has no round-off arm: every h below ~sqrt(eps)
gives full precision, down to 1e-300. These functions measure the curves on
the user's own model, against the checked float64 reference.

Each scheme's derivatives at every step come from one compiled program: the
step is an argument of it (not a constant baked into it), and the difference
formulas are the engine's own (``adlab.engine.modes.numeric``, ``complex_step``).

References:
    Nocedal & Wright, *Numerical Optimization*, 2nd ed., Springer 2006, sec. 8.1.
    Squire & Trapp, "Using complex variables to estimate derivatives of real
    functions", SIAM Review 40(1), 1998.
    Richardson, *Phil. Trans. R. Soc. A* 210 (1911).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from .._vocab import SCHEMES, StepRecord
from ..catalog import resolve_model
from ..engine.backends import REFERENCE
from ..engine.derivative import prepare
from ..engine.model.args import wrt_indices
from ..engine.model.precision import dtype_of, precision_scope
from ..engine.model.source import Model
from ..engine.modes import Spec, get_rule, mode_names, stepping_of
from .reference import (
    Reference,
    max_relative_error,
    max_relative_size,
    normwise_relative_error,
    reference,
)


def _powers() -> dict[str, float | None]:
    return {scheme: power for name in mode_names() if (st := get_rule(name).stepping)
            for scheme, power in st.powers.items()}  # fmt: skip


#: the schemes a step sweep knows (the modes' registry entries say which), from
#: the least accurate at its optimal step to the most: forward, central,
#: Richardson, complex step
STEP_SCHEMES: tuple[str, ...] = tuple(
    sorted(_powers(), key=lambda s: -p if (p := _powers()[s]) is not None else 0.0)
)
#: steps per decade of the default grids
PER_DECADE = 4
#: below this a complex step is not a float32 number (smallest normal ~1.2e-38)
SMALLEST_STEP = {"float32": 1e-30, "float64": 1e-300}


def eps(precision: str) -> float:
    return float(np.finfo(dtype_of(precision)).eps)


def _power(scheme: str) -> float | None:
    """The scheme's default step as a power of eps; None: no round-off arm (complex step)."""
    if scheme not in STEP_SCHEMES:
        raise ValueError(f"scheme must be one of {list(STEP_SCHEMES)}, got {scheme!r}")
    return stepping_of(scheme)[1].powers[scheme]


def optimal_step(scheme: str, precision: str = "float64") -> float | None:
    """The theoretical optimal relative step: eps**(1/2, 1/3, 1/5) for forward,
    central and Richardson, where truncation (h**q) meets round-off (eps / h).

    adlab's default steps are these. None for complex step: it has no
    round-off arm, so every h below ~sqrt(eps) is optimal.

    Returns:
        The step, a float, or None for complex step (no round-off to balance).

    Example:
        >>> bool(adlab.optimal_step("central") == np.finfo(np.float64).eps ** (1 / 3))
        True
        >>> print(adlab.optimal_step("complex-step"))
        None
    """
    power = _power(scheme)
    return None if power is None else eps(precision) ** power


def expected_error(scheme: str, precision: str = "float64") -> float:
    """The relative error to expect at the optimal step, up to a model-dependent factor:
    eps**(1 - power) (sqrt(eps) forward, eps**(2/3) central, eps**(4/5) Richardson),
    and eps for complex step."""
    power = _power(scheme)
    return eps(precision) ** (1.0 - (power or 0.0))


def default_step(scheme: str, precision: str = "float64") -> float:
    """The step adlab uses when ``step=None``, in a sweep's units (see ``StepRecord.h``)."""
    power = _power(scheme)
    return stepping_of(scheme)[1].fixed_step if power is None else eps(precision) ** power


def default_steps(
    scheme: str, precision: str = "float64", per_decade: int = PER_DECADE
) -> np.ndarray:
    """The default grid, largest step first: 1e-1 to 1e-16 at ``per_decade`` steps
    a decade, plus the default step of every finite-difference scheme (so all
    columns of a table share rows); complex step goes on, by decades to 1e-20
    and then every 20 decades, to 1e-300 (1e-30 in float32)."""
    power = _power(scheme)
    if per_decade < 1:
        raise ValueError(f"per_decade must be a positive integer, got {per_decade}")
    grid = list(10.0 ** (-np.arange(per_decade, 16 * per_decade + 1) / per_decade))
    grid += [default_step(s, precision) for s in STEP_SCHEMES if _power(s) is not None]
    if power is None:  # no round-off arm: the curve stays flat far below 1e-16
        smallest = SMALLEST_STEP[precision]
        tail = [10.0**-k for k in (17, 18, 19, 20, *range(40, 301, 20))]
        grid += [h for h in tail if h >= smallest]
    return np.array(sorted(set(grid), reverse=True))


def _at_steps(
    model: Model, args: tuple, scheme: str, hs: np.ndarray, precision: str, wrt: Any
) -> tuple[list[Any], list[Any] | None]:
    """The derivative at every step of ``hs`` (and Richardson's estimates), one compile.

    ``prepare`` (not compiled) first runs the engine's own checks: memory, the
    model's errors with its line, and complex step's refusal of non-analytic f.
    """
    _power(scheme)  # an unknown scheme gets the list of known ones
    rule, stepping = stepping_of(scheme)
    p = prepare(model, *args, mode=rule.name, wrt=wrt, jit=False, precision=precision,
                scheme=scheme if scheme in SCHEMES else "central")  # fmt: skip
    dtype = dtype_of(precision)
    cast = p.inputs

    def at(h, a):
        values, estimates = [], []
        for i in wrt_indices(p.wrt):  # each argument gets its own steps, scaled to its own |x|
            spec = Spec(f=model.function(REFERENCE), args=cast, wrt=i, out_shape=p.out_shape,
                        scheme=scheme, step=None, dtype=dtype, backend=REFERENCE)  # fmt: skip
            value, estimate = stepping.at_step(spec, i, h, a)
            values.append(value)
            estimates.append(estimate)
        return tuple(values), tuple(estimates)

    with precision_scope(precision):
        # lax.map, not vmap: one step at a time needs no more memory than the mode itself
        run = jax.jit(lambda steps, *a: jax.lax.map(lambda h: at(h, a), steps))
        with model.errors(f"f, step sweep of {scheme}"):  # the model's failure names its line
            values, estimates = run(np.asarray(hs, dtype=dtype), *cast)
        values = [np.asarray(v, dtype=np.float64) for v in values]
        estimates = [np.asarray(e, dtype=np.float64) for e in estimates if e is not None]
    per_step = [tuple(v[k] for v in values) for k in range(len(hs))]
    if not estimates:  # the scheme has no estimate of its own (all but Richardson)
        return per_step, None
    return per_step, [tuple(e[k] for e in estimates) for k in range(len(hs))]


def _steps_for(scheme: str, steps: Any, precision: str) -> np.ndarray:
    if steps is None:
        return default_steps(scheme, precision)
    if isinstance(steps, Mapping):
        if scheme not in steps:
            return default_steps(scheme, precision)
        steps = steps[scheme]
    hs = np.asarray(list(steps) if not np.isscalar(steps) else [steps], dtype=np.float64)
    if hs.ndim != 1 or not hs.size or not np.all(hs > 0):
        raise ValueError(f"steps must be positive numbers, got {steps!r}")
    return hs


def _is_default(scheme: str, h: float, precision: str) -> bool:
    return math.isclose(h, default_step(scheme, precision), rel_tol=1e-12)


def step_errors(
    model: Model | str,
    n: int,
    schemes: Sequence[str] = STEP_SCHEMES,
    steps: Iterable[float] | Mapping[str, Iterable[float]] | None = None,
    precision: str = "float64",
    seed: int = 0,
    wrt: int | tuple[int, ...] | None = None,
    ref: Reference | None = None,
) -> Iterator[StepRecord]:
    """The error of each scheme at each step h, against the float64 reference.

    Yields one ``StepRecord`` per (scheme, h), schemes in the order given and
    h from largest to smallest, so a caller can draw the curves as they come.

    Args:
        model: a ``Model``, a catalog name or a path to a model file.
        n: the size passed to the model's ``setup``.
        schemes: any of "forward", "central", "richardson", "complex-step".
        steps: the steps h (see ``StepRecord.h``), for every scheme or as a
            mapping scheme -> steps; None: ``default_steps`` for each scheme.
        precision: "float32" or "float64", the precision of the differences.
            The reference is float64 either way, at the same (float64) point.
        seed: the seed passed to ``setup``.
        wrt: argument(s) to differentiate; default the model's.
        ref: a reference already computed at this point (else it is computed).

    Raises:
        ModelError: the model failed, or it is not analytic and complex step
            was asked for (raised when the sweep reaches complex step).

    Returns:
        An iterator of ``StepRecord``, one per scheme and step.

    Example:
        >>> records = adlab.step_errors("rosenbrock", 3, schemes=["forward"], steps=[1e-4, 1e-8])
        >>> [(r.scheme, r.h) for r in records]
        [('forward', 0.0001), ('forward', 1e-08)]
    """
    model = resolve_model(model)
    for scheme in schemes:
        _power(scheme)  # all checked before any is computed
    args = model.setup(n, seed)
    if ref is None:
        ref = reference(model, *args, wrt=wrt)
    for scheme in schemes:
        hs = _steps_for(scheme, steps, precision)
        values, estimates = _at_steps(model, args, scheme, hs, precision, wrt)
        for k, h in enumerate(hs):
            value = values[k] if len(values[k]) > 1 else values[k][0]
            estimate = None
            if estimates is not None:
                e = estimates[k] if len(estimates[k]) > 1 else estimates[k][0]
                estimate = max_relative_size(e, ref.value)
            yield StepRecord(
                model=model.name, n=n, precision=precision, scheme=scheme, h=float(h),
                error=max_relative_error(value, ref.value),
                error_norm=normwise_relative_error(value, ref.value),
                is_default=_is_default(scheme, float(h), precision),
                optimal_h=optimal_step(scheme, precision), error_estimate=estimate,
                reference_trusted=ref.trusted, reference_mismatch=ref.mismatch,
            )  # fmt: skip


# ----------------------------------------------------------------- summaries


@dataclass(frozen=True)
class SchemeSummary:
    """Where one scheme's curve bottoms out, beside theory and the default.

    Attributes:
        scheme, precision: what was swept.
        best_h, best_error: the measured minimum of the curve.
        default_h, default_error: adlab's default step and the error there
            (None when the sweep did not include the default step).
        optimal_h: the theoretical optimal step (None for complex step).
        expected_error: the error theory expects at the optimum (``expected_error``).

    Example:
        >>> s = adlab.step_summary(adlab.step_errors("rosenbrock", 3, schemes=["central"]))[0]
        >>> s.scheme, s.best_error < 1e-8
        ('central', True)
    """

    scheme: str
    precision: str
    best_h: float
    best_error: float
    default_h: float | None
    default_error: float | None
    optimal_h: float | None
    expected_error: float


def step_summary(records: Iterable[StepRecord]) -> list[SchemeSummary]:
    """One ``SchemeSummary`` per (scheme, precision) in ``records``, in order of appearance.

    Returns:
        A list of ``SchemeSummary``.

    Example:
        >>> records = adlab.step_errors("rosenbrock", 3, schemes=["forward", "central"])
        >>> summary = adlab.step_summary(records)
        >>> [s.scheme for s in summary]
        ['forward', 'central']
    """
    groups: dict[tuple[str, str], list[StepRecord]] = {}
    for r in records:
        groups.setdefault((r.scheme, r.precision), []).append(r)
    out = []
    for (scheme, precision), rs in groups.items():
        best = min(rs, key=lambda r: (r.error, -r.h))
        default = next((r for r in rs if r.is_default), None)
        out.append(SchemeSummary(
            scheme, precision, best.h, best.error,
            default.h if default else None, default.error if default else None,
            optimal_step(scheme, precision), expected_error(scheme, precision),
        ))  # fmt: skip
    return out


# ---------------------------------------------------------------- Richardson


@dataclass(frozen=True)
class RichardsonPoint:
    """Richardson's own error estimate at one step, beside the true errors.

    The engine's Richardson value is R = (4 D(h/2) - D(h)) / 3 with D the central
    difference, and its estimate is |R - D(h/2)| = |D(h/2) - D(h)| / 3: an
    estimate of the error of D(h/2), not of R. So where truncation dominates it
    matches ``error_central_half`` and overstates R's own error by orders (a
    safe bound); where round-off dominates (h below ~eps**(1/3)) it is of the
    size of R's error but can fall below it.

    Attributes:
        h: the relative step.
        estimate: the estimate, on the scale of ``error`` (max componentwise, floored).
        error: the true error of R.
        error_central_half: the true error of the central difference at h / 2.

    Example:
        >>> p = adlab.richardson_check("rosenbrock", 3, steps=[1e-2])[0]
        >>> p.h, p.estimate > 0
        (0.01, True)
    """

    h: float
    estimate: float
    error: float
    error_central_half: float


def richardson_check(
    model: Model | str,
    n: int,
    steps: Iterable[float] | None = None,
    precision: str = "float64",
    seed: int = 0,
    wrt: int | tuple[int, ...] | None = None,
) -> list[RichardsonPoint]:
    """Richardson's own error estimate against its true error, at each step.

    Returns:
        A list of ``RichardsonPoint``, one per step.

    Example:
        >>> points = adlab.richardson_check("rosenbrock", 3, steps=[1e-1, 1e-2])
        >>> [p.h for p in points]
        [0.1, 0.01]
    """
    model = resolve_model(model)
    hs = _steps_for("richardson", steps, precision)
    args = model.setup(n, seed)
    ref = reference(model, *args, wrt=wrt)
    rich = list(step_errors(model, n, ("richardson",), hs, precision, seed, wrt, ref))
    half = list(step_errors(model, n, ("central",), hs / 2, precision, seed, wrt, ref))
    return [RichardsonPoint(r.h, r.error_estimate, r.error, c.error)  # type: ignore[arg-type]
            for r, c in zip(rich, half, strict=True)]  # fmt: skip
