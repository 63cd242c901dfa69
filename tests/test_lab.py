"""`make lab`: JupyterLab opens a chapter's MyST source as a notebook (through jupytext), in a real browser."""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from evalkit.book.runner import PROJECT_ROOT

from tests.book.test_book import _chromium

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_chapter_opens_as_a_notebook_in_jupyterlab(tmp_path):
    chromium = _chromium()
    port, token = _free_port(), secrets.token_hex(16)
    settings = tmp_path / "settings"
    settings.mkdir()
    # The same default-viewer override `make install` puts into the environment.
    (settings / "overrides.json").write_text((PROJECT_ROOT / "jupyter" / "lab-overrides.json").read_text())
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--LabApp.app_settings_dir={settings}",
         f"--ServerApp.root_dir={PROJECT_ROOT / 'notebooks'}", "--ServerApp.allow_root=True"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
        # The server side: jupytext's contents manager serves the .md as a notebook with its cells.
        import json

        with urllib.request.urlopen(f"{base}/api/contents/02_agreement.md?type=notebook&token={token}") as reply:
            model = json.load(reply)
        assert model["type"] == "notebook" and len(model["content"]["cells"]) > 5
        # The browser side: the page renders notebook cells, not a text editor.
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=30000", "--dump-dom",
                   f"{base}/lab/tree/02_agreement.md?token={token}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        dom = done.stdout
        assert "jp-Notebook" in dom and dom.count("jp-Cell ") + dom.count('jp-Cell"') >= 5, dom[-3000:]
        assert "Annotator agreement" in dom or "agreement" in dom.lower()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    assert not list(Path(PROJECT_ROOT / "notebooks").glob("*.ipynb")), "opening a chapter must not write an .ipynb"
