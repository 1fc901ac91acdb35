"""``adlab.compare_runs`` on records made by hand: the verdicts and their words, the groups,
points in one run only, and what it says of unlike points, machines and versions."""

from __future__ import annotations

import dataclasses

import adlab
from adlab import Record, Run


def rec(label: str, n: int, t: float, sweep: str = "a", spread: float = 0.02, **kw) -> Record:
    kw.setdefault("mode", label)
    kw.setdefault("precision", "float64")
    return Record(model="m", n=n, label=label, scheme=None, jit=True, backend="jax",
                  median_s=t, median_lo_s=t * (1 - spread), median_hi_s=t * (1 + spread),
                  floor_s=5e-6,
                  env={"noise": 0.05, "sweep": sweep}, **kw)  # fmt: skip


def run(times: dict[str, dict[int, float]], sweep: str, env=None, **kw) -> Run:
    records = [rec(label, n, t, sweep, **kw) for label, by_n in times.items()
               for n, t in by_n.items()]  # fmt: skip
    return Run(records, env or {"host": "box", "cpu": "Xeon", "versions": {"jax": "0.10.2"}})


BASE = {"reverse": {10: 1e-5, 100: 2e-5, 1000: 1e-4}, "forward": {10: 1e-5, 100: 1e-4, 1000: 1e-3}}


def test_one_row_per_series_and_n_with_words_and_groups():
    new = {"reverse": {10: 1.01e-5, 100: 2.02e-5, 1000: 0.99e-4},  # noise
           "forward": {10: 1e-5, 100: 1.8e-4, 1000: 1.8e-3}}  # fmt: skip
    result = adlab.compare_runs(run(BASE, "a"), run(new, "b"))
    assert len(result) == 6
    by = {(p.label, p.n): p for p in result}
    assert by["forward", 1000].verdict == "slower 1.8x" and by["forward", 1000].significant
    assert abs(by["forward", 1000].ratio - 1.8) < 1e-9
    assert by["forward", 100].verdict == "slower 1.8x"
    assert all(by["reverse", n].verdict == "same within noise" for n in (10, 100, 1000))
    assert [p.group for p in result][:2] == ["slower", "slower"]  # the largest change first
    assert result.slower(0.1) and not result.slower(0.9)
    text = str(result)
    assert "slower 1.8x" in text and "same machine and versions" in text
    assert "<table>" in result._repr_html_() and result.text() == text
    faster = adlab.compare_runs(run(new, "b"), run(BASE, "a"))
    assert {p.verdict for p in faster if p.significant} == {"faster 1.8x"}
    assert not faster.slower(0.0)


def test_a_verdict_at_one_size_alone_is_noise():
    """A burst of load over one size's round robin moves that size alone, and so does a
    program's own swing between runs (JAX's hand-off to its worker thread, bimodal): a
    verdict needs a neighbouring size's, the largest size's too; a series of one size keeps
    its own. Its f, measured beside it, does not confirm it: on a quiet machine an A/A pair
    read "slower 1.3x" at reverse's largest size (22 -> 30 us, f unmoved, n = 1000 faster)."""
    new = {"reverse": {10: 2e-5, 100: 2e-5, 1000: 1e-4}, "forward": {10: 1e-5, 100: 1e-4,
                                                                     1000: 2e-3}}  # fmt: skip
    by = {(p.label, p.n): p for p in adlab.compare_runs(run(BASE, "a"), run(new, "b"))}
    assert by["reverse", 10].verdict == "same within noise"  # n = 100 does not confirm it
    assert by["forward", 1000].verdict == "same within noise"  # nor n = 100 this
    one = adlab.compare_runs(run({"f": {10: 1e-5}}, "a"), run({"f": {10: 2e-5}}, "b"))
    assert one[0].verdict == "slower 2x"
    # f unmoved beside it does not make a lone verdict stand
    base, new = run(BASE, "a", primal_s=1e-5), run(new, "b", primal_s=1e-5)
    by = {(p.label, p.n): p for p in adlab.compare_runs(base, new)}
    assert by["forward", 1000].verdict == "same within noise"


def test_the_noise_each_run_measured_widens_the_margin():
    new = {"reverse": {n: t * 1.3 for n, t in BASE["reverse"].items()}}
    base = {"reverse": BASE["reverse"]}
    quiet = adlab.compare_runs(run(base, "a"), run(new, "b"))
    assert all(p.verdict == "slower 1.3x" for p in quiet)
    noisy = [dataclasses.replace(r, env={**r.env, "noise": 0.5}) for r in run(new, "b")]
    assert all(p.verdict == "same within noise"
               for p in adlab.compare_runs(run(base, "a"), noisy))  # fmt: skip


def test_points_in_one_run_only_and_skipped_points():
    new = run({"reverse": BASE["reverse"]}, "b")
    new.append(dataclasses.replace(new[0], label="numeric", mode="numeric", median_s=None,
                                   skipped="over budget"))  # fmt: skip
    result = adlab.compare_runs(run(BASE, "a"), new)
    only = [p for p in result if p.verdict == "only in one run"]
    assert {(p.label, p.note) for p in only} == {("forward", "not in new"),
                                                  ("numeric", "not in base")}  # fmt: skip
    assert [p.group for p in result][-len(only) :] == ["only in one run"] * len(only)


def test_unlike_points_are_never_compared_silently():
    """float32 against float64, or a cold compile against a loaded one: said on the row
    and in the header."""
    base = run({"reverse": {1000: 1e-4}}, "a", precision="float32", compile_loaded=False)
    new = run({"reverse": {1000: 1e-4}}, "b", compile_loaded=True)
    result = adlab.compare_runs(base, new)
    assert result[0].note == "float32 vs float64"
    text = str(result)
    assert "points: float32 vs float64" in text
    assert "compiled cold in one run and loaded from adlab's cache" in text


def test_machines_and_versions_that_differ_are_named():
    gpu = {"host": "gpu-box", "cpu": "EPYC", "gpus": ["NVIDIA H100, driver 550"],
           "versions": {"jax": "0.9.0"}}  # fmt: skip
    result = adlab.compare_runs(run(BASE, "a"), run(BASE, "b", env=gpu))
    assert "cpu: Xeon -> EPYC" in result.differences
    assert "host: box -> gpu-box" in result.differences
    assert "jax: 0.10.2 -> 0.9.0" in result.differences
    assert "differs: cpu: Xeon -> EPYC" in str(result)
