"""``adlab accuracy``: the step sweep as a table, or exactly a JSON list of records."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from adlab._vocab import StepRecord
from adlab.cli import main


def test_json_is_exactly_a_list_of_step_records():
    out = subprocess.run(
        [sys.executable, "-m", "adlab", "accuracy", "--model", "normal_logpdf", "--n", "10",
         "--json"],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    records = json.loads(out.stdout)  # strict JSON: non-finite errors are strings
    assert isinstance(records, list) and records
    fields = set(StepRecord.__dataclass_fields__)
    assert all(set(r) == fields for r in records)
    schemes = [r["scheme"] for r in records]
    assert list(dict.fromkeys(schemes)) == ["forward", "central", "richardson", "complex-step"]
    for scheme in ("forward", "central", "richardson", "complex-step"):
        assert sum(r["is_default"] for r in records if r["scheme"] == scheme) == 1
    cs = [r for r in records if r["scheme"] == "complex-step"]
    assert min(r["h"] for r in cs) == pytest.approx(1e-300)
    assert all(isinstance(r["error"], float) or r["error"] in ("inf", "nan") for r in records)
    assert any(r["error"] == "inf" for r in records)  # h = 1e-16 gives f(x + h) == f(x)
    assert all(r["reference_trusted"] is True for r in records)


def test_table_marks_defaults_and_sets_theory_beside_measurement(capsys):
    assert main(["accuracy", "--model", "rosenbrock", "--n", "5", "--per-decade", "1"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    head = next(line for line in lines if line.split()[:2] == ["h", "forward-diff"])
    assert head.split() == [
        "h", "forward-diff", "central-diff", "richardson", "(estimate)", "complex-step"
    ]  # fmt: skip
    start = lines.index(head)
    rows = lines[start + 1 : lines.index("", start)]
    rows = [row for row in rows if not row.startswith(("*", "  optimum", "  inf"))]
    marked = [tok for row in rows for tok in row.split()[1:] if tok.endswith("*")]
    assert len(marked) == 4  # one default per scheme
    assert "trusted" in text and "UNTRUSTED" not in text
    assert "theory h*" in text and "best error" in text
    assert "float32 beside float64" in text and "central-diff" in text
    assert any(row.split()[:1] == ["1.0e-300"] for row in rows)  # complex step goes that low


def test_float32_table(capsys):
    assert main(["accuracy", "--model", "normal_logpdf", "--n", "4", "--precision", "float32",
                 "--schemes", "forward,complex-step", "--per-decade", "1"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "float32" in text.splitlines()[0]
    assert "inf" in text  # steps below float32's eps vanish, and the table says so


def test_untrusted_reference_is_shown(capsys):
    assert main(["accuracy", "--model", "gaussian_residual", "--n", "3", "--schemes",
                 "central", "--per-decade", "1"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "UNTRUSTED" in text and "differ by" in text


def test_non_analytic_model_file_gets_the_other_schemes(tmp_path, capsys):
    path = tmp_path / "abs_model.py"
    path.write_text(
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n"
        "def f(x):\n    return np.sum(np.real(x * np.conj(x)) ** 1.5)  # |x|^3, not analytic\n"
    )
    assert main(["accuracy", "--model", str(path), "--n", "3", "--schemes",
                 "central,complex-step", "--per-decade", "1"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "complex-step refused (line 5)" in text
    assert "central" in text


def test_bad_options_are_errors_not_tracebacks(capsys):
    assert main(["accuracy", "--model", "rosenbrock", "--schemes", "backward"]) == 2
    assert "scheme" in capsys.readouterr().err


def test_forward_means_one_thing_in_every_table(capsys):
    """A difference is "forward-diff" and AD "forward AD", in every table (never bare "forward")."""
    assert main(["accuracy", "--model", "rosenbrock", "--n", "3", "--per-decade", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    summary = lines.index(next(x for x in lines if x.startswith("scheme ")))
    schemes = [x.split()[0] for x in lines[summary + 1 : lines.index("", summary)]]
    assert schemes == ["forward-diff", "central-diff", "richardson", "complex-step"]
    precision = lines.index(next(x for x in lines if x.startswith("mode ")))
    modes = [x[:22].strip() for x in lines[precision + 1 :] if x.strip()]
    assert modes == ["forward AD", "reverse AD", "forward-diff", "central-diff", "richardson",
                     "complex-step"]  # fmt: skip
    step_head = next(x for x in lines if x.split()[:1] == ["h"] and "richardson" in x)
    assert "forward-diff" in step_head.split() and "forward" not in step_head.split()


def test_control_flow_advice_fits_accuracy(tmp_path, capsys):
    """Every scheme of adlab accuracy is traced: it has no eager run to offer."""
    path = tmp_path / "iffy.py"
    path.write_text(
        "def setup(n, rng):\n    return (rng.normal(size=n),)\n\n"
        "def f(x):\n    if x[0] > 0:\n        return np.sum(x)\n    return np.sum(x**2)\n"
    )
    assert main(["accuracy", "--model", str(path), "--n", "3"]) == 2
    err = capsys.readouterr().err
    assert "line 5: control flow on a traced value" in err and "np.where" in err
    assert "jit=False" not in err and "--no-jit" not in err


def test_set_changes_the_model_the_sweep_runs(tmp_path, capsys):
    """--set reaches the model: forward differences err by about K h / 2 on exp(K x)."""
    path = tmp_path / "scaled.py"
    path.write_text(
        "K = 1.0\n\ndef setup(n, rng):\n    return (rng.normal(size=n),)\n\n"
        "def f(x):\n    return np.sum(np.exp(K * x))\n"
    )

    def error_at_largest_step(*settings: str) -> float:
        argv = ["accuracy", "--model", str(path), "--n", "3", "--schemes", "forward",
                "--per-decade", "1", "--json", *settings]  # fmt: skip
        assert main(argv) == 0
        records = json.loads(capsys.readouterr().out)
        return max(records, key=lambda r: r["h"])["error"]

    assert error_at_largest_step("--set", "K=10.0") > 5 * error_at_largest_step()
    assert main(["accuracy", "--model", str(path), "--set", "Q=1"]) == 2
    assert "Q" in capsys.readouterr().err
