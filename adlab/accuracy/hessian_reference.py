"""The trusted reference Hessian (or Hessian-vector product), checked across two compositions.

As the first-order reference is reverse mode checked against forward mode
(``adlab.accuracy.reference``), the second-order one is forward-over-reverse
checked against reverse-over-reverse, both in float64: they differentiate the
same gradient program, one by pushing tangents through it, the other by
pulling adjoints back through it, so every sum is rounded in another order.
When they disagree beyond rounding the reference is marked untrusted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine.second import hessian, hvp
from .reference import Reference, reference

#: the reference's composition, then the one it is checked against
ROUTES = ("forward-over-reverse", "reverse-over-reverse")


def hessian_reference(
    model: Any,
    *args: Any,
    wrt: Any = None,
    v: Any = None,
    derive: Callable[[str], Any] | None = None,
) -> Reference:
    """The float64 Hessian of a scalar f (or, given ``v``, its product with v), checked.

    ``args`` are f's arguments; ``v`` is shaped like the differentiated one.
    ``derive(composition)``, when given, computes it instead (a sweep passes
    its own compiled ones). Raises what forward-over-reverse raises.

    Returns:
        A ``Reference``: ``.value`` the Hessian (or H v), ``.trusted``, ``.note``.

    Example:
        >>> model = adlab.load_model("rosenbrock")
        >>> ref = adlab.hessian_reference(model, *model.setup(3))
        >>> ref.value.shape, ref.trusted
        ((3, 3), True)
    """
    if derive is None:

        def derive(scheme: str) -> Any:
            if v is None:
                return hessian(model, *args, scheme=scheme, wrt=wrt, precision="float64")
            return hvp(model, args[0], v, *args[1:], scheme=scheme, wrt=wrt, precision="float64")

    return reference(model, *args, derive=derive, routes=ROUTES)
