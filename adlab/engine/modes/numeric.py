"""Finite differences: forward, central, and central with Richardson extrapolation.

References:
    Nocedal & Wright, *Numerical Optimization*, 2nd ed., Springer 2006, sec. 8.1
    (step sizes: h ~ sqrt(eps) for forward, h ~ eps^(1/3) for central).
    Richardson, *Phil. Trans. R. Soc. A* 210 (1911); the extrapolated central
    difference (4 D(h/2) - D(h)) / 3 has error O(h^4), so h ~ eps^(1/5).
"""

from __future__ import annotations

import numpy as np

from . import g9
from ._perturb import to_jacobian
from ._registry import Built, Spec, Stepping, pick, register

#: default relative step, as a power of machine epsilon, per scheme
STEP_POWER = {"forward": 1 / 2, "central": 1 / 3, "richardson": 1 / 5}
#: evaluations of f per coordinate (forward also needs f(x) once)
EVALS = {"forward": 1, "central": 2, "richardson": 4}


def default_step(x, scheme: str, dtype, xp=np):
    """The default step: eps**power scaled to max(|x|, 1), per component."""
    scale = float(np.finfo(dtype).eps) ** STEP_POWER[scheme]
    return scale * xp.maximum(xp.abs(x), 1.0)


def stencil_points(xf, scheme, step, dtype, xp):
    """The perturbed coordinates, one block per stencil point.

    blocks[b][j] is coordinate j of the b-th stencil point for coordinate j.
    ``step`` is None (the default) or an array of x's size. The step is first
    rounded to a distance x can actually move, (x + s) - x, so that the points
    are symmetric about x where they can be.
    """
    s = default_step(xf, scheme, dtype, xp) if step is None else step
    ahead = xf + s
    if scheme == "forward":
        return [ahead]
    h = ahead - xf
    if scheme == "central":
        return [ahead, xf - h]
    half = xf + h / 2
    return [ahead, xf - h, half, xf - (half - xf)]


def combine(scheme, F, f0, P, xf):
    """Derivatives (n, *out) from f values F at the points P (block-major, as built).

    Each difference divides by the distance between the points as evaluated,
    P[a] - P[b], not by a nominal 2h: that is the distance the values of f
    were taken across, whatever x - h rounded to.
    """
    n = xf.shape[0]
    ex = (slice(None),) + (None,) * (F.ndim - 1)
    F = [F[b * n : (b + 1) * n] for b in range(F.shape[0] // n)]
    P = [P[b * n : (b + 1) * n] for b in range(P.shape[0] // n)]
    if scheme == "forward":
        return (F[0] - f0) / (P[0] - xf)[ex], None
    d1 = (F[0] - F[1]) / (P[0] - P[1])[ex]
    if scheme == "central":
        return d1, None
    d2 = (F[2] - F[3]) / (P[2] - P[3])[ex]
    # (4 d2 - d1) / 3 = d2 + (d2 - d1) / 3; the correction's size is also the
    # error estimate |extrapolated - d2|.
    correction = (d2 - d1) / 3
    return d2 + correction, abs(correction)


def _check_scheme(scheme: str) -> None:
    if scheme not in STEP_POWER:
        raise ValueError(f"scheme must be one of {sorted(STEP_POWER)}, got {scheme!r}")


def _one(spec: Spec, i: int, args, flat: bool = False, step=None):
    """(derivative, Richardson's estimate or None) for argument i, on the spec's backend;
    ``step``: None (the default) or an array of x's size."""
    b = spec.impl
    xp = b.xp
    shape = np.shape(spec.args[i])
    xf = xp.reshape(xp.asarray(args[i]), (-1,))
    blocks = stencil_points(xf, spec.scheme, step, spec.dtype, xp)
    F, P = b.points(spec.f, args, i, blocks, flat)
    f0 = spec.f(*args) if spec.scheme == "forward" else None
    d, err = combine(spec.scheme, F, f0, P, xf)
    to = lambda a: None if a is None else to_jacobian(a, spec.out_shape, shape, xp)  # noqa: E731
    return to(d), to(err)


def _at_step(spec: Spec, i: int, h, args):
    """(derivative, Richardson's estimate or None) at relative step h, scaled to
    max(|x|, 1) per component as the default step is."""
    xp = spec.impl.xp
    step = h * xp.maximum(xp.abs(xp.reshape(args[i], (-1,))), 1.0)
    return _one(spec, i, args, step=xp.asarray(step, dtype=spec.dtype))


def _user_step(spec: Spec, i: int):
    """The user's step as an array of x_i's size (None: the default), made once."""
    if spec.step is None:
        return None
    step = np.broadcast_to(np.asarray(spec.step, dtype=spec.dtype), (spec.size(i),))
    return spec.impl.constant(np.array(step))


@register(
    "numeric",
    summary="finite differences: forward, central or Richardson-extrapolated central",
    stepping=Stepping(STEP_POWER, _at_step),
)
def numeric(spec: Spec) -> Built:
    own = getattr(spec.impl, "finite_differences", None)
    if own is not None:  # a backend that runs outside Python takes them in its own runtime
        return own(spec)
    if spec.scheme == "g9":  # G9.js's gradient: its step shrinks by decisions on f's values
        return g9.build(spec)
    _check_scheme(spec.scheme)
    richardson = spec.scheme == "richardson"
    per = EVALS[spec.scheme]
    steps = {i: _user_step(spec, i) for i in spec.indices}

    def make(flat):
        def fn(*args):
            parts = [_one(spec, i, args, flat, steps[i]) for i in spec.indices]
            value = pick([p[0] for p in parts], spec.wrt)
            if richardson:
                return value, pick([p[1] for p in parts], spec.wrt)
            return value

        return fn

    chunked = any(spec.impl.n_chunks(per * spec.size(i), spec.size(i)) > 1 for i in spec.indices)
    evals = sum(per * spec.size(i) for i in spec.indices) + (spec.scheme == "forward")
    return Built(
        make(False), f_evals=evals, with_error=richardson, step=spec.step,
        cost_fn=make(True) if chunked else None, chunked=True,  # every backend's points chunk
    )  # fmt: skip
