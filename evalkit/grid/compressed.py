"""A compressed file in a unit's folder scrubbed inside: a gzip, bzip2, xz or zlib stream, or a zip archive's
compressed members, is read (each member of a zip on its own), what it holds is scrubbed as a file of the folder is,
and the file is written again, in its own format, only where that changed something; a member's name holding a
secret is masked. A zip's stored members (a torch checkpoint's tensors) stand in it as they are, and the archive's
own scrub masks them in place, unless a member is itself a compressed file. A ``.tar.gz`` is a tar inside gzip:
the tar is scrubbed in place like any binary, which keeps it a tar.

A zip after other bytes (a self-extracting stub, a zipapp's ``#!`` line) is read too, and written again after the
same bytes. A legacy ``.lzma`` stream is read like xz, and a tar's members that are themselves compressed (a ``.gz`` log in a
tar) are read and the tar written again. What cannot be read whole is said, not guessed: a stream or member that
inflates past :data:`MAX_INFLATED` bytes (a decompression bomb, or data too large to check), an encrypted zip
member, a zip or tar of more than :data:`MAX_MEMBERS` members, archives nested deeper than :data:`MAX_NESTING`, a
zstd file (no reader in the standard library). :func:`scrub_inside` returns why, and the folder's scrub reports the
file. A file whose stream is corrupt is not a compressed file the kit can read: its bytes are scrubbed as they are.
"""
from __future__ import annotations

import bz2
import copy as copying
import hashlib
import lzma
import os
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["HEAD_BYTES", "MAX_INFLATED", "MAX_NESTING", "MAX_MEMBERS", "compression_of", "scrub_inside"]

MAX_INFLATED = 2**30  # bytes a compressed file's content may inflate to, all members together
MAX_NESTING = 3  # archives inside archives read this deep
MAX_MEMBERS = 100_000  # members of one zip archive read
_CHUNK = 2**20

HEAD_BYTES = 512  # bytes read to tell a file's format (a tar's magic stands at 257)


def compression_of(head: bytes) -> str | None:
    """The compressed format a file's first bytes announce, or None.

    >>> import gzip
    >>> [compression_of(b) for b in (gzip.compress(b"x")[:8], b"BZh91AY", b"PK\\x03\\x04", b"x\\x9c...", b"plain")]
    ['gzip', 'bzip2', 'zip', 'zlib', None]
    >>> compression_of(lzma.compress(b"x", format=lzma.FORMAT_ALONE)[:13]), compression_of(b"\\0" * 257 + b"ustar")
    ('lzma', 'tar')
    """
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"BZh") and head[3:4].isdigit():
        return "bzip2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if _lzma_alone_header(head):
        return "lzma"
    if head[257:262] == b"ustar" or _tar_header(head):
        return "tar"
    if len(head) >= 2 and head[0] & 0x0F == 8 and head[0] >> 4 <= 7 and not head[1] & 0x20 \
            and (head[0] * 256 + head[1]) % 31 == 0:  # zlib's header: deflate, any window, no preset dictionary
        return "zlib"
    return None


def _lzma_alone_header(head: bytes) -> bool:
    """Whether ``head`` opens a ``.lzma`` file (the format xz replaced, LZMA "alone"), as xz itself tells one: its
    properties byte valid (lc + lp at most 4), a dictionary size of 2^n or 2^n + 2^(n-1), and an uncompressed
    size that is unknown or below 2^38.

    >>> _lzma_alone_header(lzma.compress(b"x", format=lzma.FORMAT_ALONE, filters=[
    ...     {"id": lzma.FILTER_LZMA1, "lc": 0, "dict_size": 3 * 2**20}])), _lzma_alone_header(b"]" + bytes(12))
    (True, False)
    """
    if len(head) < 13 or head[0] >= 9 * 5 * 5:
        return False
    lc, lp = head[0] % 9, head[0] // 9 % 5
    dictionary = int.from_bytes(head[1:5], "little")
    size = int.from_bytes(head[5:13], "little")
    power_or_half = any(dictionary in (2**n, 2**n + 2**(n - 1)) for n in range(1, 33)) or dictionary == 1
    return lc + lp <= 4 and power_or_half and (size == 2**64 - 1 or size < 2**38)


