"""What a card file may hold, field by field: a judge's name, its spec record, notes and reasons, examples, curves,
numbers and item scores, each read and checked so that a hand-edited or hostile ``card.json`` is refused with the
field named, never shown as it came."""
from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any

from evalkit.judgecard._names import MAX_NAME_CHARS, shortened
from evalkit.judgecard.card_records import SetScores, _KEPT_EXAMPLES


__all__ = ["check_judge_name", "check_spec_record", "check_set_scores", "MAX_NOTE_CHARS", "MAX_NOTES_CHARS",
           "MAX_SPEC_CHARS", "HALVES"]


def check_judge_name(name: str, where: str) -> str:
    """``name`` when a card may hold it as its judge's name: a text with a character other than white space (a
    board links and ranks a judge by its name: an empty one is a line no reader can tell apart), at most
    :data:`~._names.MAX_NAME_CHARS` characters (a board repeats the name on every line that names the judge); else
    ``ValueError`` naming ``where``.

    >>> check_judge_name("x" * 201, "card.json, field 'judge'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'judge': the judge's name is 201 characters long ('xxxxxxxxxxxxxx…xxxxxxxxxxxxx'); a judge's name is at most 200 characters (MAX_NAME_CHARS)
    >>> check_judge_name("  ", "card.json, field 'judge'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'judge': the judge's name '  ' is empty or white space only; name the judge
    """
    if not isinstance(name, str):
        raise ValueError(f"{where}: {shortened(repr(name), 60)} is not a text (a judge's name)")
    if not name.strip():
        raise ValueError(f"{where}: the judge's name {name!r} is empty or white space only; name the judge")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"{where}: the judge's name is {len(name):,} characters long ({shortened(repr(name), 30)}); "
                         f"a judge's name is at most {MAX_NAME_CHARS} characters (MAX_NAME_CHARS)")
    return name


def _read_skipped(value: Any, source: str) -> tuple[tuple[str, str], ...]:
    """The ``skipped`` field of a card's record: a list of ``[set, reason]`` pairs of texts (a set the card did not
    score and why); else ``ValueError`` naming ``source``, the field and the entry: an entry of another shape
    (a text, two numbers) would stop the board where it reads the sets a card did not score.

    >>> _read_skipped([["fed", "too slow"]], "card.json")
    (('fed', 'too slow'),)
    >>> _read_skipped(["abc"], "card.json")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'skipped[0]': 'abc' is not a [set, reason] pair of texts
    """
    if not isinstance(value, list):
        raise ValueError(f"{source}, field 'skipped': {shortened(repr(value), 60)} is not a list of [set, reason] "
                         "pairs of texts")
    for index, entry in enumerate(value):
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(text, str) for text in entry)):
            raise ValueError(f"{source}, field 'skipped[{index}]': {shortened(repr(entry), 60)} is not a "
                             "[set, reason] pair of texts")
        _short_text(entry[0], MAX_NAME_CHARS, f"{source}, field 'skipped[{index}][0]'")
        _short_text(entry[1], MAX_NOTE_CHARS, f"{source}, field 'skipped[{index}][1]'")
    return tuple((name, why) for name, why in value)


MAX_NOTE_CHARS = 4000
"""The longest note (or reason) a card's record may hold: the kit's own are one or two sentences."""


def _short_text(text: str, limit: int, where: str) -> str:
    """``text`` when it is at most ``limit`` characters; else ``ValueError`` naming ``where`` and its length."""
    if len(text) > limit:
        raise ValueError(f"{where}: {len(text):,} characters, more than {limit:,}: "
                         f"{shortened(repr(text), 60)}")
    return text


def _read_notes(value: Any, source: str) -> tuple[str, ...]:
    """The ``notes`` field of a card's record: a list of texts, each at most :data:`MAX_NOTE_CHARS` long and at most
    :data:`MAX_NOTES_CHARS` in all; else ``ValueError`` naming ``source`` and the field (a bare text would be read as
    one note per character).

    >>> _read_notes(["fitted on 20 dev labels"], "card.json")
    ('fitted on 20 dev labels',)
    >>> _read_notes("one long note", "card.json")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'notes': 'one long note' is not a list of texts
    >>> _read_notes(["n" * 4000] * 20, "card.json")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'notes': 20 notes of 80,000 characters in all, more than 65,536 (MAX_NOTES_CHARS)
    """
    if not isinstance(value, list):
        raise ValueError(f"{source}, field 'notes': {shortened(repr(value), 60)} is not a list of texts")
    for index, note in enumerate(value):
        if not isinstance(note, str):
            raise ValueError(f"{source}, field 'notes[{index}]': {shortened(repr(note), 60)} is not a text")
        _short_text(note, MAX_NOTE_CHARS, f"{source}, field 'notes[{index}]'")
    total = sum(map(len, value))
    if total > MAX_NOTES_CHARS:
        raise ValueError(f"{source}, field 'notes': {len(value):,} notes of {total:,} characters in all, more than "
                         f"{MAX_NOTES_CHARS:,} (MAX_NOTES_CHARS)")
    return tuple(value)


