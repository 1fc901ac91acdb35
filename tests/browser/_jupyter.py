"""A throwaway JupyterLab server for browser tests: isolated, token-protected, always stopped.

The server runs in a new session (process group) with its own config, data, runtime,
settings and workspace directories under a temporary folder, so nothing a developer
has configured (kernelspecs, extensions disabled, saved layouts) leaks into the test,
and nothing the test does leaks out. Kernels are started by the server in sessions
of their own; ``stop`` shuts them down through the REST API, then signals the server,
then kills by process id whatever still names our runtime directory.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# Plugins that would open toasts or fetch from the internet; neither belongs in a test.
_DISABLED_PLUGINS = {
    "@jupyterlab/apputils-extension:announcements": True,
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterLabServer:
    """``jupyter lab`` on 127.0.0.1, serving ``root_dir``; use as a context manager."""

    def __init__(self, root_dir: Path, state_dir: Path, start_timeout: float = 120.0,
                 disabled_plugins: dict | None = None, env: dict | None = None,
                 args: tuple[str, ...] = ()):  # fmt: skip
        """``disabled_plugins``: the page's, instead of ``_DISABLED_PLUGINS``; ``env``: more
        environment variables; ``args``: more of ``jupyter lab``'s options."""
        self.root_dir = Path(root_dir)
        self.disabled_plugins = _DISABLED_PLUGINS if disabled_plugins is None else disabled_plugins
        self.extra_env = dict(env or {})
        self.extra_args = tuple(args)
        self.state_dir = Path(state_dir)
        self.start_timeout = start_timeout
        self.token = secrets.token_hex(24)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.state_dir / "jupyter-server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = None

    # -- lifecycle ---------------------------------------------------------------------

    def __enter__(self) -> JupyterLabServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _env(self) -> dict[str, str]:
        d = self.state_dir
        dirs = {
            "JUPYTER_CONFIG_DIR": d / "config",
            "JUPYTER_DATA_DIR": d / "data",
            "JUPYTER_RUNTIME_DIR": d / "runtime",
            "JUPYTERLAB_SETTINGS_DIR": d / "settings",
            "JUPYTERLAB_WORKSPACES_DIR": d / "workspaces",
            "IPYTHONDIR": d / "ipython",
        }
        for p in dirs.values():
            p.mkdir(parents=True, exist_ok=True)
        labconfig = dirs["JUPYTER_CONFIG_DIR"] / "labconfig"
        labconfig.mkdir(exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps({"disabledExtensions": self.disabled_plugins})
        )
        env = dict(os.environ)
        env.update({k: str(v) for k, v in dirs.items()})
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("JUPYTER_PATH", None)
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        env = self._env()
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            *self.extra_args,
        ]  # fmt: skip
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with code {self.proc.returncode} before answering;"
                    f" log:\n{self.log_tail()}"
                )
            try:
                status = self.api("GET", "/api/status", timeout=5)
                if "started" in status:
                    return
            except (OSError, urllib.error.URLError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"JupyterLab did not answer on {self.base_url} within {self.start_timeout:.0f}"
                    f" s; log:\n{self.log_tail()}"
                )
            time.sleep(0.5)

    def stop(self) -> None:
        """Shut down kernels, then the server; kill whatever of ours is left, whatever happens."""
        proc, self.proc = self.proc, None
        try:
            if proc is not None and proc.poll() is None:
                try:
                    self.end_kernels()
                except Exception:  # noqa: BLE001 - best effort; the kills below are the backstop
                    pass
                _signal_group(proc.pid, signal.SIGTERM)  # the server stops its kernels too
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            if proc is not None and proc.poll() is None:
                _signal_group(proc.pid, signal.SIGKILL)  # a server that would not stop
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            # Kernels run in sessions of their own; they are ours if their command line
            # names a connection file in our private runtime directory.
            for pid in _pids_mentioning(str(self.state_dir / "runtime")):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if self._log is not None:
                self._log.close()
                self._log = None

    def end_kernels(self) -> None:
        """Shut down every kernel the server runs (and so the sessions that hold them)."""
        for k in self.api("GET", "/api/kernels", timeout=5):
            self.api("DELETE", f"/api/kernels/{k['id']}", timeout=15)

    # -- helpers -----------------------------------------------------------------------

    def api(self, method: str, path: str, timeout: float = 10):
        req = urllib.request.Request(
            self.base_url + path,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
        return json.loads(body) if body else None

    def lab_url(self, path: str | Path = "") -> str:
        """The URL that opens ``path`` (relative to the root, or a file under it) in a fresh
        (``?reset``) workspace, logged in by token."""
        if Path(path).is_absolute():
            path = Path(path).relative_to(self.root_dir).as_posix()
        return f"{self.base_url}/lab/tree/{path}?reset&token={self.token}"

    def log_tail(self, n: int = 60) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _pids_mentioning(text: str) -> list[int]:
    me = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found
