"""The model the Lab edits: where its source comes from, and checking an edit at once.

``resolve`` turns the Lab's ``model`` argument (a catalog name, source text,
a ``Model`` built from source, a path) into a name and an original text;
``compile_model`` builds a ``Model`` from the editor's text and runs it once,
so that a broken edit is reported on its line as it is typed, not when a run
reaches it.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path

import numpy as np

from ..catalog import list_models, source_of
from ..engine.backends import BASELINE
from ..engine.model.source import Model, is_model_source


def resolve(model: str | Model) -> tuple[str, str]:
    """(name, original source) of the Lab's model argument."""
    if isinstance(model, Model):
        if model.source is None:
            raise TypeError("the Lab edits source: build the model with Model.from_source")
        # settings given with the model go into the editor, so they stay with edits
        text, name = model.source_with_settings(), model.name
    elif isinstance(model, str) and model in list_models():
        return model, source_of(model)
    elif isinstance(model, str) and is_model_source(model):
        text, name = model, "custom"
    elif isinstance(model, str) and model.endswith(".py") and Path(model).is_file():
        text, name = Path(model).read_text(), Path(model).stem
    else:
        raise ValueError(
            f"no model named {model!r}; choose one of {list_models()}, or pass model source"
        )
    if name in list_models() and text == source_of(name):
        return name, text
    # Own models: the saved edit is keyed by the original text, so a changed
    # cell starts afresh while re-running the same cell restores the edit.
    digest = hashlib.sha1(text.encode()).hexdigest()[:8]
    return f"{name}-{digest}", text


def compile_model(text: str, name: str) -> Model:
    """The model of the editor's ``text``, checked by one call; errors name the user's line."""
    base = name if name in list_models() else name.rsplit("-", 1)[0]
    model = Model.from_source(text, name=base)
    _smoke_check(model)
    return model


def _smoke_check(model: Model) -> None:
    """Run the model once, in NumPy at n=2, so a broken edit is caught on its line now."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        args = model.setup(2)
        with model.errors("f at n=2 (a NumPy check of the edit)"):
            model.function(BASELINE)(*args)
