"""A unit's compressed files are scrubbed inside: a gzip, bzip2, xz or zlib stream and a zip archive (its members
and their names) hold no secret after the scrub, stay valid in their own format with the rest of their content,
and are left byte for byte when they hold none; what cannot be read whole (a bomb, an encrypted member) is
reported, never called clean."""
from __future__ import annotations

import base64
import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
import zlib

import pytest

from evalkit.grid import compressed
from evalkit.grid.scrub import Scrubbed, scrub_folder

SECRET = "Qz7rTp4WvX9mKd2L"
TEXT = f"step 1 ok\nkey={SECRET}\nstep 2 ok\n".encode()


def _zip(members: dict[str, bytes], method=zipfile.ZIP_DEFLATED) -> bytes:
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return written.getvalue()


def _tgz(data: bytes) -> bytes:
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w:gz") as archive:
        info = tarfile.TarInfo("run/log.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return written.getvalue()


READERS = {"log.gz": gzip.decompress, "log.bz2": bz2.decompress, "log.xz": lzma.decompress,
           "state.zlib": zlib.decompress,
           "results.zip": lambda d: b"".join(zipfile.ZipFile(io.BytesIO(d)).read(n)
                                             for n in zipfile.ZipFile(io.BytesIO(d)).namelist()),
           "run.tgz": lambda d: tarfile.open(fileobj=io.BytesIO(d)).extractfile("run/log.txt").read()}


def test_compressed_files_lose_the_secret_inside_and_stay_readable(tmp_path):
    unit = tmp_path / "unit"
    unit.mkdir()
    nested = _zip({"inner.gz": gzip.compress(TEXT)}, zipfile.ZIP_STORED)
    files = {"log.gz": gzip.compress(TEXT), "log.bz2": bz2.compress(TEXT), "log.xz": lzma.compress(TEXT),
             "state.zlib": zlib.compress(TEXT * 3),
             "results.zip": _zip({"a.txt": TEXT, f"b_{SECRET}.txt": b"named after the key", "c.bin": b"\x00" * 9}),
             "run.tgz": _tgz(TEXT), "nested.zip": nested}
    for name, data in files.items():
        (unit / name).write_bytes(data)
    clean = gzip.compress(b"nothing to hide\n")
    (unit / "clean.gz").write_bytes(clean)
    assert scrub_folder(unit, [SECRET]).kept == ()
    for name, read in READERS.items():
        content = read((unit / name).read_bytes())
        assert SECRET.encode() not in content and b"step 2 ok" in content and b"***" in content, name
    names = zipfile.ZipFile(unit / "results.zip").namelist()
    assert names[0] == "a.txt" and SECRET not in "".join(names) and "***" in names[1]
    assert zipfile.ZipFile(unit / "results.zip").read("c.bin") == b"\x00" * 9
    inner = zipfile.ZipFile(unit / "nested.zip").read("inner.gz")
    assert SECRET.encode() not in gzip.decompress(inner)
    assert (unit / "clean.gz").read_bytes() == clean  # nothing to mask: not written again


def test_what_cannot_be_read_whole_is_reported_not_called_clean(tmp_path, monkeypatch):
    """A stream inflating past the limit (a bomb), an encrypted zip member and a zip of too many members: the unit's
    scrub reports each file with why; a corrupt stream is scrubbed as bytes."""
    monkeypatch.setattr(compressed, "MAX_INFLATED", 1000)
    monkeypatch.setattr(compressed, "MAX_MEMBERS", 3)
    unit = tmp_path / "unit"
    unit.mkdir()
    (unit / "bomb.gz").write_bytes(gzip.compress(b"\x00" * 100_000))
    encrypted = bytearray(_zip({"secret.txt": TEXT}))
    encrypted[6] |= 0x1  # the local header's flag: encrypted
    central = encrypted.rfind(b"PK\x01\x02")
    encrypted[central + 8] |= 0x1
    (unit / "locked.zip").write_bytes(bytes(encrypted))
    (unit / "cut.gz").write_bytes(gzip.compress(TEXT)[:-12] + b"key=" + SECRET.encode())
    (unit / "many.zip").write_bytes(_zip({f"{n}.txt": b"x" for n in range(4)}))
    kept = scrub_folder(unit, [SECRET]).kept
    assert any(k.startswith("many.zip (it holds 4 zip members, more than 3") for k in kept), kept
    assert any(k.startswith("bomb.gz (its gzip content inflates past 1000 bytes") for k in kept), kept
    assert any(k.startswith("locked.zip (its zip member 'secret.txt' is encrypted") for k in kept), kept
    assert not any(k.startswith("cut.gz") for k in kept) and SECRET.encode() not in (unit / "cut.gz").read_bytes()


@pytest.mark.parametrize("head, kind", [(b"\x1f\x8b\x08", "gzip"), (b"BZh9", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
                                        (b"PK\x03\x04", "zip"), (b"x\x01", "zlib"), (b"xy", None), (b"", None)])
def test_a_file_is_read_as_compressed_by_its_first_bytes(head, kind):
    assert compressed.compression_of(head) == kind


def test_a_compressed_log_in_a_tar_a_legacy_lzma_file_and_a_zstd_file(tmp_path):
    """A ``.gz`` log inside a plain tar and inside a ``.tar.gz``, a member named after the key, and a file in the
    ``.lzma`` format xz replaced lose the secret and stay readable; a zstd file, which the standard library cannot
    read, is reported."""
    unit = tmp_path / "unit"
    unit.mkdir()

    def tar(members: dict[str, bytes], mode: str = "w") -> bytes:
        written = io.BytesIO()
        with tarfile.open(fileobj=written, mode=mode) as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return written.getvalue()

    members = {"logs/app.log.gz": gzip.compress(TEXT), f"keys/{SECRET}.txt": b"named", "plain.txt": b"step 3 ok"}
    (unit / "bundle.tar").write_bytes(tar(members))
    (unit / "logs.tar.gz").write_bytes(tar(members, "w:gz"))
    (unit / "legacy.lzma").write_bytes(lzma.compress(TEXT, format=lzma.FORMAT_ALONE))
    (unit / "train.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    kept = scrub_folder(unit, [SECRET]).kept
    assert kept == ("train.log.zst (its zstd content is not read (the kit reads gzip, bzip2, xz, lzma, zlib, zip "
                    "and tar))",), kept
    for name, opened in (("bundle.tar", lambda p: tarfile.open(p)),
                         ("logs.tar.gz", lambda p: tarfile.open(p, "r:gz"))):
        with opened(unit / name) as archive:
            names = archive.getnames()
            log = gzip.decompress(archive.extractfile("logs/app.log.gz").read())
            assert archive.extractfile("plain.txt").read() == b"step 3 ok"
        assert SECRET.encode() not in log and b"step 2 ok" in log and SECRET not in "".join(names), (name, names)
    content = lzma.decompress((unit / "legacy.lzma").read_bytes(), format=lzma.FORMAT_ALONE)
    assert SECRET.encode() not in content and b"step 2 ok" in content


def test_gzip_with_bytes_after_it_zlib_with_a_small_window_and_an_old_tar_are_read(tmp_path):
    """``zcat`` reads past junk after a gzip file's last member (Python's gzip refuses it); zlib's header names
    windows other than 32 KB (``28 cf``...); a V7 tar has no ``ustar`` mark. Each was scrubbed only as bytes."""
    unit = tmp_path / "unit"
    unit.mkdir()
    (unit / "junk.gz").write_bytes(gzip.compress(TEXT) + gzip.compress(TEXT) + b"JUNK-AFTER")
    small = zlib.compressobj(wbits=9)
    (unit / "small.zlib").write_bytes(small.compress(TEXT) + small.flush())
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        info = tarfile.TarInfo("x.gz")
        data = gzip.compress(TEXT)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    old = bytearray(written.getvalue())
    old[257:265] = b"\0" * 8  # no ustar mark: the V7 header, its checksum written again
    old[148:156] = b" " * 8
    old[148:156] = b"%06o\0 " % sum(old[:512])
    (unit / "old.tar").write_bytes(bytes(old))
    assert scrub_folder(unit, [SECRET]).kept == ()
    junk = (unit / "junk.gz").read_bytes()
    assert junk.endswith(b"JUNK-AFTER") and SECRET.encode() not in zlib.decompressobj(wbits=31).decompress(junk)
    assert SECRET.encode() not in zlib.decompress((unit / "small.zlib").read_bytes())
    with tarfile.open(unit / "old.tar") as archive:
        assert SECRET.encode() not in gzip.decompress(archive.extractfile("x.gz").read())


@pytest.mark.parametrize("name, packed, read", [
    ("state.zlib", zlib.compress(TEXT), lambda d: zlib.decompressobj().decompress(d)),
    ("log.bz2", bz2.compress(TEXT) + bz2.compress(b"second stream\n"), None),
    ("log.xz", lzma.compress(TEXT) + lzma.compress(b"second stream\n"), None),
    ("log.lzma", lzma.compress(TEXT, format=lzma.FORMAT_ALONE), None)], ids=["zlib", "bzip2", "xz", "lzma"])
def test_bytes_after_a_stream_are_kept_when_it_is_written_again(tmp_path, name, packed, read):
    """A zlib header followed by other data, or bzip2 and xz streams with bytes after the last: the streams lose
    the secret, every stream is kept, and the bytes after them are kept (the file's own scrub masks them)."""
    unit = tmp_path / "unit"
    unit.mkdir()
    after = b"\n-- appended by another tool: rows 1-3 --\nrow 1\nrow 2\nrow 3\n"
    (unit / name).write_bytes(packed + after)
    assert scrub_folder(unit, [SECRET]).kept == ()
    data = (unit / name).read_bytes()
    assert data.endswith(after), data[-80:]
    stream = data[:-len(after)]
    inside = read(stream) if read else (bz2.decompress(stream) if name.endswith("bz2") else
                                        lzma.decompress(stream, format=lzma.FORMAT_AUTO))
    assert SECRET.encode() not in inside and b"step 2 ok" in inside
    if name.endswith(("bz2", "xz")):
        assert inside.endswith(b"second stream\n")


def test_a_tar_owner_name_and_masked_names_that_meet_keep_every_member(tmp_path):
    """A tar member whose owner name is the secret was masked in place, which broke its header's checksum: a
    reader then saw one member of three. Two members whose names hold two secrets were both named
    ``cache-***.json`` after the scrub, and extracting the zip kept one. Each archive is written again with every
    member, the secret gone from every header field, and masked names told apart."""
    other = "Wm3Kx9PqT7vLd2Zr"
    unit = tmp_path / "unit"
    unit.mkdir()
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for number in range(3):
            info = tarfile.TarInfo(f"results/part{number}.csv")
            data = f"row,{number}\n".encode()
            info.size = len(data)
            info.uname, info.gname = (SECRET, f"g{SECRET}") if number == 1 else ("ann", "staff")
            archive.addfile(info, io.BytesIO(data))
    (unit / "results.tar").write_bytes(written.getvalue())
    (unit / "caches.zip").write_bytes(_zip({f"cache-{SECRET}.json": b"first\n", f"cache-{other}.json": b"second\n"}))
    assert scrub_folder(unit, [SECRET, other]).kept == ()
    with tarfile.open(unit / "results.tar") as archive:
        members = archive.getmembers()
        assert [m.name for m in members] == [f"results/part{n}.csv" for n in range(3)]
        assert [archive.extractfile(m).read() for m in members] == [f"row,{n}\n".encode() for n in range(3)]
        assert SECRET not in members[1].uname + members[1].gname
    with zipfile.ZipFile(unit / "caches.zip") as archive:
        assert {name: archive.read(name) for name in archive.namelist()} == {
            "cache-***.json": b"first\n", "cache-***.json.2": b"second\n"}
    assert not any(s.encode() in (unit / name).read_bytes() for s in (SECRET, other)
                   for name in ("results.tar", "caches.zip"))


def test_an_lzma_file_with_other_settings_and_a_second_stream_after_the_first_are_read(tmp_path):
    """A ``.lzma`` file written with ``lc=0`` opens with another byte than the default's, and was read as bytes
    only; a second zlib stream after the first, and a gzip after a bzip2, were kept unread. Each is scrubbed
    inside now, and what follows a stream is kept."""
    unit = tmp_path / "unit"
    unit.mkdir()
    (unit / "lc0.lzma").write_bytes(lzma.compress(TEXT, format=lzma.FORMAT_ALONE, filters=[
        {"id": lzma.FILTER_LZMA1, "lc": 0, "lp": 0, "pb": 0, "dict_size": 2**16}]))
    (unit / "two.z").write_bytes(zlib.compress(b"first stream\n") + zlib.compress(TEXT))
    (unit / "mixed.bz2").write_bytes(bz2.compress(b"first stream\n") + gzip.compress(TEXT) + b"tail")
    assert scrub_folder(unit, [SECRET]).kept == ()
    assert lzma.decompress((unit / "lc0.lzma").read_bytes(), format=lzma.FORMAT_ALONE) == TEXT.replace(
        SECRET.encode(), b"***")
    first = zlib.decompressobj()
    assert first.decompress((unit / "two.z").read_bytes()) == b"first stream\n"
    assert zlib.decompress(first.unused_data) == TEXT.replace(SECRET.encode(), b"***")
    first = bz2.BZ2Decompressor()
    assert first.decompress((unit / "mixed.bz2").read_bytes()) == b"first stream\n"
    rest = zlib.decompressobj(wbits=31)
    assert rest.decompress(first.unused_data) == TEXT.replace(SECRET.encode(), b"***") and rest.unused_data == b"tail"


def test_a_zip_after_a_stub_is_read_inside_and_keeps_its_stub(tmp_path):
    """A self-extracting archive (a stub, then a zip) or a zipapp (a ``#!`` line, then a zip) opens with other
    bytes than a zip's: its deflated members were scrubbed only as bytes, so a secret inside stayed. The archive is
    read inside and written again after the same stub; ``unzip`` and Python read it."""
    import shutil
    import subprocess

    unit = tmp_path / "unit"
    unit.mkdir()
    stub = b"#!/usr/bin/env python3\n"
    (unit / "tool.pyz").write_bytes(stub + _zip({"__main__.py": b"print('hi')\n", "config.txt": TEXT}))
    assert scrub_folder(unit, [SECRET]).kept == ()
    data = (unit / "tool.pyz").read_bytes()
    assert data.startswith(stub) and SECRET.encode() not in data
    with zipfile.ZipFile(unit / "tool.pyz") as archive:
        assert archive.read("__main__.py") == b"print('hi')\n"
        assert archive.read("config.txt") == TEXT.replace(SECRET.encode(), b"***")
    if shutil.which("unzip"):
        tested = subprocess.run(["unzip", "-t", str(unit / "tool.pyz")], capture_output=True, text=True)
        assert tested.returncode in (0, 1) and "No errors detected" in tested.stdout, tested.stdout + tested.stderr


def test_headers_links_padding_and_stored_members_stay_valid_when_scrubbed(tmp_path):
    """What a hostile reading found, each now kept valid: a tar with an accented name and no secret (its ustar field
    reads ``r?sum?``, masked as a query, broke the header's checksum); a hard link to a member renamed ``.2`` (it
    pointed at the other member); an xz with NUL padding before a second stream (the stream was left unread); a
    zip rewritten with a stored member holding the secret (its CRC broke); a gzip whose extra field holds the
    secret (the mask reached into the compressed bytes); five zlib streams one after another (counted as nesting)."""
    other = "Wm3Kx9PqT7vLd2Zr"
    unit = tmp_path / "unit"
    unit.mkdir()

    def tar(members, fmt=tarfile.PAX_FORMAT):
        written = io.BytesIO()
        with tarfile.open(fileobj=written, mode="w", format=fmt) as archive:
            for info, data in members:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        return written.getvalue()

    link = tarfile.TarInfo("hl")
    link.type, link.linkname = tarfile.LNKTYPE, f"cache-{other}.json"
    (unit / "accented.tar").write_bytes(tar([(tarfile.TarInfo("r\u00e9sum\u00e9-final.txt"), b"third\n"),
                                             (tarfile.TarInfo("after.txt"), b"fourth\n")]))
    (unit / "linked.tar").write_bytes(tar([(tarfile.TarInfo(f"cache-{SECRET}.json"), b"first\n"),
                                           (tarfile.TarInfo(f"cache-{other}.json"), b"second\n"), (link, b"")]))
    (unit / "padded.xz").write_bytes(lzma.compress(b"clean\n") + b"\0" * 8 + lzma.compress(TEXT))
    (unit / "stored.zip").write_bytes(_zip({"plain.txt": TEXT, f"n-{SECRET}.txt": b"x\n"}, zipfile.ZIP_STORED))
    extra = base64.b64encode(SECRET.encode())
    header = b"\x1f\x8b\x08\x04\0\0\0\0\0\xff" + len(extra + b"AB\0\0").to_bytes(2, "little")
    deflate = zlib.compressobj(wbits=-15)
    body = deflate.compress(b"clean line\n") + deflate.flush()
    trailer = zlib.crc32(b"clean line\n").to_bytes(4, "little") + (11).to_bytes(4, "little")
    (unit / "extra.gz").write_bytes(header + b"AB" + len(extra).to_bytes(2, "little") + extra + body + trailer)
    (unit / "five.z").write_bytes(b"".join(zlib.compress(f"line {n}\n".encode()) for n in range(4))
                                  + zlib.compress(TEXT))
    assert scrub_folder(unit, [SECRET, other]).kept == ()
    with tarfile.open(unit / "accented.tar") as archive:
        assert [archive.extractfile(m).read() for m in archive] == [b"third\n", b"fourth\n"]
    with tarfile.open(unit / "linked.tar") as archive:
        assert archive.getnames() == ["cache-***.json", "cache-***.json.2", "hl"]
        assert archive.extractfile("hl").read() == b"second\n"
    assert lzma.decompress((unit / "padded.xz").read_bytes()) == b"clean\n" + TEXT.replace(SECRET.encode(), b"***")
    with zipfile.ZipFile(unit / "stored.zip") as archive:
        assert archive.testzip() is None and archive.read("plain.txt") == TEXT.replace(SECRET.encode(), b"***")
    assert gzip.decompress((unit / "extra.gz").read_bytes()) == b"clean line\n"
    data, streams = (unit / "five.z").read_bytes(), []
    while data:
        stream = zlib.decompressobj()
        streams.append(stream.decompress(data))
        data = stream.unused_data
    assert streams[:4] == [f"line {n}\n".encode() for n in range(4)]
    assert streams[4] == TEXT.replace(SECRET.encode(), b"***")
    for name in ("accented.tar", "linked.tar", "padded.xz", "stored.zip", "extra.gz", "five.z"):
        assert SECRET.encode() not in (unit / name).read_bytes() and extra not in (unit / name).read_bytes(), name


def test_a_zip_with_an_encrypted_member_says_its_readable_members_keep_their_secret(tmp_path):
    """An encrypted member stopped the reading: a readable member beside it holding the secret was neither
    scrubbed nor named. The archive cannot be written again without the encrypted member, so the report says the
    secret stays in its other members."""
    unit = tmp_path / "unit"
    unit.mkdir()
    data = bytearray(_zip({"a.txt": b"sealed\n", "b.txt": TEXT}))
    local = data.find(b"PK\x03\x04")
    data[local + 6] |= 0x1  # a.txt marked encrypted, in its local header and in the central directory
    central = data.find(b"PK\x01\x02")
    data[central + 8] |= 0x1
    (unit / "e.zip").write_bytes(bytes(data))
    kept = scrub_folder(unit, [SECRET]).kept
    assert kept == ("e.zip (its zip member 'a.txt' is encrypted and is not read; its members that hold a secret "
                    "could not be written again beside it, so the secret stays in them)",), kept


def test_a_damaged_archive_is_reported_and_every_other_file_is_still_scrubbed(tmp_path):
    """A tar cut mid-member (a unit killed while writing it) raised out of the folder's scrub: every file not yet
    reached kept its secret. A stored zip member holding the secret was masked in place and its CRC broke; a tar
    member whose pax size record differs from its header's lost the members after it. Each is mended or said."""
    unit = tmp_path / "unit"
    (unit / "sub" / "deeper").mkdir(parents=True)
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in (("one.txt", TEXT), ("two.txt", b"x" * 5000)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    (unit / "sub" / "deeper" / "cut.tar").write_bytes(written.getvalue()[:1024 + 512 + 700])
    (unit / "stdout.txt").write_text(f"token {SECRET}\n")
    (unit / "sub" / "log.txt").write_text(f"token {SECRET}\n")
    (unit / "results.zip").write_bytes(_zip({"results.json": b'{"acc": 0.9, "key": "' + SECRET.encode() + b'"}'},
                                            zipfile.ZIP_STORED))
    big = tarfile.TarInfo("big.bin")
    big.pax_headers = {"comment": "size record below"}
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w", format=tarfile.PAX_FORMAT) as archive:
        big.size = 1024
        archive.addfile(big, io.BytesIO(b"B" * 1024))
        two = tarfile.TarInfo("two.txt")
        two.size, two.uname = 5, SECRET
        archive.addfile(two, io.BytesIO(b"world"))
    (unit / "pax.tar").write_bytes(written.getvalue())
    kept = scrub_folder(unit, [SECRET]).kept
    assert kept == ("sub/deeper/cut.tar (its tar content cannot be read whole (ReadError))",), kept
    for name in ("stdout.txt", "sub/log.txt", "results.zip", "pax.tar"):
        assert SECRET.encode() not in (unit / name).read_bytes(), name
    with zipfile.ZipFile(unit / "results.zip") as archive:
        assert archive.read("results.json").startswith(b'{"acc": 0.9, "key": "***')
    with tarfile.open(unit / "pax.tar") as archive:
        assert [(m.name, m.size) for m in archive] == [("big.bin", 1024), ("two.txt", 5)]


def test_a_tar_whose_pax_record_declares_a_huge_length_does_not_stop_the_scrub(tmp_path):
    """A pax record of length 10**20 made Python's tar reader raise OverflowError, which no catch named: the
    folder's scrub stopped, and another file kept its password."""
    unit = tmp_path / "unit"
    unit.mkdir()
    record = b"99999999999999999999 path=x\n"
    header = bytearray(512)
    header[:14], header[100:108], header[124:136] = b"././@PaxHeader", b"0000644\0", b"%011o\0" % len(record)
    header[156:157], header[257:263], header[263:265] = b"x", b"ustar\0", b"00"
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    (unit / "a.tar").write_bytes(bytes(header) + record.ljust(512, b"\0") + bytes(1024))
    (unit / "other.txt").write_text(f"password = {SECRET}\n")
    scrub_folder(unit, [SECRET])
    assert SECRET not in (unit / "other.txt").read_text()


@pytest.mark.parametrize("name,packed,read", [
    ("log.jsonl.gz", gzip.compress, lambda d: zlib.decompressobj(wbits=47).decompress(d)),
    ("log.jsonl.xz", lzma.compress, lambda d: lzma.LZMADecompressor().decompress(d)),
    ("log.jsonl.zlib", zlib.compress, lambda d: zlib.decompressobj().decompress(d))])
def test_a_stream_cut_short_loses_the_secret_in_what_was_written(tmp_path, name, packed, read):
    """A unit stopped while writing its compressed log leaves the stream cut: what was written is still read by
    ``zcat`` and its kind, so it is read up to the cut, scrubbed, and written again as a whole stream. (A bzip2
    block cut short cannot be read at all: its bytes are scrubbed as they are.)"""
    lines = [f'{{"step": {step}, "loss": {step / 100}}}\n' for step in range(3000)]
    lines.insert(1500, f'{{"db": "postgres://me:{SECRET}@db/x"}}\n')
    text = "".join(lines).encode()
    packed_text = packed(text)
    (tmp_path / name).write_bytes(packed_text[:int(len(packed_text) * 0.8)])
    assert SECRET.encode() in read((tmp_path / name).read_bytes())
    assert scrub_folder(tmp_path, [SECRET]).kept == ()
    inflated = read((tmp_path / name).read_bytes())
    assert SECRET.encode() not in inflated and b'"db": "postgres://***@db/x"' in inflated
    assert text.startswith(inflated.replace(b"***", f"me:{SECRET}".encode()))


def test_files_of_numbers_and_compressed_files_holding_no_secret_keep_every_byte(tmp_path):
    """Numbers stored as bytes (float weights hold "?" everywhere: 0x3F) make short strings by chance that read as
    a URL's query or user-info ("b:)@jg"); masked, they changed weights silently and broke compressed files'
    checksums. A file holding no secret keeps every byte, the secret given or not."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(3)
    log = "".join(f'{{"step": {step}, "loss": {step / 100}}}\n' for step in range(20_000)).encode()
    np.save(tmp_path / "weights.npy", rng.normal(size=(200, 500)).astype(np.float32))
    np.savez(tmp_path / "stored.npz", w=rng.normal(size=(200, 500)).astype(np.float32))
    np.savez_compressed(tmp_path / "deflated.npz", w=rng.normal(size=(200, 256)).astype(np.float32))
    (tmp_path / "half.bin").write_bytes(rng.normal(size=250_000).astype(np.float16).tobytes())
    (tmp_path / "random.bin").write_bytes(rng.bytes(500_000))
    np.save(tmp_path / "constant.npy", np.full(100_000, 0.9, np.float32))  # "fff?" over and over: one string
    for name, packer in (("log.gz", gzip.compress), ("log.zlib", zlib.compress), ("log.zip", None)):
        (tmp_path / name).write_bytes(packer(log) if packer else _zip({"log.jsonl": log}))
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    assert scrub_folder(tmp_path, []) == Scrubbed() and scrub_folder(tmp_path, [SECRET]) == Scrubbed()
    assert [name for name, data in before.items() if (tmp_path / name).read_bytes() != data] == []


def test_a_compressed_blob_inside_a_database_loses_its_secret_and_stays_readable(tmp_path):
    """A gzip or zlib blob stored in a sqlite database (an HTTP cache's bodies) is a complete stream inside
    another file: it is inflated, scrubbed, and written back over its old bytes, which the database reads as
    before; the other rows keep every byte."""
    import sqlite3

    key = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    database = tmp_path / "cache.db"
    with sqlite3.connect(database) as connection:
        connection.execute("create table responses(key, body)")
        rows = [("k1", gzip.compress(f'{{"url": "https://u:{SECRET}@api/x", "n": 1}}'.encode())),
                ("k2", zlib.compress(f"token={key}\nstep 2 ok\n".encode())),
                ("k3", zlib.compress(b"no secret in this one " * 20))]
        connection.executemany("insert into responses values(?, ?)", rows)
    connection.close()
    assert scrub_folder(tmp_path, [SECRET]).kept == ()
    with sqlite3.connect(database) as connection:
        bodies = dict(connection.execute("select key, body from responses"))
    connection.close()
    assert gzip.decompress(bodies["k1"]) == b'{"url": "https://***@api/x", "n": 1}'
    assert zlib.decompress(bodies["k2"]) == b"token=***\nstep 2 ok\n"
    assert bodies["k3"] == rows[2][1]


def test_blobs_inside_a_file_nested_damaged_or_many_are_each_scrubbed_or_named(tmp_path):
    """A stream kept inside another (a gzip in a zlib stream's stored blocks) is scrubbed with it, not written
    over it; a blob whose content cannot be read whole (a cut tar) is named while the blobs after it are still
    masked; a file with a malformed NumPy header stops nothing."""
    inner = gzip.compress(f"token={SECRET}\n".encode() * 3)
    outer = zlib.compress(b"head " + inner + b" tail", 0)  # level 0: the gzip stands in stored blocks
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w") as archive:
        info = tarfile.TarInfo("x.txt")
        info.size = 4000
        archive.addfile(info, io.BytesIO(b"x" * 4000))
    cut_tar = zlib.compress(written.getvalue()[:1500])
    later = zlib.compress(f"password={SECRET}\n".encode())
    (tmp_path / "cache.bin").write_bytes(b"\x01\x02row|" + outer + b"|" + cut_tar + b"|" + later + b"|\xff\x00")
    header = b"{'descr': ('<i4',), 'fortran_order': False, 'shape': (3,), }".ljust(117) + b"\n"
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(12))
    (tmp_path / "notes.txt").write_text(f"key {SECRET}\n")
    kept = scrub_folder(tmp_path, [SECRET]).kept
    assert [entry.split(" (")[0] for entry in kept] == ["cache.bin"], kept
    data = (tmp_path / "cache.bin").read_bytes()
    assert SECRET.encode() not in data and SECRET not in (tmp_path / "notes.txt").read_text()
    start = data.index(b"|") + 1
    inflated = zlib.decompressobj().decompress(data[start:])
    assert inflated.startswith(b"head ") and inflated.endswith(b" tail")
    assert gzip.decompress(inflated[5:-5]) == b"token=***\n" * 3
    assert zlib.decompressobj().decompress(data[data.rindex(b"x\xda"):]) == b"password=***\n"
