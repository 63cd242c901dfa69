"""No progress-bar warning on a notebook page: importing evalkit settles ``tqdm.auto`` quietly in a kernel.

In a Jupyter kernel without ipywidgets, the first import of ``tqdm.auto`` (by transformers, huggingface_hub,
sentence-transformers or bert-score) prints ``TqdmWarning: IProgress not found`` with a ``.venv/...`` path;
the book's pages showed it. These tests run a real kernel, as papermill does.
"""
from __future__ import annotations

import importlib.util

import pytest

jupyter_client = pytest.importorskip("jupyter_client")


def _stderr_of(code: str) -> str:
    """What ``code`` writes to stderr in a fresh Python kernel."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute(code)
        stderr = []
        while True:
            message = client.get_iopub_msg(timeout=60)
            content = message["content"]
            if message["msg_type"] == "stream" and content["name"] == "stderr":
                stderr.append(content["text"])
            elif message["msg_type"] == "error":
                raise AssertionError(f"{content['ename']}: {content['evalue']}")
            elif message["msg_type"] == "status" and content["execution_state"] == "idle":
                return "".join(stderr)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.mark.skipif(importlib.util.find_spec("ipywidgets") is not None,
                    reason="with ipywidgets installed tqdm has nothing to warn about")
def test_a_kernel_without_ipywidgets_warns_unless_evalkit_came_first():
    assert "IProgress not found" in _stderr_of("import tqdm.auto")  # the warning the pages showed
    quiet = _stderr_of("import evalkit\nimport tqdm.auto\nfrom tqdm.auto import tqdm\nlist(tqdm(range(3), disable=True))")
    assert "IProgress" not in quiet and "TqdmWarning" not in quiet, quiet


def test_evalkit_leaves_no_global_warning_filter_behind():
    import warnings

    import evalkit  # noqa: F401  (already imported by the test session; its import added nothing)
    from evalkit.models.defaults import plain_progress_bars

    before = list(warnings.filters)
    plain_progress_bars()
    assert warnings.filters == before
