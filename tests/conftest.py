"""Shared fixtures: tiny UPHELD-shaped releases written by the tests themselves, and the real data dir."""
from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

import pytest


def _share_the_cores_between_workers() -> None:
    """Under ``pytest -n N`` (pytest-xdist) each worker computes with its share of the cores: torch, the BLAS
    libraries and llama.cpp read ``OMP_NUM_THREADS`` when they start, and the kernels, servers and graders a test
    starts inherit it. Without a share, each worker's thread pool would spin on the cores the other one is using.
    Set here, before any test module imports torch; a value the caller set is kept."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if workers > 1:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        share = str(max(1, cores // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(name, share)


_share_the_cores_between_workers()

# The test files that take longest (``pytest --durations`` of the whole suite), longest first. Two workers take a
# file at a time in collection order (``--no-loadscope-reorder``): the long chains start at once and the short
# files fill in around them, so neither worker is left idle while the other finishes the book.
LONGEST_FIRST = ("tests/book/test_book.py", "tests/test_experiments.py", "tests/course/test_hostile.py",
                 "tests/course/test_course.py", "tests/grid/test_grid.py", "tests/models/test_llama_server.py",
                 "tests/models/test_local_backend.py", "tests/userproxy/test_userproxy_job.py",
                 "tests/paireval/test_paireval.py", "tests/models/test_defaults.py",
                 "tests/course/test_hostile_answers.py", "tests/course/test_sandbox_limits.py",
                 "tests/paireval/test_encoder_judge.py", "tests/course/test_folder_names.py",
                 "tests/grid/test_masking_general.py")


def pytest_collection_modifyitems(config, items):
    """The longest files first (:data:`LONGEST_FIRST`), every other test in its collected order after them."""
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))

HEADER = ["Unnamed: 0", "chat_history", "Option A", "Option B", "score_task_1_content",
          "score_task_2_style", "score_task_3_reasonableness", "model"]
SEP = "\n \n\n  "
CONTENT = {1: "1: Strongly Disagree -- no content overlap", 3: "3: Neutral  - some overlap of content",
           4: "4: Agree - mostly same content", 5: "5: Strongly Agree -- same content"}
STYLE = {1: "1: Different styles", 3: "3: Somewhat same styles", 5: "5: Same styles"}
REASONABLE = {1: "1: Not a reasonable continuation", 5: "5:  A reasonable continuation"}


def row(turn_id="87-3", model="gpt4", content=4, style=3, reasonable=5, history=None,
        reference="Try the blue one.", candidate="The blue one suits you.", **overrides) -> dict:
    """One annotator row in the release's format; label arguments are values or raw strings."""
    if history is None:
        history = SEP.join(["user: I need a new phone.", "assistant: Which colour do you like?",
                            "user: Blue or red?"])
    record = {
        "Unnamed: 0": turn_id, "chat_history": history, "Option A": reference, "Option B": candidate,
        "score_task_1_content": CONTENT.get(content, content) if isinstance(content, int) else content,
        "score_task_2_style": STYLE.get(style, style) if isinstance(style, int) else style,
        "score_task_3_reasonableness": REASONABLE.get(reasonable, reasonable)
        if isinstance(reasonable, int) else reasonable,
        "model": model,
    }
    record.update(overrides)
    return record


def write_annotator(folder: Path, number: int, rows: list[dict], *, gz: bool = False,
                    header: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    columns = header or HEADER
    path = folder / (f"annotator_{number}.csv" + (".gz" if gz else ""))
    opener = gzip.open if gz else open
    with opener(path, "wt", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for record in rows:
            writer.writerow({column: record.get(column, "") for column in columns})
    return path


@pytest.fixture
def release(tmp_path: Path):
    """A function writing annotator files into ``tmp_path/upheld`` and returning that folder."""
    root = tmp_path / "upheld"

    def make(files: dict[int, list[dict]], **kwargs) -> Path:
        for number, rows in files.items():
            write_annotator(root, number, rows, **kwargs)
        return root

    return make


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The staged real data (``$EVALKIT_DATA_DIR``); tests that need it are skipped without it."""
    given = os.environ.get("EVALKIT_DATA_DIR")
    if not given or not (Path(given) / "upheld").is_dir():
        pytest.skip("EVALKIT_DATA_DIR does not point at a directory with upheld/ (set it to ../shared/data)")
    return Path(given).resolve()
