"""Complex step through max, abs and comparisons: compare real parts, carry the imaginary.

Under complex step, x + ih is complex only to carry the derivative in its
imaginary part. A function that compares (``max``, ``abs``, ``sort``,
``logaddexp``'s and ``logsumexp``'s shift) must then decide on the real parts
alone and pass the chosen values on whole, imaginary part included; that keeps
the derivative exact (Martins, Sturdza and Alonso 2003). NumPy's and JAX's own functions do
other things with complex numbers: ``abs`` is the modulus (the imaginary part
is lost), JAX's ``logaddexp`` wraps the imaginary part into (-pi, pi] (a tiny
one becomes 0), PyTorch's ``max`` refuses complex tensors.

So the model's ``np`` carries these functions in place of the framework's, and
they follow the real-part rule only while complex step evaluates f
(``COMPLEX_STEP``, set by the mode around its calls and traces of f). Otherwise,
or on a real input, they are the framework's own: a model that computes with
complex numbers of its own gets the modulus it asked for.

Functions that are analytic but whose framework's complex version loses a tiny
imaginary part, or refuses one, get the same treatment: ``arctan2`` (the angle of
the real parts plus an analytic correction, the real parts held constant for
AD), ``hypot`` (``sqrt(a*a + b*b)``), ``convolve`` and ``correlate`` (real and
imaginary parts apart: XLA's complex convolution computes three real products
whose difference loses an imaginary part of 1e-20), and whole powers ``x ** 3``
and ``np.power(x, 3)`` (products: PyTorch's and TensorFlow's complex pow leaves
~1e-16 in the imaginary part at a negative real part). ``var`` and ``std`` square
without the conjugate (the analytic extension of the real variance), and ``median``
takes the middle of the values sorted by real part.

Ties: ``max`` of equal real parts averages their imaginary parts, as reverse
mode shares the gradient of a tie; ``abs`` at a real part of 0 takes the
right-hand derivative (+1).

References:
    Martins, Sturdza & Alonso, "The complex-step derivative approximation",
    ACM TOMS 29(3), 2003, section 3.2 (abs, max, comparisons).
"""

from __future__ import annotations

import contextvars
import functools
import math
from collections.abc import Callable
from typing import Any

#: True while complex step evaluates (or traces) f
COMPLEX_STEP = contextvars.ContextVar("adlab_complex_step", default=False)


def under_complex_step(f: Callable) -> Callable:
    """``f`` evaluated with the real-part rule on (traces of it included)."""

    @functools.wraps(f)
    def run(*args: Any) -> Any:
        token = COMPLEX_STEP.set(True)
        try:
            return f(*args)
        finally:
            COMPLEX_STEP.reset(token)

    return run


def is_complex(a: Any) -> bool:
    dtype = getattr(a, "dtype", None)
    return dtype is not None and (getattr(dtype, "is_complex", False)
                                  or getattr(dtype, "kind", "") == "c")  # fmt: skip


def _reduced(np: Any, out: Any, axis: Any, keepdims: bool) -> Any:
    """``out``, reduced with ``keepdims=True``, as the reduction with ``keepdims`` gives it."""
    if keepdims:
        return out
    return np.reshape(out, ()) if axis is None else np.squeeze(out, axis=axis)


def logsumexp(np: Any, a: Any, axis: Any = None, keepdims: bool = False,
              constant: Callable = lambda v: v) -> Any:  # fmt: skip
    """``log(sum(exp(a)))`` shifted by the maximum of the real parts, held ``constant``:
    the sum is the same for any constant shift, so the imaginary part goes through
    exp, sum and log whole and the derivative stays exact, ties or not
    (``special.logsumexp`` calls it under complex step)."""
    m = constant(np.max(np.real(a), axis=axis, keepdims=True))
    m = np.where(np.isfinite(m), m, np.zeros_like(m))  # all -inf: scipy's shift, 0
    return _reduced(np, m + np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)), axis,
                    keepdims)  # fmt: skip


