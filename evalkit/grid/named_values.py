"""Credentials a unit's files name by their structure rather than in a line of text: the strings a pickle holds
(read opcode by opcode, as :mod:`pickletools` does, never loaded), and a file, or an archive's member, whose own
name is a credential's (Docker's ``/run/secrets/db_password``, an ``.npz`` array saved as ``db_password``).

A pickle keeps a dict's key and value as two strings with opcodes between them, and in protocol 0 as text lines
(``Vpassword`` then ``Vs3cr3t``); a SQLite table keeps a row's cells back to back (``passwords3cr3t``): read in
order, a string that follows one naming a credential is its value, which a line-by-line reading misses. A SQLite
database is read by SQLite itself, from a copy in memory (the file is never opened): each row's text cells in
order (:func:`~evalkit.grid.binary_strings.named_in_strings`), and every value of a column named for a credential.
"""
from __future__ import annotations

import io
import pickletools
import re
import sqlite3
import time
from pathlib import Path

import numpy as np

from evalkit.grid.binary_strings import named_in_strings
from evalkit.grid.byte_forms import TEXT_BOMS
from evalkit.grid.credential_names import _holds_credentials, credential_column, credential_name
from evalkit.models.redaction import _ordinary_word

__all__ = ["pickle_strings", "named_in_pickle", "named_in_sqlite", "database_beside", "database_with_log", "WAL_MAGIC",
           "file_named_secret"]

_STRING_ARGUMENT = re.compile(r"[^\x00-\x1f\x7f]{2,}")  # a name or a value, not a one-letter global or memo key
_SMALLEST_SECRET = 8  # characters: what a file named for a credential holds at least to be taken as one
_LARGEST_SECRET = 4096  # bytes: a file named for a credential that holds more is a document, read as any other
# a value stored whole (a pickle's string, a SQLite cell, a file named for a credential): any characters but
# control ones, words parted by single spaces (a passphrase), 8 to 4096 characters
_STORED_VALUE = re.compile(r"(?=.{8,4096}\Z)[^\s\x00-\x1f\x7f-\x9f]+(?: [^\s\x00-\x1f\x7f-\x9f]+)*", re.S)


_PUTS = ("PUT", "BINPUT", "LONG_BINPUT")
_GETS = ("GET", "BINGET", "LONG_BINGET")
_FRAMING = ("PROTO", "FRAME")  # what splits a pickle into frames, between any two values


def _pickle_items(data: bytes) -> list[tuple[str, str | None]] | None:
    """A pickle's opcodes in order, each with the string it pushes (None for any other), read as
    :func:`pickletools.genops` reads them (nothing in it is run); a string fetched again from the memo is listed
    again where it is fetched. The memo's own opcodes and frames are left out. None when ``data`` is not a pickle."""
    if not data or not (data[:1] == b"\x80" or data.rstrip(b"\r\n")[-1:] == b"."):  # protocol 2+, or a STOP
        return None
    found: list[tuple[str, str | None]] = []
    memo: dict[int, str | None] = {}
    last: str | None = None  # the string the last opcode pushed, if it pushed one
    try:
        for opcode, argument, _ in pickletools.genops(data):
            text = argument.decode("latin-1") if isinstance(argument, bytes) else argument
            if opcode.name in _PUTS:
                memo[int(argument)] = last
            elif opcode.name == "MEMOIZE":
                memo[len(memo)] = last
            elif opcode.name in _GETS:
                last = memo.get(int(argument))
                found.append((opcode.name, last))
            elif opcode.name not in _FRAMING:
                last = text if (isinstance(text, str) and opcode.name not in ("GLOBAL", "INST")
                                and _STRING_ARGUMENT.fullmatch(text)) else None
                found.append((opcode.name, last))
    except Exception:  # any malformed pickle: not read (its bytes are still searched as a binary's)
        return None
    return found


