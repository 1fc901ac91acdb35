"""What the Lab knows, as traits: the model, the settings, the run's results.

``LabTraits`` declares them and keeps each valid on its own (``n`` within
1..``n_max``, known modes in one order, the error's text); ``LabState`` adds
what the Lab does. Widgets link to these traits and to nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from traitlets import (
    Bool,
    Enum,
    Float,
    HasTraits,
    Instance,
    Int,
    List,
    TraitError,
    Unicode,
    observe,
    validate,
)

from .._vocab import BACKENDS, PRECISIONS, SCHEMES, ModelError
from ..engine.backends import BASELINE, DEFAULT, FACTS, JAXJS, TFJS
from ..engine.model.source import Model
from .modes import (
    CHECKPOINT_CHOICES,
    COMPOSITION_CHOICES,
    FIRST_ORDER,
    SECOND_ORDER,
    SPARSE_CHOICES,
)

#: the mode checkboxes: first order, then second order (Hessian, HVP)
MODE_CHOICES: tuple[str, ...] = (*FIRST_ORDER, *SECOND_ORDER)
#: the mode checkboxes ticked at first: a Lab measures the first-order modes unless
#: told otherwise (a sweep's own default variants: ``measure.DEFAULT_MODES``)
DEFAULT_MODE_TICKS: tuple[str, ...] = FIRST_ORDER
#: jax.hessian's composition, the cheapest HVP (Pearlmutter 1994)
DEFAULT_COMPOSITIONS: tuple[str, ...] = ("forward-over-reverse",)
#: the framework checkboxes: each ticked mode runs on each ticked framework
FRAMEWORK_CHOICES: tuple[str, ...] = BACKENDS
#: JAX, and plain NumPy's finite differences as the framework-free baseline
DEFAULT_FRAMEWORKS: tuple[str, ...] = (DEFAULT, BASELINE)
#: TF.js's backends, the Lab's device choice for TF.js series
TFJS_DEVICES: tuple[str, ...] = FACTS[TFJS].devices
#: jax-js's backends, the Lab's device choice for jax-js series (webgl, webgpu: the page's)
JAXJS_DEVICES: tuple[str, ...] = FACTS[JAXJS].devices
DEFAULT_N = 1000
N_MAX = 10_000


class LabTraits(HasTraits):
    """The Lab's traits, each valid on its own; no logic beyond that, and no widgets."""

    model_name = Unicode(help="the catalog name (or own name) of the model being edited")
    model_names = List(Unicode(), help="what the model dropdown offers")
    source = Unicode(help="the editor's text")
    model = Instance(Model, allow_none=True, help="the last model that compiled")
    error = Instance(Exception, allow_none=True, help="why the current source does not run")
    error_text = Unicode()
    n = Int(DEFAULT_N)
    n_max = Int(N_MAX)
    modes = List(Unicode())
    compositions = List(Unicode(), help="the ticked compositions of Hessian and HVP")
    sparse = Enum(SPARSE_CHOICES, default_value="dense",
                  help="forward, reverse and Hessian: dense, from their sparsity pattern, "
                  "or both ways")  # fmt: skip
    frameworks = List(Unicode())
    checkpoints = List(Unicode(), help="reverse mode's checkpointing of the model's loops, "
                       "one series per ticked choice: false, true, sqrt")  # fmt: skip
    scheme = Enum(SCHEMES, default_value="central")
    jit = Bool(
        None, allow_none=True,
        help="None: each framework as its users run it (JAX jitted, the others eager); "
        "True: each framework's compiler; False: every one eagerly",
    )  # fmt: skip
    precision = Enum(PRECISIONS, default_value="float64")
    device = Enum(TFJS_DEVICES, default_value="cpu",
                  help="the TF.js backend of the TF.js series (webgl in headless Chromium is "
                  "SwiftShader: software)")  # fmt: skip
    jaxjs_device = Enum(JAXJS_DEVICES, default_value=JAXJS_DEVICES[0],
                        help="jax-js's backend of the jax-js series (webgl and webgpu in "
                        "the page only; one that reads back wrong values is refused)")  # fmt: skip
    show_compile = Bool(False)
    running = Bool(False)
    progress = Float(0.0)
    status = Unicode()
    results = List(help="the records of the current run, in the order measured")
    steps = List(help="the step-size points of the current run")
    crossovers = List(help="Crossover: where one series overtakes another")
    run_id = Int(0, help="changes when a new run replaces the results")
    steps_n = Int(0, help="the n of the current step-size curves")
    patterns = List(help="SparsityShown: the pattern and coloring of each sparse series")

    @validate("n")
    def _valid_n(self, proposal: dict) -> int:
        return int(min(max(int(proposal["value"]), 1), self.n_max))

    @validate("modes")
    def _valid_modes(self, proposal: dict) -> list[str]:
        modes = list(proposal["value"])
        if BASELINE in modes:
            raise TraitError(
                "'numpy' is a framework now, not a mode: tick 'numeric' and the NumPy "
                "framework (frameworks=['jax', 'numpy']) for the NumPy baseline"
            )
        return _in_order(modes, MODE_CHOICES, "mode")

    @validate("compositions")
    def _valid_compositions(self, proposal: dict) -> list[str]:
        return _in_order(proposal["value"], COMPOSITION_CHOICES, "composition")

    @validate("checkpoints")
    def _valid_checkpoints(self, proposal: dict) -> list[str]:
        return _in_order(proposal["value"], CHECKPOINT_CHOICES, "checkpoint")

    @validate("frameworks")
    def _valid_frameworks(self, proposal: dict) -> list[str]:
        return _in_order(proposal["value"], FRAMEWORK_CHOICES, "framework")

    @observe("error")
    def _error_changed(self, change: dict) -> None:
        exc = change["new"]
        if exc is None:
            self.error_text = ""
        elif isinstance(exc, ModelError):
            self.error_text = str(exc)
        else:
            self.error_text = f"{type(exc).__name__}: {exc}"


def _in_order(chosen: Iterable[str], choices: Sequence[str], what: str) -> list[str]:
    """``chosen`` in the choices' one order, without repeats; an unknown one is refused."""
    chosen = list(chosen)
    unknown = [c for c in chosen if c not in choices]
    if unknown:
        raise TraitError(f"unknown {what}(s) {unknown}; choose from {list(choices)}")
    return [c for c in choices if c in chosen]
