"""A compressed file in a unit's folder scrubbed inside: a gzip, bzip2, xz or zlib stream, or a zip archive's
compressed members, is read (each member of a zip on its own), what it holds is scrubbed as a file of the folder is,
and the file is written again, in its own format, only where that changed something; a member's name holding a
secret is masked, and two masked names that meet are kept apart (``name``, ``name.2``). A zip's stored members (a
torch checkpoint's tensors) stand in it as they are, and the archive's own scrub masks them in place, unless a
member is itself a compressed file or the archive is written again anyway (then they are scrubbed as they are
written, so their checksums hold). A ``.tar.gz`` is a tar inside gzip: the tar is scrubbed in place like any
binary, which keeps it a tar, its header checksums summed again (:func:`restore_tar_checksums`).

Streams that follow each other are read in turn (xz's padding between them skipped), and bytes after the last are
kept, read inside where they begin another compressed file (up to :data:`MAX_CHAIN` in a row). A zip after other
bytes (a self-extracting stub, a zipapp's ``#!`` line) is read too, and written again after the same bytes. A
legacy ``.lzma`` stream is read like xz, and a tar's members that are themselves compressed (a ``.gz`` log in a
tar) are read and the tar written again, every text of its headers masked (names, links, owners, pax records).
What cannot be read whole is said, not guessed: a stream or member that inflates past :data:`MAX_INFLATED` bytes
(a decompression bomb, or data too large to check), an encrypted zip member (the other members are read on), a
zip or tar of more than :data:`MAX_MEMBERS` members, archives nested deeper than :data:`MAX_NESTING`, a zstd file
(no reader in the standard library). :func:`scrub_inside` returns why, and the folder's scrub reports the file. A
file whose stream is corrupt is not a compressed file the kit can read: its bytes are scrubbed as they are.
"""
from __future__ import annotations

import bz2
import copy as copying
import hashlib
import io
import lzma
import os
import shutil
import struct
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Callable, Iterator

from evalkit.models.encoded_runs import zlib_header

__all__ = ["HEAD_BYTES", "MAX_CHAIN", "MAX_INFLATED", "MAX_NESTING", "MAX_MEMBERS", "compression_of", "scrub_inside",
           "tar_header_offsets", "restore_tar_checksums", "zip_stored_entries", "restore_zip_crcs",
           "NotReadWhole", "inner_contents"]

MAX_INFLATED = 2**30  # bytes a compressed file's content may inflate to, all members together
MAX_NESTING = 3  # archives inside archives read this deep
MAX_MEMBERS = 100_000  # members of one zip archive read
MAX_CHAIN = 64  # compressed files one after another in one file (zlib streams appended to a log) read
_CHUNK = 2**20

HEAD_BYTES = 512  # bytes read to tell a file's format (a tar's magic stands at 257)
# What Python's readers raise on a damaged or hostile archive or stream (a tar cut mid-member, a pax record of a
# huge length, a zip member of an unknown method, a bad checksum): caught wherever an archive is opened or read
_READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError, struct.error,
               OSError, EOFError, ValueError, ArithmeticError, NotImplementedError, RuntimeError)


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
    if zlib_header(head):
        return "zlib"
    return None


