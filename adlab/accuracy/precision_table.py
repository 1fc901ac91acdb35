"""Every mode at its default step, float32 beside float64, against the float64 reference.

JAX computes in float32 unless told otherwise, and a gradient check written
with float64 tolerances then fails spuriously. How much worse float32 is
depends on the mode: AD and complex step lose all of log10(eps32 / eps64) =
8.7 decades; a finite difference whose error at its default step scales as
eps**(1 - power) loses (1 - power) of them (4.4 forward, 5.8 central, 7.0
Richardson).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .._vocab import ModelError
from ..catalog import resolve_model
from ..engine.derivative import derivative
from ..engine.model.source import Model
from ..engine.modes import get_rule
from .reference import Reference, max_relative_error, normwise_relative_error, reference
from .steps import eps

#: the modes ``precision_table`` compares, as labels (Record.label's spelling)
PRECISION_MODES: tuple[str, ...] = (
    "forward", "reverse", "numeric[forward]", "numeric[central]", "numeric[richardson]",
    "complex-step",
)  # fmt: skip


def _parse_label(label: str) -> tuple[str, str | None]:
    if label.startswith("numeric"):
        scheme = label[len("numeric") :].strip("[]") or "central"
        return "numeric", scheme
    return label, None


@dataclass(frozen=True)
class PrecisionRow:
    """One mode at its default step in float32 and float64, against the float64 reference.

    Attributes:
        label: e.g. "reverse", "numeric[central]".
        error_float32, error_float64: max componentwise relative errors.
        error_norm_float32, error_norm_float64: normwise relative errors.
        expected_decades: how many decades worse float32 should be: (1 - power)
            * log10(eps32 / eps64), i.e. 4.4 forward, 5.8 central, 7.0
            Richardson, 8.7 for AD and complex step.
        skipped: why the mode could not run (e.g. complex step on non-analytic f).

    Example:
        >>> row = adlab.precision_table("rosenbrock", 3, modes=["reverse"])[0]
        >>> row.mode, row.error_float64 < 1e-12, row.error_float32 < 1e-5
        ('reverse', True, True)
    """

    model: str
    n: int
    label: str
    mode: str
    scheme: str | None
    error_float32: float | None
    error_float64: float | None
    error_norm_float32: float | None
    error_norm_float64: float | None
    expected_decades: float
    skipped: str | None = None

    @property
    def decades(self) -> float | None:
        """Measured decades lost in float32 (a float64 error below eps64 counts as eps64)."""
        if self.error_float32 is None or self.error_float64 is None:
            return None
        return math.log10(max(self.error_float32, eps("float64")) /
                          max(self.error_float64, eps("float64")))  # fmt: skip


def precision_table(
    model: Model | str,
    n: int,
    modes: Sequence[str] = PRECISION_MODES,
    seed: int = 0,
    wrt: int | tuple[int, ...] | None = None,
    ref: Reference | None = None,
) -> list[PrecisionRow]:
    """Every mode at its default step, float32 beside float64.

    Errors are against the float64 reference at the float64 point, so float32
    errors include the rounding of the inputs to float32, as a float32
    computation would.

    Returns:
        A list of ``PrecisionRow``, one per mode, in the order given.

    Example:
        >>> rows = adlab.precision_table("rosenbrock", 3, modes=["reverse", "numeric[central]"])
        >>> [row.mode for row in rows]
        ['reverse', 'numeric']
    """
    model = resolve_model(model)
    args = model.setup(n, seed)
    if ref is None:
        ref = reference(model, *args, wrt=wrt)
    decades = math.log10(eps("float32") / eps("float64"))
    rows = []
    for label in modes:
        mode, scheme = _parse_label(label)
        stepping = get_rule(mode).stepping  # a step-h method errs by eps**(1 - power)
        power = (stepping.powers.get(scheme) if stepping else None) or 0.0
        errors: dict[str, tuple[float, float]] = {}
        skipped = None
        try:
            for precision in ("float32", "float64"):
                value = derivative(model, *args, mode=mode, scheme=scheme or "central",
                                   wrt=wrt, precision=precision)  # fmt: skip
                errors[precision] = (max_relative_error(value, ref.value),
                                     normwise_relative_error(value, ref.value))  # fmt: skip
        except ModelError as exc:
            skipped = exc.reason
        e32, e64 = errors.get("float32", (None, None)), errors.get("float64", (None, None))
        rows.append(PrecisionRow(model.name, n, label, mode, scheme, e32[0], e64[0], e32[1],
                                 e64[1], (1.0 - power) * decades, skipped))  # fmt: skip
    return rows