def integral(p: Any) -> int | None:
    """The exponent ``p`` as an int where it is a whole number known while tracing."""
    import numpy

    if isinstance(p, (bool, numpy.bool_)):
        return None
    if isinstance(p, (int, numpy.integer)):
        return int(p)
    if isinstance(p, (float, numpy.floating)) and float(p).is_integer() and abs(p) < 2**31:
        return int(p)
    return None


def integer_power(z: Any, p: int) -> Any:
    """``z ** p`` by repeated squaring: products only, so a tiny imaginary part stays
    exact. (TensorFlow's complex pow is exp(p log z): at a negative real part, log's
    imaginary part pi times p leaves sin(p pi) ~ 1e-16, not 0, in the result.)"""
    if p < 0:
        return 1 / integer_power(z, -p)
    out, base = None, z
    while p:
        if p & 1:
            out = base if out is None else out * base
        p >>= 1
        if p:
            base = base * base
    return z * 0 + 1 if out is None else out


#: products of two arrays: PyTorch's refuse a real array beside a complex one
PRODUCTS = ("matmul", "dot", "inner", "einsum", "tensordot", "kron")


def as_complex_beside(args: tuple) -> tuple:
    """``args`` with each real floating array made complex where another is complex
    (as NumPy promotes; PyTorch's products refuse mixed dtypes)."""
    if not any(is_complex(a) for a in args):
        return args
    return tuple(a + 0j if hasattr(a, "dtype") and not is_complex(a)
                 and getattr(a.dtype, "is_floating_point", False) else a
                 for a in args)  # fmt: skip


#: a ufunc's methods (jnp.logaddexp.reduce): kept on the comparing functions' wrappers
UFUNC_METHODS = ("reduce", "accumulate", "outer", "reduceat", "at")


def _ufunc_method(own: Any, name: str, method: str) -> Callable:
    """``own.method``, refused under complex step: the real-part rule is for the function
    itself, and the framework's method would compare complex numbers its own way."""
    impl = getattr(own, method)

    @functools.wraps(impl)
    def run(a: Any, *args: Any, **kwargs: Any) -> Any:
        if COMPLEX_STEP.get() and (is_complex(a) or any(is_complex(b) for b in args)):
            raise TypeError(
                f"np.{name}.{method} has no complex-step rule"
                + (": write logsumexp(a, axis) (provided beside np), which has one"
                   if name == "logaddexp" and method == "reduce" else "")
            )  # fmt: skip
        return impl(a, *args, **kwargs)

    return run


