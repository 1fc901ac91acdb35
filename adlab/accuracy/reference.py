"""The trusted reference derivative and the error metrics against it.

The reference is float64 reverse mode. It is *checked*, not assumed: forward
mode computes the same derivative by a different route (tangents pushed from
the inputs instead of adjoints pulled from the output, so every sum and
product is rounded in a different order). When the two disagree beyond
rounding, the reference is marked untrusted and the mismatch is reported
instead of hidden. Typical causes: cancellation inside the derivative
(components that are pure rounding noise), or a derivative rule that is
wrong in one mode.

Forward and reverse share every custom derivative rule (``jax.custom_jvp``
gives reverse mode by transposing the JVP), so a rule that is wrong in the
same way for both passes this check; finite differences and complex step,
which never use the rules, are what expose it (see ``adlab.step_errors``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..engine.compare import FLOOR as FLOOR
from ..engine.compare import max_relative_error as max_relative_error
from ..engine.compare import max_relative_size as max_relative_size
from ..engine.compare import normwise_relative_error as normwise_relative_error
from ..engine.derivative import derivative

#: forward and reverse float64 must agree to this, normwise relative
AGREEMENT = 1e-13


@dataclass(frozen=True)
class Reference:
    """A reference derivative and whether it can be trusted.

    Attributes:
        value: the float64 reverse-mode derivative (NumPy; a tuple for tuple ``wrt``).
        trusted: True when forward and reverse agree to ``AGREEMENT`` (normwise);
            False when they do not; None when the check could not be made
            (``note`` says why).
        mismatch: their normwise relative difference ||fwd - rev|| / ||rev||,
            the number that decides ``trusted`` (nan when not checked).
        mismatch_componentwise: the same difference, max componentwise with the
            floor (shown beside it: one bad small component stands out here).
        forward: the float64 forward-mode derivative it was checked against.
        note: why the reference is untrusted or unchecked, else None.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> ref = adlab.reference(model, *model.setup(3))
        >>> ref.value.shape, ref.trusted
        ((3,), True)
    """

    value: Any
    trusted: bool | None
    mismatch: float
    mismatch_componentwise: float = math.nan
    forward: Any = None
    note: str | None = None


def reference(
    model: Any,
    *args: Any,
    wrt: Any = None,
    derive: Callable[[str], Any] | None = None,
    routes: tuple[str, str] = ("reverse", "forward"),
) -> Reference:
    """The float64 reverse-mode derivative, cross-checked against forward mode.

    Raises what reverse mode raises (``ModelError``, ``SizeError``); a failure of
    forward mode alone (e.g. a ``jax.custom_vjp`` model, which has no forward
    mode) gives an unchecked reference (``trusted=None``) with the reason.
    ``derive(mode)``, when given, computes the float64 derivative in ``mode``
    instead of ``adlab.derivative`` (a sweep passes its own compiled derivatives,
    so that nothing is compiled twice). ``routes`` names the two ways ``derive`` is
    asked for: the reference's, then the check's (a Hessian's are two compositions,
    ``adlab.accuracy.hessian_reference``).

    Returns:
        A ``Reference``: ``.value`` the derivative, ``.trusted``, ``.mismatch``, ``.note``.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> ref = adlab.reference(model, *model.setup(3))
        >>> ref.trusted, ref.value.shape
        (True, (3,))
    """
    if derive is None:

        def derive(mode: str) -> Any:
            # held to each other below: derivative's own cross-check would compile a third
            # program to check them against (check=False)
            return derivative(model, *args, mode=mode, wrt=wrt, precision="float64",
                              check=False)  # fmt: skip

    rev = derive(routes[0])
    first_order = routes == ("reverse", "forward")
    words = "forward and reverse mode" if first_order else f"{routes[1]} and {routes[0]}"
    try:
        fwd = derive(routes[1])
    except Exception as exc:  # any failure of forward mode alone leaves it unchecked
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        failed = "forward mode" if first_order else routes[1]
        return Reference(rev, None, math.nan, note=f"not checked: {failed} failed ({first})")
    mismatch = normwise_relative_error(fwd, rev)
    componentwise = max_relative_error(fwd, rev)
    trusted = mismatch <= AGREEMENT
    note = None
    if not trusted:
        note = (
            f"{words} differ by {mismatch:.1e} (normwise; "
            f"{componentwise:.1e} componentwise), more than rounding ({AGREEMENT:.0e}): "
            "errors below that size are not measurable against this reference"
        )
    return Reference(rev, trusted, mismatch, componentwise, fwd, note)
