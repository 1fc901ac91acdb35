"""GradBench's evals as adlab models: one adapter per eval.

GradBench (github.com/gradbench/gradbench, MIT licence) sends each eval's
``input`` as JSON and expects its ``output`` in the eval's own shapes. An
adapter says, for one eval, which model computes it (a catalog name or inline
source), how an input becomes the model's settings and ``(x, *data)``, which
derivative each GradBench function asks for, and how a result becomes the
JSON the eval expects. The kinds of derivative (``GradBenchEval.functions``):

- ``"primal"``: f's value;
- ``"gradient"``: the derivative of a scalar f in x (a gradient), or of a
  vector f (its Jacobian) where the eval asks for that;
- ``"dir"``: kmeans's Newton direction, the gradient divided elementwise by
  the Hessian's diagonal (``newton_direction``).

The tool (``adlab.gradbench``) prepares each with ``adlab.prepare`` in its mode;
this module holds no framework code, only NumPy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.model import Model
from . import load_model

Input = Mapping[str, Any]  # an eval's ``input`` JSON, decoded
KINDS = ("primal", "gradient", "dir")


@dataclass(frozen=True)
class GradBenchEval:
    """One GradBench eval, as an adlab model.

    Attributes:
        name: the eval's (GradBench module's) name.
        model_name: the catalog model that computes it, or "" for ``source``.
        functions: GradBench function name -> kind of derivative (``KINDS``).
        settings: input -> the model's settings for it (D, K, S, ...).
        arguments: (input, model) -> f's arguments ``(x, *data)``, NumPy float64.
        outputs: GradBench function name -> (result, input) -> the JSON value.
        source: inline model source, where no catalog model fits (hello).
    """

    name: str
    model_name: str
    functions: Mapping[str, str]
    settings: Callable[[Input], dict[str, Any]]
    arguments: Callable[[Input, Model], tuple]
    outputs: Mapping[str, Callable[[Any, Input], Any]]
    source: str = ""

    def kind(self, function: str) -> str:
        """The kind of derivative GradBench's ``function`` asks for."""
        if function not in self.functions:
            raise ValueError(
                f"GradBench's {self.name} eval has no function {function!r}; "
                f"adlab knows {sorted(self.functions)}"
            )
        return self.functions[function]

    def model(self, input: Input) -> Model:
        """The model, with the settings this input needs."""
        return _model(self.model_name, self.source, tuple(sorted(self.settings(input).items())))

    def inputs(self, input: Input) -> tuple[Model, tuple]:
        """The model and f's arguments ``(x, *data)`` for one input."""
        model = self.model(input)
        return model, self.arguments(input, model)

    def output(self, function: str, result: Any, input: Input) -> Any:
        """The JSON value GradBench expects for ``function``, from adlab's result."""
        self.kind(function)
        return self.outputs[function](result, input)


@functools.lru_cache(maxsize=64)
def _model(name: str, source: str, settings: tuple) -> Model:
    # Compiling a model's source is cheap but not free; an eval sends the same
    # shapes many times.
    if source:
        return Model.from_source(source, name="gradbench_hello", **dict(settings))
    return load_model(name, **dict(settings))


def newton_direction(gradient: Any, hessian_diagonal: Any) -> Any:
    """kmeans's ``dir``: the gradient over the Hessian's diagonal, elementwise.

    The kmeans cost's Hessian is diagonal (each point pulls only its nearest
    centroid, and |c - p|^2 separates by coordinate), so this is the Newton
    step H^-1 g, and the diagonal is one Hessian-vector product with ones.
    Works on any framework's arrays (division only).
    """
    return gradient / hessian_diagonal


# ------------------------------------------------------------ conversions
def _float(result: Any, input: Input) -> float:
    return float(np.asarray(result))


def _list(result: Any, input: Input) -> list:
    return np.asarray(result, dtype=np.float64).tolist()


def _vector(input: Input, key: str) -> np.ndarray:
    return np.asarray(input[key], dtype=np.float64)


# ------------------------------------------------------------ hello
HELLO_SOURCE = '''"""GradBench's hello eval: square(x) = x^2, and double(x) = d square/dx = 2x."""


def setup(n, rng):
    return (float(n),)


def f(x):
    return x * x
'''

HELLO = GradBenchEval(
    name="hello",
    model_name="",
    source=HELLO_SOURCE,
    functions={"square": "primal", "double": "gradient"},
    settings=lambda input: {},
    arguments=lambda input, model: (np.float64(input),),
    outputs={"square": _float, "double": _float},
)


# ------------------------------------------------------------ llsq
def _llsq_arguments(input: Input, model: Model) -> tuple:
    # setup builds the sample points and powers from n; x is the eval's
    _, V, s = model.setup(int(input["n"]))
    return (_vector(input, "x"), V, s)


LLSQ = GradBenchEval(
    name="llsq",
    model_name="llsq",
    functions={"primal": "primal", "gradient": "gradient"},
    settings=lambda input: {"M": len(input["x"])},
    arguments=_llsq_arguments,
    outputs={"primal": _float, "gradient": _list},
)


#: every eval adlab answers, by GradBench module name
GRADBENCH_EVALS: dict[str, GradBenchEval] = {e.name: e for e in (HELLO, LLSQ)}


def gradbench_eval(name: str) -> GradBenchEval:
    """The adapter for GradBench's eval ``name``; ValueError naming those adlab has."""
    if name not in GRADBENCH_EVALS:
        raise ValueError(
            f"adlab has no model for GradBench's {name!r} eval; it answers "
            f"{sorted(GRADBENCH_EVALS)}"
        )
    return GRADBENCH_EVALS[name]
