"""G9.js's gradient (``scheme="g9"``): central differences with a step that shrinks
until the forward, backward and central slopes agree.

G9 (bijection/g9, ``src/minimize.js``, adapted from numeric.js's ``gradient``)
starts each coordinate at step ``max(1e-6 * f(x), 1e-8)`` (f(x) itself, not its
absolute value, as the source has it: a negative f starts at 1e-8) and divides it
by 16 until ``min(max(|d1 - g|, |d2 - g|, |d1 - d2|), step)`` is below 1e-3 of
the largest of |g|, |f| at the three points, |x +- step| and 1e-8, where g is the
central slope and d1, d2 the forward and backward ones; it gives up after 20
steps. That is at least 2n + 1 evaluations of f. Where a step no longer moves x
(|x| beyond about 1e8 times it), G9 would take f's equal values for slopes of 0:
adlab refuses there instead, in Python and JavaScript alike.

This is its Python transcription, run on NumPy's backend (one coordinate at a
time, as G9 does); backend "js" runs ``runtime.js``'s JavaScript one on the
emitted f. Both are scalar f only: G9 minimizes.

References:
    S. Loisel, numeric.js (2011), ``numeric.gradient``; bijection/g9, ``src/minimize.js``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._vocab import ModelError
from ..backends import FACTS, with_fact
from ._registry import Built, Spec

#: the backends G9's gradient runs on: its loop decides on f's values, so it runs
#: where f is evaluated one point at a time outside a compiler (their entry's ``g9``);
#: JavaScript's first, G9's own home
G9_BACKENDS: tuple[str, ...] = tuple(
    sorted(with_fact("g9"), key=lambda name: not FACTS[name].traced)
)
#: at most this many step shrinks per coordinate (G9's own)
TRIES = 20


def gradient(f: Callable[[np.ndarray], float], x: np.ndarray) -> np.ndarray:
    """G9's ``gradient(f, x)``, line for line, for a flat float64 ``x``."""
    x = np.asarray(x, dtype=np.float64).ravel()
    f1 = float(f(x))
    if np.isnan(f1):
        raise ModelError("f is NaN at x, so G9's gradient refuses it",
                         hint="start from an x where f is finite")  # fmt: skip
    temp = x.copy()
    grad = np.empty_like(x)
    for i in range(x.size):
        delta = max(1e-6 * f1, 1e-8)
        for k in range(TRIES + 1):
            if k == TRIES:
                raise ModelError(
                    f"G9's gradient failed at index {i}: its slopes never agreed within "
                    f"{TRIES} shrinks of the step",
                    hint="scheme='central' or mode='reverse' give the derivative there",
                )
            temp[i] = x[i] + delta
            if temp[i] == x[i]:  # adlab's check: G9 would read equal values as slopes of 0
                raise ModelError(
                    f"G9's step ({delta:.1e}) does not move x[{i}] = {x[i]} in float64: its "
                    "slopes would be 0",
                    hint="scheme='central' (a step relative to x) or mode='reverse' give the "
                    "derivative there",
                )
            f0 = float(f(temp))
            temp[i] = x[i] - delta
            f2 = float(f(temp))
            temp[i] = x[i]
            if not (np.isnan(f0) or np.isnan(f2)):
                grad[i] = (f0 - f2) / (2 * delta)
                t0, t1, t2 = x[i] - delta, x[i], x[i] + delta
                d1 = (f0 - f1) / delta
                d2 = (f1 - f2) / delta
                err = min(max(abs(d1 - grad[i]), abs(d2 - grad[i]), abs(d1 - d2)), delta)
                normalize = max(abs(grad[i]), abs(f0), abs(f1), abs(f2), abs(t0), abs(t1),
                                abs(t2), 1e-8)  # fmt: skip
                if err / normalize < 1e-3:
                    break
            delta /= 16
    return grad


def check(spec: Spec) -> None:
    """Refuse what G9's gradient cannot take, with the reason."""
    if spec.backend not in G9_BACKENDS:
        raise ValueError(
            f"scheme 'g9' (G9.js's gradient) runs on backend "
            f"{', '.join(map(repr, G9_BACKENDS[:-1]))} or {G9_BACKENDS[-1]!r}: "
            f"its step shrinks by decisions on f's values, one point at a time; on "
            f"backend={spec.backend!r} use scheme 'central', its one-step counterpart"
        )
    if spec.out_shape != ():
        raise ValueError(
            "scheme 'g9' takes the gradient of a scalar f (G9 minimizes one); "
            f"this f returns shape {spec.out_shape}: use scheme 'central'"
        )


def build(spec: Spec) -> Built:
    """The numeric mode's ``Built`` for scheme "g9" on NumPy's backend."""
    check(spec)
    wrt = spec.wrt if isinstance(spec.wrt, tuple) else (spec.wrt,)

    def one(args: tuple, i: int) -> Any:
        shape = np.shape(args[i])

        def at(xf: np.ndarray) -> float:
            new = list(args)
            new[i] = xf.reshape(shape)
            return spec.f(*new)

        return gradient(at, args[i]).reshape(shape)

    def fn(*args: Any) -> Any:
        grads = [one(args, i) for i in wrt]
        return tuple(grads) if isinstance(spec.wrt, tuple) else grads[0]

    n = sum(spec.size(i) for i in wrt)
    return Built(fn, f_evals=2 * n + 1, note="G9's gradient: at least 2n + 1 evaluations "
                 "of f, more where its step shrinks")  # fmt: skip