MAX_NOTES_CHARS = 64 * 1024
"""The most characters a card's notes hold in all: every note is shown on the card's page of a board, so a card of
thousands of long notes would make a page of megabytes and a board that takes minutes."""


HALVES = ("test", "dev", "all")
"""The halves a card reports: what :func:`judge_card` scores (``half``) and what a board ranks (``--half``)."""

MAX_SPEC_CHARS = 64 * 1024
"""The longest ``spec`` a card's record may hold, in characters of its JSON text: the kit's own are a few hundred
characters and a prompt template of pages fits, while a board copies the spec onto the card's page, so one of
megabytes would make a page of megabytes."""


def _read_half(value: Any, source: str) -> str:
    """The ``half`` field of a card's record: one of :data:`HALVES`; else ``ValueError`` naming ``source`` and the
    field, the value shortened (a board names a card's half in its refusals and on its pages).

    >>> _read_half("dev", "card.json")
    'dev'
    >>> _read_half({"a": 1}, "card.json")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'half': {'a': 1} is not a half a card reports (test, dev or all)
    """
    if not isinstance(value, str) or value not in HALVES:
        raise ValueError(f"{source}, field 'half': {shortened(repr(value), 60)} is not a half a card reports "
                         f"({', '.join(HALVES[:-1])} or {HALVES[-1]})")
    return value


def check_spec_record(value: Any, where: str) -> dict[str, Any]:
    """``value`` as a card's ``spec`` (the judge as it was given, with its settings): a JSON object whose JSON text
    is at most :data:`MAX_SPEC_CHARS` characters; else ``ValueError`` naming ``where``.

    >>> check_spec_record({"kind": "metric", "name": "x" * MAX_SPEC_CHARS}, "card.json, field 'spec'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'spec': its JSON is 65,566 characters long, more than 65,536 (MAX_SPEC_CHARS): {"kind": "metric", "name": "xxxxxxxxxxxx…xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}
    >>> check_spec_record(["kind", "metric"], "card.json, field 'spec'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'spec': ['kind', 'metric'] is not a JSON object
    """
    if not isinstance(value, dict):
        raise ValueError(f"{where}: {shortened(repr(value), 60)} is not a JSON object")
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: not JSON ({error})") from None
    if len(text) > MAX_SPEC_CHARS:
        raise ValueError(f"{where}: its JSON is {len(text):,} characters long, more than {MAX_SPEC_CHARS:,} "
                         f"(MAX_SPEC_CHARS): {shortened(text, 80)}")
    return dict(value)


_NAMED_TEXTS = ("set", "label", "budget")
"""The text fields of a card's rows that name a set, a label or a budget: at most MAX_NAME_CHARS long."""


def _checked_text(value: Any, field_name: str, where: str) -> str:
    """``value`` when it is a text of a row's field ``field_name``: a name (:data:`_NAMED_TEXTS`) at most
    :data:`~._names.MAX_NAME_CHARS` characters, any other text at most :data:`MAX_NOTE_CHARS`; else ``ValueError``
    naming ``where`` and the field."""
    if not isinstance(value, str):
        raise ValueError(f"{where}: {field_name!r} is {shortened(repr(value), 60)}, not a text")
    return _short_text(value, MAX_NAME_CHARS if field_name in _NAMED_TEXTS else MAX_NOTE_CHARS,
                       f"{where}: {field_name!r}")


def _refuse_non_texts(row: Any, where: str) -> None:
    """A row read back from a record holds a text in every field its class types as one (a set's name, a label, a
    note): a list there (``"set": ["fed"]``) would stop the board where it groups a card's sets or looks a label
    up (``unhashable type``), and a text of megabytes would be copied onto its pages."""
    for spec in fields(row):
        if spec.type == "str":
            _checked_text(getattr(row, spec.name), spec.name, where)


