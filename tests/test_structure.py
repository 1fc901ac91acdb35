"""The structure a newcomer relies on: no private imports across modules, a short engine/,
tests that mirror the package and import what its ``__init__`` files export.

Read from the source with ``ast`` (no import runs). ``adlab._vocab`` and ``adlab._format``
are the shared base every layer uses, so importing them is not reaching into a private home.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import adlab

PACKAGE = Path(adlab.__file__).parent
EXEMPT = ("adlab._vocab", "adlab._format")
MAX_FLAT_IN_ENGINE = 8
#: modules outside engine/backends/ that spell a framework's name in code (everything else
#: reads ``adlab.engine.backends.FACTS``, DEFAULT, REFERENCE or BASELINE): adlab._vocab's
#: ``Backend`` Literal, the shared words every layer types its signatures with
MAX_SPELLING_A_FRAMEWORK = 1


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


#: underscored attributes that are public protocols, not a module's private state: a
#: namedtuple's ``_replace`` and IPython's ``_repr_html_``
PROTOCOLS = frozenset({"_replace", "_asdict", "_fields", "_make", "_repr_html_",
                       "_repr_mimebundle_"})  # fmt: skip


def _private_attributes_defined(tree: ast.Module) -> set[str]:
    """The private attributes a module defines: in a class body (fields, methods), as
    ``self._x = ...``, with ``setattr(obj, "_x", ...)``, and its module-level functions."""
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    names.add(st.target.id)
                elif isinstance(st, ast.Assign):
                    names.update(t.id for t in st.targets if isinstance(t, ast.Name))
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(st.name)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            names.add(node.args[1].value)
    return {n for n in names if _private(n)}


def private_attribute_reads() -> list[str]:
    """Every ``obj._name`` (obj not ``self``/``cls``) whose ``_name`` another module defines
    and this one does not: a module reading another's private state (``p._first``)."""
    trees = {_module(p): ast.parse(p.read_text()) for p in PACKAGE.rglob("*.py")}
    homes: dict[str, set[str]] = {}
    for module, tree in trees.items():
        for name in _private_attributes_defined(tree):
            homes.setdefault(name, set()).add(module)
    found = []
    for me, tree in sorted(trees.items()):
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            where = homes.get(node.attr, set())
            if node.attr not in PROTOCOLS and where and me not in where:
                found.append(f"{me}:{node.lineno} reads {ast.unparse(node)}, private to "
                             f"{', '.join(sorted(where))}")  # fmt: skip
    return found


def test_no_module_reads_another_modules_private_attribute():
    found = private_attribute_reads()
    assert not found, "give it a public name (a property) in its home:\n" + "\n".join(found)


def test_the_check_sees_a_private_attribute_read(tmp_path, monkeypatch):
    # the check itself can fail: one module reads what another's class keeps private
    pkg = tmp_path / "adlab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "prepared.py").write_text(
        "class P:\n    _kept: int = 0\n\n    def __init__(self):\n        self._first = 1\n"
        "        self._kept = self._first\n"
    )
    (pkg / "derivative.py").write_text(
        "def value(p, t):\n    return p._first, p._kept, t._replace(a=1), p._unknown\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert private_attribute_reads() == [
        "adlab.derivative:2 reads p._first, private to adlab.prepared",
        "adlab.derivative:2 reads p._kept, private to adlab.prepared",
    ]


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}  # fmt: skip


def framework_spellers() -> dict[str, list[str]]:
    """Modules outside engine/backends/ with a framework's name as a string in code (not in a
    docstring): module -> "line: name" of each."""
    from adlab._vocab import BACKENDS
    from adlab.engine.backends import FACTS

    names = set(FACTS) | set(BACKENDS)
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[:2] == ("engine", "backends"):
            continue
        tree = ast.parse(path.read_text())
        skip = _docstrings(tree)
        hits = [
            f"{node.lineno}: {node.value}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in names and id(node) not in skip
        ]
        if hits:
            found[_module(path)] = hits
    return found