def inner_contents(data: bytes, budget: list[int]) -> Iterator[tuple[str, bytes]]:
    """What a compressed file or an archive in memory holds, read and never written: a gzip, bzip2, xz, lzma or
    zlib stream's content (named ``""``), or each file of a zip or an uncompressed tar with its name, as long as
    ``budget[0]`` (bytes, shared with what the caller reads inside what it yields) lasts: each piece is taken from
    it, an empty member as 512 bytes (a header's worth), and a member larger than what is left is not read; nothing
    from what cannot be read (a damaged stream, an encrypted member: the folder's scrub says so of the file).

    >>> import gzip, io, zipfile; written = io.BytesIO()
    >>> with zipfile.ZipFile(written, "w") as archive: archive.writestr("conf/token", "Tk-1")
    >>> list(inner_contents(written.getvalue(), [1000])), list(inner_contents(gzip.compress(b"a log"), [1000]))
    ([('conf/token', b'Tk-1')], [('', b'a log')])
    """
    kind = compression_of(data[:HEAD_BYTES])
    if budget[0] <= 0:  # (zlib reads a length of 0 as no limit)
        return
    if kind in _DECOMPRESSORS:
        try:
            content = _DECOMPRESSORS[kind]().decompress(data, budget[0])
        except _READ_ERRORS:
            return
        budget[0] -= max(len(content), _LEAST_COST)
        yield "", content
    elif kind == "zip":
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except _READ_ERRORS:
            return
        with archive:
            for member in archive.infolist()[:MAX_MEMBERS]:
                if member.is_dir():
                    continue
                if member.file_size > budget[0] or budget[0] <= 0:
                    continue
                try:
                    content = archive.read(member)
                except _READ_ERRORS:  # an encrypted or damaged member: the others are read on
                    continue
                budget[0] -= max(len(content), _LEAST_COST)
                yield member.filename, content
    elif kind == "tar":
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
                for number, member in enumerate(archive):
                    if number >= MAX_MEMBERS or budget[0] <= 0:
                        break
                    if member.isfile() and member.size <= budget[0]:
                        reader = archive.extractfile(member)
                        content = reader.read() if reader else b""
                        budget[0] -= max(len(content), _LEAST_COST)
                        yield member.name, content
        except _READ_ERRORS:  # a tar cut mid-member: what was read counts
            return


_LEAST_COST = 512  # bytes of the budget an empty member takes: a hostile archive of empty members ends too


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
    return len(head) >= 512 and bool(head[0]) and head[0] != 0x20 and _checksum_holds(head[:512])


def _checksum(block: bytes) -> int:
    """A tar header's checksum: its bytes summed, the checksum's own field read as spaces."""
    return sum(block[:148]) + 8 * 0x20 + sum(block[156:512])


def _checksum_holds(block: bytes) -> bool:
    """Whether a 512-byte tar header block's checksum field holds its :func:`_checksum` (octal, NUL or space ended)."""
    try:
        stored = int(block[148:156].replace(b"\0", b" ").strip() or b"-1", 8)
    except ValueError:
        return False
    return len(block) == 512 and stored == _checksum(block)


def tar_header_offsets(path: Path) -> list[int]:
    """Where each header block of the tar ``path`` stands whose checksum holds (a member's own header, and the pax or
    GNU long-name header before it), as Python's reader walks the archive (a pax ``size`` record, GNU sparse
    extension blocks and member data shaped like a header are its to tell): the blocks
    :func:`restore_tar_checksums` writes again. An archive the reader cannot walk to its end gives none.

    >>> import io, tarfile, tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".tar") as handle:
    ...     with tarfile.open(fileobj=handle, mode="w", format=tarfile.PAX_FORMAT) as archive:
    ...         info = tarfile.TarInfo("r\u00e9sum\u00e9.txt"); info.size = 3
    ...         archive.addfile(info, io.BytesIO(b"abc"))
    ...     handle.flush()
    ...     tar_header_offsets(Path(handle.name))
    [0, 1024]
    """
    try:
        with tarfile.open(path, "r:") as archive:
            candidates = sorted({at for info in archive for at in (info.offset, info.offset_data - 512)})
    except _READ_ERRORS:
        return []
    offsets = []
    with open(path, "rb") as handle:
        for at in candidates[:2 * MAX_MEMBERS]:
            handle.seek(at)
            if _checksum_holds(handle.read(512)):
                offsets.append(at)
    return offsets


def restore_tar_checksums(path: Path, offsets: list[int]) -> None:
    """The checksum of each header block at ``offsets`` written again for its bytes as they are now: a secret
    masked in place in a header (a name, an owner) leaves the archive readable, every member after it too."""
    with open(path, "r+b") as handle:
        for at in offsets:
            handle.seek(at)
            block = handle.read(512)
            if len(block) < 512:
                continue
            handle.seek(at + 148)
            handle.write(b"%06o\0 " % _checksum(block))


