"""A submission's answers as data: what a graded notebook hands to the grader, and nothing else.

The graded kernel ends with :func:`dump`, which writes the values of the exercise's answer variables as tagged
JSON (numbers, texts, lists, tuples, dicts, pandas Series and DataFrames; anything else as its type name).
The grader reads that file as hostile input (:func:`load`: a size cap, a depth cap, plain types only, no
pickle), and the checks run on the decoded values in the teacher's reference kernel (:func:`check_all`),
never in the student's. A notebook that replaces :func:`dump` can only change its own answers.

What one answers file can cost the grader is bounded, so a hostile file costs only its own row:

- at most ``_MAX_ITEMS`` values per answer, counted as read *and* as built: a Series or table counts at least
  the cells of its index (levels x labels), columns and values, whichever is more;
- the tuple keys of one Series or table index (or its columns) all have one length: pandas pads ragged
  tuples to the longest, so ragged keys are refused, not padded;
- a tuple key has at most ``_MAX_KEY_WIDTH`` items: each item of a Series' or table's tuple keys is a level of
  its MultiIndex, an object of its own (a key of 170,000 items cost 45 s and 700 MB to build), so a wider key
  is refused, and each level is charged ``_LEVEL_COST`` values besides its labels;
- no hash flooding: among the keys of one dict, one Series or table index (and the labels of each level of
  a tuple index) at most ``_MAX_SHARED_HASH`` different keys may share one hash value. Python's ints hash to
  themselves modulo 2**61 - 1 and a tuple's hash can be steered by its items, so colliding keys are easy to
  make, and a dict or pandas index of n colliding keys takes n**2 comparisons to build;
- :func:`load` decodes only the names it is asked for (the chapter's answer names).

>>> decode(encode({("main", "content"): 0.25, "n": [1, 2.5, None], "flag": True}))
{('main', 'content'): 0.25, 'n': [1, 2.5, None], 'flag': True}
>>> decode(encode(float("nan"))) != decode(encode(float("nan")))
True
"""
from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["encode", "decode", "dump", "load", "check_all", "Unreadable", "Unsupported", "MAX_ANSWER_BYTES"]

MAX_ANSWER_BYTES = 8 * 1024 * 1024
_MAX_DEPTH = 12
_MAX_ITEMS = 200_000
_MAX_TEXT = 10_000
_MAX_SHARED_HASH = 8
_MAX_KEY_WIDTH = 16  # items of a tuple key: a chapter's keys are pairs and triples
_LEVEL_COST = 256    # values one level of a MultiIndex is charged as (it takes about as long to build)


class Unreadable(ValueError):
    """The answers file is missing, too large, or not the grader's format."""


