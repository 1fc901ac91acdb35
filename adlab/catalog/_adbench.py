"""GradBench's ADBench evals, ``ht`` and ``ba``: their inputs as f's arguments, results as JSON.

``adlab.catalog.gradbench`` declares the two adapters with these functions. The
shapes follow GradBench's C++ reference (``tools/manual``, ``cpp/gradbench/evals``
at github.com/gradbench/gradbench, MIT licence): ht's Jacobian is dense, one row
per residual and one column per theta entry; ba's is ADBench's sparse matrix
(``BASparseMat``), of which the eval transmits the first 30 entries and the last.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..engine.backends import BASELINE
from ..engine.model.source import Model

Input = Mapping[str, Any]
#: entries of ba's sparse Jacobian GradBench transmits: these first ones, then the last
BA_SHOWN = 30


# ------------------------------------------------------------ ht
def ht_arguments(input: Input, model: Model) -> tuple:
    """The simple variant's ``(theta, base_relatives, ..., correspondences, points)``."""
    if len(input.get("us", [])):
        raise ValueError(
            "adlab answers GradBench's ht eval in its simple variant only (an empty us); "
            "run the eval with --variant simple"
        )
    data, hand = input["data"], input["data"]["model"]
    parents = tuple(int(p) for p in hand["parents"])
    skeleton = model.function(BASELINE).__globals__["PARENTS"]
    if parents != skeleton:
        raise ValueError(
            f"the ht model is written for ADBench's 22-bone hand, parents {list(skeleton)}; "
            f"this input's hand has parents {list(parents)}"
        )
    return (
        np.asarray(input["theta"], dtype=np.float64),
        np.asarray(hand["base_relatives"], dtype=np.float64),
        np.asarray(hand["inverse_base_absolutes"], dtype=np.float64),
        np.asarray(hand["base_positions"], dtype=np.float64),
        np.asarray(hand["weights"], dtype=np.float64),
        np.array([-1.0 if hand["is_mirrored"] else 1.0, 1.0, 1.0]),
        np.asarray(data["correspondences"], dtype=np.int64),
        np.asarray(data["points"], dtype=np.float64).reshape(-1, 3),
    )


# ------------------------------------------------------------ ba
def ba_settings(input: Input) -> dict[str, Any]:
    return {"CAMERAS": int(input["n"])}


def ba_arguments(input: Input, model: Model) -> tuple:
    """``(x, feats)``: the one camera, point, weight and feature, each duplicated as the
    eval asks (n cameras, m points, p weights and features), as GradBench's tools do."""
    n, m, p = int(input["n"]), int(input["m"]), int(input["p"])
    x = np.concatenate([
        np.tile(np.asarray(input["cam"], dtype=np.float64), n),
        np.tile(np.asarray(input["x"], dtype=np.float64), m),
        np.full(p, float(input["w"])),
    ])  # fmt: skip
    return x, np.tile(np.asarray(input["feat"], dtype=np.float64), (p, 1))


def ba_objective(result: Any, input: Input) -> dict[str, Any]:
    """The residuals as the eval expects them: the first observation's, with how many."""
    p = int(input["p"])
    r = np.asarray(result, dtype=np.float64)
    return {
        "reproj_error": {"elements": r[:2].tolist(), "repeated": p},
        "w_err": {"element": float(r[2 * p]), "repeated": p},
    }


def ba_layout(n: int, m: int, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ADBench's compressed-row layout of ba's Jacobian: (row pointers, each entry's row,
    each entry's column).

    Observation i (camera i mod n, point i mod m) has two rows of 15 entries: its
    camera's 11 columns, its point's 3, its weight's 1; then each weight's error
    has one row and one entry. Entries that are zero by structure (the x error
    does not depend on the principal point's y) are entries all the same.
    """
    i = np.arange(p)
    block = np.concatenate([
        11 * (i % n)[:, None] + np.arange(11),
        11 * n + 3 * (i % m)[:, None] + np.arange(3),
        (11 * n + 3 * m + i)[:, None],
    ], axis=1)  # fmt: skip
    rows = np.concatenate([np.repeat(np.arange(2 * p), 15), 2 * p + i])
    cols = np.concatenate([np.repeat(block, 2, axis=0).ravel(), 11 * n + 3 * m + i])
    pointers = np.concatenate([15 * np.arange(2 * p + 1), 30 * p + 1 + i])
    return pointers, rows, cols


def ba_jacobian(result: Any, input: Input) -> dict[str, list]:
    """The entries GradBench transmits, read from the Jacobian (a scipy sparse array, or
    a dense one where the mode has no sparse form)."""
    pointers, rows, cols = ba_layout(int(input["n"]), int(input["m"]), int(input["p"]))

    def shown(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a[:BA_SHOWN], a[-1:]])

    vals = np.asarray(result[shown(rows), shown(cols)], dtype=np.float64).ravel()
    return {
        "rows": shown(pointers).tolist(),
        "cols": shown(cols).tolist(),
        "vals": vals.tolist(),
    }
