"""llama.cpp is opt-in (`make llamacpp`): the tests that need it build it here, once, the first time."""
from __future__ import annotations

import importlib
import importlib.util
import sys
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ensure_llama_cpp() -> None:
    """Install llama-cpp-python through the Makefile's `llamacpp` target when it is missing (a source build
    of some minutes on two cores the first time; the wheel is kept in the evalkit cache). A failed build fails
    the test: the engine is part of the kit, its absence is not a reason to skip."""
    if importlib.util.find_spec("llama_cpp") is not None:
        return
    venv = Path(sys.executable).parents[1]  # the interpreter running the tests, wherever its venv is
    done = subprocess.run(["make", "-C", str(ROOT), "llamacpp", f"VENV={venv}"], capture_output=True, text=True,
                          timeout=3600)
    if done.returncode != 0:
        pytest.fail(f"`make llamacpp` failed:\n{done.stdout[-1500:]}\n{done.stderr[-1500:]}")
    importlib.invalidate_caches()
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("`make llamacpp` ran but llama_cpp is still not importable from this interpreter")
