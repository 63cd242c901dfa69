"""Reading a submission, and running one prepared notebook in a process of its own:
``python -m evalkit.course.worker NOTEBOOK RUN_DIR --cwd DIR --graded N``.

The grader reads each submission itself (:func:`read_submission`: ``.ipynb`` or MyST ``.md``, parsed in a
child process under memory and time limits; :func:`identify`: its chapter from the release's
``evalkit.chapter`` metadata, else the labels of its ``course.check`` cells, else its file name) and prepares
the notebook to run: the submission's cells, then one cell that writes the answer variables as data
(:func:`evalkit.course.answers.dump`). The worker executes every cell in a fresh
kernel with errors allowed and writes ``RUN_DIR/result.json`` (the errors of the submission's cells, and
whether the kernel died) and ``RUN_DIR/executed.ipynb`` (outputs capped). It runs inside the sandbox, so the
grader reads everything it writes as untrusted data; no check runs here.

The kernel runs as the worker's user and can write the worker's folder, so ``result.json`` carries an HMAC
made with a key only the grader and the worker know (:func:`seal`): the grader hands it over in
``EVALKIT_RESULT_KEY``, which the worker removes from its environment and, by making itself non-dumpable, from
``/proc`` before any kernel starts. A result the submission rewrote no longer verifies (:func:`unseal`).
"""
from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import re
import os
import sys
from pathlib import Path
from typing import Any

import nbformat

from evalkit.course.checks import EXERCISES
from evalkit.course.release import answer_cells

__all__ = ["NotASubmission", "read_submission", "identify", "execute", "seal", "unseal", "main"]

RESULT_KEY = "EVALKIT_RESULT_KEY"

CHAPTERS = tuple(dict.fromkeys(item.chapter for item in EXERCISES.values()))


class NotASubmission(ValueError):
    """The file is no notebook, or no chapter's: the message is the reason shown in the grades."""


#: What reading one file may take (the child of :func:`read_submission`): a chapter's notebook is read in
#: a few seconds and a few hundred MB.
READ_SECONDS = 120.0
READ_MEMORY_BYTES = 2**30
_READ_OUTPUT_BYTES = 256 * 2**20
#: What a file may grow to when read (its notebook as JSON): this many times its size, plus a megabyte. A
#: notebook read from JSON keeps about its size, a MyST file gains its cells' JSON escaping; a few hundred bytes
#: of YAML aliases that grow to tens of MB would cost the grader's own process gigabytes to load and prepare.
READ_GROWTH = 16
_READER = Path(__file__).with_name("_read.py")


def read_submission(path: Path, *, seconds: float = READ_SECONDS,
                    memory_bytes: int = READ_MEMORY_BYTES) -> nbformat.NotebookNode:
    """The notebook in ``path`` (``.ipynb``: nbformat, validated; ``.md``: jupytext's MyST reader), parsed in
    a child process (``_read.py``) limited to ``seconds`` of wall clock and ``memory_bytes`` of address space:
    a file whose parsing passes a limit (a YAML alias bomb) is :class:`NotASubmission`, and the grader's own
    process never holds more than the child's JSON."""
    suffix = path.suffix.lower()
    if suffix not in (".ipynb", ".md"):
        raise NotASubmission(f"not a notebook: {path.name} is a {suffix or 'suffix-less'} file (hand in the "
                             "chapter's .ipynb or .md)")
    if suffix == ".md" and _YAML_ANCHOR.search(_head(path)):
        raise NotASubmission(f"not a notebook: {path.name} defines YAML anchors (a chapter's settings use none; "
                             "repeated aliases make a few bytes cost minutes to read)")
    result = _read_in_child(path, suffix, seconds, memory_bytes)
    if "error" in result:
        raise NotASubmission(f"not a notebook: {path.name} could not be read as one ({_short(result['error'])})")
    notebook = result["notebook"]
    if suffix == ".md" and not any(cell.cell_type == "code" for cell in notebook.cells):
        raise NotASubmission("not a notebook: a Markdown file without a single code cell")
    return notebook


# a YAML setting that names an anchor ("l1: &l1 [...]"), in front matter or a cell's options
_YAML_ANCHOR = re.compile(r"(?m)^[ \t-]*[\w\"'.-]+[ \t]*:[ \t]*&[\w.-]+")


def _head(path: Path, size: int = 2**20) -> str:
    """The first ``size`` bytes of ``path`` as text (not following a link)."""
    handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return os.read(handle, size).decode("utf-8", "replace")
    finally:
        os.close(handle)


