"""llama.cpp is opt-in (`make llamacpp`): the tests that need it build it here, once, the first time."""
from __future__ import annotations

import fcntl
import importlib
import importlib.util
import sys
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def venv_install_lock(what: str = "venv") -> Iterator[None]:
    """Held while a test installs what it needs (``venv``: into the tests' own virtual environment; ``chromium``:
    through apt): test files that run at once (pytest -n) and need the same thing wait for one install rather
    than building it twice, or finding it half unpacked. Each kind has its own lock, so a browser test does not
    wait for a llama.cpp build."""
    venv = Path(sys.executable).parents[1]  # the interpreter running the tests, wherever its venv is
    with (venv / f".evalkit-test-install-{what}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        importlib.invalidate_caches()  # what another process installed while this one waited
        yield


def ensure_llama_cpp() -> None:
    """Install llama-cpp-python through the Makefile's `llamacpp` target when it is missing (a source build
    of some minutes on two cores the first time; the wheel is kept in the evalkit cache). A failed build fails
    the test: the engine is part of the kit, its absence is not a reason to skip."""
    with venv_install_lock():  # taken even when it is there: another worker may be unpacking it
        if importlib.util.find_spec("llama_cpp") is None:
            _build_llama_cpp()


def _build_llama_cpp() -> None:
    venv = Path(sys.executable).parents[1]
    done = subprocess.run(["make", "-C", str(ROOT), "llamacpp", f"VENV={venv}"], capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        pytest.fail(f"`make llamacpp` failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    importlib.invalidate_caches()
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("`make llamacpp` ran but llama_cpp is still not importable from this interpreter")