class Unsupported:
    """An answer of a type the grader does not read (a function, a model): checks fail on it."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as tagged JSON-ready data."""
    import numpy as np

    if depth > _MAX_DEPTH:
        return {"unsupported": "too deeply nested"}
    if value is None:
        return {"none": 1}
    if value is Ellipsis:
        return {"ellipsis": 1}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, (int, np.integer)):
        return {"int": str(int(value))}
    if isinstance(value, (float, np.floating)):
        return {"float": repr(float(value))}
    if isinstance(value, str):
        return {"str": value[:_MAX_TEXT]}
    try:
        import pandas as pd

        if isinstance(value, pd.DataFrame):
            return {"frame": {"columns": [encode(c, depth + 1) for c in value.columns],
                              "index": [encode(i, depth + 1) for i in value.index],
                              "rows": [[encode(v, depth + 1) for v in row] for row in value.itertuples(index=False)]}}
        if isinstance(value, pd.Series):
            return {"series": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return encode(value.item(), depth)
        return {"list": [encode(item, depth + 1) for item in value.tolist()]}
    if isinstance(value, tuple):
        return {"tuple": [encode(item, depth + 1) for item in value]}
    if isinstance(value, (list, range)):
        return {"list": [encode(item, depth + 1) for item in value]}
    if isinstance(value, Mapping):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    return {"unsupported": type(value).__name__[:80]}


def decode(data: Any) -> Any:
    """The value :func:`encode` wrote; raises :class:`Unreadable` on anything else."""
    budget = [_MAX_ITEMS]
    return _decode(data, 0, budget)


def _decode(data: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > _MAX_DEPTH + 2 or budget[0] < 0:
        raise Unreadable("the answers are nested too deeply or hold too many values")
    if not isinstance(data, dict) or len(data) != 1:
        raise Unreadable("an answer is not in the grader's format")
    (tag, body), = data.items()
    if tag == "none":
        return None
    if tag == "ellipsis":
        return Ellipsis
    if tag == "bool" and isinstance(body, bool):
        return body
    if tag == "int" and isinstance(body, str) and len(body) <= 40:
        return int(body)
    if tag == "float" and isinstance(body, str) and len(body) <= 40:
        return float(body)
    if tag == "str" and isinstance(body, str):
        return body[:_MAX_TEXT]
    if tag == "unsupported" and isinstance(body, str):
        return Unsupported(body[:80])
    if tag in ("list", "tuple") and isinstance(body, list):
        items = [_decode(item, depth + 1, budget) for item in body]
        return items if tag == "list" else tuple(items)
    if tag in ("dict", "series") and isinstance(body, list):
        read = budget[0]
        pairs = []
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise Unreadable("an answer is not in the grader's format")
            pairs.append((_key(_decode(pair[0], depth + 1, budget)), _decode(pair[1], depth + 1, budget)))
        keys = [key for key, _ in pairs]
        if tag == "dict":
            _spread(keys)
            return dict(pairs)
        import pandas as pd

        cells = _index_cells(keys)
        _charge(budget, read, cells + len(pairs))
        return pd.Series([value for _, value in pairs], index=_index(keys), dtype=object)
    if tag == "frame" and isinstance(body, dict) and set(body) == {"columns", "index", "rows"}:
        import pandas as pd

        read = budget[0]
        columns = [_key(_decode(c, depth + 1, budget)) for c in _list(body["columns"])]
        index = [_key(_decode(i, depth + 1, budget)) for i in _list(body["index"])]
        rows = [[_decode(v, depth + 1, budget) for v in _list(row)] for row in _list(body["rows"])]
        if len(rows) != len(index) or any(len(row) != len(columns) for row in rows):
            raise Unreadable("a table answer's rows do not match its columns")
        _charge(budget, read, _index_cells(columns) + _index_cells(index) + len(rows) * len(columns))
        frame = pd.DataFrame(rows, columns=_index(columns), index=_index(index))
        return frame.infer_objects()
    raise Unreadable("an answer is not in the grader's format")


def _list(value: Any) -> list:
    if not isinstance(value, list):
        raise Unreadable("an answer is not in the grader's format")
    return value


def _index_cells(keys: list) -> int:
    """The cells of the pandas index built from decoded ``keys`` (labels x levels, and ``_LEVEL_COST`` for each
    level of a MultiIndex); raises :class:`Unreadable`
    when the keys are tuples of different lengths (pandas would pad every key to the longest one) or when
    too many different keys share a hash value."""
    _spread(keys)
    if not keys or not all(isinstance(key, tuple) for key in keys):
        return len(keys)
    width = len(keys[0])
    if any(len(key) != width for key in keys):
        raise Unreadable("an answer's tuple keys are not all of one length")
    for level in range(width):
        _spread([key[level] for key in keys])
    return len(keys) * max(width, 1) + width * _LEVEL_COST


def _index(keys: list) -> Any:
    """The pandas index of decoded ``keys`` (checked by :func:`_index_cells` first): a MultiIndex when every
    key is a tuple."""
    import pandas as pd

    if keys and all(isinstance(key, tuple) for key in keys):
        return pd.MultiIndex.from_tuples(keys)
    return pd.Index(keys, dtype=object)


def _charge(budget: list[int], read: int, cells: int) -> None:
    """Count what a Series or table builds against ``budget``: ``cells`` where that is more than the values
    read for it (``read``: the budget before they were read)."""
    extra = cells - (read - budget[0])
    if extra > 0:
        budget[0] -= extra
        if budget[0] < 0:
            raise Unreadable("the answers are nested too deeply or hold too many values")


def _spread(keys: list) -> None:
    """Refuse keys of which more than ``_MAX_SHARED_HASH`` different ones share a hash value (equal keys may
    repeat): a dict or a pandas index of n such keys costs n**2 comparisons. Linear: the hash values are
    grouped (ints, each its own hash), and each key is compared with at most ``_MAX_SHARED_HASH`` others."""
    groups: dict[int, list] = {}
    for key in keys:
        seen = groups.setdefault(hash(key), [])
        if any(key is other or key == other for other in seen):
            continue
        seen.append(key)
        if len(seen) > _MAX_SHARED_HASH:
            raise Unreadable(f"an answer holds more than {_MAX_SHARED_HASH} different keys with one hash value "
                             "(keys made to collide)")


def _key(value: Any) -> Any:
    """A decoded dict key: lists become tuples; what cannot be hashed, and a tuple of more than
    ``_MAX_KEY_WIDTH`` items, are refused.

    >>> _key([1, 2])
    (1, 2)
    >>> _key(tuple(range(17)))
    Traceback (most recent call last):
    ...
    evalkit.course.answers.Unreadable: an answer's key holds 17 items; keys of more than 16 are not read
    """
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, tuple) and len(value) > _MAX_KEY_WIDTH:
        raise Unreadable(f"an answer's key holds {len(value)} items; keys of more than {_MAX_KEY_WIDTH} are not read")
    try:
        hash(value)
    except TypeError:
        raise Unreadable("an answer's key cannot be a key") from None
    return value


def dump(namespace: Mapping[str, Any], names: Iterable[str], path: str) -> None:
    """Run in the graded kernel after the student's cells: the answer variables ``names`` that the notebook
    defines, encoded, into ``path``."""
    answers = {}
    for name in names:
        if name in namespace:
            try:
                answers[name] = encode(namespace[name])
            except Exception as error:  # an object whose iteration raises
                answers[name] = {"unsupported": type(error).__name__}
    Path(path).write_text(json.dumps(answers))


def load(path: Path, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The answers a graded kernel left in ``path`` (a regular file, not a link), decoded: only those named in
    ``names`` when given (others are not decoded), else all. Raises :class:`Unreadable` on a file that is
    not the grader's format or over its limits (see the module's docstring)."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise Unreadable("the notebook left no answers (it was stopped before its end)") from None
    except OSError:
        raise Unreadable("the answers file is not a plain file") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise Unreadable("the answers file is not a plain file")
        raw = os.read(handle, MAX_ANSWER_BYTES + 1)
    finally:
        os.close(handle)
    if len(raw) > MAX_ANSWER_BYTES:
        raise Unreadable(f"the answers are over {MAX_ANSWER_BYTES // 2**20} MB")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise Unreadable("the answers file is not the grader's format") from None
    if not isinstance(data, dict) or not all(isinstance(name, str) for name in data):
        raise Unreadable("the answers file is not the grader's format")
    wanted = None if names is None else set(names)
    return {name: decode(value) for name, value in data.items() if wanted is None or name in wanted}


class _Late(BaseException):
    """One submission's checks took longer than allowed (a BaseException: a check's ``except Exception``
    lets it through)."""


def check_all(namespace: Mapping[str, Any], chapter: str, answers_path: str, out_path: str, *,
              seconds: float | None = None) -> None:
    """Run in the teacher's reference kernel (the released chapter, run by the grader): every exercise of
    ``chapter``, public and hidden checks, on each submission's answers (``answers_path``: submission id ->
    encoded answers), with the reference's variables as the chapter's data. Writes submission id -> label ->
    outcome to ``out_path``; a submission whose checks take more than ``seconds`` gets ``{"problem": ...}``
    and the next is checked."""
    from evalkit.course.checks import chapter_exercises

    exercises = chapter_exercises(chapter)
    names = {name for item in exercises for name in item.answers}
    env = {key: value for key, value in namespace.items() if key not in names}
    submitted = json.loads(Path(answers_path).read_text())
    results: dict[str, dict] = {}
    for key, encoded in submitted.items():
        try:  # whatever one submission's answers are, the next one is checked
            with _deadline(seconds):
                if not isinstance(encoded, dict):
                    raise Unreadable("the answers are not the grader's format")
                answers = {name: decode(value) for name, value in encoded.items() if name in names}
                results[key] = _check_one(exercises, answers, env)
        except _Late:
            results[key] = {"problem": f"the checks of these answers did not finish within {seconds:g} s"}
        except Unreadable as reason:
            results[key] = {"problem": str(reason)}
        except Exception as error:  # MemoryError included
            results[key] = {"problem": f"the key could not check these answers ({type(error).__name__})"}
    Path(out_path).write_text(json.dumps(results))


def _check_one(exercises: list, answers: dict[str, Any], env: dict[str, Any]) -> dict[str, dict]:
    from evalkit.course.core import run_exercise

    outcome = {}
    for item in exercises:
        given = {name: answers[name] for name in item.answers if name in answers}
        feedback = run_exercise(item, given, env, hidden=True)
        public = [r for r in feedback.results if not r.hidden]
        hidden = [r for r in feedback.results if r.hidden]
        first = feedback.failures[0] if feedback.failures else None
        outcome[item.label] = {"passed": feedback.passed, "public": _verdict(public, len(item.public)),
                               "hidden": _verdict(hidden, len(item.hidden)), "message": first.message if first else ""}
    return outcome


@contextmanager
def _deadline(seconds: float | None):
    """Raise :class:`_Late` in the block after ``seconds`` (SIGALRM; only in the main thread, else no limit)."""
    import signal
    import threading

    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def late(_signum, _frame):
        raise _Late()

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _verdict(results: list, expected: int) -> str:
    if not results:
        return "not run"
    if any(not r.passed for r in results):
        return "failed"
    return "passed" if len(results) == expected else "not run"

