"""What one series of a sweep measures: a mode plus the options that differ.

A sweep's ``modes`` are *variants*. Each is written as a string,

    mode[scheme](option, option, ...)

e.g. ``"reverse"``, ``"numeric[richardson]"``, ``"reverse(eager)"``,
``"numeric[forward](numpy)"``, ``"complex-step(float32)"``, ``"forward(sparse)"``;
second derivatives name their composition of modes in the bracket:
``"hessian[forward-over-reverse]"``, ``"hvp[reverse-over-forward]"``; or as a dict or
``Series`` with the same fields, which can also name another model (the
per-sample case compares three models in one sweep). Options are ``jit`` /
``eager``, the backend (``jax``, ``numpy``, ``torch``, ``tensorflow``, ``autograd``:
``reverse(torch)``, ``numeric[central](torch)``), ``float32`` / ``float64`` and
``sparse``, and ``inner-forward`` / ``inner-reverse``, the mode of the derivative the
model takes inside itself with ``grad`` (``"reverse(inner-forward)"``: GradBench's
``rf``); for the JavaScript backends, the device (``cpu``, ``wasm``, ``webgl``:
``"reverse(tfjs,wasm)"``) and where they run (``node``, ``browser``); and
``checkpoint=false|true|sqrt``, the default ``checkpoint=`` of the model's loops
(``"reverse(checkpoint=sqrt)"``: memory for time; prepare's ``checkpoint``), the one
option written key=value; anything left out takes the sweep's default, and a ``jit`` left
unset everywhere is the backend's own (JAX jitted, the others eager). The
string form of a resolved variant is its ``label``, the name of its series in
tables and plots.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._vocab import BACKENDS, DEVICES, PRECISIONS, SCHEMES, WHERES
from ..engine.backends import DEFAULT, FACTS, default_jit, get_backend, has_compiler
from ..engine.backends.checkpoint import check_checkpoint
from ..engine.backends.facts import checkpoint_refusal
from ..engine.backends.inner_grad import check_inner
from ..engine.modes import get_rule
from ..engine.second import default_composition
from ..engine.sparse import SPARSE_MODES, sparse_refusal

_OPTIONS: dict[str, tuple[str, Any]] = {
    "jit": ("jit", True),
    "eager": ("jit", False),
    "no-jit": ("jit", False),
    **{b: ("backend", b) for b in BACKENDS},
    **{p: ("precision", p) for p in PRECISIONS},
    "sparse": ("sparse", True),
    # the mode of the model's own grad(fn): prepare's inner=
    "inner-reverse": ("inner", "reverse"),
    "inner-forward": ("inner", "forward"),
    # TF.js's backend (plain JavaScript: cpu), and where JavaScript runs: prepare's device=, where=
    **{d: ("device", d) for d in DEVICES},
    **{w: ("where", w) for w in WHERES},
}
#: the options written key=value, each value's spelling: prepare's checkpoint=
_KEYED: dict[str, dict[str, Any]] = {"checkpoint": {"false": False, "true": True, "sqrt": "sqrt"}}
_SYNTAX = re.compile(
    r"^\s*([a-z][a-z-]*)\s*(?:\[\s*([a-z][a-z0-9-]*)\s*\])?\s*(?:\(([^()]*)\))?\s*$"
)
#: the modes a sparse series can take: its pattern is colored for these
SYNTAX_HELP = (
    "write a variant as mode[scheme](options), e.g. 'reverse', 'numeric[richardson]', "
    "'reverse(eager)', 'numeric[central](numpy,float32)', 'hessian[forward-over-reverse]', "
    "'forward(sparse)', 'reverse(torch)'; options: jit, eager, "
    + ", ".join(BACKENDS)
    + ", float32, float64, sparse, inner-forward, inner-reverse, "
    + ", ".join(DEVICES + WHERES)
    + ", checkpoint=false|true|sqrt"
)


def sweep_precision(backend: str, precision: str, device: str | None = None) -> str:
    """The precision a series runs in when it names none: the sweep's, where its framework
    computes in it on ``device``; else the framework's own (TF.js in a float64 sweep, or
    jax-js on webgpu: float32, and its records say so)."""
    facts = FACTS.get(backend)
    own = (precision,) if facts is None else (
        ("float32",) if device in facts.float32_devices else facts.precisions)  # fmt: skip
    return precision if precision in own else own[0]


@dataclass(frozen=True)
class Series:
    """One series of a sweep. ``None`` fields take the sweep's defaults.

    Attributes:
        mode: "forward", "reverse", "numeric", "complex-step" or "primal".
        scheme: finite-difference scheme (numeric), or a second-order mode's composition.
        jit, precision, backend: as in ``adlab.prepare``.
        sparse: the derivative from its sparsity pattern, colored (``adlab.prepare``).
        label: the series' name; default: the variant's string form.
        model: another model for this series (catalog name, path, or ``Model``).
        settings: new values for that model's UPPERCASE settings.
        inner: the mode of the model's own ``grad(fn)`` (``adlab.prepare``'s ``inner``).
        device: TF.js's backend, "cpu", "wasm" or "webgl" (``adlab.prepare``'s ``device``).
        where: "node" or "browser", for the JavaScript backends (``adlab.prepare``'s).
        checkpoint: the default ``checkpoint=`` of the model's loops: False, True or
            "sqrt" (``adlab.prepare``'s; None: as the model's source says).

    Example:
        >>> s = adlab.Series(mode="numeric", scheme="richardson", backend="numpy")
        >>> s.mode, s.scheme, s.backend
        ('numeric', 'richardson', 'numpy')
    """

    mode: str
    scheme: str | None = None
    jit: bool | None = None
    precision: str | None = None
    backend: str | None = None
    label: str | None = None
    model: Any = None
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False)
    sparse: bool | None = None
    inner: str | None = None
    device: str | None = None
    where: str | None = None
    checkpoint: bool | str | None = None

    def resolve(self, tag: str | None = None, **defaults: Any) -> Series:
        """Fill every ``None`` option from ``defaults`` (jit, precision, backend, scheme)
        and set the label (prefixed by ``tag``, the model's, when the variant has its own);
        checks that the mode exists and runs on the backend."""
        rule = get_rule(self.mode)
        v = replace(
            self,
            jit=defaults["jit"] if self.jit is None else self.jit,
            precision=self.precision or sweep_precision(
                self.backend or defaults["backend"], defaults["precision"],
                self.device or defaults.get("device")),
            backend=self.backend or defaults["backend"],
            scheme=(self.scheme or defaults["scheme"]) if self.mode == "numeric" else
            (self.scheme or default_composition(self.backend or defaults["backend"],
                                                hvp=self.mode != "hessian"))
            if rule.schemes else None,
            sparse=bool(self.sparse),
            inner=check_inner(self.inner or defaults.get("inner") or "reverse"),
            device=self.device or defaults.get("device"),
            where=self.where or defaults.get("where"),
            checkpoint=defaults.get("checkpoint") if self.checkpoint is None else
            self.checkpoint,
        )  # fmt: skip
        schemes = rule.schemes or SCHEMES
        if v.scheme is not None and v.scheme not in schemes:
            raise ValueError(f"{v.mode}'s bracket takes one of {list(schemes)}, got {v.scheme!r}")
        if v.sparse and v.mode not in SPARSE_MODES:
            raise ValueError(f"'sparse' applies to {list(SPARSE_MODES)}, not {v.mode!r}")
        why = sparse_refusal(v.mode, v.scheme, v.backend) if v.sparse else None
        if why:  # before the framework is loaded: sparse runs on JAX's program
            raise ValueError(why)
        if v.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {v.precision!r}")
        if v.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)}, got {v.backend!r}")
        # the second-order modes prepare their own nesting, loops as the source says
        later = None if rule.order <= 1 else "checkpoint= applies to first derivatives"
        why = checkpoint_refusal(v.backend) or later
        if check_checkpoint(v.checkpoint) and why:
            raise ValueError(f"{self.spelled()}: {why}")
        impl = get_backend(v.backend)  # the framework is imported here
        refusal = rule.refusal(impl)
        if refusal:
            raise ValueError(refusal)
        impl.on_device(v.device)  # a device the backend cannot run on is refused here
        if v.where is not None and not impl.known.executable:
            raise ValueError(f"{self.spelled()}: '{v.where}' applies to the JavaScript "
                             f"backends; {v.backend!r} runs in Python")  # fmt: skip
        if v.jit and not has_compiler(v.backend):
            if self.jit:  # asked of this variant: refused, never ignored
                raise ValueError(f"{self.spelled()}: backend {v.backend!r} has no compiler; "
                                 "drop 'jit' to run it as its users do")  # fmt: skip
            v = replace(v, jit=False)  # the sweep's default: nothing to compile here
        if v.jit is None:
            v = replace(v, jit=default_jit(v.backend))  # as the framework's users run it
        if v.label is None:
            label = v.spelled(defaults)
            v = replace(v, label=f"{tag}: {label}" if tag else label)
        return v

    def spelled(self, defaults: Mapping[str, Any] | None = None) -> str:
        """``mode[scheme](options)``: the options set here and not equal to ``defaults``.

        The inverse of ``parse_variant``: ``Series("numeric", "central",
        backend="numpy").spelled()`` is ``"numeric[central](numpy)"``.
        """
        defaults = defaults or {}

        def differs(key: str) -> bool:
            value = getattr(self, key)
            return value is not None and value != defaults.get(key)

        text = self.mode + (f"[{self.scheme}]" if self.scheme else "")
        opts = []
        if differs("backend"):
            opts.append(self.backend)
        backend = self.backend or defaults.get("backend") or DEFAULT
        usual = defaults.get("jit")  # the sweep's, else how the backend's users run it
        usual = default_jit(backend) if usual is None else usual
        # a framework with no compiler is always eager: no news
        if self.jit is not None and self.jit != usual and has_compiler(backend):
            opts.append("jit" if self.jit else "eager")
        if differs("precision"):
            opts.append(self.precision)
        if self.sparse:
            opts.append("sparse")
        if self.inner is not None and self.inner != (defaults.get("inner") or "reverse"):
            opts.append(f"inner-{self.inner}")
        for key in ("device", "where"):
            if differs(key):
                opts.append(getattr(self, key))
        if differs("checkpoint"):
            opts.append(f"checkpoint={str(self.checkpoint).lower()}")
        return text + (f"({','.join(opts)})" if opts else "")


def parse_variant(spec: str | Mapping[str, Any] | Series) -> Series:
    """A ``Series`` from its string form, a dict of its fields, or itself."""
    if isinstance(spec, Series):
        return spec
    if isinstance(spec, Mapping):
        unknown = set(spec) - set(Series.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown variant field(s) {sorted(unknown)}")
        if "mode" not in spec:
            raise ValueError(f"a variant needs a 'mode', got {dict(spec)!r}")
        return Series(**spec)
    if not isinstance(spec, str):
        raise TypeError(f"a variant is a string, dict or Series, got {type(spec).__name__}")
    m = _SYNTAX.match(spec)
    if not m:
        raise ValueError(f"cannot read variant {spec!r}: {SYNTAX_HELP}")
    mode, scheme, opts = m.groups()
    fields: dict[str, Any] = {"mode": mode, "scheme": scheme}
    if scheme and mode != "numeric" and not get_rule(mode).schemes:
        raise ValueError(f"{spec!r}: only 'numeric' (a scheme) and the second-order modes "
                         "'hessian' and 'hvp' (a composition) take a [bracket]")  # fmt: skip
    for opt in filter(None, (o.strip() for o in (opts or "").split(","))):
        key, _, value = (s.strip() for s in opt.partition("="))
        if key in _KEYED and value.lower() in _KEYED[key]:
            fields[key] = _KEYED[key][value.lower()]
            continue
        if key in _KEYED:
            raise ValueError(f"{spec!r}: {key}= takes {'|'.join(_KEYED[key])}, got {value!r}")
        if opt not in _OPTIONS:
            raise ValueError(f"{spec!r}: unknown option {opt!r}; {SYNTAX_HELP}")
        key, value = _OPTIONS[opt]
        fields[key] = value
    get_rule(mode)  # unknown modes fail here, listing the known ones
    return Series(**fields)


def split_variants(text: str) -> list[str]:
    """Split a comma-separated list at top level: commas inside () or [] stay."""
    out, depth, cur = [], 0, []
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [s for s in out if s]


def parse_variants(specs: str | Sequence[str | Mapping[str, Any] | Series]) -> list[Series]:
    """Variants from a comma-separated string or a sequence of specs."""
    if isinstance(specs, str):
        specs = split_variants(specs)
    out = [parse_variant(s) for s in specs]
    if not out:
        raise ValueError("no modes to measure")
    return out