def _tar_header(head: bytes) -> bool:
    """Whether ``head`` starts with a tar header of the old (V7) format, which has no ``ustar`` mark: a name, and
    the header's checksum (its bytes summed, the checksum's own field read as spaces) where the format keeps it.

    >>> import io, tarfile; written = io.BytesIO()
    >>> with tarfile.open(fileobj=written, mode="w", format=tarfile.GNU_FORMAT) as t: t.addfile(tarfile.TarInfo("x"))
    >>> _tar_header(written.getvalue()[:512]), _tar_header(b"x" * 512)
    (True, False)
    """
    if len(head) < 512 or not head[0] or head[0] == 0x20:
        return False
    try:
        stored = int(head[148:156].replace(b"\0", b" ").strip() or b"-1", 8)
    except ValueError:
        return False
    return stored == sum(head[:148]) + 8 * 0x20 + sum(head[156:512])


class _TooLarge(Exception):
    pass


def scrub_inside(path: Path, scrub: Callable[[Path], None], mask_name: Callable[[str], str], *,
                 depth: int = 0) -> str | None:
    """Scrub what the compressed file ``path`` holds with ``scrub`` (a file's scrub, given a private copy of each
    stream or member) and ``mask_name`` (a member's name); write ``path`` again where that changed anything.
    Returns None when done (or ``path`` is no compressed file the kit reads), else why it could not be read whole.
    """
    try:
        with open(path, "rb") as handle:
            kind = compression_of(handle.read(HEAD_BYTES))
    except OSError:
        return None
    if kind is None and _zip_start(path):  # a zip after other bytes: a self-extracting stub, a zipapp's #! line
        kind = "zip"
    if kind is None:
        return None
    if kind == "zstd":  # no reader in the standard library
        return "its zstd content is not read (the kit reads gzip, bzip2, xz, lzma, zlib, zip and tar)"
    if depth >= MAX_NESTING:
        return f"a {kind} archive nested more than {MAX_NESTING} deep is not read"
    private = Path(tempfile.mkdtemp(prefix="evalkit-inflate-"))
    try:
        if kind == "zip":
            return _scrub_zip(path, scrub, mask_name, private)
        if kind == "tar":
            return _scrub_tar(path, scrub, mask_name, private)
        return _scrub_stream(path, kind, scrub, mask_name, private, depth)
    except _TooLarge:
        return f"its {kind} content inflates past {MAX_INFLATED} bytes and is not read"
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _scrub_stream(path: Path, kind: str, scrub: Callable[[Path], None], mask_name: Callable[[str], str],
                  private: Path, depth: int) -> str | None:
    """A gzip, bzip2, xz, lzma or zlib file: inflated into ``private``, scrubbed, deflated again in place if
    changed. Bytes after the last stream (a writer's padding, junk, another file appended) are kept; where they
    begin another compressed file (a second zlib stream, a gzip after a bzip2), that file is scrubbed inside too,
    one level deeper; else the file's own scrub masks them."""
    inflated, trailing = private / "content", [0]
    try:
        with open(inflated, "wb") as out:
            for chunk in _inflate(path, kind, trailing):
                out.write(chunk)
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError):
        return None  # not a stream this kit reads whole (corrupt, or cut): its bytes are scrubbed as they are
    before = _digest(inflated)
    scrub(inflated)
    changed = _digest(inflated) != before
    after = private / "after"
    with open(path, "rb") as original, open(after, "wb") as out:
        original.seek(trailing[0])
        shutil.copyfileobj(original, out, _CHUNK)
    before = _digest(after)
    why = scrub_inside(after, scrub, mask_name, depth=depth + 1) if after.stat().st_size else None
    if why is not None:
        return f"after its {kind} stream, {why}"
    if not changed and _digest(after) == before:
        return None
    written = private / "written"
    with open(written, "wb") as out:
        if changed:
            deflate = _COMPRESSORS[kind]()
            with open(inflated, "rb") as source:
                for chunk in iter(lambda: source.read(_CHUNK), b""):
                    out.write(deflate.compress(chunk))
            out.write(deflate.flush())
        else:  # only what follows the stream changed: the stream's own bytes are kept
            _copy_start(path, out, trailing[0])
        with open(after, "rb") as source:
            shutil.copyfileobj(source, out, _CHUNK)
    _replace(written, path)
    return None


_DECOMPRESSORS = {"gzip": lambda: zlib.decompressobj(wbits=31), "zlib": zlib.decompressobj,
                  "bzip2": bz2.BZ2Decompressor, "xz": lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ),
                  "lzma": lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE)}
# gzip written with no name and no time, so the same content gives the same bytes
_COMPRESSORS = {"gzip": lambda: zlib.compressobj(wbits=31), "zlib": zlib.compressobj, "bzip2": bz2.BZ2Compressor,
                "xz": lambda: lzma.LZMACompressor(lzma.FORMAT_XZ),
                "lzma": lambda: lzma.LZMACompressor(lzma.FORMAT_ALONE)}
