"""Model: one piece of NumPy-syntax source, runnable under every backend.

A model is Python source defining ``setup(n, rng)`` and ``f(x, *data)``. The
name ``np`` is not imported by the model: adlab binds it to each framework's
NumPy-like namespace (``jax.numpy``, ``numpy``, PyTorch's functions,
``tf.experimental.numpy``, ``autograd.numpy``: see ``adlab.engine.backends``),
so one text runs under all of them. The source is run once per backend (and,
where the framework's arrays need it, per precision) the first time that
backend is used; ``setup`` always comes from NumPy's. Module-level UPPERCASE
constants are *settings* that callers may override
(``load_model("mlp_batched", N1=100)``); ``wrt = 1`` at module level changes
which argument is differentiated by default.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..._vocab import ModelError
from ..backends import get_backend
from ..backends.checkpoint import checkpoint_matters, defaulting
from ..backends.facts import BASELINE, DEFAULT, REFERENCE
from ..backends.inner_grad import check_inner
from ..backends.inner_grad import make as inner_grad
from ..backends.real_part import with_real_part
from .folding import fold_constants
from .framework_imports import framework_refusal, framework_uses, np_imports
from .settings import (
    SETTING_TYPES,
    changed,
    check_settings,
    find_settings,
    with_values,
    write_values,
)
from .userline import register_source, remedy, source_line, translate, user_errors

_counter = itertools.count()
#: the backends a model's source is run under as it is built (the rest on first use):
#: NumPy's module gives ``setup`` and checks the source; JAX's twin analyses f
EAGER = (REFERENCE, BASELINE)


def _check_size(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be a positive integer (n >= 1), got {n}")
    return int(n)


def normalize_wrt(wrt: Any) -> int | tuple[int, ...]:
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return int(wrt)
    if (
        isinstance(wrt, (tuple, list))
        and wrt
        and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in wrt)
    ):
        return tuple(int(i) for i in wrt)
    raise ModelError(
        f"wrt must be an argument index or a tuple of indices, got {wrt!r}",
        hint="write e.g. wrt = 0, or wrt = (0, 1), as jax.grad's argnums",
    )


@dataclass(frozen=True, eq=False)
class Model:
    """A differentiable model: ``f(x, *data)`` and ``setup(n, rng)``.

    Build one with ``Model.from_source`` or ``Model.from_function``; the catalog's models are
    built from source. Attributes: ``name`` (in records and messages), ``doc`` (the model's
    docstring: what n means), ``source`` (None for wrapped callables), ``wrt`` (the default
    argument index, or tuple, to differentiate), ``settings`` (its UPPERCASE constants).

    Example:
        >>> model = adlab.Model.from_source("def setup(n, rng):\\n    return (rng.normal(size=n),)"
        ...                                 "\\ndef f(x):\\n    return np.sum(x ** 2)\\n")
        >>> x, = model.setup(3)
        >>> adlab.derivative(model, x) / x
        array([2., 2., 2.])
    """

    name: str
    doc: str
    source: str | None
    wrt: int | tuple[int, ...]
    settings: dict[str, Any]
    _functions: dict[str, Callable] = field(repr=False)
    _setup: Callable | None = field(repr=False)
    _files: frozenset[str] = field(repr=False)
    _return_lineno: int | None = field(default=None, repr=False)
    _nargs: int | None = field(default=None, repr=False)
    _source_code: tuple | None = field(default=None, repr=False)  # compiled, settings bound
    # a program adlab derives from the model (``derived``) whose result may be a
    # tuple of arrays, read apart by another program (a sparse derivative's passes)
    _any_output: bool = field(default=False, repr=False)

    # ----------------------------------------------------------------- build
    @classmethod
    def from_source(cls, text: str, name: str | None = None, **settings: Any) -> Model:
        """Compile model source. Errors name the user's line (``ModelError``).

        Args:
            text: Python source defining ``setup(n, rng)`` and ``f(x, *data)``.
            name: a name for records; defaults to ``"model"``.
            **settings: new values for the model's UPPERCASE constants.
        """
        if not isinstance(text, str):
            raise TypeError(f"model source must be a str, got {type(text).__name__}")
        name = name or "model"
        filename = f"<adlab model {name}#{next(_counter)}>"
        register_source(filename, text)
        files = frozenset({filename})
        with user_errors(files, "the model's top level"):
            code = compile(text, filename, "exec")
        tree = ast.parse(text)
        _refuse_own_imports(tree, filename)
        found = find_settings(tree)
        check_settings(settings, found, name, text.splitlines())
        # new values replace the literals before the module runs: W = 2 * N follows N
        run, bound = with_values(tree, found, settings)
        code = compile(fold_constants(run), filename, "exec")  # np.log(2 * np.pi): once
        namespaces = {(b, "float64"): _run(code, name, files, b, "float64", bound) for b in EAGER}
        ns = namespaces[(BASELINE, "float64")]
        for fname in ("f", "setup"):
            if not callable(ns.get(fname)):
                raise ModelError(
                    f"the model defines no function `{fname}`",
                    hint="define `def f(x, *data):` returning a scalar or 1-D array, "
                    "and `def setup(n, rng):` returning f's arguments as a tuple",
                )
        known = {k: ns[k] for k in found.settable()
                 if k in ns and (k in settings or isinstance(ns[k], SETTING_TYPES))}  # fmt: skip
        wrt = normalize_wrt(ns.get("wrt", 0))
        return cls(
            name=name,
            doc=inspect.cleandoc(ast.get_docstring(tree) or ""),
            source=text,
            wrt=wrt,
            settings=known,
            _functions={key: ns["f"] for key, ns in namespaces.items()}, _setup=ns["setup"],
            _source_code=(code, bound), _files=files, _return_lineno=_last_return(tree, "f"),
            _nargs=_count_args(ns["f"]),
        )  # fmt: skip

    @classmethod
    def from_function(
        cls,
        f: Callable,
        setup: Callable | None = None,
        *,
        name: str | None = None,
        wrt: int | tuple[int, ...] = 0,
        f_numpy: Callable | None = None,
    ) -> Model:
        """Wrap Python callables as a model.

        Args:
            f: the function, written with ``jax.numpy`` (or anything JAX traces).
            setup: ``setup(n, rng)`` returning f's arguments, or None if the
                model is only called with explicit arguments.
            name: a name for records; defaults to ``f.__name__``.
            wrt: default argument(s) to differentiate.
            f_numpy: a plain-NumPy twin of ``f`` for ``backend="numpy"``;
                defaults to ``f`` itself. Other backends call ``f`` itself.
        """
        if not callable(f):
            raise TypeError(f"f must be callable, got {type(f).__name__}")
        files = {c.co_filename for c in (_code(f), _code(setup), _code(f_numpy)) if c}
        return cls(
            name=name or getattr(f, "__name__", "f"),
            doc=inspect.cleandoc(f.__doc__ or ""),
            source=None,
            wrt=normalize_wrt(wrt),
            settings={},
            _functions={(REFERENCE, None): f, (BASELINE, None): f_numpy or f, (None, None): f},
            _setup=setup,
            _files=frozenset(files),
            _nargs=_count_args(f),
        )

    # ------------------------------------------------------------------ use
    def function(self, backend: str = DEFAULT, precision: str = "float64",
                 inner: str = "reverse", checkpoint: Any = None) -> Callable:  # fmt: skip
        """The model's ``f`` bound to ``np`` of ``backend`` (its source run under that
        namespace on first use), for ``precision``; its ``grad`` takes ``inner`` mode
        (``backends.inner_grad``), its loops ``checkpoint`` where they do not say, so the
        choice costs a call nothing."""
        impl = get_backend(backend)  # an unknown or missing framework says so
        if self._source_code is None:  # a wrapped callable: its twins, else f itself
            return self._functions.get((backend, None)) or self._functions[(None, None)]
        key: tuple = (backend, precision if impl.namespace_per_precision else "float64")
        if self.inner_matters(inner):  # the source run once more, with grad in that mode
            key = (*key, check_inner(inner))
        if checkpoint_matters(self.source, checkpoint):  # and with its loops' default
            key = (*key, f"checkpoint={checkpoint}")
        if key not in self._functions:
            code, bound = self._source_code
            ns = _run(code, self.name, self._files, backend, precision, bound, inner, checkpoint)
            self._functions[key] = ns["f"]
        return self._functions[key]

    def inner_matters(self, inner: str) -> bool:
        """Whether ``inner`` changes the model's program: it calls ``grad`` and ``inner``
        is not the default. Otherwise f, its programs and their cache keys are the
        default's."""
        return check_inner(inner) != "reverse" and self.uses_grad

    @property
    def uses_grad(self) -> bool:
        """Whether the model's source reads the provided ``grad`` (a derivative inside f)."""
        return self.source is not None and _reads_name(self.source, "grad")

    @property
    def uses_loops(self) -> bool:
        """Whether the model's source reads the provided ``fori_loop`` or ``scan``: loops
        whose reverse pass checkpointing can trade time for memory (ode, lstm, particle)."""
        return self.source is not None and any(
            _reads_name(self.source, name) for name in ("fori_loop", "scan")
        )

    def setup(self, n: int, seed: int = 0) -> tuple[Any, ...]:
        """The arguments of ``f`` for size ``n``, as a tuple (NumPy arrays)."""
        n = _check_size(n)
        if self._setup is None:
            raise ValueError(f"model {self.name!r} has no setup; pass f's arguments yourself")
        rng = np.random.default_rng(seed)
        with self.errors(f"setup, n={n}"):
            args = self._setup(n, rng)
        if not isinstance(args, tuple):
            args = (args,)
        if self._nargs is not None and len(args) != self._nargs:
            raise ModelError(
                f"setup(n={n}) returned {len(args)} value(s) but f takes {self._nargs}",
                hint="make setup return a tuple with one entry per argument of f",
            )
        return args

    def translate(self, exc: BaseException, where: str, jit: bool = True) -> ModelError | None:
        """A ``ModelError`` naming the model's line for ``exc``, or None (see ``translate``)."""
        return translate(exc, self._files, where, jit=jit)

    def errors(self, where: str, jit: bool = False):
        """``with model.errors(where):`` raises the model's own failures as ``ModelError``
        naming its line; other exceptions pass unchanged (``userline.user_errors``)."""
        return user_errors(self._files, where, jit=jit)

    def return_error(self, got: str, where: str) -> ModelError:
        """The error for an f that returned something other than a scalar/1-D array."""
        lineno, line = self.return_line
        return ModelError(
            f"f must return a scalar or a 1-D array of floats, got {got} (in {where})",
            lineno=lineno, line=line,
            hint="return np.sum(...) for a scalar, or a 1-D vector of residuals",
        )  # fmt: skip

    # ------------------------------------------------ what the engine reads of it
    @property
    def files(self) -> frozenset[str]:
        """The file names its source runs under: a frame in one is the user's line."""
        return self._files

    @property
    def return_line(self) -> tuple[int | None, str | None]:
        """f's last ``return``: its line number and, for a source model, its text."""
        lineno = self._return_lineno
        if self.source is None or lineno is None:
            return lineno, None
        return lineno, source_line(next(iter(self._files)), lineno)

    @property
    def any_output(self) -> bool:
        """f may return a tuple of arrays: a program adlab derives (``derived``)."""
        return self._any_output

    def derived(self, f: Callable, any_output: bool = False) -> Model:
        """A model computing ``f`` instead, whose failures still name this model's lines.

        ``any_output``: f may return a tuple of arrays (not a model's scalar or vector).
        """
        return replace(Model.from_function(f, name=self.name), _files=self._files,
                       _any_output=any_output)  # fmt: skip

    def with_settings(self, **settings: Any) -> Model:
        """The same model source with some settings changed."""
        if self.source is None:
            raise ValueError("only models built from source have settings")
        return Model.from_source(self.source, self.name, **{**self.settings, **settings})

    def source_with_settings(self) -> str:
        """The source with this model's changed settings written in, in place of their literals.

        ``from_source(text, **settings)`` puts the new values in place of the
        literals before the module runs, so this text is the same model; an
        editor showing it shows what runs.
        """
        if self.source is None:
            raise ValueError("only models built from source have settings")
        defaults = Model.from_source(self.source, self.name).settings
        new = changed(defaults, self.settings)
        return write_values(self.source, find_settings(ast.parse(self.source)), new)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.settings.items())
        return f"Model({self.name!r}, wrt={self.wrt!r}{extra})"