def test_few_modules_outside_the_backends_spell_a_framework():
    found = framework_spellers()
    assert len(found) <= MAX_SPELLING_A_FRAMEWORK, (
        "read the framework's entry in adlab.engine.backends.FACTS (or DEFAULT, REFERENCE, "
        "BASELINE) instead:\n" + "\n".join(f"{m}: {hits}" for m, hits in found.items())
    )


def test_the_check_sees_a_framework_spelled(tmp_path, monkeypatch):
    # the check itself can fail: "torch" as a value counts, in a docstring it does not
    pkg = tmp_path / "adlab"
    (pkg / "engine" / "backends").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "backends" / "torch.py").write_text("NAME = 'torch'\n")
    (pkg / "docs.py").write_text('"""torch"""\n\ndef f():\n    """jax"""\n')
    (pkg / "plots.py").write_text("LOOKS = {'torch': 1}\nif x == 'numpy': pass\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", pkg)
    assert framework_spellers() == {"adlab.plots": ["1: torch", "2: numpy"]}


#: lists every layer reads: each has one home (``adlab._vocab``'s words, the sweep's default)
ONE_HOME = ("MODES", "BACKENDS", "SCHEMES", "PRECISIONS", "DEFAULT_MODES")


def module_level_homes(names: tuple[str, ...] = ONE_HOME) -> dict[str, list[str]]:
    """The modules that assign each of ``names`` at their top level."""
    homes: dict[str, list[str]] = {name: [] for name in names}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])  # fmt: skip
            for target in targets:
                if isinstance(target, ast.Name) and target.id in homes:
                    homes[target.id].append(_module(path))
    return homes


def test_each_shared_list_has_one_home():
    homes = module_level_homes()
    several = {name: where for name, where in homes.items() if len(where) != 1}
    assert not several, f"one home each (name the others by what they hold): {several}"


# ------------------------------------------------------------------ the tests themselves
TESTS = Path(__file__).parent
#: tests/ folders that name no adlab package: recorded data, the end-to-end tests that
#: drive the Lab and the JavaScript backends together in Chromium (their own conftest), and
#: the docs' (their build, the API's doctests, the README)
NOT_PACKAGES = ("fixtures", "browser", "docs")
#: the tests that stand flat in tests/: they read the whole package
FLAT = ("test_layers.py", "test_structure.py")
DOTTED = re.compile(r"adlab(\.\w+)+")


def _exports(init: Path) -> set[str]:
    """What a package's ``__init__`` exports: its ``__all__``; without one, the names it
    defines, re-exports (``from .m import X as X``) or hands out lazily (``__getattr__``)."""
    tree = ast.parse(init.read_text())
    found: set[str] = set()
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])  # fmt: skip
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return set(ast.literal_eval(node.value))
        # a private name an __init__ defines is not exported (``import *`` leaves it too)
        found.update(t.id for t in targets if isinstance(t, ast.Name) and not _private(t.id))
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not _private(node.name):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update(a.asname for a in node.names if a.asname == a.name.rpartition(".")[2])
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            compared = [c.comparators[0] for c in ast.walk(node) if isinstance(c, ast.Compare)]
            found.update(c.value for c in compared if isinstance(c, ast.Constant))
    return found


