"""The case studies: one fixed sweep per seed question of QUESTIONS.md.

Each case is data (model, settings, sizes, variants, options) plus a few
lines on what to look for; ``findings`` reads the measured records back in
words (growth per series, the fastest at each n, crossovers), so a run on a
new machine says for itself whether it agrees with the question's figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._vocab import Record
from ..engine.backends import BASELINE, JAVASCRIPT, TFJS
from .series import Series
from .sweep import Sweep, bench


@dataclass(frozen=True)
class Case:
    """A fixed sweep that answers one question.

    Attributes:
        name: the ``--case`` name.
        question: its number in QUESTIONS.md.
        title: one line.
        model: catalog name of the model (variants may name others).
        sizes: the sizes n of the full case.
        quick_sizes: a smaller set, for a quick look and for tests.
        modes: the variants (strings or ``Series``).
        settings: the model's settings for this case.
        options: other ``bench`` options (budget_s, reference, ...).
        look_for: what the question found, to compare with.
    """

    name: str
    question: int
    title: str
    model: str
    sizes: tuple[int, ...]
    quick_sizes: tuple[int, ...]
    modes: tuple[str | Series, ...]
    settings: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    look_for: str = ""

    def run(
        self, *, quick: bool = False, sizes: Iterable[int] | None = None, **options: Any
    ) -> Sweep:
        """The case's sweep (``bench``); ``options`` override the case's own."""
        chosen = tuple(sizes) if sizes is not None else (self.quick_sizes if quick else self.sizes)
        return bench(self.model, chosen, list(self.modes), settings=dict(self.settings),
                     **{**self.options, **options})  # fmt: skip


_MLP = {"N1": 1000, "N2": 20}

CASES: dict[str, Case] = {
    c.name: c
    for c in (
        Case(
            name="frame-budget",
            question=1,
            title="Gradients of tiny functions inside one 16 ms frame",
            model="g9_graphics",
            sizes=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
            quick_sizes=(1, 10, 100),
            modes=(
                Series("numeric", scheme="central", backend=BASELINE, label="numpy FD (as G9.js)"),
                Series("numeric", scheme="central", label="jax FD (jit)"),
                Series("reverse", label="reverse (jit)"),
                Series("reverse", jit=False, label="reverse (eager JAX, as tf.grads)"),
                # the asker's own systems, timed inside Node
                Series("numeric", scheme="g9", backend=JAVASCRIPT, label="G9.js's differences"),
                Series("reverse", backend=TFJS, label="tf.grad (TF.js, cpu)"),
                Series("reverse", backend=JAVASCRIPT, label="reverse (emitted JS)"),
            ),
            look_for=(
                "In the question, plain finite differences beat the framework's gradient "
                "below ~100 parameters (fixed per-call overhead), and lost above it (their "
                "cost grows as n^2); G9.js's differences and tf.grad are the asker's own."
            ),
        ),
        Case(
            name="per-sample",
            question=2,
            title="One sample at a time vs vmap vs one batched matrix: gradient/primal ratio",
            model="mlp_per_sample",
            sizes=(10, 100, 1000, 10000),
            quick_sizes=(10, 100),
            modes=(
                Series(
                    "reverse",
                    label="loop (lax.map)",
                    model="mlp_per_sample",
                    settings={**_MLP, "STYLE": "map"},
                ),
                Series(
                    "reverse",
                    label="vmap",
                    model="mlp_per_sample",
                    settings={**_MLP, "STYLE": "vmap"},
                ),
                Series("reverse", label="batched", model="mlp_batched", settings=_MLP),
            ),  # fmt: skip
            options={"budget_s": 10.0, "reference": None},
            look_for=(
                "In the question (Flux), the per-sample gradient cost ~20x the primal and the "
                "batched one ~1.5-2.2x; the expectation voiced was 2-4x."
            ),
        ),
        Case(
            name="backends",
            question=3,
            title="The Julia gist's backend table: forward, reverse, complex step",
            model="normal_logpdf",
            sizes=(10, 100, 1000),
            quick_sizes=(10, 100),
            modes=(
                "forward",
                "reverse",
                "reverse(eager)",
                "numeric[central]",
                "complex-step",
            ),  # fmt: skip
            look_for=(
                "In the gist, reverse mode grew ~10-40x from n = 10 to 1000 (ReverseDiff "
                "1.0 -> 42 us) while forward mode and complex step grew ~3000-8000x (n passes "
                "of an O(n) f); ForwardDiff was fastest at n = 10."
            ),
        ),
        Case(
            name="jacobian",
            question=4,
            title="A tall Jacobian (scalar x to n residuals): forward vs reverse vs numeric",
            model="gaussian_residual",
            sizes=(21, 201, 2001),
            quick_sizes=(21,),
            modes=("forward", "reverse", "numeric[central]", "complex-step"),
            look_for=(
                "In the question, the reverse-mode Jacobian (one pass per output) was >50x slower "
                "than finite differences, and forward mode (one pass) 2x faster than them."
            ),
        ),
        Case(
            name="platform",
            question=5,
            title="TF.js's backends (cpu, wasm) against the Python frameworks' ways to run",
            model="normal_logpdf",
            sizes=(10, 100, 1000, 10000),
            quick_sizes=(10, 1000),
            modes=(
                Series("reverse", backend=TFJS, label="tf.grad (TF.js, cpu)"),
                Series("reverse", backend=TFJS, device="wasm", label="tf.grad (TF.js, wasm)"),
                Series("reverse", backend=JAVASCRIPT, label="reverse (emitted JS)"),
                Series("reverse", label="reverse (jit)"),
                Series("reverse", jit=False, label="reverse (eager JAX)"),
                Series("reverse", precision="float32", label="reverse (jit, float32)"),
            ),
            look_for=(
                "In the guide, per-operation overhead rules small models (wasm beats webgl "
                "there), the first call pays for compiling (each record keeps it apart: "
                "first_call_s), and precision differs by device (TF.js: float32)."
            ),
        ),
    )
}


def get_case(name: str) -> Case:
    """The case named ``name``, or a ValueError listing them."""
    try:
        return CASES[name]
    except KeyError:
        raise ValueError(f"no case {name!r}; choose one of {sorted(CASES)}") from None


def _power(times: Mapping[int, float], lo: int, hi: int) -> float:
    return math.log(times[hi] / times[lo]) / math.log(hi / lo)


def _growth(times: Mapping[int, float]) -> tuple[int, int, float, int, float] | None:
    """(lo, hi, t_hi / t_lo, start of the last decade, exponent over it)."""
    ns = sorted(times)
    if len(ns) < 2:
        return None
    lo, hi = ns[0], ns[-1]
    last = max((n for n in ns if n <= hi / 5), default=lo)  # about the last decade
    return lo, hi, times[hi] / times[lo], last, _power(times, last, hi)


def findings(records: Iterable[Record]) -> list[str]:
    """What the records say, in words: growth of each series, the floor, the fastest per n
    (with those tied with it), ratios to f, and the crossovers that stand out of the noise."""
    from .._format import seconds
    from .advisor import advice_from
    from .findings import crossover_lines, series_records, series_times
    from .floor import AT_FLOOR, floor_kind, ratio_text

    records = list(records)
    times = series_times(records)
    by_label = series_records(records)
    out = []
    for label, ts in times.items():
        g = _growth(ts)
        if g is None:
            continue
        lo, hi, ratio, last, power = g
        shape = "flat" if power < 0.25 else "~linear" if power < 1.4 else "superlinear"
        out.append(
            f"{label}: x{ratio:.3g} from n={lo} to n={hi}; from n={last} on it grows "
            f"~ n^{power:.2f} ({shape})"
        )
    derivs = {lab: rs for lab, rs in by_label.items() if not _primal(records, lab)}
    for n in sorted({r.n for r in records}):
        at = {lab: rs[n] for lab, rs in derivs.items() if n in rs}
        groups: dict[tuple[bool, str | None], list[str]] = {}  # one floor per framework
        for lab, r in at.items():
            if r.at_floor:
                groups.setdefault((r.dispatch == "async", r.backend), []).append(lab)
        for (handed_over, _), near in sorted(groups.items(), key=lambda g: g[0][0]):
            r = at[near[0]]
            if handed_over:
                what = f"{seconds(r.async_floor_s)}, a trivial program handed to a worker thread"
            else:
                what = f"{seconds(r.floor_s)}, x + 1 in {floor_kind(r.backend)}"
            out.append(f"at n={n}, {', '.join(near)}: {AT_FLOOR} ({what} beside them): "
                       "bound by call overhead, not arithmetic")  # fmt: skip
    for n in sorted({r.n for r in records}):  # the advisor's verdict, measured sizes only
        a = advice_from([r for r in records if r.label in derivs], n, predicted=False)
        if a.best is not None:
            line = f"fastest derivative at n={n}: {a.best} ({seconds(a.times[a.best])})"
            out.append(line + (f", tied with {', '.join(a.tied)}" if a.tied else ""))
    measured = [r for r in records if r.mode != "primal" and r.ratio_to_primal is not None]
    if measured:
        top = max(r.n for r in measured)
        ratios = ", ".join(f"{r.label} {ratio_text(r)}" for r in measured if r.n == top)
        out.append(f"at n={top}, time per derivative / time of f: {ratios}")
    return out + crossover_lines(records)


def _primal(records: list[Record], label: str) -> bool:
    return any(r.label == label and r.mode == "primal" for r in records)