_MAGIC = {"gzip": b"\x1f\x8b", "bzip2": b"BZh", "xz": b"\xfd7zXZ\x00"}  # formats whose streams may follow each other


def _inflate(path: Path, kind: str, trailing: list[int] | None = None) -> Iterator[bytes]:
    """The inflated content of a stream, a chunk at a time; :class:`_TooLarge` past :data:`MAX_INFLATED`. Streams
    that follow each other (gzip members, bzip2 and xz streams) are read in turn; the offset of the bytes after the
    last one is put in ``trailing`` (``gzip`` refuses such bytes; ``zcat`` reads past them; a zlib or lzma file
    holds one stream).

    >>> import tempfile, zlib
    >>> with tempfile.NamedTemporaryFile(suffix=".z") as handle:
    ...     _ = handle.write(zlib.compress(b"a log line") + b"appended")
    ...     handle.flush()
    ...     trailing = [0]
    ...     (b"".join(_inflate(Path(handle.name), "zlib", trailing)), trailing)
    (b'a log line', [18])
    """
    total = 0
    with open(path, "rb") as source:
        data, offset = b"", 0
        while True:
            inflate = _DECOMPRESSORS[kind]()
            while not inflate.eof:
                piece = _next_piece(inflate, data or (lambda: source.read(_CHUNK)))
                data = b""
                total += len(piece)
                if total > MAX_INFLATED:
                    raise _TooLarge
                yield piece
            rest = inflate.unused_data
            offset = source.tell() - len(rest)
            magic = _MAGIC.get(kind)
            if magic is None:
                break
            data = rest + (source.read(_CHUNK) if len(rest) < len(magic) else b"")
            if not data.startswith(magic):
                break
        if trailing is not None:
            trailing[0] = offset


def _next_piece(inflate, given: bytes | Callable[[], bytes]) -> bytes:
    """At most one chunk more of a decompressor's output; input is taken from ``given`` (bytes, or a reader called
    for them) only when the decompressor has none left."""
    if isinstance(inflate, (bz2.BZ2Decompressor, lzma.LZMADecompressor)):
        if not inflate.needs_input:
            return inflate.decompress(b"", _CHUNK)
        chunk = given if isinstance(given, bytes) else given()
    else:
        chunk = inflate.unconsumed_tail or (given if isinstance(given, bytes) else given())
    if not chunk:
        raise EOFError("the stream is cut")
    return inflate.decompress(chunk, _CHUNK)


