"""Reading the card files a leaderboard is given: which paths it opens (plain files only, never through a link,
never more than :data:`MAX_CARD_BYTES`), how each is read into a card, and which cards are one judge's result
twice (counted once, named) or two judges under one name (named apart by their files)."""
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

__all__ = ["LINK", "NOT_A_FILE", "MAX_CARD_BYTES", "card_files", "read_card", "counted_once", "copy_note",
           "named_apart", "shared_set_cautions", "MIN_COPY_ITEMS", "NEAR_COPY"]


LINK = "a symbolic link"
"""Why the leaderboard skips a linked card.json or folder: it reads only the files and folders it is given."""

NOT_A_FILE = "not a regular file (a named pipe, a device or a socket): never opened"
"""Why the leaderboard skips a card.json that is no plain file: reading a named pipe waits for a writer forever."""

NO_CARD = "no card.json in this folder or below it (a card of another name is read when it is given as a file)"
"""Why the leaderboard names a folder it was given and read nothing from."""

MAX_CARD_BYTES = 64 * 2**20
"""The largest card file the leaderboard reads (64 MiB): a card of every kit set, item by item, is a few MB."""


def _plain_file(path: Path) -> bool:
    """Whether ``path`` itself (a link not followed) is a regular file; False when it cannot be looked at."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _card_bytes(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the card file ``path``, read as :func:`evalkit.course.intake.read_capped` reads a hand-in:
    opened without following a link and without waiting (``O_NONBLOCK``: a named pipe put there after the folder
    was searched does not hang the board), checked to be a regular file on the opened descriptor, and at most
    ``limit`` bytes (:data:`MAX_CARD_BYTES` unless told); else ``ValueError`` naming the file and why."""
    limit = MAX_CARD_BYTES if limit is None else limit
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        why = LINK if path.is_symlink() else error.strerror or error
        raise ValueError(f"{path}: cannot be read ({why})") from None
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: {NOT_A_FILE}")
        too_large = (f"{path}: larger than {limit:,} bytes (MAX_CARD_BYTES), not read: no judge card is that "
                     "large")
        if info.st_size > limit:
            raise ValueError(too_large)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(handle, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise ValueError(too_large)
        return b"".join(chunks)
    except OSError as error:
        raise ValueError(f"{path}: cannot be read ({error.strerror or error})") from None
    finally:
        os.close(handle)


def card_files(entries: list[str]) -> tuple[list[Path], list[tuple[str, str]]]:
    """The card.json files of ``--cards`` entries (a file as given, a folder searched), each once, and what was
    skipped as (path, why): a symbolic link, to a file or a folder, whether given or met in a folder, is never
    followed (so a card.json linked to another file, or a folder linked elsewhere, is named, not read), and a
    card.json that is not a regular file (a named pipe, a device) is named, never opened (:data:`NOT_A_FILE`)."""
    files: list[Path] = []
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()

    def take(path: Path) -> None:
        key = os.path.normcase(os.path.abspath(path))
        if key not in seen:
            seen.add(key)
            files.append(path)

    def skip(path: Path, why: str = LINK) -> None:
        if (str(path), why) not in skipped:
            skipped.append((str(path), why))

    for entry in map(Path, entries):
        if entry.is_symlink():
            skip(entry)
            continue
        if not entry.exists():
            raise FileNotFoundError(f"--cards {entry}: no such file or folder")
        if not entry.is_dir():
            take(entry) if _plain_file(entry) else skip(entry, NOT_A_FILE)
            continue
        found = []
        for root, folders, names in os.walk(entry):  # links to folders are listed, never entered
            here = Path(root)
            for name in sorted(folders):
                if (here / name).is_symlink():
                    skip(here / name)
            folders[:] = sorted(name for name in folders if not (here / name).is_symlink())
            if "card.json" in names:
                path = here / "card.json"
                if path.is_symlink():
                    skip(path)
                elif not _plain_file(path):
                    skip(path, NOT_A_FILE)
                else:
                    found.append(path)
        for path in sorted(found):
            take(path)
        top = Path(os.path.abspath(entry))  # (no link followed: a skipped link names its own place)
        if not found and not any(top in Path(os.path.abspath(path)).parents for path, _ in skipped):
            skip(entry, NO_CARD)
    return files, skipped


def _unique_fields(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object whose every field is named once: a second ``"judge"`` or ``"rows"`` in one object (which a
    reader would take, silently, in place of the first) is refused.

    >>> _unique_fields([("a", 1), ("b", 2)])
    {'a': 1, 'b': 2}
    >>> _unique_fields([("judge", "x"), ("judge", "y")])
    Traceback (most recent call last):
    ValueError: the field 'judge' is given twice in one object
    """
    record: dict = {}
    for name, value in pairs:
        if name in record:
            raise ValueError(f"the field {name!r} is given twice in one object")
        record[name] = value
    return record


def read_card(path: Path, records: dict | None = None):
    """The card in the file ``path``; ``ValueError`` naming the file and why it is not one. ``records``, when
    given, keeps the JSON the card was read from, by path: a signature is checked on what was read, never on a
    second read of a file that may have changed since."""
    import json

    from evalkit.judgecard.card import Card

    try:
        text = _card_bytes(path).decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: cannot be read ({error})") from None
    try:
        record = json.loads(text, object_pairs_hook=_unique_fields)
    except ValueError as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a judge card (JSON nested too deeply to read)") from None
    if records is not None:
        records[str(path)] = record
    try:
        return Card.from_record(record, source=str(path))
    except RecursionError:
        raise ValueError(f"{path}: not a judge card (nested too deeply to read)") from None
    except (KeyError, TypeError, AttributeError, OverflowError) as error:
        raise ValueError(f"{path}: not a judge card's record ({type(error).__name__}: {error})") from None




def _result_key(card, record) -> str | None:
    """What the board ranks a card on, as one text: its judge's name, half and seed (the sample it must be drawn
    with), its item scores on each set (ids and scores: what the board recomputes every figure from), and, as
    recorded, its rows (checked against those scores) and the sets it did not score (a reason the board reads). Two
    cards with the same key give the same board line; None for a card without item scores (nothing to compare)."""
    import json

    if not card.scores or not isinstance(record, dict):
        return None
    scores = sorted([entry.set, list(entry.item_ids), [None if v != v else v for v in entry.scores]]
                    for entry in card.scores)
    return json.dumps([card.judge, card.half, card.seed, scores, record.get("rows"), record.get("skipped")],
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def counted_once(lines: list[tuple], records: dict, *, same_result: bool = True,
                 preferred: Callable[[str], bool] | None = None, held: set[str] | None = None
                 ) -> tuple[list[tuple], list[tuple[str, str, tuple[str, ...]]]]:
    """``lines`` of (card, [its file]) with every card whose record, as read, is word for word an earlier one's
    (a signed card copied into a second folder: the same signature too) left out, and (that file, the file kept,
    ``()``) for each: one card is one line, or one part of a merged line, however many folders hold it. With
    ``same_result``, a card that gives an earlier one's result (:func:`_result_key`: the same judge name, half,
    seed, item scores on the same sets, rows and sets not scored; or :func:`same_scores`: the same items and
    sets not scored, scores shifted or scaled, under any judge name) is left out too, with the fields its record
    differs in (a note added, a spec reworded, a judge renamed): a near copy cannot count one result twice. Two
    cards that differ in anything the board ranks on, a score, are two cards (``--merge`` refuses one judge's set
    on both). Of a card and its copies, the one kept is the first in sorted order, unless ``preferred`` accepts a
    file (a card signed with the board's key): the files it accepts are read first, so an unsigned copy in a folder
    that sorts first cannot take a signed card's line. Given ``held`` (the sets a board ranks on), two cards with
    the same result on those sets are one result whatever else they hold (a row on a set the board does not rank
    added to a renamed copy).

    >>> from evalkit.judgecard.card import Card, SetScores
    >>> card = Card("j", {}, "test", 0, 0, (), (), ())
    >>> records = {"a/card.json": {"judge": "j", "seed": 0}, "b/card.json": {"seed": 0, "judge": "j"},
    ...            "c/card.json": {"judge": "j", "seed": 1}}
    >>> kept, copies = counted_once([(card, [path]) for path in records], records)
    >>> [paths for _, paths in kept], copies
    ([['a/card.json'], ['c/card.json']], [('b/card.json', 'a/card.json', ())])
    >>> scored = Card("j", {}, "test", 0, 0, (), (), (), scores=(SetScores("s", ("x", "y"), (1.0, 2.0)),))
    >>> records = {"a/card.json": {"judge": "j", "notes": []}, "b/card.json": {"judge": "j", "notes": ["x"]}}
    >>> counted_once([(scored, [path]) for path in records], records)[1]
    [('b/card.json', 'a/card.json', ('notes',))]
    >>> counted_once([(scored, [path]) for path in records], records, preferred=lambda path: path[0] == "b")[1]
    [('a/card.json', 'b/card.json', ('notes',))]
    """
    import hashlib
    import json

    first: dict[str, str] = {}
    results: dict[str, str] = {}
    kept, copies = [], []
    order = {id(line): index for index, line in enumerate(lines)}
    reading = lines if preferred is None else sorted(lines, key=lambda line: not preferred(line[1][0]))
    for line in reading:
        card, paths = line
        record = records[paths[0]]
        text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if digest in first:
            copies.append((paths[0], first[digest], ()))
            continue
        result = _result_key(card, record) if same_result else None
        if result is not None and result in results:
            earlier = records[results[result]]
            differs = tuple(sorted(name for name in {*record, *earlier} if record.get(name) != earlier.get(name)))
            copies.append((paths[0], results[result], differs))
            continue
        alike = next((kept_paths[0] for kept_card, kept_paths in kept
                      if same_result and same_scores(card, kept_card, sets=held)
                      and (held is not None or record.get("skipped") == records[kept_paths[0]].get("skipped"))),
                     None)
        if alike is not None:  # another name, or its scores shifted or scaled: the same correlations, one result
            earlier = records[alike]
            differs = tuple(sorted(name for name in {*record, *earlier} if record.get(name) != earlier.get(name)))
            copies.append((paths[0], alike, differs))
            continue
        first[digest] = paths[0]
        if result is not None:
            results[result] = paths[0]
        kept.append(line)
    return sorted(kept, key=lambda line: order[id(line)]) if preferred is not None else kept, copies


def same_scores(card, other, tolerance: float = 1e-6, *, sets: set[str] | None = None) -> bool:
    """Whether two cards give one result whatever their judges' names: the same half, the same items of the
    same sets (in any order), unscored where the other is, and on each set scores that differ at most by a shift
    and a positive scale, or by noise far below their spread (standardized, they agree within ``tolerance``, or
    correlate at ``1 - tolerance`` or more). Shift, scale and such noise change no Pearson, Spearman or Kendall
    the board reads; the seed a card was drawn with does not matter once its items are the same. A card copied
    under another name, reordered, or with every score moved by 1e-5 is the same result. Given ``sets``, only the
    cards' scores on those sets are compared (both must hold the same of them).

    >>> from evalkit.judgecard.card import Card, SetScores
    >>> made = lambda name, ids, scores, seed=0: Card(name, {}, "test", seed, 0, (), (), (),
    ...                                              scores=(SetScores("s", ids, scores),))
    >>> judge = made("j", ("a", "b", "c"), (1.0, 2.0, 4.0))
    >>> same_scores(judge, made("k", ("c", "a", "b"), (9.0, 3.0, 5.0), seed=1))
    True
    >>> same_scores(judge, made("j", ("a", "b", "c"), (1.0, 2.0, 5.0)))
    False
    """
    import numpy as np

    if not card.scores or not other.scores or card.half != other.half:
        return False
    if len({entry.set for entry in card.scores}) != len(card.scores) \
            or len({entry.set for entry in other.scores}) != len(other.scores):
        return False
    mine, theirs = ({entry.set: entry for entry in c.scores if sets is None or entry.set in sets}
                    for c in (card, other))
    if not mine or set(mine) != set(theirs):
        return False
    for name, entry in mine.items():
        twin = dict(zip(theirs[name].item_ids, theirs[name].scores))
        if len(twin) != len(theirs[name].item_ids) or set(twin) != set(entry.item_ids) \
                or len(entry.item_ids) != len(set(entry.item_ids)):
            return False
        a = np.asarray(entry.scores, dtype=float)
        b = np.asarray([twin[item] for item in entry.item_ids], dtype=float)
        if a.shape != b.shape or not np.array_equal(np.isfinite(a), np.isfinite(b)):
            return False
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        if a.size == 0:
            continue
        spread_a, spread_b = a.std(), b.std()
        if spread_a == 0 or spread_b == 0:
            if spread_a != spread_b:
                return False
            continue
        za, zb = (a - a.mean()) / spread_a, (b - b.mean()) / spread_b
        if np.max(np.abs(za - zb)) > tolerance and float(np.mean(za * zb)) < 1 - tolerance:
            return False
    return True


MIN_COPY_ITEMS = 10  # items with varied scores two lines need in common on a set before they are compared
NEAR_COPY = 0.99  # a Spearman or Pearson correlation between two lines' item scores on a set this high is marked


def shared_set_cautions(cards, sets: set[str]) -> dict[str, tuple[str, ...]]:
    """For each judge of ``cards``, a caution per other card whose item scores on one of ``sets`` follow its own
    almost exactly: on at least :data:`MIN_COPY_ITEMS` items both scored, with varied scores, a Spearman or
    Pearson correlation of :data:`NEAR_COPY` or more (a copy shifted, scaled, ranked, passed through a monotone
    function, or moved by a little noise). Honest judges of different kinds agree far less with each other (the
    kit's strongest judges correlate with people, and with each other, well below 0.9). Two lines whose results
    differ overall can still share one set's scores: a card that copies another's set and adds sets of its own,
    or one judge run twice. The board cannot tell which line copied, so both are cautioned, not refused: a copy
    cannot take the other line off the board.

    >>> from evalkit.judgecard.card import Card, SetScores
    >>> ids = tuple(f"i{n}" for n in range(12))
    >>> made = lambda name, sets: Card(name, {}, "test", 0, 0, (), (), (), scores=tuple(
    ...     SetScores(set_name, ids, scores) for set_name, scores in sets))
    >>> honest = made("honest", [("a", tuple(float(n % 5) + n / 100 for n in range(12)))])
    >>> copier = made("copier", [("a", tuple(2.0 ** (n % 5 + n / 100) for n in range(12))), ("b", (1.0,) * 12)])
    >>> [caution[:61] for caution in shared_set_cautions([honest, copier], {"a", "b"})["copier"]]
    ["its item scores on a follow honest's almost exactly (Spearman"]
    """
    import numpy as np
    from scipy import stats

    cautions: dict[str, list[str]] = {card.judge: [] for card in cards}
    for a, card in enumerate(cards):
        mine = {entry.set: dict(zip(entry.item_ids, entry.scores)) for entry in card.scores}
        for other in cards[a + 1:]:
            for entry in other.scores:
                if entry.set not in sets or entry.set not in mine:
                    continue
                pairs = [(mine[entry.set][item], score) for item, score in zip(entry.item_ids, entry.scores)
                         if item in mine[entry.set]]
                both = np.asarray(pairs, dtype=float).reshape(-1, 2)
                both = both[np.isfinite(both).all(axis=1)]
                if len(both) < MIN_COPY_ITEMS or (both.std(axis=0) == 0).any():
                    continue
                with np.errstate(all="ignore"):
                    spearman = float(stats.spearmanr(both[:, 0], both[:, 1])[0])
                    pearson = float(np.corrcoef(both[:, 0], both[:, 1])[0, 1])
                if max(spearman, pearson) >= NEAR_COPY:
                    for one, two in ((card, other), (other, card)):
                        cautions[one.judge].append(
                            f"its item scores on {entry.set} follow {two.judge}'s almost exactly (Spearman "
                            f"{spearman:.4f}, Pearson {pearson:.4f} on {len(both)} items): one of the two lines may "
                            "copy the other's set, or they are one judge run twice")
    return {judge: tuple(found) for judge, found in cautions.items()}


def copy_note(differs: tuple[str, ...]) -> str:
    """How a file counted once is the same as the file kept: word for word, or the same result (under
    another judge name, or with scores shifted or scaled: :func:`same_scores`).

    >>> copy_note(("notes",)).endswith("it differs only in notes, which the board does not rank on")
    True
    >>> print(copy_note(("judge", "rows", "scores")).partition(":")[0])
    the same result under another judge name
    >>> copy_note(("rows",)).endswith("the board ranks on the rows it recomputes from the item scores")
    True
    """
    if not differs:
        return "the same record, word for word"
    if not {"judge", "scores", "rows"} & set(differs):
        return (f"the same result: the same judge name, half, item scores, rows and sets not scored; it differs only "
                f"in {', '.join(differs)}, which the board does not rank on")
    scores = ("the same item scores up to a shift and a positive scale (which change no correlation)"
              if "scores" in differs else "the same item scores")
    fields = [name for name in differs if name not in ("scores", "rows")]
    return (f"the same result{' under another judge name' if 'judge' in differs else ''}: the same half, {scores} and "
            f"the same sets not scored" + (f"; it differs only in {', '.join(fields)}, which the board does not rank "
                                          f"on" if fields else "")
            + ("; the rows it records differ, and the board ranks on the rows it recomputes from the item scores"
               if "rows" in differs else ""))


def _card_label(paths: list[str]) -> str:
    """How a line's name tells it from another line of the same judge name: its card's folder (the file, when
    it is not named card.json), or every file of a merged line."""
    return ", ".join(str(Path(p).parent) if Path(p).name == "card.json" else p for p in paths)


def named_apart(lines: list[tuple]) -> list[tuple]:
    """``lines`` of (card, files), every judge name made unique: a name on two or more lines gets its card's
    folder or file in brackets, e.g. ``probe-a (cards/a)``; a name that still clashes gets its card files; and
    a name that clashes even then (cards named to collide with those renamings) gets a number, ``#2``, ``#3``,
    on every line after the first that holds it. No set of card names can make two lines share one.

    >>> from evalkit.judgecard.card import Card
    >>> made = lambda name: Card(name, {}, "test", 0, 0, (), (), ())
    >>> lines = [(made("X"), ["cards/a/card.json"]), (made("X"), ["cards/m/card.json"]),
    ...          (made("X (cards/a)"), ["cards/m2/card.json"]),
    ...          (made("X (cards/a) (cards/a/card.json)"), ["cards/m3/card.json"])]
    >>> [card.judge for card, _ in named_apart(lines)]
    ['X (cards/a) (cards/a/card.json)', 'X (cards/m)', 'X (cards/a) (cards/m2/card.json)', 'X (cards/a) (cards/a/card.json) #2']
    """
    from dataclasses import replace

    for label in (_card_label, ", ".join):
        counts: dict[str, int] = {}
        for card, _ in lines:
            counts[_as_shown(card.judge)] = counts.get(_as_shown(card.judge), 0) + 1
        if all(count == 1 for count in counts.values()):
            return lines
        lines = [(replace(card, judge=f"{card.judge} ({label(paths)})") if counts[_as_shown(card.judge)] > 1
                  else card, paths) for card, paths in lines]
    taken = {_as_shown(card.judge) for card, _ in lines}
    seen: set[str] = set()
    numbered = []
    for card, paths in lines:
        name = card.judge
        if _as_shown(name) in seen:
            number = 2
            while _as_shown(f"{name} #{number}") in taken:
                number += 1
            name = f"{name} #{number}"
            taken.add(_as_shown(name))
            card = replace(card, judge=name)
        seen.add(_as_shown(name))
        numbered.append((card, paths))
    return numbered


def _as_shown(name: str) -> str:
    """A judge's name as a board shows it, for telling names apart: on one line, escaped where it could pass for
    another, its spaces trimmed and runs of them one (``"good "`` is shown as ``good``), and typography read as
    its ASCII look-alike (``gpt–4`` as ``gpt-4``): two names alike in this form are told apart by their folder.

    >>> _as_shown("  good \\t"), _as_shown("good\\u00a0"), _as_shown("gpt\u20134")
    ('good', 'good\\\\u00a0', 'gpt-4')
    """
    from evalkit.judgecard._names import LOOKS_LIKE, one_line

    return "".join(LOOKS_LIKE.get(c, c) for c in " ".join(one_line(name).split()))
