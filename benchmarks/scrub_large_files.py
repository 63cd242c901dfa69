"""Masking given secrets in a grid unit's large file, in place: one search of the file per written form (the
plain way, ``mmap.find`` for each) against the kit's one numpy pass for all forms (:mod:`evalkit.grid.byte_forms`),
and the kit's whole byte scan (forms, then runs of 6-byte pieces in any case).

The file: random bytes (a checkpoint's weights) with a text part every 16 MB holding each secret in several of
its written forms and a cut piece. The two ways of finding the forms must leave identical files; the whole scan
also masks the pieces, so it changes more bytes.

    python benchmarks/scrub_large_files.py [--megabytes 256]
"""
from __future__ import annotations

import argparse
import base64
import json
import mmap
import tempfile
import time
from pathlib import Path

import numpy as np

from evalkit.book.benchpage import write_measurement
from evalkit.grid import byte_forms

SECRETS = ["GpwL7Rk2Tq9Vm4Xz8", 'Kw"9\\Lm/Zq8Tx3Rp', "sk-proj-Abcdefghijklmnop1234567890", "Pässwört-Lq8Zk2Xy"]


def make_file(path: Path, megabytes: int) -> None:
    """Random bytes with, every 16 MB, each secret in other case, JSON-escaped, percent-encoded, hex, base64 and
    cut to 8 characters."""
    rng = np.random.default_rng(0)
    data = bytearray(rng.integers(0, 256, size=megabytes * 2**20, dtype=np.uint8).tobytes())
    text = "\n".join(form for secret in SECRETS for form in (
        secret.upper(), json.dumps(secret)[1:-1], "".join(f"%{b:02x}" for b in secret.encode()),
        secret.encode().hex(), base64.b64encode(secret.encode()).decode(), f"cut {secret[3:11]} here")).encode()
    for offset in range(2**20, len(data) - len(text), 16 * 2**20):
        data[offset:offset + len(text)] = text
    path.write_bytes(bytes(data))


def one_search_per_form(path: Path) -> float:
    """Every form found by its own search of the whole file, longest first, and overwritten."""
    forms = sorted(byte_forms.byte_forms(SECRETS), key=len, reverse=True)
    started = time.perf_counter()
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as data:
        for form in forms:
            index = data.find(form)
            while index >= 0:
                data[index:index + len(form)] = b"*" * len(form)
                index = data.find(form, index + len(form))
    return time.perf_counter() - started


def kit_forms(path: Path) -> float:
    """The kit's form scan alone: all forms found in one numpy pass per 4 MB."""
    scan = byte_forms._FormScan(byte_forms.byte_forms(SECRETS))
    started = time.perf_counter()
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as data:
        for start, end in list(byte_forms._form_spans(data, 0, len(data), scan)):
            data[start:end] = b"*" * (end - start)
    return time.perf_counter() - started


def kit_whole(path: Path) -> float:
    """:func:`evalkit.grid.byte_forms.mask_bytes_in_place`: forms, then runs of pieces."""
    started = time.perf_counter()
    byte_forms.mask_bytes_in_place(path, SECRETS)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=256)
    parser.add_argument("--json", help="also write the measurement here (for the book's Performance page)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        original = Path(folder) / "original.bin"
        make_file(original, args.megabytes)
        rows, results = [], {}
        for name, way in (("(a) one search per form", one_search_per_form), ("(b) kit: forms in one pass", kit_forms),
                          ("(c) kit: forms and pieces", kit_whole)):
            path = Path(folder) / "work.bin"
            path.write_bytes(original.read_bytes())
            seconds = way(path)
            results[name] = path.read_bytes()
            changed = int(np.count_nonzero(np.frombuffer(results[name], np.uint8)
                                           != np.frombuffer(original.read_bytes(), np.uint8)))
            rows.append({"way": name, "seconds": seconds, "MB/s": args.megabytes / seconds, "bytes masked": changed})
            print(f"{name}: {seconds:.2f} s, {changed} bytes masked", flush=True)
        same = results["(a) one search per form"] == results["(b) kit: forms in one pass"]
        print(f"(a) and (b) leave identical files: {same}")
    forms = len(byte_forms.byte_forms(SECRETS))
    write_measurement(
        args.json, title="Masking secrets in a large grid file",
        workload=f"a {args.megabytes} MB file of random bytes with a text part every 16 MB; {len(SECRETS)} secrets, "
                 f"{forms} written forms",
        rows=rows,
        ratios={"(b) vs (a), forms": rows[0]["seconds"] / rows[1]["seconds"],
                "(c) vs (a), forms and pieces": rows[0]["seconds"] / rows[2]["seconds"]},
        notes=[f"(a) and (b) leave identical files: {same}",
               "(c) also masks each run of 6-byte pieces of a secret in any case (the cut pieces), so it masks more"])


if __name__ == "__main__":
    main()