def real_part_functions(np: Any, constant: Callable = lambda v: v) -> dict[str, Callable]:
    """The comparing functions of the namespace ``np``, each following the real-part
    rule on a complex input under complex step, else ``np``'s own; ``constant``
    holds a value constant for the framework's AD (complex step of a gradient)."""

    cplx = is_complex

    def re(a: Any) -> Any:
        return np.real(a) if cplx(a) else a

    def held(a: Any) -> Any:  # a Python number stays one: TF would make it float32
        return constant(a) if hasattr(a, "dtype") else a

    def rule(name: str, real_part: Callable) -> Callable:
        own = getattr(np, name)

        @functools.wraps(own)
        def fn(a: Any, *args: Any, **kwargs: Any) -> Any:
            if COMPLEX_STEP.get() and (cplx(a) or any(cplx(b) for b in args)):
                return real_part(a, *args, **kwargs)
            return own(a, *args, **kwargs)

        for method in UFUNC_METHODS:  # np.logaddexp.reduce: a ufunc's methods stay
            if callable(getattr(own, method, None)):
                setattr(fn, method, _ufunc_method(own, name, method))
        return fn

    def absolute(z):
        return np.where(re(z) < 0, -z, z)

    def sign(z):
        return np.sign(re(z))

    def maximum(a, b):  # a tie: the mean, whose real part is the tied value exactly
        sa, sb = getattr(a, "shape", None), getattr(b, "shape", None)
        if sa is not None and sb is not None and tuple(sa) != tuple(sb):
            # broadcast by adding: autograd's np.where does not sum a broadcast
            # argument's gradient back to its shape (complex step of its gradient)
            a, b = a + np.zeros_like(b), b + np.zeros_like(a)
        ra, rb = re(a), re(b)
        return np.where(ra > rb, a, np.where(ra < rb, b, (a + b) / 2))

    def minimum(a, b):
        return -maximum(-a, -b)

    def amax(z, axis=None, keepdims=False):  # the ties' mean: z - m is imaginary there
        r = re(z)
        m = np.max(r, axis=axis, keepdims=True)
        hit = r == m
        shift = np.sum(np.where(hit, z - m, 0 * z), axis=axis, keepdims=True)
        return _reduced(np, m + shift / np.sum(hit, axis=axis, keepdims=True), axis, keepdims)

    def amin(z, axis=None, keepdims=False):
        return -amax(-z, axis=axis, keepdims=keepdims)

    def argmax(z, *args, **kwargs):
        return np.argmax(re(z), *args, **kwargs)

    def argmin(z, *args, **kwargs):
        return np.argmin(re(z), *args, **kwargs)

    def argsort(z, axis=-1):
        return np.argsort(re(z), axis=axis)

    # PyTorch's namespace spells NumPy's take_along_axis take_along_dim
    take = getattr(np, "take_along_axis", None) or np.take_along_dim

    def sort(z, axis=-1):
        return take(z, np.argsort(re(z), axis=axis), axis)

    def clip(z, lo=None, hi=None):
        z = z if lo is None else maximum(z, lo)
        return z if hi is None else minimum(z, hi)

    def logaddexp(a, b):  # any shift is exact; the real one keeps exp from overflowing
        m = np.maximum(re(a), re(b))
        return m + np.log(np.exp(a - m) + np.exp(b - m))

    def logaddexp2(a, b):
        m = np.maximum(re(a), re(b))
        return m + np.log2(np.exp2(a - m) + np.exp2(b - m))

    def arctan2(y, x):
        """The angle of the real parts, plus the angle from there: atan2(y, x) =
        atan2(y0, x0) + atan((y x0 - x y0) / (x x0 + y y0)) for every real (x, y) near
        (x0, y0), so with (x0, y0) held it is the analytic extension. (JAX's complex
        atan2 loses an imaginary part of 1e-20; NumPy's and PyTorch's refuse one.)"""
        y0, x0 = held(re(y)), held(re(x))
        return np.arctan2(y0, x0) + np.arctan((y * x0 - x * y0) / (x * x0 + y * y0))

    def var(z, axis=None, ddof=0, keepdims=False):
        """mean((z - mean z)^2): JAX's and NumPy's multiply by the conjugate, the modulus
        squared, where the analytic extension of the real variance has no conjugate."""
        d = z - np.mean(z, axis=axis, keepdims=True)
        n = np.sum(np.ones_like(re(z)), axis=axis, keepdims=keepdims)
        return np.sum(d * d, axis=axis, keepdims=keepdims) / (n - ddof)

    def std(z, axis=None, ddof=0, keepdims=False):
        return np.sqrt(var(z, axis=axis, ddof=ddof, keepdims=keepdims))

    def median(z, axis=None, keepdims=False):
        """The middle of the values sorted by real part (JAX's quantile refuses complex
        numbers); along an axis, or keeping dimensions, the framework's own."""
        if axis is not None or keepdims:
            return np.median(z, axis=axis, keepdims=keepdims)
        s = sort(np.reshape(z, (-1,)))
        k = int(s.shape[0])
        return s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2

    def log2(z):  # JAX's splits log z into real and imaginary parts: exact, but unreadable
        return np.log(z) / math.log(2.0)  # to the check, which refused it

    def log10(z):
        return np.log(z) / math.log(10.0)

    def power(a, b):
        p = integral(b)
        return np.power(a, b) if p is None or not cplx(a) else integer_power(a, p)

    def hypot(a, b):  # analytic away from (0, 0), where hypot has no derivative
        return np.sqrt(a * a + b * b)

    def bilinear(own: Callable) -> Callable:
        """``own`` (convolve, correlate) on real and imaginary parts apart: each is
        real-bilinear, so this is exact, where XLA's complex convolution (three real
        products) loses an imaginary part of 1e-20; and correlate's conjugate of v,
        an identity on real v, is not applied (the analytic extension has none)."""

        def bilinear_parts(a, v, mode=None):
            kw = {} if mode is None else {"mode": mode}
            (ar, ai), (vr, vi) = ((np.real(z), np.imag(z)) if cplx(z) else (z, None)
                                  for z in (a, v))  # fmt: skip
            real = own(ar, vr, **kw)
            imag = [own(p, q, **kw) for p, q in ((ai, vr), (ar, vi)) if p is not None
                    and q is not None]  # fmt: skip
            if ai is not None and vi is not None:
                real = real - own(ai, vi, **kw)
            return real + 1j * sum(imag[1:], imag[0])

        return bilinear_parts

    # (names also in RULES: complex step's check trusts what these compute)
    table = {
        "abs": absolute, "absolute": absolute, "fabs": absolute, "sign": sign,
        "maximum": maximum, "fmax": maximum, "minimum": minimum, "fmin": minimum,
        "max": amax, "amax": amax, "min": amin, "amin": amin, "argmax": argmax,
        "argmin": argmin, "argsort": argsort, "sort": sort, "clip": clip,
        "logaddexp": logaddexp, "logaddexp2": logaddexp2, "arctan2": arctan2,
        "hypot": hypot, "power": power, "var": var, "std": std, "median": median,
        "log2": log2, "log10": log10,
    }  # fmt: skip
    table.update({name: bilinear(getattr(np, name)) for name in ("convolve", "correlate")
                  if hasattr(np, name)})  # fmt: skip
    if getattr(np, "__adlab_framework__", None) == "torch":  # products promote as NumPy's
        for name in PRODUCTS:
            if hasattr(np, name):
                own = getattr(np, name)
                table[name] = functools.wraps(own)(
                    lambda *a, own=own, **k: own(*as_complex_beside(a), **k)
                )
    return {name: rule(name, fn) for name, fn in table.items() if hasattr(np, name)}


