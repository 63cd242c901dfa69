"""Key results a notebook records beside its executed copy, so tests and batch runs can read them."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["record_results", "read_results", "json_ready"]


def json_ready(value: Any) -> Any:
    """JSON-ready copy: numpy scalars and arrays to Python, NaN to None, mappings and sequences walked.

    >>> json_ready({"a": np.int64(3), "b": [np.float32(0.5), float("nan")], "c": (1, 2)})
    {'a': 3, 'b': [0.5, None], 'c': [1, 2]}
    """
    if isinstance(value, dict):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def record_results(path: str | Path | None, **values: Any) -> dict[str, Any]:
    """Merge ``values`` into the JSON file at ``path`` (no-op for ``None``) and return everything recorded.

    Writes go through a temporary file, so a crash never leaves half a JSON behind.
    """
    if path is None:
        return json_ready(values)
    path = Path(path)
    current = read_results(path) if path.exists() else {}
    current.update(json_ready(values))
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_suffix(path.suffix + ".tmp")
    staging.write_text(json.dumps(current, indent=2, sort_keys=True))
    staging.replace(path)
    return current


def read_results(path: str | Path) -> dict[str, Any]:
    """The results a notebook recorded."""
    return json.loads(Path(path).read_text())