# help(), Jupyter's shift-tab and the API page show what a user reads: the fields adlab fills
# itself (from_source, from_function) stay in __init__, out of the signatures shown
for _shown, _sig in ((o, inspect.signature(o)) for o in (Model, Model.__init__)):
    _shown.__signature__ = _sig.replace(parameters=[p for p in _sig.parameters.values()
                                                    if not p.name.startswith("_")])  # fmt: skip


def _refuse_own_imports(tree: ast.Module, filename: str) -> None:
    """A model that imports its own np, or imports or calls torch, tensorflow, jax or
    autograd itself, is refused at that line: adlab binds np to the framework that runs
    the model, and f would otherwise reach a framework other than that one (torch.sum of
    a value JAX traces)."""
    for lineno in np_imports(tree)[:1]:
        line = source_line(filename, lineno) or ""
        # the import would replace adlab's np (jax.numpy under JAX): JAX could not
        # trace f, and the message would come from deep inside NumPy
        raise ModelError(
            "the model imports its own np; adlab binds np to the framework's NumPy-like "
            "namespace (jax.numpy under JAX, numpy for backend='numpy', ...), so one "
            "text runs under every backend",
            lineno=lineno, line=line, hint=f"np is provided by adlab; remove `{line.strip()}`",
        )  # fmt: skip
    # after np's: `import jax.numpy as np` is refused as an np of its own
    for lineno, backend in framework_uses(tree)[:1]:
        line = source_line(filename, lineno) or ""
        message, hint = framework_refusal(tree, backend, line, remedy("framework"))
        raise ModelError(message, lineno=lineno, line=line, hint=hint)


