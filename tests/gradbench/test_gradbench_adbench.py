"""GradBench's ADBench evals, ht and ba, through their adapters, against the C++ reference.

The golden outputs (``fixtures/gradbench/golden/{ht,ba}.json``) were recorded from
GradBench's ``tools/manual`` (see the README there); each case is that tool's
answer to one input. Here the catalog models ``ht`` and ``ba`` answer the same
inputs through ``adlab.catalog.gradbench``: values and derivatives on JAX in
float64, the values on NumPy too, ht's Jacobian in both GradBench variants (simple,
complicated) on every framework, and ba's Jacobian in its sparse form.

Internals: the GradBench tool's parts in process (catalog.gradbench's adapters,
gradbench.jobs' Job and Options, gradbench.tool's Tool): the tool's public face is
GradBench's protocol on stdin and stdout, which test_gradbench_protocol.py drives.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import adlab
from adlab.catalog.gradbench import gradbench_eval
from adlab.gradbench.jobs import Job, Options
from adlab.gradbench.tool import Tool

GOLDEN = Path(__file__).parents[1] / "fixtures" / "gradbench" / "golden"
# the C++ tool prints 17 significant digits; both compute in float64
RTOL, ATOL = 1e-9, 1e-9


@functools.cache
def golden(name: str) -> list[dict]:
    return json.loads((GOLDEN / f"{name}.json").read_text())["cases"]


def cases(name: str, function: str) -> list[dict]:
    return [c for c in golden(name) if c["function"] == function]


def assert_same_json(got, want, path="output"):
    """Equal structure; integers exact, floats to RTOL/ATOL."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), path
        for k in want:
            assert_same_json(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        if want and all(isinstance(v, int) for v in want):
            assert got == want, path
        else:
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                assert_same_json(g, w, f"{path}[{i}]")
    elif isinstance(want, int) and not isinstance(want, bool):
        assert got == want and isinstance(got, int), path
    else:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=path)


def answer(name: str, case: dict, backend: str = "jax", mode: str = "reverse", **kw):
    """The adapter's answer to one golden case, computed as the tool's kind says."""
    adapter = gradbench_eval(name)
    model, args = adapter.inputs(case["input"])
    kind = adapter.kind(case["function"])
    if kind == "primal":
        p = adlab.prepare(model, *args, mode="primal", backend=backend)
        result = p._impl.to_numpy(p(*p.inputs))
    else:
        # unchecked, as the tool prepares it: the golden output is the check
        result = adlab.derivative(model, *args, mode=mode, backend=backend, check=False, **kw)
    return adapter.output(case["function"], result, case["input"])


@pytest.mark.parametrize("backend", ["jax", "numpy"])
@pytest.mark.parametrize("name", ["ht", "ba"])
def test_objective_matches_the_reference(name, backend):
    for case in cases(name, "objective"):
        assert_same_json(answer(name, case, backend=backend), case["output"])


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_ht_jacobian_matches_the_reference(mode):
    """Both variants: simple (theta's 26 columns) and complicated (each point's u and v
    first, then theta's: ADBench's 28)."""
    jacobians = cases("ht", "jacobian")
    assert sorted(len(c["input"]["us"]) > 0 for c in jacobians) == [False, True]
    for case in jacobians:
        got = answer("ht", case, mode=mode)
        n = len(case["input"]["data"]["correspondences"])
        columns = (2 if case["input"]["us"] else 0) + len(case["input"]["theta"])
        assert np.shape(got) == (3 * n, columns)  # rows: residuals
        assert_same_json(got, case["output"])


@pytest.mark.parametrize("backend", ["torch", "tensorflow", "autograd"])
def test_ht_both_variants_on_the_other_frameworks(backend):
    """The same model source, reverse mode, on each framework the tool runs."""
    for case in cases("ht", "jacobian"):
        assert_same_json(answer("ht", case, backend=backend), case["output"])


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_ba_sparse_jacobian_matches_the_reference(mode):
    for case in cases("ba", "jacobian"):
        assert_same_json(answer("ba", case, mode=mode, sparse=True), case["output"])


def test_ba_dense_jacobian_reads_the_same_entries():
    """Where a mode has no sparse form the tool answers from the dense Jacobian."""
    for case in cases("ba", "jacobian"):
        assert_same_json(answer("ba", case, mode="forward"), case["output"])


