"""The structure a newcomer relies on: no private imports across modules, a short engine/.

Read from the source with ``ast`` (no import runs). ``adlab._vocab`` and ``adlab._format``
are the shared base every layer uses, so importing them is not reaching into a private home.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import adlab

PACKAGE = Path(adlab.__file__).parent
EXEMPT = ("adlab._vocab", "adlab._format")
MAX_FLAT_IN_ENGINE = 8


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _owner(module: str) -> str | None:
    """The package whose private module this is (None for a public module)."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if _private(part):
            return ".".join(parts[:i])
    return None


def private_imports() -> list[str]:
    """Every import of another module's private name, or of another package's private module."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    found = []
    for me, path in sorted(modules.items()):
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[tuple[str, str | None]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    targets.append((full, None) if full in modules else (source, alias.name))
            elif isinstance(node, ast.Import):
                targets = [(alias.name, None) for alias in node.names]
            for target, name in targets:
                if target.split(".")[0] != "adlab" or target.startswith(EXEMPT):
                    continue
                owner = _owner(target)
                if owner is not None and me != owner and not me.startswith(owner + "."):
                    found.append(f"{me}:{node.lineno} imports the private module {target}")
                if name is not None and _private(name) and target != me:
                    found.append(f"{me}:{node.lineno} imports the private name {target}.{name}")
    return found


def test_no_module_imports_another_modules_private_name():
    found = private_imports()
    assert not found, "give it a public name in its home:\n" + "\n".join(found)


def test_the_check_sees_a_private_import(tmp_path, monkeypatch):
    # the check itself can fail: a package with one private import across modules
    pkg = tmp_path / "adlab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "_inner.py").write_text("_HIDDEN = 1\n")
    (pkg / "other.py").write_text("from .sub._inner import _HIDDEN\nfrom ._vocab import _X\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    found = private_imports()
    assert found == [
        "adlab.other:1 imports the private module adlab.sub._inner",
        "adlab.other:1 imports the private name adlab.sub._inner._HIDDEN",
    ]


def test_few_modules_stand_flat_in_engine():
    flat = sorted(p.name for p in (PACKAGE / "engine").glob("*.py"))
    assert len(flat) <= MAX_FLAT_IN_ENGINE, f"group these by idea into engine's folders: {flat}"


def test_each_engine_folder_opens_with_a_one_line_docstring():
    for init in sorted((PACKAGE / "engine").glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc, init
        assert doc.splitlines()[0].strip(), init