def _run(code: Any, name: str, files: frozenset[str], backend: str, precision: str,
         bound: dict, inner: str = "reverse", checkpoint: Any = None) -> dict:  # fmt: skip
    """The model's module namespace, its source run with ``np`` of ``backend``, ``grad``
    in ``inner`` mode on the framework that namespace is (js traces JAX's), loops whose
    ``checkpoint=`` defaults to ``checkpoint``."""
    base = defaulting(get_backend(backend).namespace(precision), checkpoint)
    framework = getattr(base["np"], "__adlab_framework__", BASELINE)  # numpy's is the module
    # np's comparing functions follow the real-part rule under complex step (real_part)
    ns: dict[str, Any] = {"__name__": f"adlab_model_{name}", **base,
                          "grad": inner_grad(framework, inner, precision),
                          "np": with_real_part(base["np"]), **bound}  # fmt: skip
    with user_errors(files, "the model's top level"):
        exec(code, ns)
    return ns


@functools.lru_cache(maxsize=64)
def _reads_name(source: str, name: str) -> bool:
    """Whether ``source`` reads a global ``name`` it does not define itself."""
    tree = ast.parse(source)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}  # fmt: skip
    return name not in defined and any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(tree)
    )


def _code(fn: Callable | None):
    return getattr(fn, "__code__", None)


def _count_args(fn: Callable) -> int | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    return sum(p.default is p.empty for p in params)


def _last_return(tree: ast.Module, fname: str) -> int | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == fname:
            returns = [n.lineno for n in ast.walk(node) if isinstance(n, ast.Return)]
            return max(returns) if returns else node.lineno
    return None


def is_model_source(text: str) -> bool:
    """Cheap test of whether a string looks like model source rather than a name."""
    return "\n" in text or bool(re.search(r"\bdef\s+f\s*\(", text))
