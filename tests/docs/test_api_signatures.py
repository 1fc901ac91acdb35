"""A public class's signature shows what a user passes or reads, never adlab's private fields.

``inspect.signature`` is what ``help()``, JupyterLab's shift-tab and the API page (autodoc)
show. The built page is checked in ``test_docs_build.py``; this is the fast half.
"""

from __future__ import annotations

import dataclasses
import inspect
import pydoc

import pytest

import adlab

CLASSES = [name for name in adlab.__all__ if isinstance(getattr(adlab, name), type)]


def _parameters(obj) -> list[str]:
    try:
        return list(inspect.signature(obj).parameters)
    except ValueError:  # a builtin's subclass (the warnings, SizeError): no signature to show
        return []


@pytest.mark.parametrize("name", CLASSES)
def test_no_public_class_shows_a_private_parameter(name):
    cls = getattr(adlab, name)
    private = [p for p in _parameters(cls) if p.startswith("_")]
    assert not private, f"adlab.{name}'s signature shows {private}"


def test_the_dataclasses_are_all_checked():
    assert [n for n in CLASSES if dataclasses.is_dataclass(getattr(adlab, n))], "none found"


def test_models_private_fields_are_there_but_not_shown():
    # the check above has something to catch: Model's own fields include adlab's private ones
    fields = [f.name for f in dataclasses.fields(adlab.Model)]
    assert "_functions" in fields
    assert _parameters(adlab.Model) == ["name", "doc", "source", "wrt", "settings"]
    assert "_functions" not in pydoc.render_doc(adlab.Model, renderer=pydoc.plaintext)


def test_a_model_is_still_built_and_copied_with_its_private_fields():
    model = adlab.Model.from_function(lambda x: (x**2).sum(), name="square")
    copy = dataclasses.replace(model, wrt=0)
    assert copy.function() is model.function()