@pytest.mark.parametrize("mode", ["forward", "reverse", "numeric"])
def test_the_tool_answers_ba_jacobian_as_the_eval_expects(mode):
    """The whole route: the tool's evaluate, sparse in forward and reverse mode (columns,
    rows colored), dense in numeric."""
    tool = Tool(Options(mode=mode, scheme="richardson"))
    for case in cases("ba", "jacobian"):
        message = {"id": 1, "kind": "evaluate", "module": "ba", "function": "jacobian",
                   "input": case["input"] | {"min_runs": 2, "min_seconds": 0}}  # fmt: skip
        response = tool.respond(message)
        assert response["success"], response.get("error")
        assert [t["name"] for t in response["timings"]].count("evaluate") == 2
        if mode == "numeric":  # finite differences: as accurate as the scheme allows
            got, want = response["output"], case["output"]
            assert got["rows"] == want["rows"] and got["cols"] == want["cols"]
            np.testing.assert_allclose(got["vals"], want["vals"], rtol=1e-6, atol=1e-6)
        else:
            assert_same_json(response["output"], case["output"])


def test_a_sparse_run_ends_at_the_nonzeros_and_the_answer_packs_them():
    """The timed run of a sparse Jacobian returns its nonzeros in CSR order, the layout
    ADBench's BASparseMat holds (SciPy's packing is the answer's conversion, untimed):
    the same matrix ``p(x)`` returns."""
    (case, *_) = cases("ba", "jacobian")
    model, args = gradbench_eval("ba").inputs(case["input"])
    job = Job("sparse", model, args, Options(mode="reverse"))
    job.bind(args)
    run = job.call()
    assert not isinstance(run, sp.sparray) and np.ndim(run) == 1
    packed, p = job.to_numpy(run), job._parts[0][0]
    want = p(*args)
    assert run.shape == (want.nnz,)
    assert (packed != want).nnz == 0 and packed.shape == want.shape


def test_ba_colors_are_few_and_do_not_grow_with_n():
    """Forward mode colors ba's columns: each residual's unknowns (at most 15) need their
    own colors, and no more are needed however many observations there are."""
    model = adlab.load_model("ba", CAMERAS=5)
    colors = []
    for n in (40, 400):
        p = adlab.prepare(model, *model.setup(n), mode="forward", sparse=True)
        row_nnz = np.diff(p.pattern.indptr)
        assert p.colors == row_nnz.max()  # as few as the densest row allows
        colors.append(p.colors)
    assert colors[0] == colors[1] <= 15


def test_ht_refuses_another_skeleton():
    for case in cases("ht", "objective"):  # both variants
        other = copy.deepcopy(case["input"])
        other["data"]["model"]["parents"][2] = 0
        with pytest.raises(ValueError, match="22-bone hand"):
            gradbench_eval("ht").inputs(other)


def test_ht_variant_follows_the_input():
    """The complicated variant is the one whose input sends us; the simple one reads
    neither us nor triangles, so changing them changes nothing there."""
    simple, complicated = cases("ht", "objective")
    adapter = gradbench_eval("ht")
    assert adapter.model(simple["input"]).settings["VARIANT"] == "simple"
    assert adapter.model(complicated["input"]).settings["VARIANT"] == "complicated"
    unread = copy.deepcopy(simple["input"])
    unread["data"]["model"]["triangles"] = [[0, 1, 2]] * 5
    assert_same_json(answer("ht", {**simple, "input": unread}), simple["output"])
    moved = copy.deepcopy(complicated["input"])
    moved["us"] = [[u + 0.1, v] for u, v in moved["us"]]
    assert not np.allclose(answer("ht", {**complicated, "input": moved}), complicated["output"])


def test_ht_answers_alike_whether_it_skins_the_points_or_the_whole_hand():
    """The fixtures' hands are cut to the vertices their points use, so the model skins
    the whole hand and picks; with unused vertices beside them it skins only those
    asked for. The residuals are the same either way."""
    for case in cases("ht", "objective") + cases("ht", "jacobian"):
        padded = copy.deepcopy(case)
        hand = padded["input"]["data"]["model"]
        hand["base_positions"] += [[0.5, 0.5, 0.5, 1.0]] * 200
        hand["weights"] += [[1.0 / 22] * 22] * 200
        assert_same_json(answer("ht", padded), case["output"])


@pytest.mark.parametrize("variant", ["simple", "complicated"])
def test_ht_setup_makes_a_hand_that_fits_its_points(variant):
    """setup's points are the posed hand's vertices (or points on its triangles) plus
    noise of 0.01; the complicated variant's x starts with the two shifts, zero."""
    model = adlab.load_model("ht", VARIANT=variant)
    args = model.setup(50)
    residuals = model.function("numpy")(*args)
    assert residuals.shape == (150,)
    assert 0.005 < np.std(residuals) < 0.02
    x, us = args[0], args[-1]
    if variant == "complicated":
        assert x.shape == (28,) and list(x[:2]) == [0.0, 0.0]
        assert np.all(us >= 0) and np.all(us.sum(axis=1) <= 1)
    else:
        assert x.shape == (26,)
