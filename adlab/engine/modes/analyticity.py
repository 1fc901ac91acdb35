"""Complex step's check of f: which operations carry the imaginary part exactly.

Before complex step is built, f is traced with a complex x; an operation not known
to carry the imaginary part exactly (``CARRIES``) that touches a complex value and
reaches f's value is refused at the model's line, in the user's words
(``complex_step`` holds the mode itself; see its docstring for why each is refused).
"""

from __future__ import annotations

import ast

import jax
import jax.numpy as jnp
import numpy as np

from ..backends import BASELINE, DEFAULT, REFERENCE, real_part
from ..backends.real_part import under_complex_step
from ..model.precision import COMPLEX
from ..model.userline import eqn_frames, eqn_line
from ..programs.jaxpr import equations_within, sub_jaxprs
from ..sparsity.index_sets import inexact

# Primitives that drop or bend the imaginary part of a complex value. Selections
# (max, min, sort, clamp: JAX's compare complex numbers real part first) and
# comparisons (a boolean carries no derivative) are not among them.
NON_ANALYTIC = frozenset({
    "abs", "sign", "real", "imag", "conj", "floor", "ceil", "round", "rem", "nextafter",
    "reduce_precision",
})  # fmt: skip


COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})

# Primitives known to carry a tiny imaginary part exactly (each checked against
# reverse mode at h = 1e-20 in tests/engine/test_complex_step_rules.py). Any other
# primitive on a complex value that reaches f's value is refused: analytic on
# paper is not enough, as XLA's complex atan2 and convolution (three real
# products, whose difference loses an imaginary part of 1e-20) and the
# decompositions (svd, eigh, qr, cholesky: moduli and conjugates) show.
CARRIES = frozenset({
    # analytic elementwise functions and arithmetic
    "add", "add_any", "sub", "mul", "div", "neg", "integer_pow", "pow", "square", "sqrt",
    "rsqrt", "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic",
    # linear: sums, products, matrix products, solves
    "reduce_sum", "reduce_prod", "cumsum", "cumprod", "dot_general", "lu",
    "triangular_solve",
    # selections: JAX compares complex numbers real part first, and passes the chosen whole
    "reduce_max", "reduce_min", "max", "min", "argmax", "argmin", "sort", "clamp",
    "select_n",
    # moving values about
    "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "slice",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "scatter-add",
    "scatter_add", "concatenate", "pad", "rev", "convert_element_type", "copy", "copy_p",
    "split", "stack", "tile", "stop_gradient", "optimization_barrier", "sharding_constraint",
    "device_put", "pvary",
})  # fmt: skip
# how NumPy spells the primitive itself: np.maximum *is* max, np.logaddexp only uses it
SPELLINGS = {
    "abs": {"abs", "absolute", "fabs"}, "max": {"maximum", "fmax", "clip"},
    "min": {"minimum", "fmin", "clip"}, "sign": {"sign"}, "real": {"real"}, "imag": {"imag"},
    "conj": {"conj", "conjugate"}, "floor": {"floor"}, "ceil": {"ceil"},
    "round": {"round", "around", "rint"}, "clamp": {"clip"}, "rem": {"mod", "remainder", "fmod"},
    "reduce_max": {"max", "amax", "nanmax"}, "reduce_min": {"min", "amin", "nanmin"},
    "argmax": {"argmax"}, "argmin": {"argmin"}, "sort": {"sort"},
}  # fmt: skip


def _library_calls(eqns, files) -> list[str]:
    """Names of the functions between the primitive and the user's line, nearest the user first."""
    names = []
    for frame in (fr for e in eqns for fr in eqn_frames(e)):
        if frame.file_name in files:
            break
        names.append(frame.function_name.rsplit(".", 1)[-1])
    return names[::-1]


