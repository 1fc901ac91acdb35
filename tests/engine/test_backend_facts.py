"""Each framework's entry of facts (``adlab.engine.backends.FACTS``) says one consistent thing,
and the modules that used to spell it out read it.

Internals: second order's tables (modes.hessian: NAMES, ON, WHY_NOT), which this test checks
are read from the facts entries; no public function hands them out.
"""

from __future__ import annotations

import pytest

from adlab._vocab import BACKENDS
from adlab.engine.backends import (
    BASELINE,
    COMPOSITIONS,
    DEFAULT,
    FACTS,
    KNOWN,
    REFERENCE,
    Facts,
    Known,
    facts_of,
    label_of,
    with_fact,
)
from adlab.engine.modes.hessian import NAMES, ON, WHY_NOT


def test_one_entry_per_backend_and_the_old_names_kept():
    assert tuple(FACTS) == BACKENDS
    assert KNOWN is FACTS and Known is Facts
    assert {DEFAULT, REFERENCE, BASELINE} <= set(FACTS)
    assert not FACTS[BASELINE].has_ad and FACTS[REFERENCE].sparse


def test_facts_of_an_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match="backend must be one of"):
        facts_of("julia")
    assert label_of("julia") == "julia"  # a message about it still reads
    assert label_of("torch") == FACTS["torch"].label


def test_each_framework_has_a_look_of_its_own():
    looks = [(f.marker, f.dash) for f in FACTS.values()]
    assert len(set(looks)) == len(looks)


@pytest.mark.parametrize("name", list(FACTS))
def test_an_entry_says_what_it_cannot_do_and_why(name):
    f = FACTS[name]
    assert f.label and f.description
    assert (f.profiler is None) == bool(f.profile_refusal)
    assert f.profiler in (None, "xla", "torch.profiler")
    assert f.sparse == (f.sparse_refusal is None)
    assert set(f.nests) <= set(COMPOSITIONS)
    assert not set(f.why_not_nested) & set(f.nests)  # refused means not run
    if not f.has_ad:
        assert not f.nests
    assert f.compiler is not None or f.how_jit is None


def test_the_hessians_compositions_per_framework_come_from_the_entries():
    assert NAMES == COMPOSITIONS
    assert ON == {name: f.nests for name, f in FACTS.items() if f.nests}
    assert set(WHY_NOT) == {(n, c) for n, f in FACTS.items() for c in f.why_not_nested}
    assert with_fact("nests") == tuple(ON)


def test_a_backend_that_cannot_be_profiled_says_its_entrys_reason():
    from adlab import profile

    for name in (n for n, f in FACTS.items() if f.profiler is None):
        with pytest.raises(ValueError) as err:
            profile("rosenbrock", 4, backend=name)
        assert FACTS[name].profile_refusal in str(err.value)
        for can in with_fact("profiler"):
            assert f"backend={can!r}" in str(err.value)


def test_the_lab_plots_tutorials_and_cli_read_the_entries():
    """Deliberately reads an internal, the CLI's words per profiler (``cli.profile._WORDS``):
    each framework that can be profiled has them, keyed by how it is profiled."""
    from adlab.cli.profile import _WORDS
    from adlab.lab.choices import framework_box
    from adlab.plots.colors import framework_look
    from adlab.tutorial.frameworks import how

    for name, f in FACTS.items():
        assert framework_look(name) == (f.marker, f.dash)
        assert how(name, False) == (f.how_eager or name)
        if f.profiler is not None:
            assert set(_WORDS[f.profiler]) == {"where", "times", "counter", "flops"}
    installed = [n for n in FACTS if FACTS[n].extra is None and FACTS[n].executable is None]
    assert framework_box(installed[0], True).tooltip == FACTS[installed[0]].description