def _read_in_child(path: Path, suffix: str, seconds: float, memory_bytes: int) -> dict:
    """``{"notebook": NotebookNode}`` or ``{"error": text}``: what ``_read.py`` made of ``path``."""
    import os
    import subprocess
    import tempfile

    from evalkit.course.sandbox import Limits, _limit, end

    limits = Limits(timeout=seconds, memory_bytes=memory_bytes, file_bytes=_READ_OUTPUT_BYTES, open_files=256)
    within = (f"within the grader's limits for reading a file ({memory_bytes / 2**30:g} GiB of memory, "
              f"{seconds:g} s)")
    source = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        with tempfile.TemporaryFile() as output:
            process = subprocess.Popen([sys.executable, "-I", str(_READER), suffix], stdin=source, stdout=output,
                                       stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir(),
                                       env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, start_new_session=True,
                                       preexec_fn=_limit(limits))
            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                end(process)
                return {"error": f"its parsing did not finish {within}"}
            output.seek(0)
            text = output.read(_READ_OUTPUT_BYTES + 1)
        size = os.fstat(source).st_size
    finally:
        os.close(source)
    if len(text) > READ_GROWTH * size + 2**20:
        return {"error": f"it grows from {size:,} bytes to {len(text):,} when read (more than {READ_GROWTH} times its "
                         "size: repeated YAML aliases?)"}
    try:
        result = json.loads(text) if process.returncode == 0 and len(text) <= _READ_OUTPUT_BYTES else None
    except (ValueError, RecursionError):
        result = None
    if isinstance(result, dict) and isinstance(result.get("error"), str):
        if result["error"].startswith("MemoryError"):
            return {"error": f"its parsing did not finish {within}"}
        return {"error": result["error"]}
    if not isinstance(result, dict) or not isinstance(result.get("notebook"), dict):
        return {"error": f"its parsing did not finish {within}"}
    written = result.get("written")
    if not isinstance(written, int) or written > READ_GROWTH * size + 2**20:  # the text the grader keeps for its run
        return {"error": f"it grows from {size:,} bytes to {written:,} when written out for its run (more than "
                         f"{READ_GROWTH} times its size: deeply nested metadata?)" if isinstance(written, int)
                else f"its parsing did not finish {within}"}
    try:
        return {"notebook": nbformat.from_dict(result["notebook"])}
    except RecursionError:
        return {"error": "RecursionError: nested too deeply to read"}


def identify(notebook: nbformat.NotebookNode, path: Path) -> str:
    """The chapter a submission belongs to."""
    meta = notebook.metadata.get("evalkit", {})
    if isinstance(meta, dict) and meta.get("chapter") in CHAPTERS:
        return meta["chapter"]
    labels = [label for label in answer_cells(notebook) if label in EXERCISES]
    if labels:
        chapters = [EXERCISES[label].chapter for label in labels]
        return max(set(chapters), key=chapters.count)
    named = [chapter for chapter in CHAPTERS if chapter in path.name or path.name.startswith(chapter[:3])]
    if len(named) == 1:
        return named[0]
    raise NotASubmission("not a chapter's notebook: no course.check cell, no evalkit chapter in its metadata "
                         "and no chapter in its file name")


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _cell_errors(notebook: nbformat.NotebookNode, graded: int, failed: dict[int, dict] | None = None) -> list[dict]:
    """The errors of the first ``graded`` cells: each error output, and each cell whose execute reply said
    ``error`` (``failed``: its reply's content, by cell index) but that left no error output, as when the kernel
    could not send the error's message (a lone surrogate in it cannot be encoded): a failed cell always counts.

    >>> notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise Exception(text)")])
    >>> reply = {"status": "error", "ename": "UnicodeEncodeError", "evalue": "surrogates not allowed"}
    >>> [error["error"] for error in _cell_errors(notebook, 1, {0: reply})]
    ['an error whose message could not be shown (the kernel said UnicodeEncodeError: surrogates not allowed)']
    """
    errors = []
    for index, cell in enumerate(notebook.cells[:graded]):
        first_line = _short((cell.source.strip().splitlines() or [""])[0], 80)
        shown = [output for output in cell.get("outputs", []) if output.get("output_type") == "error"]
        for output in shown:
            errors.append({"cell": index, "first_line": first_line,
                           "error": _short(f"{output.get('ename')}: {output.get('evalue')}")})
        reply = (failed or {}).get(index)
        if not shown and isinstance(reply, dict) and reply.get("status") == "error":
            said = f" (the kernel said {reply.get('ename')}: {reply.get('evalue')})" if reply.get("ename") else ""
            errors.append({"cell": index, "first_line": first_line,
                           "error": _short(f"an error whose message could not be shown{said}")})
    return errors


_OUTPUT_CAP = 20_000  # characters kept of one output's text in the executed copy