def pickle_strings(data: bytes) -> list[str | None] | None:
    """The strings a pickle holds, in the order it uses them, read opcode by opcode (nothing in it is run), with
    None where another value or an operation stands between two; None when ``data`` is not a pickle. A string
    fetched again from the pickle's memo (a value stored under two keys, a key used twice) is listed again where it
    is fetched.

    >>> import pickle
    >>> [text for text in pickle_strings(pickle.dumps({"password": "Qm7vT2xR9kL4", "lr": 0.1}, protocol=0)) if text]
    ['password', 'Qm7vT2xR9kL4', 'lr']
    >>> found = pickle_strings(pickle.dumps({"copy": "Qm7vT2xR9kL4", "password": "Qm7vT2xR9kL4"}, protocol=4))
    >>> [text for text in found if text]
    ['copy', 'Qm7vT2xR9kL4', 'password', 'Qm7vT2xR9kL4']
    >>> pickle_strings(b"not a pickle") is None
    True
    """
    items = _pickle_items(data)
    return None if items is None else [text for _, text in items]


# What closes a list, tuple or set whose items follow a MARK (protocol 0 adds a list's items one by one)
_CLOSING = ("APPENDS", "ADDITEMS", "TUPLE", "LIST", "FROZENSET")
_SMALL_TUPLES = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}  # a tuple of up to three built after its items


def _strings_until(items: list[tuple[str, str | None]], at: int, closing: tuple[str, ...],
                   between: tuple[str, ...] = ()) -> list[str]:
    """The strings from ``items[at]`` on, when the next other opcode (``between`` ones skipped) is one of
    ``closing``: a container's items; nothing when another opcode comes first (a nested value, or the end of an
    empty container and the next key of the dict around it)."""
    found = []
    for index in range(at, len(items)):  # (indices: a copy of the rest per call made a crafted pickle quadratic)
        name, text = items[index]
        if text is not None:
            found.append(text)
        elif name in closing:
            return found
        elif name not in between:
            return []
    return []


# What may stand between a list's strings and is no end of it: a None, or a small tuple of strings the list holds
# ({"api_keys": [None, k1], "pairs": [("prod", k2)]})
_INSIDE_A_LIST = ("NONE", "TUPLE1", "TUPLE2", "TUPLE3", "NEWTRUE", "NEWFALSE", "BININT", "BININT1", "BININT2")


def _map_values(items: list[tuple[str, str | None]], at: int) -> list[str]:
    """The string values of a map whose pairs start at ``items[at]``: each key a string, its value the one opcode
    after it (a value that is no string, a None or a number, is skipped with its key), up to ``SETITEM(S)``."""
    found: list[str] = []
    index = at
    while index + 1 < len(items) and items[index][1] is not None:
        value = items[index + 1]
        if value[1] is not None:
            found.append(value[1])
        elif value[0] not in _INSIDE_A_LIST:  # a value built of several opcodes (a tuple, a list): not read
            return found
        index += 2
        if index < len(items) and items[index][0] == "SETITEM":  # protocol 1+ without MARK: one pair
            return found
    return found


def _batch_length(items: list[tuple[str, str | None]], start: int) -> int:
    """How many opcodes from ``items[start]`` through the next ``APPENDS`` or ``ADDITEMS`` (a batch's end)."""
    for index in range(start, len(items)):
        if items[index][0] in ("APPENDS", "ADDITEMS"):
            return index - start + 1
    return len(items) - start


