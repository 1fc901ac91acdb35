"""A model that takes its own derivative (particle, saddle) shows GradBench's four
combinations, outer mode over inner, as series; other models are as before."""

from __future__ import annotations

import pytest

from adlab.lab import LabState


@pytest.fixture(autouse=True)
def _tmp_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # edits are saved under the working directory


def test_particle_shows_rr_ff_fr_rf_as_series():
    lab = LabState("particle", frameworks=["jax", "torch"], modes=["forward", "reverse", "numeric"])
    for framework in ("", "(torch)"):
        on = framework.strip("()")
        with_inner = f"({on},inner-forward)" if on else "(inner-forward)"
        assert {f"reverse{framework}", f"reverse{with_inner}", f"forward{framework}",
                f"forward{with_inner}"} <= set(lab.variants)  # fmt: skip
    assert "numeric[central]" in lab.variants  # differences have no inner mode to pick
    assert not any("inner" in v for v in lab.variants if v.startswith("numeric"))


def test_a_model_without_grad_keeps_its_variants():
    lab = LabState("rosenbrock", frameworks=["jax"], modes=["forward", "reverse"])
    assert lab.variants == ["forward", "reverse"]
