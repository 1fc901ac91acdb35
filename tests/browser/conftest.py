"""Fixtures for the real-browser tests: Debian's Chromium via Playwright, a private JupyterLab.

Locally the tests skip when Chromium or Playwright is missing. Under CI (``CI`` set to a
true value) they fail instead: the browser test is part of the test command there.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("ADLAB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
INSTALL_HINT = (
    "install Debian's chromium: apt-get install -y chromium"
    " (Playwright's own browser download is not used)"
)
REPO = Path(__file__).resolve().parents[2]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no", "off")


def _unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"browser test cannot run under CI: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        _unavailable(f"no Chromium at {CHROMIUM}; {INSTALL_HINT}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable('Playwright\'s Python package is missing: python -m pip install -e ".[test]"')
    return CHROMIUM


@pytest.fixture
def screenshots(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where this test saves its screenshots: ``$ADLAB_SCREENSHOTS/<test>`` or under tmp_path."""
    base = os.environ.get("ADLAB_SCREENSHOTS")
    d = Path(base) / request.node.name if base else tmp_path / "screenshots"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    print(f"screenshots: {d}")
    return d


@pytest.fixture
def notebooks_copy(tmp_path: Path) -> Path:
    """A temporary copy of ``notebooks/``, without saved Lab edits, exports or checkpoints."""
    dst = tmp_path / "notebooks"
    shutil.copytree(
        REPO / "notebooks", dst, ignore=shutil.ignore_patterns(".adlab", ".ipynb_checkpoints")
    )
    return dst


@pytest.fixture(scope="session")
def shared_lab(chromium_path: Path, tmp_path_factory: pytest.TempPathFactory):
    """One JupyterLab for the Lab's browser tests in this worker: starting one costs seconds
    of a cold machine's two cores, and every test opens its own notebook in a fresh
    workspace (``lab_url``'s ``?reset``) in a folder of its own (``lab_folder``)."""
    from ._jupyter import JupyterLabServer

    root = tmp_path_factory.mktemp("lab-root")
    with JupyterLabServer(root, tmp_path_factory.mktemp("lab-jupyter")) as server:
        yield server


@pytest.fixture
def lab_server(shared_lab):
    """The shared JupyterLab; after the test its kernels are shut down, so the next test's
    kernel is the only one working, and its log's tail is printed (shown on a failure)."""
    yield shared_lab
    shared_lab.end_kernels()
    print(f"--- JupyterLab log (tail), {shared_lab.log_path}\n{shared_lab.log_tail(40)}")


@pytest.fixture
def lab_folder(request: pytest.FixtureRequest, lab_server) -> Path:
    """This test's own copy of ``notebooks/`` in the shared JupyterLab's root: a Lab saves a
    model's edits and exports beside its notebook, and they must not reach another test."""
    name = re.sub(r"\W+", "_", request.node.name).strip("_")
    dst = lab_server.root_dir / name
    shutil.copytree(
        REPO / "notebooks", dst, ignore=shutil.ignore_patterns(".adlab", ".ipynb_checkpoints")
    )
    return dst


@dataclass
class Console:
    """Everything the page said: console messages and uncaught exceptions."""

    messages: list[tuple[str, str, str]] = field(default_factory=list)  # (type, text, url)
    page_errors: list[str] = field(default_factory=list)

    def errors(self) -> list[str]:
        out = [f"console.{t}: {text} [{url}]" for t, text, url in self.messages if t == "error"]
        return out + [f"uncaught: {e}" for e in self.page_errors]

    def dump(self, path: Path) -> None:
        lines = [f"[{t}] {text} [{url}]" for t, text, url in self.messages]
        lines += [f"[pageerror] {e}" for e in self.page_errors]
        path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def browser_page(chromium_path: Path, screenshots: Path) -> Iterator[tuple[object, Console]]:
    """A fresh headless Chromium page and the console it records; always closed."""
    from playwright.sync_api import sync_playwright

    console = Console()
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(
            executable_path=str(chromium_path),
            headless=True,
            args=CHROMIUM_FLAGS,
            timeout=60_000,
        )
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1400})
            page = context.new_page()
            page.set_default_timeout(60_000)
            page.on(
                "console",
                lambda m: console.messages.append((m.type, m.text, m.location.get("url", ""))),
            )
            page.on("pageerror", lambda e: console.page_errors.append(e.stack or str(e)))
            try:
                yield page, console
            finally:
                console.dump(screenshots / "console.log")
                try:  # what the page looked like at the end, failures included
                    page.screenshot(path=screenshots / "final.png", timeout=15_000)
                except Exception:  # noqa: BLE001 - a missing last picture must not mask the error
                    pass
                context.close()
        finally:
            browser.close()
    finally:
        pw.stop()