def zip_stored_entries(path: Path) -> list[tuple[int, int, int | None, int | None, int, int]]:
    """The stored (not compressed, not encrypted) members of the zip in ``path``, each as (its data's offset, its
    length, its local header's CRC offset or None where a data descriptor holds it, that descriptor's CRC offset or
    None, its central directory entry's CRC offset, the CRC it records): what :func:`restore_zip_crcs` needs. None
    for a file no reader takes for a zip."""
    entries = []
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as handle:
            central = archive.start_dir
            for info in archive.infolist()[:MAX_MEMBERS]:
                handle.seek(central)
                fixed = handle.read(46)
                if fixed[:4] != b"PK\x01\x02":
                    return []
                names, extra, comment = struct.unpack("<HHH", fixed[28:34])
                here, central = central, central + 46 + names + extra + comment
                if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1 or not info.compress_size:
                    continue
                handle.seek(info.header_offset)
                local = handle.read(30)
                if local[:4] != b"PK\x03\x04":
                    continue
                start = info.header_offset + 30 + sum(struct.unpack("<HH", local[26:30]))
                described = bool(info.flag_bits & 0x8)
                descriptor = None
                if described:
                    handle.seek(start + info.compress_size)
                    descriptor = start + info.compress_size + (4 if handle.read(4) == b"PK\x07\x08" else 0)
                entries.append((start, info.compress_size, None if described else info.header_offset + 14,
                                descriptor, here + 16, info.CRC))
    except _READ_ERRORS:
        return []
    return entries


def restore_zip_crcs(path: Path, entries: list[tuple[int, int, int | None, int | None, int, int]]) -> None:
    """The CRC of each stored member of ``entries`` (:func:`zip_stored_entries`) written again where its bytes no
    longer match it: a secret masked in place in a stored member (a JSON file a writer stored uncompressed) leaves
    the member readable."""
    with open(path, "r+b") as handle:
        for start, length, local, descriptor, central, recorded in entries:
            handle.seek(start)
            crc, left = 0, length
            while left > 0:
                piece = handle.read(min(left, _CHUNK))
                if not piece:
                    break
                crc, left = zlib.crc32(piece, crc), left - len(piece)
            if crc == recorded:
                continue
            for at in (local, descriptor, central):
                if at is not None:
                    handle.seek(at)
                    handle.write(crc.to_bytes(4, "little"))


class _TooLarge(Exception):
    pass


class NotReadWhole(Exception):
    """A compressed file whose content the scrub could not read whole (:func:`scrub_inside` says why): it is
    reported, not guessed clean."""


def _scrubbed(scrub: Callable[[Path], None], copy: Path) -> str | None:
    """``scrub`` run on ``copy``; why it was not read whole (an archive nested in it too deep), else None: the rest
    of the archive is read on and written again, and the why reported."""
    try:
        scrub(copy)
    except NotReadWhole as inner:
        return str(inner)
    return None


def scrub_inside(path: Path, scrub: Callable[[Path], None], mask_name: Callable[[str], str], *,
                 depth: int = 0, chain: int = 0) -> str | None:
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
    if chain >= MAX_CHAIN:
        return f"more than {MAX_CHAIN} compressed files one after another are not read"
    private = Path(tempfile.mkdtemp(prefix="evalkit-inflate-"))
    try:
        if kind == "zip":
            return _scrub_zip(path, scrub, mask_name, private)
        if kind == "tar":
            return _scrub_tar(path, scrub, mask_name, private)
        return _scrub_stream(path, kind, scrub, mask_name, private, depth, chain)
    except _TooLarge:
        return f"its {kind} content inflates past {MAX_INFLATED} bytes and is not read"
    except _READ_ERRORS as error:
        # damaged past where it was first read (a tar cut mid-member, a member whose checksum or name is wrong):
        # said, not guessed clean; its bytes are still scrubbed as they are
        return f"its {kind} content cannot be read whole ({type(error).__name__})"
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _scrub_stream(path: Path, kind: str, scrub: Callable[[Path], None], mask_name: Callable[[str], str],
                  private: Path, depth: int, chain: int) -> str | None:
    """A gzip, bzip2, xz, lzma or zlib file: inflated into ``private``, scrubbed, deflated again in place if
    changed. Bytes after the last stream (a writer's padding, junk, another file appended) are kept; where they
    begin another compressed file (a second zlib stream, a gzip after a bzip2), that file is scrubbed inside too,
    up to :data:`MAX_CHAIN` of them; else the file's own scrub masks them. A stream cut short (its writer stopped)
    is read up to the cut, and written again as a whole stream where its scrub changed that."""
    inflated, trailing, cut = private / "content", [0], False
    try:
        with open(inflated, "wb") as out:
            for chunk in _inflate(path, kind, trailing):
                out.write(chunk)
    except EOFError:  # cut short (a job stopped while writing its log): what it holds up to the cut is read
        cut = True
    except _READ_ERRORS:
        return None  # not a stream this kit reads (corrupt): its bytes are scrubbed as they are
    if cut and not inflated.stat().st_size:
        return None
    before = _digest(inflated)
    inside = _scrubbed(scrub, inflated)
    # a gzip header's name, comment or extra field holding a secret: the stream is written again without them (masked
    # in place, a run could reach into the compressed bytes after them)
    changed = _digest(inflated) != before or (kind == "gzip" and _gzip_header_masked(path, mask_name))
    after = private / "after"
    with open(path, "rb") as original, open(after, "wb") as out:
        if not cut:  # a cut stream has nothing after it: it is written again whole, up to its cut, or left as it is
            original.seek(trailing[0])
            shutil.copyfileobj(original, out, _CHUNK)
    before = _digest(after)
    # (the file after a stream stands beside it, not inside: as deep as it, one more in the chain)
    why = scrub_inside(after, scrub, mask_name, depth=depth, chain=chain + 1) if after.stat().st_size else None
    why = inside or (f"after its {kind} stream, {why}" if why is not None else None)
    if not changed and _digest(after) == before:
        return why
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
    return why