def users_words(prim: str, eqns, files, line: str | None) -> tuple[str, bool] | None:
    """(what the user wrote that applies ``prim``, whether it *is* prim), from their line."""
    try:
        tree = ast.parse(line.strip()) if line else None
    except SyntaxError:  # a line of a longer statement
        tree = None
    if tree is None:
        return None
    calls = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            dotted = ast.unparse(node.func)
            calls.setdefault(dotted.rsplit(".", 1)[-1], dotted)
    library = _library_calls(eqns, files)
    compared = prim in COMPARISONS or any(n.startswith("_operator_") for n in library)
    compares = [n for n in ast.walk(tree) if isinstance(n, ast.Compare)]
    if compared and compares:
        return f"the comparison `{ast.unparse(compares[0])}`", True
    for name in library:
        if name in calls:
            return f"`{calls[name]}`", name in SPELLINGS.get(prim, ())
    spelled = [calls[c] for c in calls if c in SPELLINGS.get(prim, ())]
    return (f"`{spelled[0]}`", True) if spelled else None


def advice(backend: str) -> str:
    """What to use instead of complex step, that runs on ``backend``."""
    if backend == BASELINE:  # no AD on NumPy: its numeric mode, or AD elsewhere
        return ("use mode='numeric' (finite differences), or the forward or reverse mode "
                "(exact) on backend='jax'")  # fmt: skip
    return ("use the forward or reverse mode (exact: mode='reverse'; for a Hessian, "
            "'forward-over-reverse'), or mode='numeric' (finite differences)")  # fmt: skip


def refusal(prim: str, i: int, words: tuple[str, bool] | None, backend: str = DEFAULT
             ) -> tuple[str, str]:  # fmt: skip
    """(message, hint) for complex step's refusal of ``prim`` applied to argument i."""
    hint = advice(backend)
    if prim == "complex":  # f's own complex numbers, found with a real x
        what = f" ({words[0]} of one)" if words else ""
        return (f"complex step needs f real on real inputs, but f computes with complex "
                f"numbers of its own{what}: the step ih would mix into them, and "
                f"Im f(x + ih)/h would be silently wrong"), hint  # fmt: skip
    if words is None:
        what = f"`{prim}`"
    else:
        what = words[0] if words[1] else f"{words[0]} (it uses `{prim}` inside)"
    if prim == "pow":  # only a whole exponent written as a float is refused
        return (
            f"complex step on JAX cannot carry the imaginary part through a whole "
            f"power written as a float (x ** 2.0) of a value that depends on argument "
            f"{i}: JAX computes it as exp(p log x), which at a negative x leaves ~1e-16 "
            f"in the imaginary part, and Im f(x + ih)/h would be silently wrong"
        ), ("write the exponent as an int (x ** 2, computed with products), or " + hint)
    if prim in NON_ANALYTIC:
        why = "it is not analytic: it drops or bends the imaginary part"
    else:  # no rule: singular values, decompositions, XLA's complex atan2 and convolution
        why = ("complex step has no rule that carries the imaginary part through it "
               "exactly (it is not analytic, or its complex arithmetic loses an imaginary "
               "part of 1e-20)")  # fmt: skip
    message = (f"complex step needs an analytic f, but {what} is applied to a value that "
               f"depends on argument {i}, and {why}: Im f(x + ih)/h would be silently "
               f"wrong")  # fmt: skip
    if prim == "abs":  # np.abs itself compares real parts: this one is a library's modulus
        hint += "; or write the modulus with analytic operations (np.sqrt(np.sum(x**2)))"
    return message, hint


def _reaching(jaxpr) -> set:
    """The variables of ``jaxpr`` whose value flows, through inexact values, into its
    inexact outputs: a boolean (a comparison's) carries no derivative on."""
    live = {v for v in jaxpr.outvars if not hasattr(v, "val") and inexact(v.aval)}
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars if inexact(v.aval)):
            live.update(v for v in eqn.invars if hasattr(v, "aval") and not hasattr(v, "val"))
    return live


def _complex_in(eqn) -> bool:
    return any(jnp.issubdtype(getattr(v.aval, "dtype", np.float64), jnp.complexfloating)
               for v in eqn.invars if hasattr(v, "aval"))  # fmt: skip