def _values_after(items: list[tuple[str, str | None]], at: int) -> list[str]:
    """The strings a pickle stores under the name at ``items[at]``: the next string (a dict's value), or every
    string of a list, tuple or set that follows (``{"api_keys": [k1, k2]}``); none for an empty one
    (``{"api_keys": [], "model": "m"}`` does not give ``"model"``)."""
    following = items[at + 1:at + 3]
    first = following[0][0] if following else ""
    second = following[1][0] if len(following) > 1 else ""
    if following and following[0][1] is not None:  # a string, or the items of a small tuple built after them
        run = []
        for name, text in items[at + 1:at + 4]:
            if text is None:
                break
            run.append(text)
        after = items[at + 1 + len(run)][0] if at + 1 + len(run) < len(items) else ""
        return run if _SMALL_TUPLES.get(after) == len(run) else run[:1]
    if first in ("EMPTY_LIST", "EMPTY_SET") and second == "MARK":  # protocol 1+: MARK, items, APPENDS/ADDITEMS
        found, start = [], at + 3
        while True:  # a long list comes in batches of 1,000 items, each MARK ... APPENDS
            batch = _strings_until(items, start, ("APPENDS", "ADDITEMS"), between=_INSIDE_A_LIST)
            found += batch
            start += _batch_length(items, start)
            if not batch or start >= len(items) or items[start][0] != "MARK":
                return found
            start += 1
    if first == "EMPTY_DICT" and second == "MARK":  # a map of credentials ({"credentials": {"prod": a, ...}})
        return _map_values(items, at + 3)
    if first == "EMPTY_DICT" and at + 4 < len(items) and items[at + 4][0] == "SETITEM":  # a map of one pair
        return _map_values(items, at + 2)
    if first == "EMPTY_LIST":  # protocol 2+: a list of one is EMPTY_LIST, the item, APPEND
        return _strings_until(items, at + 2, ("APPEND",))[:1]
    if first == "MARK" and second == "LIST":  # protocol 0: MARK, LIST, then each item and APPEND
        found = _strings_until(items, at + 3, _CLOSING + ("SETITEM", "SETITEMS", "STOP"), between=("APPEND",))
        return found
    if first == "MARK":  # protocols 0-1: MARK, items, TUPLE; FROZENSET
        return _strings_until(items, at + 2, ("TUPLE", "FROZENSET"))
    return []


# A map's name that says its values are credentials ("credentials", "secrets"; a tokenizer's "tokens" map is not)
_CREDENTIALS_MAP = re.compile(r"(?i)secret|cred|pass|api[_-]?key")


def named_in_pickle(data: bytes) -> list[str]:
    """The credentials a pickle names: a string, or the strings of a list, tuple or set, that follows one naming
    a credential, and the values of a map under a name that holds credentials (``{"secrets": {"prod": X}}``), by a
    name that names only credentials (a record's ``key`` or ``token`` field holds ordinary data
    as often; a key of a known shape in it is masked by its shape).

    >>> import pickle
    >>> named_in_pickle(pickle.dumps({"password": "Qm7vT2xR9kL4", "key": "sample_000123", "epochs": 3}))
    ['Qm7vT2xR9kL4']
    >>> named_in_pickle(pickle.dumps({"api_keys": ["Qm7vT2xR9kL4", "Zx9pL3mQ7vR2"], "user": "ann"}, protocol=0))
    ['Qm7vT2xR9kL4', 'Zx9pL3mQ7vR2']
    >>> named_in_pickle(pickle.dumps({"password": None, "learning_rate": 0.1}))  # a value between: no pair
    []
    """
    try:
        items = _pickle_items(data) or []
    except Exception:  # a reader that only learns never stops a scrub
        return []
    return list(dict.fromkeys(value for at, (_, name) in enumerate(items)
                              if name is not None and (credential_column(name) or (
                                  _holds_credentials(name) and _CREDENTIALS_MAP.search(name)
                                  and at + 1 < len(items) and items[at + 1][0] == "EMPTY_DICT"))
                              for value in _values_after(items, at)
                              if _STORED_VALUE.fullmatch(value) and not _ordinary_word(value)))


def _stem(name: str) -> str:
    """A file's or member's name without its folders and extensions (``conf/db_password.npy``: ``db_password``)."""
    return name.rsplit("/", 1)[-1].split(".", 1)[0]


_LARGEST_ARRAY = 16 * 2**20  # bytes of a NumPy file read for its fields (the scrub's limit for a text)