def _read_examples(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    """The ``examples`` of a cost row of a card's record: a list of at most ``_KEPT_EXAMPLES`` ``[item, raw text]``
    pairs of texts, an item at most :data:`~._names.MAX_NAME_CHARS` characters and a text at most
    :data:`MAX_NOTE_CHARS`, as the kit writes them; else ``ValueError`` naming ``where`` and the entry.

    >>> _read_examples([["fed:3", "no digit"]], "card.json, field 'costs[0]'")
    (('fed:3', 'no digit'),)
    >>> _read_examples(["ab"], "card.json, field 'costs[0]'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'costs[0]': 'examples[0]' is 'ab', not an [item, text] pair of texts
    >>> _read_examples([["fed:3", "a." * 3000]], "card.json, field 'costs[0]'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'costs[0]': 'examples[0][1]': 6,000 characters, more than 4,000: ...
    """
    if not isinstance(value, list):
        raise ValueError(f"{where}: 'examples' is {shortened(repr(value), 60)}, not a list of [item, text] pairs")
    if len(value) > _KEPT_EXAMPLES:
        raise ValueError(f"{where}: 'examples' holds {len(value):,} pairs, more than the {_KEPT_EXAMPLES} a card keeps")
    for index, entry in enumerate(value):
        if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(text, str) for text in entry)):
            raise ValueError(f"{where}: 'examples[{index}]' is {shortened(repr(entry), 60)}, not an [item, text] "
                             "pair of texts")
        _short_text(entry[0], MAX_NAME_CHARS, f"{where}: 'examples[{index}][0]'")
        _short_text(entry[1], MAX_NOTE_CHARS, f"{where}: 'examples[{index}][1]'")
    return tuple(map(tuple, value))


def _read_curve(row: Any, where: str) -> dict[str, Any]:
    """One row of a card's label-budget curve: a JSON object whose values are texts (a set, a label or a budget
    at most :data:`~._names.MAX_NAME_CHARS` characters), finite numbers or null; else ``ValueError`` naming
    ``where`` and the field.

    >>> _read_curve({"set": "fed", "budget": "all", "pearson": 0.4, "gain": None}, "card.json, field 'curves[0]'")
    {'set': 'fed', 'budget': 'all', 'pearson': 0.4, 'gain': None}
    >>> _read_curve({"set": ["fed"]}, "card.json, field 'curves[0]'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'curves[0]': 'set' is ['fed'], not a text
    """
    if not isinstance(row, dict):
        raise ValueError(f"{where}: {shortened(repr(row), 60)} is not a JSON object")
    for name, value in row.items():
        if isinstance(value, str) or name in _NAMED_TEXTS:
            _checked_text(value, name, where)
        elif isinstance(value, bool) or not (value is None or isinstance(value, (int, float))):
            raise ValueError(f"{where}: {name!r} is {shortened(repr(value), 60)}, not a text, a number or null")
        else:
            _finite_number(value, f"{where}: {name!r}", allow_nan=True)
    return {str(name): value for name, value in row.items()}


def _shown_number(value: Any) -> str:
    """A number as a refusal names it: a huge integer by its digit count, not its 400 digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 20:
        return f"an integer of {len(str(abs(value)))} digits"
    return repr(value)


def _finite_number(value: Any, where: str, *, allow_nan: bool = False) -> float | int | None:
    """``value`` when it is a JSON number a card can hold: finite and within the range of a float (an integer
    written ``1`` and 400 zeros, or ``1e400``, which JSON reads as infinity, is neither); else ``ValueError``
    naming ``where``. None or NaN (no value) passes where ``allow_nan``; a text or a truth value never does.

    >>> _finite_number(10 ** 400, "card.json, field 'bootstrap'")
    Traceback (most recent call last):
    ...
    ValueError: card.json, field 'bootstrap' is an integer of 401 digits, not a finite number a card can hold
    """
    if allow_nan and (value is None or (isinstance(value, float) and value != value)):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where} is {shortened(repr(value), 60)}, not a number")
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not finite:
        raise ValueError(f"{where} is {_shown_number(value)}, not a finite number a card can hold")
    return value


def _whole_number(value: Any, where: str) -> int:
    """``value`` as the whole number a card's ``bootstrap`` or ``seed`` is: an integer, or a float with no fraction
    such as ``1000.0``, of 0 or more; ``ValueError`` naming ``where`` for anything else (a text such as ``"0"``, a
    boolean, ``-5``, ``2.5``, ``1e400``, an integer of 400 digits).

    >>> _whole_number(1000.0, "card.json, field 'bootstrap'")
    1000
    >>> _whole_number("0", "card.json, field 'seed'")
    Traceback (most recent call last):
    ValueError: card.json, field 'seed' is '0', not a whole number of 0 or more
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where} is {shortened(repr(value), 60)}, not a whole number of 0 or more")
    _finite_number(value, where)
    if (isinstance(value, float) and not value.is_integer()) or value < 0:
        raise ValueError(f"{where} is {value!r}, not a whole number of 0 or more")
    return int(value)