def _gzip_header_masked(path: Path, mask_name: Callable[[str], str]) -> bool:
    """Whether the texts of the first gzip header of ``path`` (its extra field, name and comment) change when masked.

    >>> import gzip, io, tempfile
    >>> with tempfile.NamedTemporaryFile(suffix=".gz") as handle:
    ...     with gzip.GzipFile(filename="token-Qz7R.txt", mode="wb", fileobj=handle) as out: _ = out.write(b"x")
    ...     handle.flush()
    ...     _gzip_header_masked(Path(handle.name), lambda t: t.replace("Qz7R", "***"))
    True
    """
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES + 65536)
    flags, at, texts = head[3], 10, []
    if flags & 0x04 and len(head) >= at + 2:  # FEXTRA: its length, then its bytes
        length = int.from_bytes(head[at:at + 2], "little")
        texts.append(head[at + 2:at + 2 + length])
        at += 2 + length
    for flag in (0x08, 0x10):  # FNAME, FCOMMENT: each ends at a NUL byte
        if flags & flag:
            end = head.find(b"\0", at)
            end = len(head) if end < 0 else end
            texts.append(head[at:end])
            at = end + 1
    return any(mask_name(text.decode("latin-1")) != text.decode("latin-1") for text in texts)


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
            if kind == "xz":  # xz allows padding of NUL bytes, four at a time, between streams
                data, zeros = _after_padding(data, source)
                data += source.read(_CHUNK) if len(data) < len(magic) else b""
                if zeros % 4:
                    break
            if not data.startswith(magic):
                break
        if trailing is not None:
            trailing[0] = offset