def named_in_array(data: bytes) -> list[str]:
    """The credentials a NumPy file of records holds in a field named for one (a structured array's
    ``("password", "<U16")``), read by NumPy without pickles.

    >>> import io, numpy as np; buffer = io.BytesIO()
    >>> np.save(buffer, np.array([("ann", "Lb8Xq3Wz6Lp1")], dtype=[("user", "U8"), ("password", "U16")]))
    >>> named_in_array(buffer.getvalue())
    ['Lb8Xq3Wz6Lp1']
    """
    if not data.startswith(b"\x93NUMPY") or len(data) > _LARGEST_ARRAY:
        return []
    try:
        records = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception:  # any malformed array: not read (the file's bytes are searched regardless)
        return []
    found: list[str] = []
    for field in records.dtype.names or ():
        if credential_column(field) and records.dtype[field].kind in "US":
            found += [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
                      for item in np.ravel(records[field]).tolist()]
    return [value for value in found if _STORED_VALUE.fullmatch(value) and not _ordinary_word(value)]


def file_named_secret(name: str, data: bytes, *, member: bool = False) -> list[str]:
    """What a file named for a credential holds, where it is one value: ``db_password`` holding ``Qm7vT2xR9kL4``,
    ``api_token.txt``, a NumPy file (``db_password.npy``) of one string. A file that holds more than one value
    (``secrets.yaml``) is read as any other. An archive's ``member`` counts only by a name that names only
    credentials (an ``.npz`` array saved as ``key`` or ``token`` holds ordinary data as often).

    >>> file_named_secret("db_password", b"Qm7vT2xR9kL4\\n"), file_named_secret("notes.txt", b"Qm7vT2xR9kL4")
    (['Qm7vT2xR9kL4'], [])
    >>> import io, numpy as np; buffer = io.BytesIO(); np.save(buffer, np.array("Qm7vT2xR9kL4"))
    >>> file_named_secret("db_password.npy", buffer.getvalue()), file_named_secret("key.npy", buffer.getvalue(), member=True)
    (['Qm7vT2xR9kL4'], [])
    """
    stem = _stem(name)
    # a single word such as "key" or "secret" counts too: a file that holds one value under that name is a key
    named = credential_column(stem) if member else credential_name(stem)
    if not stem or not named or not 0 < len(data) <= _LARGEST_SECRET:
        return []
    if data.startswith(b"\x93NUMPY"):
        try:
            value = np.load(io.BytesIO(data), allow_pickle=False)
        except Exception:  # any malformed array (a header promising 2**45 items raises MemoryError): not read
            return []
        values = [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
                  for item in np.ravel(value).tolist()] if value.dtype.kind in "US" and value.size == 1 else []
    else:
        encoding = next((name for bom, name in TEXT_BOMS if data.startswith(bom)), "utf-8")
        try:
            values = [data.decode(encoding).lstrip("\ufeff").strip()]
        except UnicodeDecodeError:
            return []
    return [value for value in values if _STORED_VALUE.fullmatch(value)]


def database_beside(log: Path) -> bytes:
    """The bytes of the SQLite database a write-ahead log (``runs.db-wal``) stands beside: a file of its own (not
    a link) of up to 16 MB that is a database; empty when there is none to read (the log alone is read then).

    >>> import sqlite3, tempfile; folder = Path(tempfile.mkdtemp()); database = sqlite3.connect(folder / "runs.db")
    >>> _ = database.execute("pragma journal_mode = wal"); _ = database.execute("create table t(x)"); database.commit()
    >>> database_beside(folder / "runs.db-wal")[:15], database_beside(folder / "other.db-wal")
    (b'SQLite format 3', b'')
    """
    if not log.name.endswith("-wal"):
        return b""
    path = log.with_name(log.name[:-len("-wal")])
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _LARGEST_LOG:
            return b""
        data = path.read_bytes()
    except OSError:
        return b""
    return data if data.startswith(_SQLITE_MAGIC) else b""


WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")  # a write-ahead log's first bytes (its checksums' byte order)
_LARGEST_IMAGE = 64 * 2**20  # bytes of a database built from a log's pages: a page number past it is not read


def database_with_log(database: bytes, log: bytes) -> bytes | None:
    """``database`` (a SQLite file's bytes, or nothing) with every page its write-ahead log ``log`` holds written in,
    in the log's order, up to the first frame of an earlier generation (a log is reused from its start after a
    checkpoint, its salt changed): the rows written since the last checkpoint, which stand only in the log
    (committed or not, checksums unread: a reader that learns wants every row); None when ``log`` is no
    write-ahead log or the result is no database (a log whose first page is neither in it nor in ``database``).

    >>> import sqlite3, tempfile; folder = Path(tempfile.mkdtemp()); database = sqlite3.connect(folder / "runs.db")
    >>> _ = database.execute("pragma journal_mode = wal"); _ = database.execute("pragma wal_autocheckpoint = 0")
    >>> _ = database.execute("create table kv(k, v)"); _ = database.execute("insert into kv values ('password', 'Qm7vT2xR9kL4')")
    >>> database.commit(); named_in_sqlite(database_with_log(b"", (folder / "runs.db-wal").read_bytes()))
    ['Qm7vT2xR9kL4']
    """
    if log[:4] not in WAL_MAGIC or len(log) < _WAL_HEADER:
        return None
    size = int.from_bytes(log[8:12], "big")
    if size < 512 or size > 65536 or size & (size - 1):
        return None
    image = bytearray(database[:_LARGEST_IMAGE])
    frames = range(_WAL_HEADER, len(log) - _FRAME_HEADER - size + 1, _FRAME_HEADER + size)
    # a log grows its database by no more pages than it holds: a frame numbered past that is no page of it
    largest = min(_LARGEST_IMAGE, len(image) + len(frames) * size)
    for at in frames:
        if log[at + 8:at + 16] != log[16:24]:  # a frame of an earlier generation (the log is reused, not cut)
            break
        number = int.from_bytes(log[at:at + 4], "big")
        start = (number - 1) * size
        if number == 0 or start + size > largest:
            continue
        if len(image) < start + size:
            image.extend(bytes(start + size - len(image)))
        image[start:start + size] = log[at + _FRAME_HEADER:at + _FRAME_HEADER + size]
    return bytes(image) if image.startswith(_SQLITE_MAGIC) else None


_WAL_HEADER, _FRAME_HEADER = 32, 24  # bytes: a log's header, and each frame's before its page


_SQLITE_MAGIC = b"SQLite format 3\x00"
_LARGEST_LOG = 16 * 2**20  # bytes of a database read beside its write-ahead log (the scrub's limit for a text)
_MOST_ROWS = 200_000  # rows read from one database, all tables together
_MOST_STEPS = 50_000_000  # SQLite's virtual machine steps for the whole reading (a hostile schema cannot stall it)
_MOST_SECONDS = 20.0  # ... nor its seconds (what is read by then counts; the file's bytes are searched regardless)


