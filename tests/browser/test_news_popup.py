"""No "official Jupyter news?" pop-up over the quickstart, on either route adlab opens it by.

A fresh JupyterLab 4 asks "Would you like to get notified about official Jupyter news?" in a
pop-up that stays until answered, over the Lab's Run button in a 1400x1000 window. The
project's settings (``jupyter-config/``) answer it: the README's command puts that folder on
``JUPYTER_CONFIG_PATH``, and Binder's ``postBuild`` copies the same defaults into the
environment's JupyterLab settings. Each route is served here in a private JupyterLab with the
announcements plugin on (the other browser tests turn it off), next to one without either,
which must show the pop-up: otherwise its absence would prove nothing.

JupyterLab's announcements plugin, once the page is restored, either asks (its setting
``fetchNews`` is "none") or goes on to ask the server for updates (``/lab/api/update``): that
request is the moment the question would have been asked, so the test waits for it, not for
a fixed time.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ._jupyter import JupyterLabServer
from .conftest import REPO

NOTEBOOK = "00_quickstart.ipynb"
QUESTION = "Would you like to get notified about official Jupyter news?"
WINDOW = {"width": 1400, "height": 1000}


def _binder_settings(tmp_path: Path) -> Path:
    """Binder's route: ``binder/postBuild`` run into a private JupyterLab app folder (it
    writes under ``get_app_dir()``, which ``JUPYTERLAB_DIR`` moves); its settings folder."""
    app_dir = tmp_path / "app"
    env = {**os.environ, "JUPYTERLAB_DIR": str(app_dir)}
    subprocess.run(["bash", str(REPO / "binder" / "postBuild")], cwd=REPO, env=env, check=True,
                   timeout=120)  # fmt: skip
    return app_dir / "settings"


@pytest.fixture(params=["readme", "binder", "neither"])
def served(request, chromium_path, notebooks_copy, tmp_path):
    """(route, JupyterLab serving a copy of notebooks/ with the announcements plugin on);
    set up before the page, so that the page's last screenshot still sees it."""
    route = request.param
    # a private settings folder for JupyterLab's app (none of this environment's defaults):
    # empty, JupyterLab's own default is "none", ask
    env, settings = {}, tmp_path / "empty-settings"
    if route == "readme":  # JUPYTER_CONFIG_PATH=$PWD/jupyter-config jupyter lab ...
        env = {"JUPYTER_CONFIG_PATH": str(REPO / "jupyter-config")}
    elif route == "binder":
        settings = _binder_settings(tmp_path)
    args = (f"--LabApp.app_settings_dir={settings}",)
    with JupyterLabServer(
        notebooks_copy, tmp_path / "jupyter", disabled_plugins={}, env=env, args=args
    ) as server:
        yield route, server


def test_no_news_popup_over_the_quickstart(served, browser_page, screenshots):
    route, server = served
    page, _ = browser_page
    page.set_viewport_size(WINDOW)
    if route == "neither":  # the control: without adlab's settings, JupyterLab asks
        page.goto(server.lab_url(NOTEBOOK), timeout=90_000)
        page.get_by_text(QUESTION).wait_for(state="visible", timeout=120_000)
        page.screenshot(path=screenshots / "asked.png")
        return
    with page.expect_request("**/lab/api/update**", timeout=120_000):
        page.goto(server.lab_url(NOTEBOOK), timeout=90_000)
    # the first code cell's editor: always shown (a rendered Markdown cell hides its own)
    page.locator(".jp-Notebook .jp-CodeCell .cm-content").first.wait_for(timeout=90_000)
    page.screenshot(path=screenshots / "not-asked.png")
    assert page.get_by_text(QUESTION).count() == 0
    plugin = "@jupyterlab/apputils-extension:notification"
    settings = server.api("GET", f"/lab/api/settings/{plugin}")
    assert settings["schema"]["properties"]["fetchNews"]["default"] == "false"
