"""Every public name of adlab is documented: a docstring that says what it returns, with an
example, and the example runs (as a doctest, here).

The API reference (``docs/api.rst``) is generated from these docstrings, so what a reader
finds there is what ran here.
"""

from __future__ import annotations

import doctest
import re

import numpy as np
import pytest

import adlab

CALLABLES = [name for name in adlab.__all__ if callable(getattr(adlab, name))]
DATA = [name for name in adlab.__all__ if name not in CALLABLES]


def test_all_lists_every_public_name_the_package_exports():
    public = {name for name in vars(adlab) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(adlab, name)).__name__ == "module"}
    missing = public - modules - set(adlab.__all__)
    assert not missing, f"add these to adlab.__all__ (adlab/__init__.py): {sorted(missing)}"
    assert len(set(adlab.__all__)) == len(adlab.__all__)
    for name in adlab.__all__:
        getattr(adlab, name)  # each resolves, the lazy ones (Lab, SparsePrepared) too


@pytest.mark.parametrize("name", CALLABLES)
def test_each_public_name_has_a_docstring_with_an_example_that_runs(name, tmp_path, monkeypatch):
    obj = getattr(adlab, name)
    doc = obj.__doc__ or ""
    assert doc.strip(), f"adlab.{name} has no docstring"
    assert ">>>" in doc, f"adlab.{name}'s docstring has no example (an 'Example:' section)"
    if not isinstance(obj, type):
        assert re.search(r"\breturn", doc, re.I), f"adlab.{name}: no word on what it returns"
    monkeypatch.chdir(tmp_path)  # an example that saves a file saves it here
    test = doctest.DocTestParser().get_doctest(doc, {"adlab": adlab, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)


@pytest.mark.parametrize("name", DATA)
def test_each_public_constant_is_described_where_it_is_defined(name):
    import importlib.util
    from pathlib import Path

    ext = Path(__file__).resolve().parents[2] / "docs" / "_ext" / "adlab_docs.py"
    spec = importlib.util.spec_from_file_location("adlab_docs", ext)
    docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs)
    assert docs._data_doc(name, docs.homes()[name]), f"adlab.{name}: no '#:' comment over it"