def _scrub_zip(path: Path, scrub: Callable[[Path], None], mask_name: Callable[[str], str],
               private: Path) -> str | None:
    """A zip archive: each member inflated into ``private`` and scrubbed; the archive written again, each member
    in its own compression, where a member or a name changed."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    changed, members, total = False, [], 0
    with archive:
        if len(archive.infolist()) > MAX_MEMBERS:
            return f"it holds {len(archive.infolist())} zip members, more than {MAX_MEMBERS} are not read"
        taken = {info.filename for info in archive.infolist()}  # a masked name is told apart from the others
        for number, info in enumerate(archive.infolist()):
            name = mask_name(info.filename)
            if name != info.filename:
                name = _unique(name, taken)
                taken.add(name)
            stored = info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1
            if stored and not _compressed(archive, info):
                # its bytes stand in the archive as they are: the archive's own scrub masks them in place (a
                # checkpoint's tensors keep their offsets)
                changed |= name != info.filename
                members.append((info, name, None))
                continue
            if info.flag_bits & 0x1:
                return f"its zip member {mask_name(info.filename)!r} is encrypted and is not read"
            copy = private / f"member-{number}"
            try:
                with archive.open(info) as source, open(copy, "wb") as out:
                    for piece in iter(lambda: source.read(_CHUNK), b""):
                        total += len(piece)
                        if total > MAX_INFLATED:
                            raise _TooLarge
                        out.write(piece)
            except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, zlib.error, lzma.LZMAError):
                return f"its zip member {mask_name(info.filename)!r} cannot be read"
            before = _digest(copy)
            if not info.is_dir():
                scrub(copy)
            changed |= _digest(copy) != before or name != info.filename
            members.append((info, name, copy))
    if not changed:
        return None
    written = private / "written.zip"
    with zipfile.ZipFile(path) as archive, open(written, "wb") as handle:
        _copy_start(path, handle, _zip_start(path))  # the bytes before the archive (a stub), kept as they are
        out = zipfile.ZipFile(handle, "w")
        for info, name, copy in members:
            kept = zipfile.ZipInfo(name, date_time=info.date_time)
            kept.compress_type, kept.external_attr, kept.comment = info.compress_type, info.external_attr, b""
            with (open(copy, "rb") if copy is not None else archive.open(info)) as source, \
                    out.open(kept, "w", force_zip64=True) as target:
                shutil.copyfileobj(source, target, _CHUNK)
        out.close()
    _replace(written, path)
    return None


def _scrub_tar(path: Path, scrub: Callable[[Path], None], mask_name: Callable[[str], str],
               private: Path) -> str | None:
    """A tar archive: its members stand in it as they are (the archive's own scrub masks them in place), except a
    member that is itself compressed (a ``.gz`` log in a tar), which is read and scrubbed; the archive is written
    again where such a member or a member's name changed."""
    try:
        archive = tarfile.open(path, "r:")
    except (tarfile.TarError, OSError):
        return None
    changed, members, total = False, [], 0
    with archive:
        taken = {info.name for info in archive}  # a masked name is told apart from every other (no member lost)
        for number, info in enumerate(archive):
            if number >= MAX_MEMBERS:
                return f"it holds more than {MAX_MEMBERS} tar members, which are not read"
            name = mask_name(info.name)
            copy = None
            if info.isfile():
                with archive.extractfile(info) as member:
                    head = member.read(HEAD_BYTES)
                if compression_of(head) is not None:
                    total += info.size
                    if total > MAX_INFLATED:
                        raise _TooLarge
                    copy = private / f"member-{number}"
                    with archive.extractfile(info) as member, open(copy, "wb") as out:
                        shutil.copyfileobj(member, out, _CHUNK)
                    before = _digest(copy)
                    scrub(copy)
                    changed |= _digest(copy) != before
            kept = copying.copy(info)  # every text of its header masked: names, link, owner, group, pax records
            kept.name = _unique(name, taken) if name != info.name else name
            kept.linkname, kept.uname, kept.gname = (mask_name(text) for text in (info.linkname, info.uname,
                                                                                  info.gname))
            kept.pax_headers = {mask_name(key): mask_name(value) if isinstance(value, str) else value
                                for key, value in info.pax_headers.items()}
            changed |= any(getattr(kept, field) != getattr(info, field)
                           for field in ("name", "linkname", "uname", "gname", "pax_headers"))
            taken.add(kept.name)
            members.append((kept, copy))
    if not changed:
        return None
    written = private / "written.tar"
    with tarfile.open(path, "r:") as archive, tarfile.open(written, "w", format=tarfile.PAX_FORMAT) as out:
        for (kept, copy), original in zip(members, archive):
            if copy is not None:
                kept.size = copy.stat().st_size
                with open(copy, "rb") as source:
                    out.addfile(kept, source)
            elif original.isfile():
                with archive.extractfile(original) as source:
                    out.addfile(kept, source)
            else:
                out.addfile(kept)
    _replace(written, path)
    return None


def _zip_start(path: Path) -> int:
    """Where the zip archive in ``path`` begins (0 for a plain zip; after a self-extracting stub or a zipapp's
    ``#!`` line, their length); 0 too when ``path`` holds no zip archive, or one that cannot be read."""
    try:
        if not zipfile.is_zipfile(path):
            return 0
        with zipfile.ZipFile(path) as archive:
            offsets = [info.header_offset for info in archive.infolist()]
            return min(offsets) if offsets else archive.start_dir
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return 0


def _copy_start(path: Path, out, count: int) -> None:
    """The first ``count`` bytes of ``path`` written to ``out``, a chunk at a time."""
    with open(path, "rb") as original:
        while count > 0:
            piece = original.read(min(count, _CHUNK))
            if not piece:
                return
            out.write(piece)
            count -= len(piece)


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or with ``.2``, ``.3``... after it where another member already has it: two members whose masked
    names are the same (``cache-***.json``) stay two.

    >>> _unique("cache-***.json", {"cache-***.json", "cache-***.json.2"})
    'cache-***.json.3'
    """
    number, unique = 1, name
    while unique in taken:
        number += 1
        unique = f"{name}.{number}"
    return unique


def _compressed(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """Whether a zip member is itself a compressed file (a ``.gz`` stored in a zip): read inside, not as bytes."""
    try:
        with archive.open(info) as member:
            return compression_of(member.read(HEAD_BYTES)) is not None
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError):
        return False


def _digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.digest()


def _replace(written: Path, path: Path) -> None:
    """``path``'s content replaced by ``written``'s, through the file itself (its mode and its own inode kept:
    it was made a copy of its own before the scrub)."""
    with open(written, "rb") as source, open(path, "r+b") as target:
        shutil.copyfileobj(source, target, _CHUNK)
        target.truncate()
        target.flush()
        os.fsync(target.fileno())