def _whole_power(eqn) -> bool:
    """Whether ``eqn`` is JAX's ``pow`` of a complex base by a whole exponent written as
    a float (``x ** 2.0``): XLA computes it as exp(p log x), which at a negative real
    part leaves ~1e-16 in the imaginary part (``x ** 2`` is integer_pow: products)."""
    if eqn.primitive.name != "pow" or not hasattr(eqn.invars[1], "val"):
        return False  # an exponent computed in f: x ** y is real only at x > 0, exact there
    p = np.asarray(eqn.invars[1].val)
    return bool(np.all(np.imag(p) == 0) and np.all(np.real(p) == np.round(np.real(p))))


def _drops(eqn) -> bool:
    """Whether ``eqn`` takes a complex value somewhere it may lose the imaginary part:
    a primitive not known to carry it, or one with a real inexact result (the
    modulus, the real part, a cast, singular values)."""
    if not _complex_in(eqn) or not any(inexact(v.aval) for v in eqn.outvars):
        return False  # a boolean or integer result (a comparison) carries no derivative
    name = eqn.primitive.name
    if name in NON_ANALYTIC:
        return True
    if any(True for p in eqn.params.values() for _ in sub_jaxprs(p)):
        return False  # a call, loop or branch: its body's equations are checked
    real_out = any(inexact(v.aval) and not jnp.issubdtype(v.aval.dtype, jnp.complexfloating)
                   for v in eqn.outvars)  # fmt: skip
    return real_out or name not in CARRIES


def _first_harmful(jaxpr, backend: str = DEFAULT):
    """(equation, its enclosing equations) of the first operation on a complex value
    that may lose its imaginary part, and whose result reaches the value of the
    (sub)program it is in."""
    live: dict[int, set] = {}
    for eqn, outer in equations_within(jaxpr):
        if not (_drops(eqn) or backend == REFERENCE and _complex_in(eqn) and _whole_power(eqn)):
            continue  # (PyTorch's and TensorFlow's x ** 2.0: real_part.integer_power)
        if any(real_part.is_rule(fr.file_name, fr.function_name)
               for e in (eqn, *outer) for fr in eqn_frames(e)):  # fmt: skip
            continue  # the real-part rule's own comparisons and shifts: exact by design
        home = _home(jaxpr, eqn, outer)
        if id(home) not in live:
            live[id(home)] = _reaching(home)
        if any(v in live[id(home)] for v in eqn.outvars):
            return eqn, outer
    return None


def _home(jaxpr, eqn, outer):
    """The (sub)jaxpr whose equations hold ``eqn``."""
    if not outer:
        return jaxpr
    for param in outer[-1].params.values():
        for sub in sub_jaxprs(param):
            if any(e is eqn for e in sub.eqns):
                return sub
    return jaxpr


def find_non_analytic(f_jax, args, i: int, dtype, files=frozenset(), backend: str = DEFAULT):
    """(primitive, (file, line) or None, its equations innermost first) of the first
    non-analytic operation on x, else None; the primitive is "complex" when f
    computes with complex numbers of its own (found with a real x)."""
    x = np.asarray(args[i])
    probe = list(args)
    probe[i] = jax.ShapeDtypeStruct(x.shape, COMPLEX[np.dtype(dtype).name])
    found = _first_harmful(jax.make_jaxpr(under_complex_step(f_jax))(*probe).jaxpr, backend)
    own = None
    if found is None:  # with a real x, outside complex step: f's own complex numbers
        probe[i] = jax.ShapeDtypeStruct(x.shape, np.dtype(dtype))
        found = own = _first_harmful(jax.make_jaxpr(f_jax)(*probe).jaxpr)
    if found is None:
        return None
    eqn, outer = found
    eqns = (eqn, *reversed(outer))  # inside a jitted library call the user's line is the call
    name = "complex" if own else eqn.primitive.name
    for e in eqns:
        where = eqn_line(e, files)
        if where:
            return name, where, eqns
    return name, None, eqns
