"""GradBench's ADBench evals, ``ht``, ``ba`` and ``lstm``: inputs as f's arguments, results as JSON.

``adlab.catalog.gradbench`` declares the three adapters with these functions. The
shapes follow GradBench's C++ reference (``tools/manual``, ``cpp/gradbench/evals``
at github.com/gradbench/gradbench, MIT licence): ht's Jacobian is dense, one row
per residual and one column per theta entry (after two for the us, in the
complicated variant); ba's is ADBench's sparse matrix
(``BASparseMat``), of which the eval transmits the first 30 entries and the last;
lstm's gradient is one flat list, the main parameters' rows then the extra ones'.
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
def ht_settings(input: Input) -> dict[str, Any]:
    """The variant the input asks for: ``complicated`` where it sends ``us``."""
    return {"VARIANT": "complicated" if len(input.get("us", [])) else "simple"}


def ht_arguments(input: Input, model: Model) -> tuple:
    """``(x, base_relatives, ..., triangles, correspondences, points, us)``: x is theta in
    the simple variant, (0, 0, theta) in the complicated one (see the ht model)."""
    data, hand = input["data"], input["data"]["model"]
    parents = tuple(int(p) for p in hand["parents"])
    skeleton = model.function(BASELINE).__globals__["PARENTS"]
    if parents != skeleton:
        raise ValueError(
            f"the ht model is written for ADBench's 22-bone hand, parents {list(skeleton)}; "
            f"this input's hand has parents {list(parents)}"
        )
    theta = np.asarray(input["theta"], dtype=np.float64)
    points = np.asarray(data["points"], dtype=np.float64).reshape(-1, 3)
    n = len(points)
    if model.settings["VARIANT"] == "complicated":
        x = np.concatenate([np.zeros(2), theta])
        triangles = np.asarray(hand["triangles"], dtype=np.int64).reshape(-1, 3)
        us = np.asarray(input["us"], dtype=np.float64).reshape(n, 2)
    else:  # neither is read: shapes that cost nothing
        x, triangles, us = theta, np.zeros((1, 3), dtype=np.int64), np.zeros((n, 2))
    return (
        x,
        np.asarray(hand["base_relatives"], dtype=np.float64),
        np.asarray(hand["inverse_base_absolutes"], dtype=np.float64),
        np.asarray(hand["base_positions"], dtype=np.float64),
        np.asarray(hand["weights"], dtype=np.float64),
        np.array([-1.0 if hand["is_mirrored"] else 1.0, 1.0, 1.0]),
        triangles,
        np.asarray(data["correspondences"], dtype=np.int64),
        points,
        us,
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


# ------------------------------------------------------------ lstm
def lstm_arguments(input: Input, model: Model) -> tuple:
    """``(x, state, sequence)``: x the main parameters' rows (2 per layer: weights, then
    biases) and the extra parameters' (3), flattened in the order of the eval's gradient."""
    main = np.asarray(input["main_params"], dtype=np.float64)
    extra = np.asarray(input["extra_params"], dtype=np.float64)
    x = np.concatenate([main.ravel(), extra.ravel()])
    state = np.asarray(input["state"], dtype=np.float64)
    sequence = np.asarray(input["sequence"], dtype=np.float64)
    b = state.shape[1]
    if main.shape != (state.shape[0], 4 * b) or extra.shape != (3, b) or sequence.shape[1] != b:
        raise ValueError(
            f"lstm's parameters do not fit its state of {state.shape[0] // 2} layers of "
            f"{b} bits: main_params {main.shape}, extra_params {extra.shape} and sequence "
            f"{sequence.shape}, where the eval sends (2 layers, 4 b), (3, b) and (c, b)"
        )
    return x, state, sequence
