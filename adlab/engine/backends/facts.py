"""One entry of facts per framework: what the Lab, tutorials, plots, CLI and engine read of it.

Everything here can be said without importing the framework. Outside
``adlab/engine/backends/`` a module does not spell a framework's name in code
(``tests/test_structure.py`` counts the few that do): it reads an entry
(``FACTS[name].label``), a fact that picks frameworks (``sparse``, ``profiler``,
``nests``...), or one of the names below (``DEFAULT``, ``REFERENCE``, ``BASELINE``,
``JAVASCRIPT``, ``TFJS``, ``JAXJS``). Adding a framework is its folder under ``backends/``,
its entry here and its tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: the backend a call runs on when it names none
DEFAULT = "jax"
#: the framework adlab traces every model with: its programs give the sparsity patterns,
#: the cost counts, the checks of a model and the checked references
REFERENCE = "jax"
#: the framework-free baseline: plain NumPy, no AD (finite differences and complex step)
BASELINE = "numpy"
#: the two JavaScript backends, for the modules that set one beside the other (G9's question):
#: plain JavaScript emitted from JAX's programs, and TensorFlow.js
JAVASCRIPT = "js"
TFJS = "tfjs"
#: JAX's design in JavaScript: f translated to jax-js, differentiated by its own transforms
JAXJS = "jaxjs"

#: the second-order compositions of modes (``adlab.engine.modes.hessian.NAMES``), named
#: here because a framework's entry says which of them it nests
NESTED = ("forward-over-reverse", "reverse-over-forward", "reverse-over-reverse",
          "forward-over-forward")  # fmt: skip
COMPOSITIONS = (*NESTED, "numeric", "complex-step")


def _frozen(d: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(d or {}))


@dataclass(frozen=True)
class KnownBug:
    """A derivative the framework itself gets wrong, named where adlab's cross-check
    meets it (``engine.model.known_bugs``) and on the frameworks page.

    Attributes:
        operations: the operations that meet it, as a model calls them (``np.`` left out:
            "linalg.det").
        schemes: the second-order compositions it spoils (``NESTED``).
        what: what goes wrong, in words that follow the operation's name.
        issues: the framework's own reports of it ("pytorch/pytorch#149694").
        instead: what to do meanwhile, each way checked to give the right derivative.
    """

    operations: tuple[str, ...]
    schemes: tuple[str, ...]
    what: str
    issues: tuple[str, ...]
    instead: str


@dataclass(frozen=True)
class Facts:
    """What can be said of a framework without importing it.

    Attributes:
        package: the module ``import`` needs.
        extra: the pip extra of adlab that installs it (None: always installed).
        label: how people name it.
        compiler: what ``jit=True`` runs, in words; None: the framework has none.
        default_jit: how its users run it when they say nothing (``jit=None``).
        executable: a program it runs outside Python (``node``), found on PATH, or None.
        install: how to install that program, for messages.
        description: what it is and how it runs a derivative, in a sentence (the Lab's
            tooltip).
        how_eager, how_jit: how it runs a derivative eagerly / compiled, in a few words
            (the tutorials' tables); None: it has no such way.
        marker, dash: its plots' marker and line dash (the mode gives the color).
        has_ad: whether it takes derivatives itself (NumPy: no, finite differences only).
        nests: the second-order compositions it runs (``COMPOSITIONS``); () for none.
        why_not_nested: composition -> why it does not run it (each checked in the tests).
        why_no_nesting: why it runs no composition at all (nests empty), in words: what
            runs where, and what to use instead.
        devices: the devices ``device=`` names there, its default first, those a browser
            alone has among them (the Lab offers them all beside its box); () for none.
        float32_devices: those of ``devices`` that compute in float32 only (a series on one
            in a float64 sweep runs in float32, and its records say so).
        takes: mode -> what takes a derivative in that mode, in a few words ("jax-js's jvp
            (forward)"); a record's ``levels`` names them (``backends.levels``). A mode left
            out: "<label>'s <mode> mode".
        profiler: how ``adlab.profile`` reads its operations: "xla" (XLA's compiled
            program, jitted), "torch.profiler" (PyTorch's own operations, eagerly), or None.
        profile_refusal: why it cannot be profiled (profiler None).
        sparse: whether sparse Jacobians and Hessians run on it.
        sparse_refusal: why they do not.
        traced: its programs are JAX's, traced from the model and emitted for it (js).
        g9: it runs G9.js's gradient (``scheme="g9"``).
        own_namespace: its ``np`` is a namespace adlab builds (``backends.namespace``),
            not the framework's own NumPy-like module.
        imports: the top-level modules of it a model might import (refused at that line).
        aliases: the names people give it in their code (``tf``, ``jnp``).
        traces_with: (words of its own refusal of Python control flow on a value it
            traces or batches, how it does that in words), or None.
        precisions: the precisions it computes in, the one a call that names none
            runs in first (TF.js: float32 only).
        forward_column_cost: eagerly, a forward-mode Jacobian's cost per input in f's
            values where it pushes one tangent at a time (None: batched, or compiled); as
            seen on ode: the GradBench tool times one tangent's pass where it is set.
        checkpoint: how its loops recompute steps in the backward pass (``scan(...,
            checkpoint=True)`` or ``"sqrt"``), in words; None: it has no checkpointing.
        why_no_checkpoint: why not (checkpoint None), in words.
        known_bugs: the derivatives it gets wrong itself (``KnownBug``).
        on_numpy_arrays: f runs eagerly on NumPy's own arrays, complex ones for complex
            step (whose cost a sweep guesses by timing f on them).
    """

    package: str
    extra: str | None
    label: str
    compiler: str | None
    default_jit: bool = False
    executable: str | None = None
    install: str | None = None
    description: str = ""
    how_eager: str | None = None
    how_jit: str | None = None
    marker: str = "circle"
    dash: str = "solid"
    has_ad: bool = True
    nests: tuple[str, ...] = ()
    why_not_nested: Mapping[str, str] = field(default_factory=_frozen)
    why_no_nesting: str = "it has no automatic differentiation to nest"
    takes: Mapping[str, str] = field(default_factory=_frozen)
    devices: tuple[str, ...] = ()
    float32_devices: tuple[str, ...] = ()
    profiler: str | None = None
    profile_refusal: str | None = None
    sparse: bool = False
    sparse_refusal: str | None = ("its pattern is read from a JAX program "
                                  "(use backend='jax')")  # fmt: skip
    traced: bool = False
    g9: bool = False
    own_namespace: bool = False
    imports: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    traces_with: tuple[str, str] | None = None
    precisions: tuple[str, ...] = ("float64", "float32")
    forward_column_cost: float | None = None
    checkpoint: str | None = None
    on_numpy_arrays: bool = False
    why_no_checkpoint: str = "adlab runs its loops without recomputation there"
    known_bugs: tuple[KnownBug, ...] = ()

    def how(self, jit: bool) -> str | None:
        """How it runs a derivative, jitted or not, in a few words; None if it cannot."""
        return self.how_jit if jit else self.how_eager


# one entry a framework, laid out to be read across
# fmt: off
FACTS: dict[str, Facts] = {
    "jax": Facts(
        "jax", None, "JAX", "jax.jit", default_jit=True,
        description="JAX: traced, compiled by XLA (jax.jit)",
        how_eager="JAX eager, op by op", how_jit="tracing, XLA (jax.jit)",
        marker="circle", dash="solid",
        nests=COMPOSITIONS, profiler="xla", sparse=True, sparse_refusal=None,
        imports=("jax", "jaxlib"), aliases=("jnp", "lax"),
        checkpoint="jax.checkpoint (remat)",
        takes=_frozen({"reverse": "JAX's grad (reverse)", "forward": "JAX's jvp (forward)"}),
    ),
    "numpy": Facts(
        "numpy", None, "NumPy", None,
        description="plain NumPy: no AD, so finite differences and complex step only; "
        "the framework-free baseline",
        how_eager="plain NumPy", marker="square", dash="dashed", has_ad=False, g9=True,
        on_numpy_arrays=True,
        profile_refusal="a NumPy program has no operations a profiler names",
        why_no_checkpoint="NumPy takes no derivatives: no backward pass to recompute in",
    ),
    "torch": Facts(
        "torch", "torch", "PyTorch", "torch.compile",
        description="PyTorch: a tape, run eagerly (torch.autograd.grad); jit: torch.compile",
        how_eager="tape, eager", how_jit="torch.compile",
        marker="triangle", dash="dotdash",
        nests=(*NESTED, "numeric"),
        why_not_nested=_frozen({"complex-step": (
            "PyTorch's reverse mode differentiates real-valued outputs: torch.autograd.grad "
            "and torch.func.grad refuse the complex f(x + ih) that complex step of the "
            "gradient needs")}),
        profiler="torch.profiler", own_namespace=True, imports=("torch",),
        traces_with=("data-dependent control flow",
                     "PyTorch batches these evaluations with torch.func.vmap"),
        checkpoint="reentrant: a first pass without a graph, recomputed in the backward "
                   "pass (torch.utils.checkpoint inside torch.func)",
        # as of PyTorch 2.14.1: det(3 I + u x^T) = 27 + 9 u.x, whose Hessian is 0, gets
        # entries up to 0.78 by a forward-mode inside; at x = 0, NaN by a reverse one
        known_bugs=(KnownBug(
            ("linalg.det", "linalg.slogdet", "linalg.solve"), NESTED,
            "whose second derivative under torch.func is wrong where the inner mode is "
            "forward (reverse-over-forward, forward-over-forward) and NaN where it is "
            "reverse and the matrix's singular values tie",
            ("pytorch/pytorch#149694", "pytorch/pytorch#192521", "pytorch/pytorch#192540"),
            "use backend='jax', or scheme='numeric' (differences of PyTorch's gradient, "
            "which is right)"),),
    ),  # fmt: skip
    "tensorflow": Facts(
        "tensorflow", "tensorflow", "TensorFlow", "tf.function(jit_compile=True)",
        description="TensorFlow: tf.GradientTape, eager; jit: tf.function(jit_compile=True)",
        how_eager="GradientTape, eager", how_jit="tf.function, XLA",
        marker="inverted_triangle", dash="dashdot",
        nests=(*NESTED, "numeric"),
        why_not_nested=_frozen({"complex-step": (
            "TensorFlow's GradientTape.gradient at a complex x returns the conjugate "
            "derivative, and for x**2 a wrong one (its power's gradient mishandles the "
            "complex x), so Im grad f(x + ih) / h would be silently wrong")}),
        profile_refusal="adlab does not read TensorFlow's profiler yet",
        own_namespace=True, imports=("tensorflow",), aliases=("tf", "tnp"),
        traces_with=("as a Python `bool` is not allowed",
                     "TensorFlow traces f into a graph here"),
        forward_column_cost=16.0,  # ForwardAccumulator: 15-16x f (ode, n = 20 and 40)
        checkpoint="tf.recompute_grad",
    ),  # fmt: skip
    "autograd": Facts(
        "autograd", "autograd", "autograd", None,
        description="HIPS autograd: a tape over NumPy, with no compiler",
        how_eager="tape over NumPy", marker="hex", dash="dotted", nests=COMPOSITIONS,
        on_numpy_arrays=True,
        profile_refusal="autograd runs NumPy, whose operations no profiler names",
        own_namespace=True, imports=("autograd",), aliases=("anp",),
        forward_column_cost=11.0,  # make_jvp, one unit tangent each: 10-11x f (ode, n = 40, 80)
        why_no_checkpoint="autograd's tape keeps every step and offers no recomputation",
    ),
    # the model traced with JAX, its programs emitted as JavaScript and run in Node
    "js": Facts(
        "jax", None, "JavaScript", None, executable="node",
        install="apt-get install -y nodejs",
        description="plain JavaScript on Float64Array, emitted from JAX's programs and run "
        "in Node (or the Lab's page), timed there in loops",
        marker="diamond", dash="dashed", traced=True, g9=True,
        # a composition is JAX's program of the whole nesting, emitted as one JavaScript
        # program: the inner passes are JAX's own, traced inside the outer one
        nests=NESTED,
        why_not_nested=_frozen({
            "numeric": ("differences of a gradient that already runs in Node cannot be "
                        "traced into one JavaScript program; use a nested scheme"),
            "complex-step": ("a Float64Array holds real numbers only: no complex step in "
                             "JavaScript")}),
        profile_refusal="adlab does not read Node's profiler yet",
        checkpoint="jax.checkpoint, emitted: the backward loop recomputes its segment",
        takes=_frozen({"reverse": "JAX's vjp (reverse), emitted as JavaScript",
                       "forward": "JAX's jvp (forward), emitted as JavaScript"}),
    ),
    # the model traced with JAX, its program translated to TF.js operations, run in Node
    "tfjs": Facts(
        "jax", None, "TensorFlow.js", None, executable="node",
        install="apt-get install -y nodejs",
        description="TensorFlow.js 4.22 (cpu or wasm in Node; webgl in the Lab's page): "
        "f translated to TF.js operations, differentiated by tf.grad, in float32",
        how_eager="tf.grad (a tape), eager", marker="star", dash="dotted", traced=True,
        g9=True, profile_refusal="adlab does not read TF.js's profiler yet",
        precisions=("float32",), devices=("cpu", "wasm", "webgl"),
        # reverse-over-reverse: TF.js's own tf.grad of tf.grad over the translated f; a
        # Hessian is n products. The other compositions need forward mode, which TF.js lacks
        nests=("reverse-over-reverse",),
        why_not_nested=_frozen({
            **{c: ("TF.js has no forward mode (tf.grad is reverse only), so it nests "
                   "reverse-over-reverse alone; backend='jaxjs' (jax-js's own transforms) or "
                   "backend='js' (JAX's program of the nesting, emitted) runs this one in "
                   "JavaScript") for c in NESTED if c != "reverse-over-reverse"},
            "numeric": ("differences of TF.js's gradient are not offered as a second "
                        "derivative here; use 'reverse-over-reverse', which TF.js runs "
                        "exactly"),
            "complex-step": ("neither TF.js's gradients nor adlab's translation carry an "
                             "imaginary part: no complex step in TF.js")}),
        takes=_frozen({"reverse": "TF.js's tf.grad (reverse)"}),
        why_no_checkpoint="adlab translates its loops to TF.js, without recomputation",
    ),
    # the model traced with JAX, its program translated to jax-js operations, run in Node
    "jaxjs": Facts(
        "jax", None, "jax-js", "jax-js's jit (fused kernels; loops unrolled)",
        executable="node", install="apt-get install -y nodejs",
        description="jax-js 0.1.25 (wasm or cpu in Node; webgl or webgpu in the Lab's page): "
        "f translated to jax-js operations, differentiated by its own grad, vjp and jvp",
        how_eager="grad, vjp and jvp, eager", how_jit="jax-js's jit (fused kernels)",
        marker="square_pin", dash="dashdot", traced=True, g9=True,
        profile_refusal="adlab does not read jax-js's profiler yet",
        # float32 first, as jax-js's own arrays and its webgl and webgpu backends; float64
        # on wasm computes sin, cos, exp and log to float32's accuracy (cpu: Math's)
        precisions=("float32", "float64"), devices=("wasm", "cpu", "webgl", "webgpu"),
        float32_devices=("webgl", "webgpu"),
        # a composition is jax-js's own nesting of its transforms over the translated f
        # (jvp of grad, vjp of grad, grad of jvp, jvp of n jvps); a Hessian is n products
        nests=NESTED,
        why_not_nested=_frozen({
            "numeric": ("differences of jax-js's gradient are not offered as a second "
                        "derivative here; use a nested scheme, which jax-js runs exactly"),
            "complex-step": ("adlab's translation to jax-js carries no imaginary part: no "
                             "complex step in jax-js")}),
        takes=_frozen({"reverse": "jax-js's grad (reverse)", "forward": "jax-js's jvp (forward)"}),
        why_no_checkpoint="adlab translates its loops to JavaScript loops, without "
        "recomputation",
    ),
}
# fmt: on


def facts_of(name: str) -> Facts:
    """The facts of backend ``name``.

    Raises:
        ValueError: no such backend.
    """
    try:
        return FACTS[name]
    except KeyError:
        raise ValueError(f"backend must be one of {list(FACTS)}, got {name!r}") from None


def label_of(name: str) -> str:
    """How people name backend ``name`` ("PyTorch"); the name itself for one adlab lacks."""
    known = FACTS.get(name)
    return known.label if known is not None else name


def checkpoint_refusal(name: str) -> str | None:
    """Why backend ``name`` cannot take ``checkpoint=True`` or ``"sqrt"``, and what to do;
    None where it can."""
    known = FACTS.get(name)
    if known is None or known.checkpoint is not None:
        return None
    able = " or ".join(", ".join(repr(n) for n in with_fact("checkpoint")).rsplit(", ", 1))
    return (
        f"{known.label} (backend={name!r}) has no checkpointing "
        f"({known.why_no_checkpoint}): use "
        f"backend={able}, or checkpoint=False"
    )


def with_fact(fact: str) -> tuple[str, ...]:
    """The backends whose fact ``fact`` is true (``with_fact("sparse")``), in ``FACTS`` order."""
    return tuple(name for name, f in FACTS.items() if getattr(f, fact))


def always_installed() -> tuple[str, ...]:
    """The packages installed with adlab itself (no extra): ("jax", "numpy")."""
    return tuple(dict.fromkeys(f.package for f in FACTS.values() if f.extra is None))