def reaches_in(path: Path) -> list[str]:
    """Where a test module goes past the packages' ``__init__``: an import, an attribute path
    or a patched name (a string) that reaches an implementation module, a private name, or a
    name its package does not export. ``adlab._vocab`` and ``adlab._format`` are the shared
    base, as for the package's own modules (their private names are not)."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    found: set[tuple[int, str]] = set()

    def check(line: int, dotted: str) -> None:
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            here, name = ".".join(parts[:i]), parts[i]
            if here not in modules:
                return
            if here in EXEMPT:
                if _private(name):
                    found.add((line, f"the private name {here}.{name}"))
                return
            inner = modules.get(f"{here}.{name}")
            if f"{here}.{name}" in EXEMPT or inner is not None and inner.name == "__init__.py":
                continue  # the shared base, or a subpackage: what follows is checked next
            if name.startswith("__") or name in _exports(modules[here]):
                return
            found.add((line, f"the implementation module {here}.{name}" if inner
                       else f"{here}.{name}, which {here} does not export"))  # fmt: skip
            return

    tree = ast.parse(path.read_text())
    skip = _docstrings(tree)
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] == "adlab":
                for alias in node.names:
                    check(node.lineno, f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "adlab":
                    check(node.lineno, alias.name)
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            if DOTTED.fullmatch(dotted := ast.unparse(node)):
                check(node.lineno, dotted)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in skip and DOTTED.fullmatch(node.value)):  # fmt: skip
            check(node.lineno, node.value)
    return [f"{line}: {what}" for line, what in sorted(found)]


def _says_why(path: Path) -> bool:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return any(line.startswith("Internals:") and line[10:].strip() for line in doc.splitlines())


def unexplained_internals(tests: Path) -> dict[str, list[str]]:
    """Test modules (helpers included) that reach past the packages' ``__init__`` with no
    ``Internals:`` line in their docstring saying why, or that keep one with no cause left."""
    found = {}
    for path in sorted(tests.rglob("*.py")):
        where, why = reaches_in(path), _says_why(path)
        if where and not why:
            found[str(path.relative_to(tests))] = where
        elif why and not where:
            found[str(path.relative_to(tests))] = ["an Internals: line, and nothing internal"]
    return found


def test_tests_import_what_the_packages_export():
    found = unexplained_internals(TESTS)
    assert not found, (
        "import it from its package (the __init__ exports it), or say which internal the test "
        "checks and why in a docstring line starting 'Internals:':\n"
        + "\n".join(f"{path}: {where}" for path, where in found.items()))  # fmt: skip


def test_the_check_sees_a_test_reaching_in(tmp_path):
    # the check itself can fail, on the real package: measure exports time_call, not timing
    (tmp_path / "lab").mkdir()
    (tmp_path / "test_public.py").write_text(
        '"""Public."""\nimport adlab\nfrom adlab import Record\nfrom adlab.measure import '
        "time_call\nfrom adlab._vocab import BACKENDS\nadlab.measure.bench\n"
    )
    (tmp_path / "lab" / "test_inside.py").write_text(
        "import adlab.measure.timing\nfrom adlab.measure.timing import Stopwatch\n"
        "from adlab.measure import _hidden\nfrom adlab._vocab import _X\n"
        "def test(monkeypatch):\n    monkeypatch.setattr('adlab.measure.timing.measure', 1)\n"
        "    adlab.measure.timing.summarize\n    adlab.cli._demo\n"
    )
    (tmp_path / "_helper.py").write_text(
        '"""A helper.\n\nInternals: its stopwatch.\n"""\n'
        "from adlab.measure.timing import Stopwatch\n"
    )
    (tmp_path / "test_stale.py").write_text('"""Stale.\n\nInternals: none.\n"""\nimport adlab\n')
    assert unexplained_internals(tmp_path) == {
        "lab/test_inside.py": [
            "1: the implementation module adlab.measure.timing",
            "2: the implementation module adlab.measure.timing",
            "3: adlab.measure._hidden, which adlab.measure does not export",
            "4: the private name adlab._vocab._X",
            "6: the implementation module adlab.measure.timing",
            "7: the implementation module adlab.measure.timing",
            "8: adlab.cli._demo, which adlab.cli does not export",
        ],
        "test_stale.py": ["an Internals: line, and nothing internal"],
    }


def test_tests_mirror_the_package():
    """Each folder of tests/ is a package's (tests/engine/ for adlab/engine/, ...), and only the
    tests that read the whole package stand flat."""
    folders = [p.relative_to(TESTS) for p in sorted(TESTS.rglob("*")) if p.is_dir()]
    folders = [f for f in folders if not any(part.startswith((".", "_")) for part in f.parts)]
    stray = [str(f) for f in folders if f.parts[0] not in NOT_PACKAGES
             and not (PACKAGE / f / "__init__.py").is_file()]  # fmt: skip
    flat = sorted(p.name for p in TESTS.glob("test_*.py") if p.name not in FLAT)
    assert not stray, f"no adlab package of these names: {stray}"
    assert not flat, f"move these into the folder of the package they test: {flat}"
