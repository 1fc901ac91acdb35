"""`adlab demo`, the headless main job: the four modes on one model, measured."""

import re
import subprocess
import sys

import adlab


def test_demo_measures_every_mode_with_its_error():
    run = subprocess.run(
        [sys.executable, "-m", "adlab", "demo", "--model", "rosenbrock", "--n", "5"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = {line.split()[0]: line.split() for line in run.stdout.splitlines() if line.strip()}
    for label in ("primal", "forward", "reverse", "numeric[central]", "numeric[richardson]",
                  "complex-step"):  # fmt: skip
        assert label in rows, run.stdout
    # the last column is the error against the float64 reference: AD exact, FD not
    errors = {k: rows[k][-1] for k in ("reverse", "numeric[central]", "complex-step")}
    assert float(errors["reverse"]) < 1e-12, errors
    assert 1e-13 < float(errors["numeric[central]"]) < 1e-5, errors
    assert re.match(r"^[0-9.e+-]+$", errors["complex-step"]), errors


def test_demo_unknown_model_is_a_clear_error():
    run = subprocess.run(
        [sys.executable, "-m", "adlab", "demo", "--model", "nope"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2
    assert "no model named 'nope' in the catalog" in run.stderr


def test_demo_suggests_a_jupyter_command_that_starts_as_root():
    run = subprocess.run(
        [sys.executable, "-m", "adlab", "demo", "--model", "rosenbrock", "--n", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert ("JUPYTER_CONFIG_PATH=$PWD/jupyter-config "
            "jupyter lab --allow-root notebooks/00_quickstart.ipynb") in run.stdout
    # a mark in the listing is explained under it (whether this run had one is timing's luck;
    # test_the_long_listing_explains_its_marks_and_lists_each_skip_once always has one)
    table = run.stdout.split("\nTry:")[0]
    labels = ("primal", "forward", "reverse", "numeric[central]", "numeric[richardson]",
              "complex-step")  # fmt: skip
    rows = [line for line in table.splitlines() if line.split()[:1] and line.split()[0] in labels]
    assert len(rows) == 6, table
    assert any("~" in row for row in rows) == ("~ unstable:" in table), table


def _record(label: str, **fields) -> adlab.Record:
    return adlab.Record(model="m", mode=label, n=2, label=label, scheme=None, jit=True,
                        precision="float64", backend="jax", **fields)  # fmt: skip


def test_the_long_listing_explains_its_marks_and_lists_each_skip_once():
    records = [
        _record("primal", median_s=1e-6, unstable=True),
        _record("forward", skipped="line 5: NameError: oops (in f, mode 'forward', n=2)"),
        _record("reverse", skipped="line 5: NameError: oops (in f, mode 'reverse', n=2)"),
    ]
    text = adlab.format_records(records)
    assert "~ unstable:" in text
    assert text.count("NameError: oops") == 1
    assert "[1] forward, reverse at n = 2: line 5: NameError: oops" in text
    steady = adlab.format_records([_record("primal", median_s=1e-6, unstable=False)])
    assert "~" not in steady
