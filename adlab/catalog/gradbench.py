"""GradBench's evals as adlab models: one adapter per eval.

GradBench (github.com/gradbench/gradbench, MIT licence) sends each eval's
``input`` as JSON and expects its ``output`` in the eval's own shapes. An
adapter says, for one eval, which model computes it (a catalog name or inline
source), how an input becomes the model's settings and ``(x, *data)``, which
derivative each GradBench function asks for, and how a result becomes the
JSON the eval expects. The kinds of derivative (``GradBenchEval.functions``):

- ``"primal"``: f's value;
- ``"gradient"``: the derivative of f in x: a gradient for a scalar f, a
  Jacobian for a vector f;
- ``"dir"``: kmeans's Newton direction, the gradient divided elementwise by
  the Hessian's diagonal (``newton_direction``);
- ``"sparse"``: the Jacobian of a vector f as a ``scipy.sparse`` array, in one
  pass per color (``sparse=True``) where the mode has that form; else dense;
- ``"argmin"``: GradBench's gradient descent on f by its derivative, where f takes
  a derivative inside itself (particle, saddle: ``_nested``); the function's name
  says the outer and inner modes (``rr``, ``ff``, ``fr``, ``rf``).

The tool (``adlab.gradbench``) prepares each with ``adlab.prepare`` in its mode;
this module holds no framework code, only NumPy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.model.source import Model
from . import _adbench, _nested, load_model

Input = Mapping[str, Any]  # an eval's ``input`` JSON, decoded
KINDS = ("primal", "gradient", "dir", "sparse", "argmin")


@dataclass(frozen=True)
class GradBenchEval:
    """One GradBench eval, as an adlab model.

    Attributes:
        name: the eval's (GradBench module's) name.
        model_name: the catalog model that computes it, or "" for ``source``.
        functions: GradBench function name -> kind of derivative (``KINDS``).
        arguments: (input, model) -> f's arguments ``(x, *data)``, NumPy float64.
        outputs: GradBench function name -> (result, input) -> the JSON value.
        settings: input -> the model's settings for it (D, K, S, ...); default none.
        source: inline model source, where no catalog model fits (hello).
        function_settings: GradBench function name -> settings it changes (ode's
            gradient asks for y's last component only: LAST = True).
    """

    name: str
    model_name: str
    functions: Mapping[str, str]
    arguments: Callable[[Input, Model], tuple]
    outputs: Mapping[str, Callable[[Any, Input], Any]]
    settings: Callable[[Input], dict[str, Any]] = lambda input: {}  # most evals fix none
    source: str = ""
    function_settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def kind(self, function: str) -> str:
        """The kind of derivative GradBench's ``function`` asks for."""
        if function not in self.functions:
            raise ValueError(
                f"GradBench's {self.name} eval has no function {function!r}; "
                f"adlab knows {sorted(self.functions)}"
            )
        return self.functions[function]

    def model(self, input: Input, function: str = "") -> Model:
        """The model, with the settings this input (and ``function``, if given) needs.

        Without ``function`` the model is the one every function can use (ode: f
        is all of y, and the gradient's answer is the last row of its Jacobian).
        """
        settings = {**self.settings(input), **self.function_settings.get(function, {})}
        return _model(self.model_name, self.source, tuple(sorted(settings.items())))

    def inputs(self, input: Input, function: str = "") -> tuple[Model, tuple]:
        """The model and f's arguments ``(x, *data)`` for one input (see ``model``)."""
        model = self.model(input, function)
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


# ------------------------------------------------------------ lse
LSE = GradBenchEval(
    name="lse",
    model_name="lse",
    functions={"primal": "primal", "gradient": "gradient"},
    arguments=lambda input, model: (_vector(input, "x"),),
    outputs={"primal": _float, "gradient": _list},
)


# ------------------------------------------------------------ gmm
GMM_PARTS = ("alpha", "mu", "q", "l")  # x's parts, in order


def _gmm_arguments(input: Input, model: Model) -> tuple:
    params = np.concatenate([_vector(input, key).ravel() for key in GMM_PARTS])
    _, _, lower = model.setup(1)  # the factors' index table depends on D only
    return (params, np.asarray(input["x"], dtype=np.float64).reshape(-1, int(input["d"])), lower)


def _gmm_jacobian(result: Any, input: Input) -> dict:
    """The gradient split into the eval's alpha (k), mu (k x d), q (k x d), l (k x d(d-1)/2)."""
    g = np.asarray(result, dtype=np.float64)
    k, d = int(input["k"]), int(input["d"])
    sizes = {"alpha": (k,), "mu": (k, d), "q": (k, d), "l": (k, d * (d - 1) // 2)}
    out, start = {}, 0
    for key in GMM_PARTS:
        size = int(np.prod(sizes[key]))
        out[key] = g[start : start + size].reshape(sizes[key]).tolist()
        start += size
    return out


GMM = GradBenchEval(
    name="gmm",
    model_name="gmm",
    functions={"objective": "primal", "jacobian": "gradient"},
    settings=lambda input: {
        "D": int(input["d"]),
        "K": int(input["k"]),
        "M": int(input["m"]),
        "GAMMA": float(input["gamma"]),
    },
    arguments=_gmm_arguments,
    outputs={"objective": _float, "jacobian": _gmm_jacobian},
)


# ------------------------------------------------------------ ode
def _ode_gradient(result: Any, input: Input) -> list:
    # f is y's last component (LAST = True), or all of y: then the gradient of the
    # last component is the Jacobian's last row
    g = np.asarray(result, dtype=np.float64)
    return (g[-1] if g.ndim == 2 else g).tolist()


ODE = GradBenchEval(
    name="ode",
    model_name="ode",
    functions={"primal": "primal", "gradient": "gradient"},
    settings=lambda input: {"S": int(input["s"]), "LAST": False},
    function_settings={"gradient": {"LAST": True}},
    arguments=lambda input, model: (_vector(input, "x"),),
    outputs={"primal": _list, "gradient": _ode_gradient},
)


# ------------------------------------------------------------ det
def _det_arguments(input: Input, model: Model) -> tuple:
    # setup builds the expansion's index tables from ell; A is the eval's
    _, *tables = model.setup(int(input["ell"]))
    return (_vector(input, "A"), *tables)


DET = GradBenchEval(
    name="det",
    model_name="det",
    functions={"primal": "primal", "gradient": "gradient"},
    arguments=_det_arguments,
    outputs={"primal": _float, "gradient": _list},
)


# ------------------------------------------------------------ kmeans
def _kmeans_settings(input: Input) -> dict[str, Any]:
    centroids = np.asarray(input["centroids"], dtype=np.float64)
    return {"K": centroids.shape[0], "D": centroids.shape[1]}


def _kmeans_dir(result: Any, input: Input) -> list:
    k = len(input["centroids"])
    return np.asarray(result, dtype=np.float64).reshape(k, -1).tolist()


KMEANS = GradBenchEval(
    name="kmeans",
    model_name="kmeans",
    functions={"cost": "primal", "dir": "dir"},
    settings=_kmeans_settings,
    arguments=lambda input, model: (
        _vector(input, "centroids").ravel(),
        _vector(input, "points"),
    ),
    outputs={"cost": _float, "dir": _kmeans_dir},
)


# ------------------------------------------------------------ ht, ba and lstm (adlab.catalog._adbench)
HT = GradBenchEval(
    name="ht",
    model_name="ht",
    functions={"objective": "primal", "jacobian": "gradient"},
    settings=_adbench.ht_settings,
    arguments=_adbench.ht_arguments,
    outputs={"objective": _list, "jacobian": _list},
)

BA = GradBenchEval(
    name="ba",
    model_name="ba",
    functions={"objective": "primal", "jacobian": "sparse"},
    settings=_adbench.ba_settings,
    arguments=_adbench.ba_arguments,
    outputs={"objective": _adbench.ba_objective, "jacobian": _adbench.ba_jacobian},
)


LSTM = GradBenchEval(
    name="lstm",
    model_name="lstm",
    functions={"objective": "primal", "jacobian": "gradient"},
    settings=lambda input: {"LAYERS": len(input["state"]) // 2},
    arguments=_adbench.lstm_arguments,
    outputs={"objective": _float, "jacobian": _list},
)


# ------------------------------------------------------------ particle and saddle (_nested)
#: their functions (outer, inner mode), their descent and its cost, for the tool
COMBINATIONS, DESCENT_CALLS, LOOPS = _nested.COMBINATIONS, _nested.DESCENT_CALLS, _nested.LOOPS
combination, multivariate_argmin = _nested.combination, _nested.multivariate_argmin
ARGMIN = dict.fromkeys(COMBINATIONS, "argmin")

PARTICLE = GradBenchEval(
    name="particle",
    model_name="particle",
    functions=ARGMIN,
    arguments=_nested.particle_arguments,
    outputs=dict.fromkeys(ARGMIN, _nested.particle_output),
)

SADDLE = GradBenchEval(
    name="saddle",
    model_name="saddle",
    functions=ARGMIN,
    arguments=_nested.saddle_arguments,
    outputs=dict.fromkeys(ARGMIN, _nested.saddle_output),
)


#: every eval adlab answers, by GradBench module name
GRADBENCH_EVALS: dict[str, GradBenchEval] = {
    e.name: e for e in (HELLO, LLSQ, LSE, GMM, ODE, DET, KMEANS, HT, BA, LSTM, PARTICLE, SADDLE)
}


def gradbench_eval(name: str) -> GradBenchEval:
    """The adapter for GradBench's eval ``name``; ValueError naming those adlab has."""
    if name not in GRADBENCH_EVALS:
        raise ValueError(
            f"adlab has no model for GradBench's {name!r} eval; it answers "
            f"{sorted(GRADBENCH_EVALS)}"
        )
    return GRADBENCH_EVALS[name]
