"""``mode`` means one thing: a rule registered in ``adlab.engine.modes``; a second
derivative's composition is its ``scheme``. The Literals of ``adlab._vocab`` type the public
signatures and agree with the registries they name.

``adlab._vocab`` and the registry are read directly on purpose: the check is that the
words and the registry say the same.

Internals: the inner modes' registry (backends.inner_grad.INNER_MODES), which the Inner
Literal must agree with; no package exports it.
"""

from __future__ import annotations

import inspect
from typing import get_args

import numpy as np
import pytest

import adlab
import adlab.lab
from adlab import _vocab
from adlab.engine.backends.inner_grad import INNER_MODES
from adlab.engine.modes import get_rule, mode_names


def test_the_literals_list_what_the_tuples_and_registries_hold():
    assert get_args(_vocab.Mode) == _vocab.MODES == adlab.MODES
    assert get_args(_vocab.Scheme) == _vocab.SCHEMES
    assert get_args(_vocab.Precision) == _vocab.PRECISIONS
    assert get_args(_vocab.Backend) == _vocab.BACKENDS
    assert set(get_args(_vocab.AnyMode)) == set(mode_names()) == set(adlab.ALL_MODES)
    assert set(get_args(_vocab.Composition)) == set(get_rule("hessian").schemes)
    assert set(get_args(_vocab.Inner)) == set(INNER_MODES)


def test_all_modes_come_from_the_registry_first_order_first():
    assert adlab.ALL_MODES[: len(adlab.MODES)] == adlab.MODES
    assert adlab.registered_modes() == adlab.ALL_MODES
    assert all(get_rule(m).order == 1 for m in adlab.MODES)
    assert {get_rule(m).order for m in adlab.ALL_MODES[len(adlab.MODES) :]} == {1, 2}  # primal


@pytest.mark.parametrize(
    ("fn", "types"),
    [
        (adlab.prepare, {"mode": "AnyMode", "scheme": "Scheme | Composition",
                         "backend": "Backend", "precision": "Precision | None", "inner": "Inner"}),
        (adlab.derivative, {"mode": "AnyMode", "backend": "Backend", "inner": "Inner"}),
        (adlab.prepare_hessian, {"scheme": "Composition | None", "mode": "Composition | None",
                                 "backend": "Backend", "precision": "Precision | None"}),
        (adlab.hessian, {"scheme": "Composition | None", "backend": "Backend",
                         "inner": "Inner"}),
        (adlab.prepare_hvp, {"scheme": "Composition | None", "backend": "Backend"}),
        (adlab.hvp, {"scheme": "Composition | None", "mode": "Composition | None"}),
        (adlab.bench, {"scheme": "Scheme", "precision": "Precision", "backend": "Backend"}),
        (adlab.lab.LabState, {"modes": "Iterable[AnyMode] | None",
                              "frameworks": "Iterable[Backend] | None"}),
    ],
)  # fmt: skip
def test_public_signatures_are_typed_with_the_vocabulary(fn, types):
    params = inspect.signature(fn).parameters
    assert {name: params[name].annotation for name in types} == types


def test_a_hessians_composition_is_its_scheme_and_mode_its_old_name():
    model = adlab.load_model("rosenbrock")
    (x,) = model.setup(4)
    p = adlab.prepare_hessian(model, x, scheme="reverse-over-forward")
    assert (p.mode, p.scheme) == ("hessian", "reverse-over-forward")
    old = adlab.prepare_hessian(model, x, mode="reverse-over-forward")  # as notebooks wrote it
    assert (old.mode, old.scheme) == ("hessian", "reverse-over-forward")
    np.testing.assert_allclose(adlab.hessian(model, x, scheme="numeric"),
                               adlab.hessian(model, x, mode="numeric"))  # fmt: skip
    v = np.ones_like(x)
    assert adlab.prepare_hvp(model, x, v, mode="reverse-over-reverse").scheme == (
        "reverse-over-reverse"
    )
    with pytest.raises(ValueError, match="two compositions.*old name"):
        adlab.hessian(model, x, scheme="numeric", mode="reverse-over-forward")


def test_a_sparse_hessian_names_its_composition_a_scheme():
    model = adlab.load_model("rosenbrock")
    (x,) = model.setup(4)
    p = adlab.prepare_hessian(model, x, scheme="forward-over-reverse", sparse=True)
    assert (p.mode, p.scheme) == ("hessian", "forward-over-reverse")
    with pytest.raises(ValueError, match="one per color; scheme 'complex-step' has none"):
        adlab.hessian(model, x, scheme="complex-step", sparse=True)