def _refuse_non_numbers(row: Any, where: str) -> None:
    """A row read back from a record holds a finite number (or NaN) in every field its class types as one (a
    count, a correlation, seconds, money): a text such as ``"0.9"`` there would reach the averages of the card and
    the board, and a number beyond a float's range (``1e400`` read as infinity, an integer of 400 digits) would
    stop the board where it is compared or averaged."""
    for spec in fields(row):
        value = getattr(row, spec.name)
        if spec.type in ("float", "int", "float | None", "int | None"):
            _finite_number(value, f"{where}: {spec.name!r}", allow_nan=True)


def _read_set_scores(entry: dict[str, Any], where: str) -> SetScores:
    """One ``scores`` entry of a card's record, checked (see :func:`check_set_scores`); an entry that is no map of
    ``set``, ``item_ids`` and ``scores`` (lists) is refused naming the entry and its field.

    >>> _read_set_scores({"set": "fed"}, "card.json, field 'scores[0]'")
    Traceback (most recent call last):
    ValueError: card.json, field 'scores[0]': no field 'item_ids' (each entry holds set, item_ids and scores)
    """
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: not a map of set, item_ids and scores")
    for field in ("set", "item_ids", "scores"):
        if field not in entry:
            raise ValueError(f"{where}: no field '{field}' (each entry holds set, item_ids and scores)")
        if field != "set" and not isinstance(entry[field], list):
            raise ValueError(f"{where}.{field}: a list, not {type(entry[field]).__name__}")
    values = []
    for index, value in enumerate(entry["scores"]):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ValueError(f"{where}.scores[{index}]: {value!r} is not a number (null: not scored)")
        try:
            values.append(float("nan") if value is None else float(value))
        except OverflowError:  # an integer of hundreds of digits
            raise ValueError(f"{where}.scores[{index}]: {_shown_number(value)} is not a finite score") from None
    name = _checked_text(entry["set"], "set", where)
    scores = SetScores(name, tuple(map(str, entry["item_ids"])), tuple(values))
    check_set_scores(scores, where)
    return scores


MAX_SCORE_SIZE = 1e100
"""The largest score in size a card's set may hold, and the inverse of the smallest its largest may be."""


def check_set_scores(entry: SetScores, where: str) -> None:
    """Raise ``ValueError`` naming ``where`` and the field unless ``entry`` holds one score per item, each item
    once, every score finite or NaN (not scored), the set's scores of a size the board's arithmetic keeps
    (:data:`MAX_SCORE_SIZE`): a repeated id would make a set's scores ambiguous, and an infinite score (``1e309`` in
    JSON) has no correlation.

    >>> check_set_scores(SetScores("s", ("a", "b", "a"), (1.0, 2.0, 3.0)), "card.json")
    Traceback (most recent call last):
    ...
    ValueError: card.json.item_ids: item 'a' is listed 2 times (each item once)
    """
    if len(entry.item_ids) != len(entry.scores):
        raise ValueError(f"{where}: {len(entry.item_ids)} item_ids but {len(entry.scores)} scores")
    seen: dict[str, int] = {}
    for item in entry.item_ids:
        seen[item] = seen.get(item, 0) + 1
    repeated = [item for item, count in seen.items() if count > 1]
    if repeated:
        raise ValueError(f"{where}.item_ids: item {repeated[0]!r} is listed {seen[repeated[0]]} times (each item once)")
    for index, value in enumerate(entry.scores):
        if math.isinf(value):
            raise ValueError(f"{where}.scores[{index}] (item {entry.item_ids[index]!r}): {value!r} is not a finite "
                             "score")
    # Correlations do not change with a judge's scale, but their arithmetic does: products of scores near 1e306
    # overflow, and scores near 1e-320 lose their digits. A set's scores are read at sizes between these.
    largest = max((abs(value) for value in entry.scores if value == value), default=0.0)
    if largest > MAX_SCORE_SIZE or 0 < largest < 1 / MAX_SCORE_SIZE:
        raise ValueError(f"{where}.scores: the largest score is {largest!r} in size; a board computes with scores up "
                         f"to {MAX_SCORE_SIZE:g} in size and the largest at least {1 / MAX_SCORE_SIZE:g}: rescale the "
                         "judge's scores (a correlation does not change)")
