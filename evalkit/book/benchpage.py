"""The book's Performance page: run every script in ``benchmarks/``, collect the tables each writes, and
render them with a description of the machine they ran on.

A benchmark script takes ``--json PATH`` and writes its measurement there with :func:`write_measurement`:
a title, rows (one per way of doing the work — the naive way first — with seconds and a rate) and the
ratios against the naive way measured in the same run. ``evalkit bench`` (``make bench``) runs them all
and rewrites ``book/performance.md``.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

__all__ = ["write_measurement", "machine_description", "run_benchmarks", "render_page", "BENCHMARK_DIR"]

BENCHMARK_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
PAGE = Path(__file__).resolve().parents[2] / "book" / "performance.md"


def write_measurement(path: str | Path | None, *, title: str, workload: str, rows: Sequence[dict[str, Any]],
                      ratios: dict[str, float], notes: Sequence[str] = ()) -> None:
    """Write one benchmark's result as JSON (no-op for ``None``): ``rows`` are dicts with at least ``way``
    and ``seconds``; ``ratios`` name what is compared (e.g. ``"batched vs one at a time"``)."""
    if path is None:
        return
    Path(path).write_text(json.dumps({"title": title, "workload": workload, "rows": list(rows),
                                      "ratios": ratios, "notes": list(notes)}, indent=1))


def machine_description() -> dict[str, Any]:
    """CPU model, cores, memory, OS, Python and the versions of the libraries that do the work."""
    from importlib.metadata import PackageNotFoundError, version

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = None
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory = round(pages * size / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    libraries = {}
    for name in ("torch", "transformers", "peft", "llama_cpp_python", "sentence-transformers", "rouge-score",
                 "bert-score"):
        try:
            libraries[name] = version(name)
        except PackageNotFoundError:
            pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": memory, "os": platform.platform(),
            "python": platform.python_version(), "libraries": libraries}


def run_benchmarks(folder: str | Path = BENCHMARK_DIR, *, only: Sequence[str] = (),
                   timeout_s: float = 3600) -> list[dict[str, Any]]:
    """Run each ``*.py`` in ``folder`` (alone, one after the other — they measure time) with ``--json``;
    a script that fails, or runs past ``timeout_s``, is reported with its error output instead of a table.

    A prefix in ``only`` that names no benchmark, or a folder without any, raises ``ValueError`` naming the
    known benchmarks before anything runs (so no page is rewritten for a typo)."""
    scripts = [script for script in sorted(Path(folder).glob("*.py")) if not script.name.startswith("_")]
    known = ", ".join(script.stem for script in scripts) or "none"
    if not scripts:
        raise ValueError(f"{folder}: no benchmark scripts (*.py) to run")
    wanted = [prefix.strip() for prefix in only if prefix.strip()]
    unmatched = [prefix for prefix in wanted if not any(script.stem.startswith(prefix) for script in scripts)]
    if unmatched or (only and not wanted):
        raise ValueError(f"no benchmark matches {', '.join(map(repr, unmatched or list(only)))}; known benchmarks: "
                         f"{known}")
    results = []
    for script in scripts:
        if wanted and not any(script.stem.startswith(o) for o in wanted):
            continue
        out = Path(folder).resolve() / f".{script.stem}.json"
        out.unlink(missing_ok=True)
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, str(script), "--json", str(out)], capture_output=True, text=True,
                                  timeout=timeout_s)
            error = None if done.returncode == 0 and out.is_file() else (done.stderr.strip() or done.stdout.strip())
        except subprocess.TimeoutExpired as expired:  # one slow script must not lose the others' results
            tail = expired.stderr or b""
            tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
            error = f"stopped after {timeout_s:.0f} s (the time limit)\n{tail.strip()[-1500:]}"
        entry: dict[str, Any] = {"script": script.name, "wall_s": time.perf_counter() - started}
        if error is None:
            entry.update(json.loads(out.read_text()))
        else:
            entry["error"] = error[-2000:]
        out.unlink(missing_ok=True)
        results.append(entry)
    return results


def _table(rows: Sequence[dict[str, Any]]) -> list[str]:
    """A markdown table of the rows, columns in first-seen order.

    >>> _table([{"way": "naive", "seconds": 2.0}, {"way": "kit", "seconds": 0.5}])
    ['| way | seconds |', '|---|---|', '| naive | 2.000 |', '| kit | 0.500 |']
    """
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
        return "" if value is None else str(value).replace("|", "\\|")

    return (["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            + ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows])


def _section(result: dict[str, Any], when: datetime, cpu: str) -> list[str]:
    lines = [f"## {result.get('title', result['script'])}", ""]
    if "error" in result:
        return lines + [f"`benchmarks/{result['script']}` failed on this run:", "", "```text", result["error"], "```",
                        ""]
    lines += [f"`benchmarks/{result['script']}` — {result['workload']} ({result['wall_s']:.0f} s in all; measured "
              f"{when.strftime('%Y-%m-%d %H:%M UTC')} on {cpu}).", ""]
    lines += _table(result["rows"]) + [""]
    lines += ["| compared | ratio |", "|---|---|"]
    lines += [f"| {name} | {value:.2f}x |" if value < 100 else f"| {name} | {value:,.0f}x |"
              for name, value in result["ratios"].items()] + [""]
    return lines + [f"- {note}" for note in result.get("notes", [])] + ([""] if result.get("notes") else [])


def _sections(page: str) -> list[tuple[str, str]]:
    """(heading, text) of each ``## `` section of an existing page, in order."""
    parts, heading, body = [], None, []
    for line in page.splitlines():
        if line.startswith("## "):
            if heading is not None:
                parts.append((heading, "\n".join(body).rstrip() + "\n"))
            heading, body = line, [line]
        elif heading is not None:
            body.append(line)
    if heading is not None:
        parts.append((heading, "\n".join(body).rstrip() + "\n"))
    return parts


