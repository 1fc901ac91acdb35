"""``checkpoint=`` as a sweep's option: ``"reverse(checkpoint=sqrt)"`` beside ``"reverse"``.

The key=value option reads, spells back as its label, is refused with the reason on a
framework without checkpointing, and reaches ``prepare``: a sweep of a loop model shows
the memory its reverse pass keeps falling as the checkpoint choice changes.
"""

from __future__ import annotations

import pytest

import adlab
from adlab.measure import parse_variant, parse_variants

DEFAULTS = dict(jit=None, precision="float64", backend="jax", scheme="central")
pytestmark = pytest.mark.filterwarnings("ignore::adlab.NoisyMachineWarning")


@pytest.mark.parametrize(("spec", "value"), [
    ("reverse(checkpoint=sqrt)", "sqrt"), ("reverse(checkpoint=true)", True),
    ("reverse(checkpoint=false)", False), ("reverse(torch, checkpoint = SQRT)", "sqrt"),
    ("reverse", None),
])  # fmt: skip
def test_the_option_reads_and_its_label_is_its_string_form(spec, value):
    v = parse_variant(spec)
    assert v.checkpoint == value
    label = v.resolve(**DEFAULTS).label
    assert label == spec.replace(" ", "").replace("SQRT", "sqrt")
    assert parse_variant(label) == v


def test_a_list_keeps_the_options_together():
    got = parse_variants("reverse(checkpoint=sqrt), reverse(torch,checkpoint=true), reverse")
    assert [v.checkpoint for v in got] == ["sqrt", True, None]


@pytest.mark.parametrize(("spec", "match"), [
    ("reverse(checkpoint=cube)", "checkpoint= takes false|true|sqrt, got 'cube'"),
    ("reverse(autograd,checkpoint=sqrt)", "autograd.*has no checkpointing.*backend='jax'"),
    ("numeric(numpy,checkpoint=true)", "NumPy.*has no checkpointing"),
    ("hessian(checkpoint=true)", "first derivatives"),
])  # fmt: skip
def test_a_checkpoint_that_cannot_be_honoured_is_refused_with_the_reason(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_variant(spec).resolve(**DEFAULTS)


def test_a_sweep_shows_the_memory_falling_as_the_checkpoint_changes():
    modes = ["reverse(torch)", "reverse(torch,checkpoint=true)", "reverse(torch,checkpoint=sqrt)"]
    # budget_s: a point over budget is not called again for its memory (None on a busy machine)
    recs = list(adlab.bench("lstm", [65], modes, reference=None, repeats=3, target_s=0.002,
                            budget_s=30.0))  # fmt: skip
    kept = {r.label: r.residual_bytes for r in recs if r.mode == "reverse"}
    assert set(kept) == {"reverse(torch)", "reverse(torch,checkpoint=true)",
                         "reverse(torch,checkpoint=sqrt)"}  # fmt: skip
    assert kept["reverse(torch,checkpoint=sqrt)"] < kept["reverse(torch)"], kept
