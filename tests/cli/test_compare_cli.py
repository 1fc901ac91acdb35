"""``adlab compare`` on saved runs of this machine: three A/A pairs say "same within noise"
for every series, a pair with one series made heavier on purpose names it alone, and
``--fail-slower`` exits 1 exactly then. Tiny sweeps (three sizes, short budget): the
findings' A/A test (benchmarks/findings_aa.py) is the long version."""

from __future__ import annotations

import warnings

import pytest

import adlab
from adlab import Series
from adlab.cli import main

SIZES = [100, 1000, 3000]


def sweep(mode: str) -> list[adlab.Record]:
    """reverse and a series named "gradient" on normal_logpdf, taken in ``mode``: forward
    mode costs n passes of f where reverse mode costs a few (about 100x at n = 1000 and
    300x at 3000: a slow-down far beyond the noise of a machine shared with other work,
    which can be 300% and more; a verdict must hold at two neighbouring sizes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", adlab.NoisyMachineWarning)  # the margin has it
        modes = ["reverse", Series(mode, label="gradient")]
        return list(adlab.bench("normal_logpdf", SIZES, modes, budget_s=1.0, reference=None))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Saved runs: three A/A pairs and one whose "gradient" is taken in forward mode."""
    folder = tmp_path_factory.mktemp("runs")
    sweep("forward")  # reverse and forward compiled once (cache): every run after is warm
    paths = {}
    for name, mode in [("a1", "reverse"), ("a2", "reverse"), ("b1", "reverse"),
                       ("b2", "reverse"), ("c1", "reverse"), ("c2", "reverse"),
                       ("slow", "forward")]:  # fmt: skip
        paths[name] = str(adlab.save(sweep(mode), folder / f"{name}.json"))
    return paths


@pytest.mark.parametrize("pair", [("a1", "a2"), ("b1", "b2"), ("c1", "c2")])
def test_an_aa_pair_is_the_same_within_noise_everywhere(runs, pair, capsys):
    base, new = (runs[k] for k in pair)
    result = adlab.compare_runs(base, new)
    assert len(result) == 3 * len(SIZES)  # f, reverse and gradient at each size
    assert {p.verdict for p in result} == {"same within noise"}, str(result)
    assert main(["compare", base, new, "--fail-slower", "10%"]) == 0
    out = capsys.readouterr().out
    assert "same machine and versions" in out and "9 same within noise" in out


def test_a_heavier_series_is_named_and_fails_the_guard(runs, capsys, tmp_path):
    result = adlab.compare_runs(runs["c2"], runs["slow"])
    slower = {p.label for p in result if p.significant}
    assert slower == {"gradient"}, str(result)
    assert all(p.verdict.startswith("slower") for p in result if p.significant)
    assert all(p.verdict == "same within noise" for p in result if p.label != "gradient")
    html = tmp_path / "c.html"
    assert main(["compare", runs["c2"], runs["slow"], "--fail-slower", "10%",
                 "--html", str(html)]) == 1  # fmt: skip
    captured = capsys.readouterr()
    assert "gradient at n = 3000 is slower" in captured.err
    assert "reverse vs forward" in captured.out  # never compared silently
    assert "<table>" in html.read_text()
    # the guard's threshold: a slow-down beyond noise but under it passes
    top = max(p.ratio for p in result if p.significant)
    assert main(["compare", runs["c2"], runs["slow"], "--fail-slower", f"{top * 100:.0f}%"]) == 0
    # the other way round it is faster: nothing slower
    assert main(["compare", runs["slow"], runs["c2"], "--fail-slower", "0"]) == 0


def test_a_file_of_a_newer_format_is_refused_with_the_reason(runs, tmp_path, capsys):
    future = tmp_path / "future.json"
    future.write_text('{"format": 7, "env": {"adlab": "3.0"}, "records": []}')
    assert main(["compare", runs["a1"], str(future)]) == 2
    assert "format 7, written by adlab 3.0" in capsys.readouterr().err