#: the functions above that compute the real-part rule (not the wrappers choosing it)
RULES = frozenset({
    "absolute", "sign", "maximum", "minimum", "amax", "amin", "argmax", "argmin", "argsort",
    "sort", "clip", "logaddexp", "logaddexp2", "logsumexp", "arctan2", "hypot",
    "bilinear_parts", "power", "integer_power", "var", "std", "median", "log2", "log10",
})  # fmt: skip


def is_rule(file_name: str, function_name: str) -> bool:
    """Whether a traceback frame is inside one of the real-part rules."""
    return file_name == __file__ and function_name.rsplit(".", 1)[-1] in RULES


#: the model namespaces of PyTorch and TensorFlow (their rules serve the operators:
#: ``_complex_operators``)
NAMESPACES: dict[str, Any] = {}


@functools.cache
def with_real_part(np: Any) -> Any:
    """A namespace with ``np``'s names and ``real_part_functions`` in place of its own."""
    from ._namespace import Namespace
    from .special import framework_functions

    base = getattr(np, "__adlab_base__", np)
    framework = getattr(np, "__adlab_framework__", None) or np.__name__.split(".")[0]
    names = {k: v for k, v in vars(np).items() if not k.startswith("_")}
    if framework in ("torch", "tensorflow"):
        NAMESPACES.setdefault(framework, np)
    try:
        constant = framework_functions(framework)[1]  # what logsumexp's shift is held with
    except ValueError:  # a framework without AD to hold a value from
        constant = lambda v: v  # noqa: E731
    return Namespace(framework, base, {**names, **real_part_functions(np, constant)})
