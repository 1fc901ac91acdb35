"""A model's gradient as one standalone JavaScript ES module (``adlab export``).

The programs (``export_programs``) are wrapped in exported functions that check their
arguments' lengths and hand out copies (the programs' buffers are made once, or once per n
in a module for any n (``export_sizes``), and written anew at each call). The module
imports nothing: the constants are written in (as number literals or base64, whichever is
shorter; both exact), so it runs in Node, a bundler or a page's ``<script type="module">``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from ...model.source import Model
from .export_programs import (
    EXPORTS,
    Arg,
    Emitted,
    arguments,
    check_mode,
    checked,
    js_name,
    programs,
)
from .export_sizes import NotGeneral, Sizes, general
from .export_template import Poly

#: what each emitted program computes, above its code
WHAT = {
    "f": "f: its outputs are [f]",
    "vg": "f and its gradient: its outputs are [f, gradient] (forward mode: [f, the "
    "derivative along the direction, its last input])",
    "hvp": "the Hessian times a direction (its last input), forward over reverse",
}


# ----------------------------------------------------------------- the text
def _literal(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text  # 1.0 -> 1, -0.0 -> -0: both exact


def constant(a: np.ndarray) -> str:
    """One constant array in JavaScript: number literals or base64 of its bytes, the
    shorter (literals are Python's shortest round-trip form; base64, the bytes)."""
    a = np.ascontiguousarray(a, dtype="<f8").ravel()
    literal = f"new Float64Array([{', '.join(_literal(float(v)) for v in a)}])"
    packed = f'b64("{base64.b64encode(a.tobytes()).decode("ascii")}")'
    return literal if len(literal) <= len(packed) else packed


B64 = """\
// base64 of little-endian float64 bytes, read exactly on any platform
function b64(text) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer), out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat64(8 * i, true);
  return out;
}"""

CHECK = """\
// the k-th argument as a Float64Array of its length in ARGS (at this n), or an Error
// (the common case first: a Float64Array of that length, handed on as it is)
function take(fn, a, k, args = ARGS) {
  if (a instanceof Float64Array && a.length === args[k][1]) return a;
  const [name, size, shape] = args[k];
  if (typeof a === "number") a = Float64Array.of(a);
  else if (!(a instanceof Float64Array)) {
    if (a == null || typeof a.length !== "number")
      throw new TypeError(`${fn}: ${name} must be a Float64Array of ${size} numbers ` +
        `(shape [${shape}]), got ${a}`);
    a = Float64Array.from(a);
  }
  if (a.length !== size)
    throw new Error(`${fn}: ${name} must have ${size} numbers (shape [${shape}]), got ${a.length}`);
  return a;
}
function count(fn, got, args = ARGS) {
  if (got !== args.length)
    throw new Error(`${fn} takes ${args.length} arguments (${args.map((a) => a[0]).join(", ")}), ` +
      `got ${got}`);
}"""


@dataclass(frozen=True)
class Export:
    """What a module is written from: the model, the mode, the size, the arguments."""

    model: Model
    mode: str
    n: int
    hvp: bool
    command: str
    args: list[Arg]
    x: int  # the index of x among ``args``
    sizes: Sizes | None = None  # any n: the programs and shapes in n (``export_sizes``)
    why: str = ""  # ... or why the module is built for one n

    @property
    def v(self) -> Arg:
        """``hvp``'s direction: x's shape, a name no argument has."""
        taken = {a.js for a in self.args}
        return Arg("v", js_name("v", taken), self.args[self.x].shape)

    @property
    def hvp_args(self) -> list[Arg]:
        return [*self.args[: self.x + 1], self.v, *self.args[self.x + 1 :]]

    def _sizes(self) -> list[str]:
        if self.sizes is None:
            why = [f"// (Not any n: {self.why}.)"] if self.why else []
            return [f"// Fixed size: built for n={self.n}, the shapes below; a call with other "
                    "lengths throws an Error.", *why]  # fmt: skip
        by = self.args[self.sizes.reader]
        return [f"// Any size: {self.sizes.range}, read from {by.js}'s length ({by.size} "
                "numbers): JAX traces f at a", "// symbolic n, so the shapes below are in n. "
                "The programs are made anew when n changes."]  # fmt: skip

    def header(self) -> list[str]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            ours = version("adlab")
        except PackageNotFoundError:  # pragma: no cover - run from a checkout
            ours = "(unknown version)"
        x = self.args[self.x]
        names = ", ".join(a.js for a in self.args)
        width = max(len(a.name) for a in self.hvp_args)
        lines = [
            f"// {self.command}",
            f"// The model {self.model.name!r}: f and its gradient ({self.mode} mode: "
            f"{EXPORTS[self.mode]}),",
            f"// written by adlab {ours} as plain JavaScript on Float64Array. No imports: it "
            "runs in Node,",
            '// a bundler or a page\'s <script type="module">.',
            *self._sizes(),
            "// Arguments, in this order (Float64Arrays, row-major; f(x, *data) of the model):",
            *(
                f"//   {a.name:<{width}}  [{', '.join(map(str, a.shape))}]"
                + ("  x: the gradient is with respect to it" if k == self.x else "")
                for k, a in enumerate(self.args)
            ),  # fmt: skip
            f"// f({names}) -> number",
            f"// grad({names}) -> Float64Array({x.size}): a new array at each call",
            f"// valueAndGrad({names}) -> [number, Float64Array({x.size})]: f and grad at once",
        ]
        if self.hvp:
            hv = ", ".join(a.js for a in self.hvp_args)
            lines.append(f"// hvp({hv}) -> Float64Array({x.size}): the Hessian of f times "
                         f"{self.v.js}")  # fmt: skip
        return lines


def prepared(model: Model, mode: str, n: int, hvp: bool, seed: int, command: str,
             fixed: bool = False) -> tuple:  # fmt: skip
    """(Export, model's arguments at n): refused here where it cannot be written; at any n
    where it can (``export_sizes``), unless ``fixed``."""
    check_mode(mode)
    args = model.setup(n, seed)
    checked(model, args)
    x = len(jax.tree_util.tree_leaves(args[: model.wrt]))
    named = arguments(model.function("js"), args)
    ex = Export(model, mode, n, hvp, command, named, x)
    if fixed:
        return ex, args
    try:
        sizes = general(model, mode, hvp, seed, x)
    except NotGeneral as why:
        return dataclasses.replace(ex, why=str(why)), args
    if not sizes.takes(n):
        why = f"n={n} is outside the n its general program holds for ({sizes.range})"
        return dataclasses.replace(ex, why=why), args
    named = [dataclasses.replace(a, shape=s) for a, s in zip(named, sizes.shapes, strict=True)]
    return dataclasses.replace(ex, args=named, sizes=sizes), args


def module(model: Model, mode: str = "reverse", n: int = 10, *, hvp: bool = False,
           seed: int = 0, command: str = "", fixed: bool = False) -> str:  # fmt: skip
    """The ES module's source (see the module's docstring)."""
    ex, args = prepared(model, mode, n, hvp, seed, command, fixed)
    if ex.sizes is None:
        progs = programs(model, args, mode, hvp)
    else:
        progs = {k: Emitted(s, c) for (k, s), c in zip(ex.sizes.sources.items(),
                                                       ex.sizes.consts, strict=True)}  # fmt: skip
    consts: list[str] = []  # each distinct constant once, shared by the programs
    index: dict[bytes, int] = {}
    factories, made = [], []
    for key, p in progs.items():
        refs = []
        for c in p.consts:
            raw = np.ascontiguousarray(c, dtype="<f8").tobytes()
            if raw not in index:
                index[raw] = len(consts)
                consts.append(constant(c))
            refs.append(f"K[{index[raw]}]")
        if ex.sizes is None:
            made_once = f"{p.source}([{', '.join(refs)}])"
            factories.append(f"// {WHAT[key]}\nconst {key.upper()} = {made_once};")
        else:  # made at each new n (``_sized``)
            factories.append(f"// {WHAT[key]}\nconst {key.upper()}_AT = {p.source};")
            made.append(f"{key.upper()} = {key.upper()}_AT([{', '.join(refs)}], n);")
    parts = [
        "\n".join(ex.header()),
        *([B64] if any(c.startswith("b64(") for c in consts) else []),
        *(
            [
                "// the constants of the programs below",
                "const K = [" + "".join(f"\n  {c}," for c in consts) + "\n];",
            ]
            if consts
            else []
        ),
        CHECK,
        *([f"const ARGS = {_table(ex.args)};"] if ex.sizes is None else []),
        *factories,
        *([_sized(ex, made)] if ex.sizes is not None else []),
        *_exported(ex),
    ]
    return "\n\n".join(parts) + "\n"


def _table(args: list[Arg]) -> str:
    """The arguments as the module's ``take`` reads them: [name, size, shape] (at any n, in
    JavaScript expressions of ``n``)."""

    def js(d: Any) -> str:
        return d.js() if isinstance(d, Poly) else str(d)

    def shape(a: Arg) -> str:
        if not any(isinstance(d, Poly) and not d.constant for d in a.shape):
            return f'"{", ".join(map(str, a.shape))}"'
        return "`" + ", ".join(f"${{{js(d)}}}" if isinstance(d, Poly) and not d.constant
                               else str(d) for d in a.shape) + "`"  # fmt: skip

    rows = (f"[{json.dumps(a.name)}, {js(a.size)}, {shape(a)}]" for a in args)
    return f"[{', '.join(rows)}]"


def _sized(ex: Export, made: list[str]) -> str:
    """``sized``: n read from an argument's length, and at a new n, the arguments' shapes
    and the programs made for it."""
    sizes = ex.sizes
    by = ex.args[sizes.reader]
    size = math.prod(by.shape, start=Poly.const(1))
    b, a = (int(c) for c in size.coefs)
    n = "length" if b == 0 else f"(length - {b})" if b > 0 else f"(length + {-b})"
    n = n if a == 1 else f"{n} / {a}"
    tables = {"ARGS": ex.args, **({"HVP_ARGS": ex.hvp_args} if ex.hvp else {})}
    shapes = "".join(f"const {t}_AT = (n) => {_table(a)};\n" for t, a in tables.items())
    names = ", ".join([*(f"{t} = {t}_AT({sizes.least})" for t in tables),
                       *(m.split(" = ")[0] for m in made)])  # fmt: skip
    shape = ", ".join(map(str, by.shape))
    above = "" if sizes.most is None else f" || n > {sizes.most}"
    return f"""\
// n, read from {by.js}'s length ({size} numbers): at a new n, the arguments' shapes and
// the programs (their buffers) are made for it
{shapes}let N = -1, {names};
function sized(fn, a) {{
  const length = typeof a === "number" ? 1 : a == null ? undefined : a.length;
  if (typeof length !== "number")
    throw new TypeError(`${{fn}}: {by.name} must be a Float64Array of {size} numbers ` +
      `(shape [{shape}]), got ${{a}}`);
  const n = {n};
  if (n === N) return;
  if (!Number.isInteger(n) || n < {sizes.least}{above})
    throw new Error(`${{fn}}: {by.name} must have {size} numbers (shape [{shape}]) for a whole ` +
      `{sizes.range}, got ${{length}}`);
  {" ".join(f"{t} = {t}_AT(n);" for t in tables)}
  {" ".join(made)}
  N = n;
}}"""


def _taken(fn: str, args: list[Arg], order: list[int] | None = None, table: str = "") -> str:
    """The checked arguments of exported function ``fn`` for a program's call, written out
    (no spread or ``arguments`` copy on the way in: they cost about 1 us a call at n = 10,
    twice the program itself)."""
    more = f", {table}" if table else ""
    order = list(range(len(args))) if order is None else order
    return ", ".join(f'take("{fn}", {args[k].js}, {k}{more})' for k in order)


def _exported(ex: Export) -> list[str]:
    """The exported functions: each checks its arguments, calls a program, copies out."""

    def head(fn: str, doc: str, args: list[Arg] = ex.args, table: str = "") -> str:
        more = f", {table}" if table else ""
        sized = "" if ex.sizes is None else f'  sized("{fn}", {ex.args[ex.sizes.reader].js});\n'
        return (f"/** {doc} */\nexport function {fn}({', '.join(a.js for a in args)}) {{\n"
                f'  count("{fn}", arguments.length{more});\n{sized}')  # fmt: skip

    out = [head("f", "f at the arguments: a number.")
           + f'  return F({_taken("f", ex.args)})[0][0];\n}}']  # fmt: skip
    grad_doc = f"f's gradient with respect to {ex.args[ex.x].name}: a new Float64Array."
    both_doc = "[f, its gradient]: both from one pass (as JAX's value_and_grad)."
    if ex.mode == "reverse":
        out += [
            head("grad", grad_doc) + f"  return VG({_taken('grad', ex.args)})[1].slice();\n}}",
            head("valueAndGrad", both_doc)
            + f"  const out = VG({_taken('valueAndGrad', ex.args)});\n"
            "  return [out[0][0], out[1].slice()];\n}",
        ]
    else:  # one JVP per column of the identity, its derivative the gradient's entry
        out += [
            f"function vg(a) {{\n  const n = a[{ex.x}].length;\n"
            "  const g = new Float64Array(n), e = new Float64Array(n);\n  let value = NaN;\n"
            "  for (let j = 0; j < n; j++) {\n    e[j] = 1;\n    const out = VG(...a, e);\n"
            "    e[j] = 0;\n    value = out[0][0];\n    g[j] = out[1][0];\n  }\n"
            "  return [value, g];\n}",
            head("grad", grad_doc) + f"  return vg([{_taken('grad', ex.args)}])[1];\n}}",
            head("valueAndGrad", both_doc)
            + f"  return vg([{_taken('valueAndGrad', ex.args)}]);\n}}",
        ]
    if ex.hvp:
        # the program's inputs: the model's arguments, then the direction (hvp's second)
        d = ex.x + 1
        order = [k for k in range(len(ex.hvp_args)) if k != d] + [d]
        doc = f"The Hessian of f times {ex.v.js} (forward over reverse): a new Float64Array."
        table = f"const HVP_ARGS = {_table(ex.hvp_args)};\n" if ex.sizes is None else ""
        out.append(
            table
            + head("hvp", doc, ex.hvp_args, "HVP_ARGS")
            + f"  return HVP({_taken('hvp', ex.hvp_args, order, 'HVP_ARGS')})[0].slice();\n}}"
        )
    return out


def declarations(model: Model, mode: str = "reverse", n: int = 10, *, hvp: bool = False,
                 seed: int = 0, command: str = "", fixed: bool = False) -> str:  # fmt: skip
    """The module's TypeScript declarations (``.d.ts``)."""
    ex, _ = prepared(model, mode, n, hvp, seed, command, fixed)
    kind = "Float64Array | ArrayLike<number>"

    def sig(args: list[Arg]) -> str:
        return ", ".join(f"{a.js}: {kind}" for a in args)

    x = ex.args[ex.x]
    lines = [
        *ex.header(),
        "",
        "/** f at the arguments. */",
        f"export declare function f({sig(ex.args)}): number;",
        f"/** f's gradient with respect to {x.name} ({x.size} numbers): a new array at each "
        "call. */",
        f"export declare function grad({sig(ex.args)}): Float64Array;",
        "/** [f, its gradient], from one pass. */",
        f"export declare function valueAndGrad({sig(ex.args)}): [number, Float64Array];",
    ]
    if hvp:
        lines += [f"/** The Hessian of f times {ex.v.js}. */",
                  f"export declare function hvp({sig(ex.hvp_args)}): Float64Array;"]  # fmt: skip
    return "\n".join(lines) + "\n"