def _after_padding(data: bytes, source) -> tuple[bytes, int]:
    """``data``, read on from ``source`` as needed, without the NUL bytes it starts with, and how many there were."""
    zeros = 0
    while True:
        kept = data.lstrip(b"\0")
        zeros += len(data) - len(kept)
        if kept:
            return kept, zeros
        data = source.read(_CHUNK)
        if not data:
            return b"", zeros


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
    except _READ_ERRORS:
        return None
    changed, members, total, why, unreadable = False, [], 0, None, []
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
            if info.flag_bits & 0x1:  # said, and the other members read on
                why = why or f"its zip member {mask_name(info.filename)!r} is encrypted and is not read"
                unreadable.append(info)
                continue
            copy = private / f"member-{number}"
            try:
                with archive.open(info) as source, open(copy, "wb") as out:
                    for piece in iter(lambda: source.read(_CHUNK), b""):
                        total += len(piece)
                        if total > MAX_INFLATED:
                            raise _TooLarge
                        out.write(piece)
            except _READ_ERRORS:
                why = why or f"its zip member {mask_name(info.filename)!r} cannot be read"
                unreadable.append(info)
                continue
            before = _digest(copy)
            if not info.is_dir():
                why = _scrubbed(scrub, copy) or why
            changed |= _digest(copy) != before or name != info.filename
            members.append((info, name, copy))
    if not changed:
        return why
    if unreadable:  # the archive cannot be written again without them: what its other members hold is said
        return (f"{why}; its members that hold a secret could not be written again beside it, so the secret stays "
                "in them")
    written = private / "written.zip"
    with zipfile.ZipFile(path) as archive, open(written, "wb") as handle:
        _copy_start(path, handle, _zip_start(path))  # the bytes before the archive (a stub), kept as they are
        with zipfile.ZipFile(handle, "w") as out:
            for number, (info, name, copy) in enumerate(members):
                kept = zipfile.ZipInfo(name, date_time=info.date_time)
                kept.compress_type, kept.external_attr, kept.comment = info.compress_type, info.external_attr, b""
                if copy is None and not info.is_dir():  # a stored member, scrubbed as it is written again (its CRC)
                    copy = private / f"stored-{number}"
                    with archive.open(info) as source, open(copy, "wb") as out_file:
                        shutil.copyfileobj(source, out_file, _CHUNK)
                    why = _scrubbed(scrub, copy) or why
                with (open(copy, "rb") if copy is not None else archive.open(info)) as source, \
                        out.open(kept, "w", force_zip64=True) as target:
                    shutil.copyfileobj(source, target, _CHUNK)
    _replace(written, path)
    return why


def _scrub_tar(path: Path, scrub: Callable[[Path], None], mask_name: Callable[[str], str],
               private: Path) -> str | None:
    """A tar archive: its members stand in it as they are (the archive's own scrub masks them in place), except a
    member that is itself compressed (a ``.gz`` log in a tar), which is read and scrubbed; the archive is written
    again where such a member or a member's name changed."""
    try:
        archive = tarfile.open(path, "r:")
    except _READ_ERRORS:
        return None
    changed, members, total, renamed, why = False, [], 0, {}, None
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
                    why = _scrubbed(scrub, copy) or why
                    changed |= _digest(copy) != before
            kept = copying.copy(info)  # every text of its header masked: names, link, owner, group, pax records
            if info.issparse():
                kept.type = tarfile.REGTYPE
            kept.name = _unique(name, taken) if name != info.name else name
            renamed[info.name] = kept.name
            kept.uname, kept.gname = mask_name(info.uname), mask_name(info.gname)
            kept.pax_headers = {mask_name(key): mask_name(value) if isinstance(value, str) else value
                                for key, value in info.pax_headers.items() if _pax_kept(key)}
            changed |= any(getattr(kept, field) != getattr(info, field) for field in ("name", "uname", "gname"))
            changed |= kept.pax_headers != {key: value for key, value in info.pax_headers.items() if _pax_kept(key)}
            taken.add(kept.name)
            members.append((kept, copy))
    for kept, _ in members:  # a hard link follows its target's new name; any other link target is masked
        target = kept.linkname
        kept.linkname = renamed.get(target, mask_name(target)) if kept.islnk() else mask_name(target)
        changed |= kept.linkname != target
    if not changed:
        return why
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
    return why


#: pax records a tar writer makes again from the member's own fields (as masked, renamed or resized): not copied.
_PAX_FROM_FIELDS = ("path", "linkpath", "size", "uid", "gid", "uname", "gname")


def _pax_kept(key: str) -> bool:
    """Whether a member's pax record is copied as it is into the archive written again (a sparse map is not: the
    member is written whole)."""
    return key not in _PAX_FROM_FIELDS and not key.startswith("GNU.sparse.")


def _zip_start(path: Path) -> int:
    """Where the zip archive in ``path`` begins (0 for a plain zip; after a self-extracting stub or a zipapp's
    ``#!`` line, their length); 0 too when ``path`` holds no zip archive, or one that cannot be read."""
    try:
        if not zipfile.is_zipfile(path):
            return 0
        with zipfile.ZipFile(path) as archive:
            offsets = [info.header_offset for info in archive.infolist()]
            return min(offsets) if offsets else archive.start_dir
    except _READ_ERRORS:
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
    except _READ_ERRORS:
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
