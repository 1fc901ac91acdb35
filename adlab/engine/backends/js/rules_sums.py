"""The rules that add up or pick elements: reductions, running sums, products of
matrices, gather and scatter-add (see ``rules`` for what a rule is)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .code import Code, Ix, Val
from .rules import FUSES, RULES, block, copy_from, nest, offset, out, read, rule, strides


def _everything(eqn: Any, var: Any) -> bool:
    return len(eqn.params["axes"]) == len(var.aval.shape)  # a sum of all elements


# ----------------------------------------------------------- reductions
def reduction(name: str, init: str, update: Callable[[str, str], str]) -> None:
    """A reduction over ``axes``: of every element, an accumulator in one loop with what is
    fused into it, which joins the loops beside it (the loop that writes its operand: one
    pass, the element never read back); over some axes, loops over the operand's buffer."""

    def fn(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
        a, o = ins[0], out(prog, eqn)
        axes = set(eqn.params["axes"])
        if a.shape and len(axes) == len(a.shape):
            acc = prog.temp("s")

            def body(ix: Ix) -> list[str]:
                pre, e = prog.read_at(a, ix)
                return [*pre, f"{acc} = {update(acc, e)};"]

            prog.loop(a.size, body, o.name, head=[f"let {acc} = {init};"],
                      tail=[f"{o.name}[0] = {acc};"])  # fmt: skip
            return [o]
        kept = [d for d in range(len(a.shape)) if d not in axes]
        ost = strides(o.shape)
        dst = f"{o.name}[{offset([(f'c{d}', s) for d, s in zip(kept, ost, strict=True)])}]"
        prog.emit(f"{o.name}.fill({init});")
        line = f"{dst} = {update(dst, read(a, 'k++'))};"
        prog.emit(*block(["let k = 0;", *nest(a.shape, [line])]))
        return [o]

    RULES[name] = fn
    FUSES[name] = _everything


reduction("reduce_sum", "0", lambda acc, v: f"{acc} + {v}")
reduction("reduce_prod", "1", lambda acc, v: f"{acc} * {v}")
reduction("reduce_max", "-Infinity", lambda acc, v: f"Math.max({acc}, {v})")
reduction("reduce_min", "Infinity", lambda acc, v: f"Math.min({acc}, {v})")


def cumulative(name: str, update: Callable[[str, str], str]) -> None:
    """A running reduction along ``axis`` (``reverse``: from the end)."""

    def fn(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
        a, o = ins[0], out(prog, eqn)
        axis, rev = eqn.params["axis"], eqn.params["reverse"]
        st, n = strides(a.shape), a.shape[axis]
        others = [d for d in range(len(a.shape)) if d != axis]
        base = offset([(f"c{k}", st[d]) for k, d in enumerate(others)])
        j = f"{n - 1} - t" if rev else "t"
        first = f"b + {(n - 1) * st[axis] if rev else 0}"
        body = [f"const b = {base};", f"let acc = {a.index(first)};",
                f"{o.name}[{first}] = acc;",
                f"for (let t = 1; t < {n}; t++) {{",
                f"  const at = b + ({j}) * {st[axis]};",
                f"  acc = {update('acc', a.index('at'))};",
                f"  {o.name}[at] = acc;", "}"]  # fmt: skip
        if n:
            prog.emit(*block(nest(tuple(a.shape[d] for d in others), body)))
        return [o]

    RULES[name] = fn


cumulative("cumsum", lambda acc, v: f"{acc} + {v}")
cumulative("cumprod", lambda acc, v: f"{acc} * {v}")
cumulative("cummax", lambda acc, v: f"Math.max({acc}, {v})")
cumulative("cummin", lambda acc, v: f"Math.min({acc}, {v})")


@rule("dot_general")
def _dot(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """Loops over (batch, lhs free, rhs free), an inner sum over the contracted dims."""
    (lhs, rhs), o = ins, out(prog, eqn)
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]

    def terms(a: Val, contract, batch, free_var: str) -> list[tuple[str, int]]:
        st, free, t = strides(a.shape), 0, []
        for d in range(len(a.shape)):
            if d in batch:
                t.append((f"b{list(batch).index(d)}", st[d]))
            elif d in contract:
                t.append((f"q{list(contract).index(d)}", st[d]))
            else:
                t.append((f"{free_var}{free}", st[d]))
                free += 1
        return t

    lt, rt = terms(lhs, lc, lb, "i"), terms(rhs, rc, rb, "j")
    batch = tuple(lhs.shape[d] for d in lb)
    lfree = tuple(n for d, n in enumerate(lhs.shape) if d not in lc and d not in lb)
    rfree = tuple(n for d, n in enumerate(rhs.shape) if d not in rc and d not in rb)
    if not batch and len(lc) == 1 and len(lfree) == 1 and len(rfree) == 1:
        stride = {**{v: st for v, st in lt if v != "q0"}, **{v: st for v, st in rt if v != "q0"}}
        lq, rq = dict(lt)["q0"], dict(rt)["q0"]
        if (lq != 1 or rq != 1) and stride["j0"] == 1:  # a dot per element reads across rows
            _rows(prog, o, lhs, rhs, lt, rt, (lfree[0], lhs.shape[lc[0]], rfree[0]),
                  outer_q=lq != 1 and stride["i0"] == 1)  # fmt: skip
            return [o]
    inner = nest(tuple(lhs.shape[d] for d in lc),
                 [f"s += {read(lhs, offset(lt))} * {read(rhs, offset(rt))};"], "q")  # fmt: skip
    body = nest(rfree, ["let s = 0;", *inner, f"{o.name}[k++] = s;"], "j")
    body = nest(lfree, body, "i")
    prog.emit(*block(["let k = 0;", *nest(batch, body, "b")]))
    return [o]


def _rows(prog: Code, o: Val, lhs: Val, rhs: Val, lt: list, rt: list, sizes: tuple,
          outer_q: bool) -> None:  # fmt: skip
    """A product of matrices whose inner loop runs along rows: ``o[i, :] += lhs[i, q] *
    rhs[q, :]`` (``outer_q``: q outermost, for a transposed lhs). Each element still adds
    its terms in the order of q from 0, as the dot per element does: the same sums."""
    ni, nq, nj = sizes
    line = f"{o.name}[i0 * {nj} + j0] += a * {read(rhs, offset(rt))};"
    inner = [f"const a = {read(lhs, offset(lt))};",
             f"for (let j0 = 0; j0 < {nj}; j0++) {line}"]  # fmt: skip
    loops = ("q0", nq, "i0", ni) if outer_q else ("i0", ni, "q0", nq)
    prog.emit(f"{o.name}.fill(0);", f"for (let {loops[0]} = 0; {loops[0]} < {loops[1]}; "
              f"{loops[0]}++) for (let {loops[2]} = 0; {loops[2]} < {loops[3]}; {loops[2]}++) "
              f"{{ {' '.join(inner)} }}")  # fmt: skip


# ------------------------------------------------------ gather, scatter
def _mode(eqn: Any) -> str:
    return str(eqn.params["mode"]).rsplit(".", 1)[-1]  # GatherScatterMode.CLIP -> CLIP


def _index_reads(idx: Val, coords: list[str], count: int) -> list[str]:
    """The ``count`` entries of ``idx``'s last axis (the index vector) at ``coords``."""
    st = strides(idx.shape)
    base = [(c, s) for c, s in zip(coords, st[:-1], strict=True)]
    return [read(idx, offset(base, k * st[-1])) for k in range(count)]


@rule("gather")
def _gather(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """XLA's gather with JAX's layout (the index vector last), clamped into bounds
    (``clip``, ``promise_in_bounds``) or filled (``fill``) as its mode says."""
    (a, idx), o = ins, out(prog, eqn)
    dn, sizes = eqn.params["dimension_numbers"], eqn.params["slice_sizes"]
    if dn.operand_batching_dims:
        raise prog.uncovered(eqn)
    batch = [d for d in range(len(o.shape)) if d not in dn.offset_dims]
    window = [d for d in range(len(a.shape)) if d not in dn.collapsed_slice_dims]
    starts = _index_reads(idx, [f"c{d}" for d in batch], len(dn.start_index_map))
    st, body, inside = strides(a.shape), [], []
    at = {d: "0" for d in range(len(a.shape))}
    for k, d in enumerate(dn.start_index_map):
        hi = a.shape[d] - sizes[d]
        if _mode(eqn) == "FILL_OR_DROP":
            body.append(f"const s{k} = {starts[k]};")
            inside.append(f"s{k} >= 0 && s{k} <= {hi}")
        else:
            body.append(f"const s{k} = Math.min(Math.max({starts[k]}, 0), {hi});")
        at[d] = f"s{k}"
    for od, d in zip(dn.offset_dims, window, strict=True):
        at[d] = f"{at[d]} + c{od}"
    src = read(a, " + ".join(f"({at[d]}) * {st[d]}" for d in range(len(st))) or "0")
    if inside:
        fill = eqn.params.get("fill_value")
        src = f"({' && '.join(inside)} ? {src} : {'NaN' if fill is None else float(fill)})"
    body.append(f"{o.name}[k++] = {src};")
    prog.emit(*block(["let k = 0;", *nest(o.shape, body)]))
    return [o]


@rule("scatter-add", "scatter_add")
def _scatter_add(prog: Code, eqn: Any, ins: list[Val]) -> list[Val]:
    """XLA's scatter with addition: the operand, each update added at its index (an
    update out of bounds clamped for ``clip``, else dropped, as XLA does)."""
    (a, idx, upd), o = ins, out(prog, eqn)
    dn = eqn.params["dimension_numbers"]
    if dn.operand_batching_dims:
        raise prog.uncovered(eqn)
    copy_from(prog, o, a, [(f"c{d}", s) for d, s in enumerate(strides(a.shape))])
    scatter = [d for d in range(len(upd.shape)) if d not in dn.update_window_dims]
    window = [d for d in range(len(a.shape)) if d not in dn.inserted_window_dims]
    starts = _index_reads(idx, [f"c{d}" for d in scatter], len(dn.scatter_dims_to_operand_dims))
    st, body, inside = strides(a.shape), [], []
    at = {d: "0" for d in range(len(a.shape))}
    for k, d in enumerate(dn.scatter_dims_to_operand_dims):
        body.append(f"const s{k} = {starts[k]};")
        at[d] = f"s{k}"
    for ud, d in zip(dn.update_window_dims, window, strict=True):
        at[d] = f"{at[d]} + c{ud}"
    if _mode(eqn) == "CLIP":
        window_size = {d: upd.shape[ud] for ud, d in zip(dn.update_window_dims, window,
                                                          strict=True)}  # fmt: skip
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            hi = a.shape[d] - window_size.get(d, 1)
            body[k] = f"const s{k} = Math.min(Math.max({starts[k]}, 0), {hi});"
    else:
        inside = [f"({at[d]}) >= 0 && ({at[d]}) < {a.shape[d]}" for d in range(len(st))]
    dst = f"{o.name}[{' + '.join(f'({at[d]}) * {st[d]}' for d in range(len(st))) or '0'}]"
    line = f"{dst} += {read(upd, 'k')};"
    body += [f"if ({' && '.join(inside)}) {line}" if inside else line, "k++;"]
    prog.emit(*block(["let k = 0;", *nest(upd.shape, body)]))
    return [o]