def _truncate(notebook: nbformat.NotebookNode) -> bool:
    """Cap every output's text in place (a 100 MB print is not copied); True when something was cut."""
    cut = False
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for holder, key in [(output, "text"), *[(data, kind) for kind in list(data)]]:
                text = holder.get(key)
                if isinstance(text, list):
                    text = "".join(text)
                if isinstance(text, str) and len(text) > _OUTPUT_CAP:
                    cut_off = len(text) - _OUTPUT_CAP
                    holder[key] = text[:_OUTPUT_CAP] + f"\n[... {cut_off} more characters cut by the grader]"
                    cut = True
    return cut


def execute(notebook_path: Path, run_dir: Path, cwd: Path, graded: int) -> dict:
    """Every cell of the notebook at ``notebook_path`` run in a fresh kernel, errors allowed; the errors of
    its first ``graded`` cells, and the executed copy (outputs capped) in ``run_dir``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    notebook = nbformat.read(notebook_path, as_version=4)
    client = NotebookClient(notebook, kernel_name="python3", allow_errors=True, timeout=None,
                            resources={"metadata": {"path": str(cwd)}})

    def kernel_started(**_: Any) -> None:
        provisioner = getattr(client.km, "provisioner", None)
        pgid = getattr(provisioner, "pgid", None) or getattr(provisioner, "pid", None)
        if pgid:
            (run_dir / "kernel.pgid").write_text(str(pgid))

    failed: dict[int, dict] = {}

    def cell_failed(cell_index: int, execute_reply: dict, **_: Any) -> None:
        failed[cell_index] = dict(execute_reply.get("content") or {})

    client.on_notebook_start = kernel_started
    client.on_cell_error = cell_failed  # the reply says a cell failed even when its error output never came
    problem = None
    try:
        client.execute()
    except DeadKernelError as error:
        problem = f"the kernel died while running the notebook ({_short(str(error), 120)})"
    errors = _cell_errors(notebook, graded, failed)
    truncated = _truncate(notebook)
    nbformat.write(notebook, run_dir / "executed.ipynb")
    return {"errors": errors, "problem": problem, "truncated": truncated}


def seal(outcome: dict, key: str) -> dict:
    """``outcome`` with the HMAC-SHA256 of its canonical JSON under ``key``: what the worker writes.

    >>> sealed = seal({"errors": [], "problem": None}, "k" * 32)
    >>> forged = {**sealed, "outcome": {"errors": [], "problem": "forged"}}
    >>> unseal(sealed, "k" * 32), unseal(forged, "k" * 32), unseal(sealed, "other")
    ({'errors': [], 'problem': None}, None, None)
    """
    body = json.dumps(outcome, sort_keys=True, separators=(",", ":"))
    return {"outcome": outcome, "mac": hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()}


def unseal(sealed: Any, key: str) -> dict | None:
    """The outcome a :func:`seal`-ed record holds, or None when it is not one made with ``key`` (a submission
    rewrote it, or it is not a record at all)."""
    if not isinstance(sealed, dict) or not isinstance(sealed.get("outcome"), dict) \
            or not isinstance(sealed.get("mac"), str):
        return None
    expected = seal(sealed["outcome"], key)["mac"]
    return sealed["outcome"] if hmac.compare_digest(expected, sealed["mac"]) else None


def _keep_private() -> str:
    """The result key, taken out of the environment the kernel will inherit, and this process made
    non-dumpable (its memory, environment and file descriptors closed to processes of the same user)."""
    key = os.environ.pop(RESULT_KEY, "")
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    return key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalkit.course.worker", description=__doc__)
    parser.add_argument("notebook", type=Path, help="the notebook the grader prepared")
    parser.add_argument("run_dir", type=Path, help="where result.json and executed.ipynb go")
    parser.add_argument("--cwd", type=Path, required=True, help="the kernel's working folder")
    parser.add_argument("--graded", type=int, required=True, help="how many of its cells are the submission's")
    args = parser.parse_args(argv)
    key = _keep_private()
    args.cwd.mkdir(parents=True, exist_ok=True)
    outcome = execute(args.notebook, args.run_dir, args.cwd, args.graded)
    executed = args.run_dir / "executed.ipynb"
    data = executed.read_bytes() if executed.is_file() else None
    outcome["executed_sha256"] = hashlib.sha256(data).hexdigest() if data is not None else None
    outcome["executed_bytes"] = len(data) if data is not None else None
    result = args.run_dir / "result.json"
    result.unlink(missing_ok=True)  # a file the kernel left there (or a link) is replaced, never written through
    result.write_text(json.dumps(seal(outcome, key) if key else outcome, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