def _as_text(cell: object) -> str | None:
    """A cell's text: a string as it is, a BLOB of up to 4 KB as UTF-8 (else Latin-1), anything else None."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, bytes) and len(cell) <= _LARGEST_SECRET:
        try:
            return cell.decode("utf-8")
        except UnicodeDecodeError:
            return cell.decode("latin-1")
    return None


def _read_table(database: sqlite3.Connection, table: str, rows_left: int, found: list[str]) -> int:
    """Add what one table names to ``found``: each row's text cells in order (a cell that is no text leaves a
    gap, so no two cells pair across it), and the values of its columns named for a credential. Columns SQLite
    would compute on every read (virtual generated columns) are not read. Returns the rows read."""
    quoted = '"' + table.replace('"', '""') + '"'
    columns = [(_as_text(name), hidden) for _, name, *_, hidden in database.execute(f"pragma table_xinfo({quoted})")]
    stored = [name for name, hidden in columns if hidden != 2]
    if not stored:
        return 0
    selected = ", ".join('"' + name.replace('"', '""') + '"' for name in stored)
    named_columns = [credential_column(name) for name in stored]
    read = 0
    for row in database.execute(f"select {selected} from {quoted} limit {rows_left}"):
        read += 1
        cells = [_as_text(cell) for cell in row]  # a BLOB holding text is read as its text
        texts = [cell if cell is not None and len(cell) <= _LARGEST_SECRET else "" for cell in cells]
        found += [value for value in named_in_strings(texts) if len(value) >= _SMALLEST_SECRET]
        # a key-value row whose value is a passphrase of several words, by a name that names only credentials
        found += [value for name, value in zip(texts, texts[1:])
                  if credential_column(name) and _STORED_VALUE.fullmatch(value) and not _ordinary_word(value)]
        found += [cell for cell, named in zip(cells, named_columns)
                  if named and cell is not None and _STORED_VALUE.fullmatch(cell)]
    return read


def named_in_sqlite(data: bytes | None) -> list[str]:
    """The credentials a SQLite database names: in a row, a text cell that follows one naming a credential (a
    key-value table), and each text value of a column named for one; nothing when ``data`` is not a database
    SQLite can read (with its write-ahead log's pages written in: :func:`database_with_log`).

    >>> import sqlite3, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "kv.db"
    >>> with sqlite3.connect(path) as db:
    ...     _ = db.execute("create table kv(k text, v text)")
    ...     _ = db.executemany("insert into kv values (?, ?)", [("password", "Qm7vT2xR9kL4"), ("lr", "0.1")])
    ...     _ = db.execute("create table users(name text, api_token text)")
    ...     _ = db.execute("insert into users values ('ann', 'Tk-8f2k4m9q1z')")
    >>> named_in_sqlite(path.read_bytes())
    ['Qm7vT2xR9kL4', 'Tk-8f2k4m9q1z']
    """
    if not data or not data.startswith(_SQLITE_MAGIC) or not hasattr(sqlite3.Connection, "deserialize"):
        return []  # (Python 3.11 reads a database in memory)
    return _read_database(data)


def _read_database(data: bytes) -> list[str]:
    """What :func:`named_in_sqlite` reads, from ``data`` opened in memory: SQLite bounded in the length of a value,
    its steps and its seconds, running only the functions it deems harmless in a schema."""
    found: list[str] = []
    steps = 0
    deadline = time.monotonic() + _MOST_SECONDS

    def stop_when_spent() -> int:  # steps and seconds: a computed column can make each step slow
        nonlocal steps
        steps += 10_000
        return int(steps > _MOST_STEPS or time.monotonic() > deadline)

    database = sqlite3.connect(":memory:")
    database.text_factory = bytes  # a cell that is not UTF-8 is read, not an error that ends the table
    try:
        if 2 in data[18:20]:  # a WAL-mode header: SQLite opens a copy in memory only in rollback mode
            data = data[:18] + b"\x01\x01" + data[20:]
        database.deserialize(data)
        database.set_progress_handler(stop_when_spent, 10_000)
        # one value is no larger than the file (at least 1 MB), and a schema runs only the functions SQLite deems
        # harmless there
        database.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max(len(data), 1_000_000))
        database.execute("pragma trusted_schema = off")
        tables = [_as_text(name) for (name,) in database.execute("select name from sqlite_master where type = 'table'")]
        rows_left = _MOST_ROWS
        for table in tables:
            if rows_left <= 0 or time.monotonic() > deadline:
                break
            try:
                rows_left -= _read_table(database, table, rows_left, found)
            except Exception:  # a virtual table of a module this SQLite lacks, a damaged page: the next table
                continue
    except Exception:
        pass  # what was read so far counts; the file's bytes are still searched as any binary's
    finally:
        database.close()
    return list(dict.fromkeys(found))
