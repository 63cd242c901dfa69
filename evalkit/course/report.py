"""The grading tables: ``grades.csv`` (one row per student, submission and exercise), ``totals.csv`` (one
per student and chapter) and ``grades.html`` (both, self-contained: inline style, no script, every text
escaped)."""
from __future__ import annotations

import csv
import html
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

__all__ = ["write_tables", "totals"]


def totals(rows: Sequence) -> list[dict]:
    """Score and points per (student, chapter); submissions that are no chapter's count under chapter ''."""
    summed: dict[tuple[str, str], dict] = {}
    for row in rows:
        key = (row.student, row.chapter)
        entry = summed.setdefault(key, {"student": row.student, "chapter": row.chapter, "score": 0.0,
                                        "points": 0.0, "exercises passed": 0, "problems": 0})
        entry["score"] += row.score
        entry["points"] += row.points
        entry["exercises passed"] += int(bool(row.points) and row.score == row.points)
        entry["problems"] += int(row.status not in ("graded",))
    return list(summed.values())


def write_tables(rows: Sequence, out: Path) -> tuple[Path, Path, Path]:
    from .grade import COLUMNS

    out.mkdir(parents=True, exist_ok=True)
    grades, total_path, page = out / "grades.csv", out / "totals.csv", out / "grades.html"
    with grades.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(asdict(row) for row in rows)
    summary = totals(rows)
    with total_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["student", "chapter", "score", "points", "exercises passed",
                                                    "problems"])
        writer.writeheader()
        writer.writerows(summary)
    page.write_text(_page(rows, summary), encoding="utf-8")
    return grades, total_path, page


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #1f2328; }
table { border-collapse: collapse; margin-bottom: 2rem; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.full { background: #dafbe1; } td.zero { background: #ffebe9; } td.problem { background: #fff8c5; }
td.reason { max-width: 48rem; font-size: 0.9em; }
"""


def _page(rows: Sequence, summary: list[dict]) -> str:
    escape = html.escape
    exercises = list(dict.fromkeys(row.exercise for row in rows if row.exercise))
    by_student: dict[str, dict[str, object]] = defaultdict(dict)
    for row in rows:
        if row.exercise:
            by_student[row.student][row.exercise] = row
    head = "".join(f"<th>{escape(label)}</th>" for label in exercises)
    matrix = []
    for student in dict.fromkeys(row.student for row in rows):
        cells = []
        for label in exercises:
            row = by_student[student].get(label)
            if row is None:
                cells.append("<td></td>")
                continue
            kind = "full" if row.score == row.points and row.points else "zero"
            if row.status not in ("graded", "cell error"):
                kind = "problem"
            cells.append(f'<td class="{kind}" title="{escape(row.reason)}">{row.score:g} / {row.points:g}</td>')
        total = [t for t in summary if t["student"] == student]
        score, points = sum(t["score"] for t in total), sum(t["points"] for t in total)
        matrix.append(f"<tr><th>{escape(student)}</th>{''.join(cells)}<td>{score:g} / {points:g}</td></tr>")
    detail = "".join(
        f"<tr><td>{escape(row.student)}</td><td>{escape(row.submission)}</td><td>{escape(row.exercise)}</td>"
        f"<td>{row.score:g} / {row.points:g}</td><td>{escape(row.status)}</td><td>{escape(row.public)}</td>"
        f"<td>{escape(row.hidden)}</td><td class=\"reason\">{escape(row.reason)}</td></tr>" for row in rows)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Grades</title>"
            f"<style>{_STYLE}</style></head><body>\n<h1>Grades</h1>\n"
            f"<p>{len(set(r.student for r in rows))} students, {len(rows)} rows. A cell's tooltip holds its reason; "
            f"every row is listed below.</p>\n"
            f"<table><tr><th>student</th>{head}<th>total</th></tr>{''.join(matrix)}</table>\n"
            f"<h2>Every exercise</h2>\n<table><tr><th>student</th><th>submission</th><th>exercise</th>"
            f"<th>score</th><th>status</th><th>public</th><th>hidden</th><th>reason</th></tr>{detail}</table>\n"
            "</body></html>\n")