def render_page(results: Sequence[dict[str, Any]], machine: dict[str, Any], *, when: datetime | None = None,
                keep: str | None = None) -> str:
    """The Performance page (MyST markdown) for the book. With ``keep`` (the page as it was), sections of
    scripts not run this time are kept as they were, each with its own date; re-run ones replace theirs.

    >>> machine = {"cpu": "cpu", "cores": 2, "memory_gib": 8, "os": "os", "python": "3", "libraries": {}}
    >>> one = {"script": "a.py", "title": "A", "workload": "w", "wall_s": 1.0, "rows": [{"way": "x"}],
    ...        "ratios": {}}
    >>> old = render_page([one, {**one, "script": "b.py", "title": "B"}], machine)
    >>> new = render_page([{**one, "workload": "again"}], machine, keep=old)
    >>> [line.split(" (")[0] for line in new.splitlines() if line.startswith(("## ", "`benchmarks"))]
    ['## A', '`benchmarks/a.py` — again', '## B', '`benchmarks/b.py` — w']
    """
    when = when or datetime.now(timezone.utc)
    libraries = ", ".join(f"{k} {v}" for k, v in machine["libraries"].items())
    lines = ["# Performance", "",
             "Every number on this page was measured by `make bench`, which runs each script in `benchmarks/` "
             "alone on one machine and writes this page. Each script times the kit's way of doing a piece of "
             "work against the naive way on the same data and model, in the same run; the ratios compare the "
             "two. Rerun `make bench` on your machine to see yours.", "",
             f"**Machine of the latest run:** {machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} "
             f"GiB memory; {machine['os']}; Python {machine['python']}; {libraries}. **Last measured:** "
             f"{when.strftime('%Y-%m-%d %H:%M UTC')} (each section says when and on which CPU it was measured: "
             "compare figures within a section, not across sections measured on different machines).", ""]
    fresh = {f"## {r.get('title', r['script'])}": _section(r, when, machine["cpu"]) for r in results}
    if keep:
        for heading, text in _sections(keep):
            lines += fresh.pop(heading, None) or text.splitlines() + [""]
    for section in fresh.values():
        lines += section
    return "\n".join(lines).rstrip() + "\n"


def write_page(results: Sequence[dict[str, Any]], path: str | Path = PAGE, *, merge: bool = False) -> Path:
    """Write the page; ``merge`` keeps the sections of scripts that were not run (see :func:`render_page`)."""
    path = Path(path)
    keep = path.read_text() if merge and path.is_file() else None
    path.write_text(render_page(results, machine_description(), keep=keep))
    return path
