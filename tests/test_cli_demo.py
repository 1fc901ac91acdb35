"""`adlab demo`, the headless main job: the four modes on one model, measured."""

import re
import subprocess
import sys


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
