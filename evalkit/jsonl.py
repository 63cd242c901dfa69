"""Reading JSON Lines with errors that say where: one helper for every loader of the kit."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterator

__all__ = ["json_lines"]


def json_lines(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for every non-blank line of a JSON Lines file (``.gz`` read through gzip);
    a line that is not JSON raises ``error`` naming the file and line.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(path, "w").write('{"a": 1}\\n\\n[2]\\n')
    >>> list(json_lines(path))
    [(1, {'a': 1}), (3, [2])]
    """
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as failure:
                raise error(f"{path}, line {number}: not JSON ({failure.msg})") from failure
