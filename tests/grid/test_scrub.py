"""What the scrub of a unit's folder does to binary files, odd-length UTF-16 text, links and extended attributes."""
from __future__ import annotations

import os
import random

import pytest

from evalkit.grid.scrub import scrub_folder

SECRET = "Sb01-PwZetaQx71"
TOKEN = "Sb02TokGw8Hn4Vc"
SHAPES = ("ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "sk-proj-Unconfigured0123456789abcdef", "AKIAUNCONF1234567890")


def _binary_body() -> bytes:
    """The forms a binary file's strings may hold a credential in, each between two ``|``."""
    return b"|".join([
        b"", b"piece " + SECRET[3:13].encode(), b"upper " + SECRET.upper().encode(),
        b"lower " + SECRET.lower().encode(), b"pct " + "".join(f"%{b:02X}" for b in SECRET.encode()).encode(),
        b"uesc " + "".join(f"\\u{ord(c):04x}" for c in TOKEN).encode(), *(b"key " + shape.encode() for shape in SHAPES),
        b""])


def test_a_binary_files_strings_lose_every_form_of_a_credential_and_keep_their_length(tmp_path):
    """A binary file (random bytes around its strings) is not a text, so its strings are read as `strings` reads
    them: a piece of a secret, its other cases and escapes, and credentials of a known shape in ASCII or UTF-16
    strings are overwritten by as many ``*``; every other byte stays."""
    junk = random.Random(5).randbytes(3000)
    wide = "wide token=ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210 done".encode("utf-16-le")
    content = junk + _binary_body() + junk + wide + junk
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    scrub_folder(tmp_path, [SECRET, TOKEN])
    data = path.read_bytes()
    assert len(data) == len(content) and data[:3000] == junk and data[-3000:] == junk
    for form in (SECRET[3:11].encode(), SECRET.upper().encode(), SECRET.lower().encode(), b"%53%62%30%31",
                 b"\\u0053\\u0062\\u0030\\u0032", *(shape[:10].encode() for shape in SHAPES),
                 "ghp_ZyXwVu".encode("utf-16-le")):
        assert form not in data, form
    for kept in (b"|piece ", b"|upper ", b"|key ", "wide token=".encode("utf-16-le"), " done".encode("utf-16-le")):
        assert kept in data, kept


def test_utf16_text_with_a_stray_last_byte_is_read_as_utf16(tmp_path):
    text = "log token=ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210 piece " + SECRET[2:12] + " Bearer sk-ant-Oddutf16abcdefgh\n"
    path = tmp_path / "u16.log"
    path.write_bytes(text.encode("utf-16-le") + b"\x00")
    scrub_folder(tmp_path, [SECRET])
    data = path.read_bytes()
    assert data.endswith(b"\x00") and len(data) % 2 == 1
    shown = data[:-1].decode("utf-16-le")
    assert shown.startswith("log token=***") and "ghp_" not in shown and SECRET[3:9] not in shown
    assert "sk-ant-" not in shown, shown


def test_a_links_target_holding_a_secret_is_masked_and_no_link_is_followed(tmp_path):
    outside = tmp_path / f"kept-{SECRET}.txt"
    outside.write_text(f"outside {SECRET}\n")
    folder = tmp_path / "unit"
    folder.mkdir()
    os.symlink(f"/nonexistent/{SECRET}", folder / "dangling")
    os.symlink(outside, folder / "to-outside")
    os.symlink("results.csv", folder / "plain")
    scrub_folder(folder, [SECRET])
    assert os.readlink(folder / "dangling") == "/nonexistent/***"
    assert SECRET not in os.readlink(folder / "to-outside") and os.readlink(folder / "plain") == "results.csv"
    assert outside.read_text() == f"outside {SECRET}\n"


def test_extended_attributes_holding_a_secret_are_removed(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("plain\n")
    try:
        os.setxattr(path, "user.note", SECRET.encode())
    except OSError as error:
        pytest.skip(f"this file system keeps no extended attributes: {error}")
    os.setxattr(path, "user.hex", SECRET.encode().hex().encode())
    os.setxattr(path, f"user.{SECRET}", b"x")
    os.setxattr(path, "user.ok", b"fine")
    scrub_folder(tmp_path, [SECRET])
    assert os.listxattr(path) == ["user.ok"] and os.getxattr(path, "user.ok") == b"fine"
    assert path.read_text() == "plain\n"


def test_strings_of_checkpoints_pickles_and_numpy_arrays_are_masked_in_place(tmp_path):
    """Files with many zero bytes (a pickle of an array, numpy's UTF-32 strings) or a leading FF FE are no UTF-16
    text: each is read as a binary, its ASCII, UTF-16 and UTF-32 strings masked in place, its length kept and
    every other byte unchanged."""
    import pickle

    np = pytest.importorskip("numpy")
    config = {"note": f"piece {SECRET[2:14]}", "key": SHAPES[1], "login": "password=NpHunter2xyz99"}
    files = {"ckpt.pkl": pickle.dumps({"weights": np.zeros(5000), "config": config}),
             "bom.bin": b"\xff\xfe" + bytes(300) + repr(config).encode() + bytes(300),
             "labels.npy": None}
    np.save(tmp_path / "labels.npy", np.array([f"piece {SECRET[2:14]}", SHAPES[0], "password=NpHunter2xyz99"]))
    for name, content in files.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
    before = {name: (tmp_path / name).read_bytes() for name in files}
    scrub_folder(tmp_path, [SECRET])
    for name in files:
        data = (tmp_path / name).read_bytes()
        assert len(data) == len(before[name]), name
        for width, order in ((1, "little"), (4, "little")):
            for form in (SECRET[3:11], SHAPES[0][:12], SHAPES[1][:12], "NpHunter2"):
                encoded = form.encode("utf-32-le" if width == 4 else "ascii")
                assert encoded not in data, (name, form, width)
    assert pickle.loads((tmp_path / "ckpt.pkl").read_bytes())["weights"].shape == (5000,)
    assert np.load(tmp_path / "labels.npy").shape == (3,)


def test_a_numpy_array_loses_a_credential_and_keeps_the_items_beside_it(tmp_path):
    """A fixed-width NumPy string item filled to its width runs on into the next item with no byte between them:
    the masking stops at the item's end, in a plain array (UTF-32 or bytes), a record's fields, and an .npz
    whether its members are stored or deflated."""
    np = pytest.importorskip("numpy")
    key = SHAPES[1]
    record = np.dtype([("n", "i4"), ("key", "U36"), ("tag", "U6")])
    arrays = {"wide": np.array(["alpha", key, "beta", "gamma"]),
              "narrow": np.array([b"alpha", key.encode(), b"beta"]),
              "grid": np.array([["x1234567", key], ["beta", "delta"]]),
              "rows": np.array([(1, key, "beta"), (2, "zz", "omega")], dtype=record)}
    for name, array in arrays.items():
        np.save(tmp_path / f"{name}.npy", array)
    np.savez(tmp_path / "stored.npz", **arrays)
    np.savez_compressed(tmp_path / "deflated.npz", **arrays)
    scrub_folder(tmp_path, [])
    loaded = [(f"{name}.npy", name, np.load(tmp_path / f"{name}.npy")) for name in arrays]
    for archive in ("stored.npz", "deflated.npz"):
        with np.load(tmp_path / archive) as members:
            loaded += [(archive, name, members[name]) for name in arrays]
    masked_key = "sk-" + "*" * (len(key) - 3)
    for file, name, array in loaded:
        assert repr(array.tolist()) == repr(arrays[name].tolist()).replace(key, masked_key), (file, name)


def test_credentials_named_in_one_file_are_masked_in_every_file_and_name(tmp_path):
    """A secret named in a field of one file (``aws_secret_access_key = X`` in a config) is masked where another
    file holds it bare, and in a name; the scrub reports what it learned."""
    learned_secret = "Hy7uJ3kN9mQ2wE5rS"
    (tmp_path / "config.ini").write_text(f"[default]\naws_secret_access_key = {learned_secret}\n")
    (tmp_path / "notes.txt").write_text(f"used {learned_secret} today\n")
    (tmp_path / f"cache-{learned_secret}.json").write_text("{}")
    report = scrub_folder(tmp_path, [SECRET])
    assert learned_secret in report.learned and not report.kept
    for path in tmp_path.iterdir():
        assert learned_secret not in path.name and learned_secret not in path.read_text(), path


def test_a_file_made_immutable_is_freed_and_scrubbed(tmp_path):
    """A file a root command made immutable (``chattr +i``) or append-only is freed of the flag and scrubbed;
    nothing is raised."""
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("chattr"):
        pytest.skip("setting the immutable flag needs root and chattr")
    frozen, appended = tmp_path / "frozen.log", tmp_path / "appended.log"
    for path in (frozen, appended):
        path.write_text(f"token {SECRET}\n")
    for flag, path in (("+i", frozen), ("+a", appended)):
        if subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode != 0:
            pytest.skip("this file system keeps no immutable flag")
    try:
        report = scrub_folder(tmp_path, [SECRET])
        assert not report.kept
        for path in (frozen, appended):
            assert SECRET not in path.read_text() and SECRET[3:11] not in path.read_text()
    finally:
        for path in (frozen, appended):
            subprocess.run(["chattr", "-i", "-a", str(path)], capture_output=True)


def test_a_folder_that_is_a_link_is_not_entered(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "teacher.env").write_text(f"DB_PASSWORD={SECRET}\n")
    os.symlink(victim, tmp_path / "unit")
    assert scrub_folder(tmp_path / "unit", [SECRET]).kept == ()
    assert (victim / "teacher.env").read_text() == f"DB_PASSWORD={SECRET}\n"


def test_keys_glued_to_the_bytes_before_them_are_masked_and_the_files_still_open(tmp_path):
    """A database keeps a row's columns back to back (``apisk-proj-...``) and a pickle puts a length byte before
    its string (``8eyJ...``): the keys are masked, and both files still open."""
    import pickle
    import sqlite3

    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwcm9iZSJ9.c2lnbmF0dXJlMDEyMzQ1Njc4OQ"
    with sqlite3.connect(tmp_path / "cache.sqlite") as connection:
        connection.execute("create table t (k text, v text)")
        connection.executemany("insert into t values (?, ?)", [("api", SHAPES[1]), ("jwt", jwt), ("n", "plain")])
    connection.close()
    (tmp_path / "ckpt.pkl").write_bytes(pickle.dumps({"weights": [0.0] * 50, "jwt": jwt, "key": SHAPES[1]}))
    scrub_folder(tmp_path, [SECRET])
    for name in ("cache.sqlite", "ckpt.pkl"):
        data = (tmp_path / name).read_bytes()
        assert SHAPES[1][8:20].encode() not in data and jwt[:20].encode() not in data, name
    with sqlite3.connect(tmp_path / "cache.sqlite") as connection:
        rows = dict(connection.execute("select k, v from t").fetchall())
    connection.close()
    assert rows["n"] == "plain" and rows["api"].startswith("sk-") and set(rows["jwt"]) == {"*"}
    assert pickle.loads((tmp_path / "ckpt.pkl").read_bytes())["weights"] == [0.0] * 50


def test_wide_fragments_in_a_utf8_text_and_the_folders_own_attributes_are_masked(tmp_path):
    """A UTF-8 log holding a UTF-16 or UTF-32 fragment loses the piece of a secret in it; an extended attribute of
    the scrubbed folder itself is removed."""
    for encoding in ("utf-16-le", "utf-32-le"):
        fragment = f"piece {SECRET[2:14]} end".encode(encoding)
        (tmp_path / f"{encoding}.log").write_bytes(b"plain log line\n" * 200 + fragment + b"\nmore log\n" * 50)
    try:
        os.setxattr(tmp_path, "user.tok", f"tok {SECRET}".encode())
    except OSError:
        pass
    scrub_folder(tmp_path, [SECRET])
    for encoding in ("utf-16-le", "utf-32-le"):
        assert SECRET[3:11].encode(encoding) not in (tmp_path / f"{encoding}.log").read_bytes(), encoding
    assert "user.tok" not in os.listxattr(tmp_path)


def test_credentials_named_inside_binary_files_are_learned(tmp_path):
    """A pickled ``{"password": X}`` keeps the name and the value as two strings, a database row glues them: both
    are read as named, and masked in the unit's other files."""
    import pickle
    import sqlite3

    pickled, stored = "Qm7vT2xR9kL4pW8z", "Jd3nF6hB1sG5tY0c"
    (tmp_path / "state.pkl").write_bytes(pickle.dumps({"config": {"password": pickled, "epochs": 3}}))
    with sqlite3.connect(tmp_path / "cfg.sqlite") as connection:
        connection.execute("create table t (k text, v text)")
        connection.execute("insert into t values ('password', ?)", (stored,))
    connection.close()
    (tmp_path / "log.txt").write_text(f"using {pickled} and {stored}\n")
    report = scrub_folder(tmp_path, [SECRET])
    assert {pickled, stored} <= set(report.learned)
    assert (tmp_path / "log.txt").read_text() == "using *** and ***\n"


def test_a_name_in_an_immutable_folder_is_renamed_and_a_sparse_file_is_read_by_its_data(tmp_path):
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("chattr"):
        pytest.skip("setting the immutable flag needs root and chattr")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / f"in-{SECRET}.txt").write_text("x")
    (tmp_path / "other.txt").write_text(f"token {SECRET}\n")
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        pytest.skip("this file system keeps no immutable flag")
    with open(tmp_path / "sparse.bin", "wb") as handle:  # 1 GB apparent, a few bytes of data
        handle.write(f"head {SECRET} ".encode())
        handle.truncate(2**30)
    try:
        report = scrub_folder(tmp_path, [SECRET])
    finally:
        subprocess.run(["chattr", "-i", str(locked)], capture_output=True)
    assert not report.kept and [path.name for path in locked.iterdir()] == ["in-***.txt"]
    assert SECRET not in (tmp_path / "other.txt").read_text()
    with open(tmp_path / "sparse.bin", "rb") as handle:
        assert SECRET.encode() not in handle.read(64)


def test_folders_nested_past_the_limit_are_removed_and_named(tmp_path):
    """A tree deeper than a path can name (its files hold a secret) is removed unread; the rest is scrubbed."""
    from evalkit.grid.scrub import MAX_DEPTH

    (tmp_path / "top.txt").write_text(f"token {SECRET}\n")
    descriptor = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(1200):  # past PATH_MAX (4096) at 4 characters a level: made by descriptors
            os.mkdir("dddd", dir_fd=descriptor)
            inner = os.open("dddd", os.O_RDONLY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        leaf = os.open("leak.txt", os.O_WRONLY | os.O_CREAT, dir_fd=descriptor)
        os.write(leaf, SECRET.encode())
        os.close(leaf)
    finally:
        os.close(descriptor)
    report = scrub_folder(tmp_path, [SECRET])
    assert SECRET not in (tmp_path / "top.txt").read_text()
    assert any(f"nested past {MAX_DEPTH} levels: removed" in entry for entry in report.kept), report.kept
    assert max(len(path.relative_to(tmp_path).parts) for path in tmp_path.rglob("*")) <= MAX_DEPTH + 1


def test_a_name_too_long_once_masked_is_removed(tmp_path):
    name = f"x?k={SECRET}" + "&b=1" * 55  # 242 characters; masked, every value becomes "***": past 255
    (tmp_path / name).write_text("x")
    (tmp_path / "kept.txt").write_text("plain")
    report = scrub_folder(tmp_path, [SECRET])
    assert not report.kept and [path.name for path in tmp_path.iterdir()] == ["kept.txt"]


def test_an_immutable_files_attributes_are_removed_once_it_is_freed(tmp_path):
    import shutil
    import subprocess

    if os.geteuid() != 0 or not shutil.which("chattr"):
        pytest.skip("setting the immutable flag needs root and chattr")
    path = tmp_path / "frozen.txt"
    path.write_text(f"token {SECRET}\n")
    try:
        os.setxattr(path, "user.note", SECRET.encode())
    except OSError:
        pytest.skip("this file system keeps no extended attributes")
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("this file system keeps no immutable flag")
    try:
        report = scrub_folder(tmp_path, [SECRET])
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    assert not report.kept and "user.note" not in os.listxattr(path) and SECRET not in path.read_text()


def test_coloured_logs_docker_configs_and_shifted_base64_in_a_large_file_are_masked(tmp_path):
    """A log coloured by terminal codes (more than 1 in 100 characters an escape) is read as text, so a field
    named as a credential between its codes is masked; a ``.dockerconfigjson`` (base64 of JSON holding base64 of
    ``user:password``) is masked whole; and in a file too large to read as text, the base64 of a secret after
    one or two other bytes (a Basic header's value) is overwritten too."""
    import base64
    import json

    coloured = "".join(f"\x1b[2m2026-01-0{i}\x1b[0m \x1b[36mapi_key\x1b[0m=\x1b[35mUnconf-Ansi9{i}Kq\x1b[0m "
                       f"\x1b[1mstep\x1b[0m={i}\n" for i in range(1, 6))
    (tmp_path / "color.log").write_text(coloured)
    auth = base64.b64encode(b"robot:Unconf-Dock9Kq").decode()
    config = base64.b64encode(json.dumps({"auths": {"reg.example.com": {"auth": auth}}}).encode()).decode()
    (tmp_path / "config.b64").write_text(config + "\n")
    shifted = [base64.b64encode(prefix + SECRET.encode()) for prefix in (b"u:", b"ab:", b"abcd:")]
    large = b"x" * (17 * 2**20) + b"\n".join(b"Authorization: Basic " + form for form in shifted) + b"\n"
    (tmp_path / "big.log").write_bytes(large)
    scrub_folder(tmp_path, [SECRET])
    log = (tmp_path / "color.log").read_text()
    assert "Unconf-Ansi9" not in log and "Ansi9" not in log and "step" in log, log
    assert "Dock9Kq" not in (tmp_path / "config.b64").read_text() and config not in (tmp_path / "config.b64").read_text()
    tail = (tmp_path / "big.log").read_bytes()[17 * 2**20:]
    for form in shifted:
        assert form[4:-4] not in tail, (form, tail)


def test_a_folder_mounted_into_the_unit_folder_is_not_entered_and_named(tmp_path):
    """A command run as root can bind-mount a folder from elsewhere into its unit's folder: the scrub would
    then rewrite (or rename, or remove) files that lie outside it. Mount points are not entered, and named."""
    import subprocess

    outside, unit = tmp_path / "outside", tmp_path / "unit"
    outside.mkdir()
    (unit / "shared").mkdir(parents=True)
    (outside / "config.ini").write_text(f"password = {SECRET}\n")
    (unit / "log.txt").write_text(f"token={SECRET}\n")
    if subprocess.run(["mount", "--bind", str(outside), str(unit / "shared")], capture_output=True).returncode:
        pytest.skip("no bind mount on this machine (not root, or no mount namespace rights)")
    try:
        scrubbed = scrub_folder(unit, [SECRET])
    finally:
        subprocess.run(["umount", str(unit / "shared")], check=True)
    assert (outside / "config.ini").read_text() == f"password = {SECRET}\n"
    assert SECRET not in (unit / "log.txt").read_text()
    assert any(kept.startswith("shared (another file system mounted there") for kept in scrubbed.kept), scrubbed


def test_a_binarys_credentials_are_masked_in_the_shapes_programs_store_them(tmp_path):
    """The rules that keep a file of numbers byte for byte (a "?" or "@" read as a URL's only in a URL's shape, a
    name paired with a value next to it) still mask what programs store: a pickled field whose name holds a
    digit, user-info before an IP address, localhost, a service's path or a service name that ends the string (a
    DSN stored alone), a query after a path with no scheme, a text cut into narrow NumPy items, and a NumPy record
    whose value follows its name past padding and a float."""
    import pickle
    from urllib.parse import urlsplit

    np = pytest.importorskip("numpy")
    value = "mysupersecretpw99"
    key = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    pickles = {"digit.pkl": {"api_key_v2": value}, "digits.pkl": {"s3_secret_key": value},
               "ip.pkl": urlsplit(f"postgres://app:{value}@10.0.0.5:5432/app"),
               "v6.pkl": urlsplit(f"postgres://app:{value}@[::1]:5432/app"),
               "localhost.pkl": {"netloc": f"admin:{value}@localhost"},
               "service.pkl": {"dsn": f"admin:{value}@rabbitmq/vhost"},
               "query.pkl": {"link": f"cdn.example.com/f.bin?v=1&s={value}"}}
    for name, content in pickles.items():
        (tmp_path / name).write_bytes(pickle.dumps(content))
    (tmp_path / "dsn.bin").write_bytes(b"\x00\x01\x02" * 9 + f"app:{value}@redis".encode() + b"\x00\x03" * 9)
    log = f"step 1\nkey {key}\nurl https://admin:{value}@db.example.com/x\n"
    np.save(tmp_path / "chars.npy", np.array(list(log)))
    np.save(tmp_path / "pieces.npy", np.array([log[at:at + 16] for at in range(0, len(log), 16)]))
    record = np.dtype([("key", "S24"), ("weight", "f8"), ("value", "S24")])
    np.save(tmp_path / "config.npy", np.array([(b"db_password", 0.1, value.encode()), (b"lr", 0.5, b"0.001")],
                                              dtype=record))
    scrub_folder(tmp_path, [])
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        text = "".join(np.load(path).ravel().astype(str).tolist()) if path.name in ("chars.npy", "pieces.npy") else ""
        for secret in (value, key[:12]):
            for form in (secret.encode(), secret.encode("utf-32-le")):
                assert form not in data, (path.name, secret)
            assert secret not in text, (path.name, secret)


def test_credentials_a_file_names_by_its_structure_are_masked_in_every_file(tmp_path):
    """A pickle (protocol 0 keeps a dict as text lines, protocol 2 puts opcodes between a key and its value, a
    value stored twice is fetched from the memo), a SQLite key-value row (its cells back to back) or column named
    for a credential (a text or a BLOB of text), a file or an archive member named for one
    (``/run/secrets/db_password``, a UTF-16 ``secret.txt``, an ``.npz`` array saved as ``db_password``), and a URL's netloc
    with an empty user name each name a credential the line-by-line readings missed; each value is learned and
    masked in every file of the folder, including a log that repeats it (user-info is masked where it stands as
    user-info, by its shape, and is not learned)."""
    import io
    import pickle
    import sqlite3
    import zipfile
    from urllib.parse import urlsplit

    import numpy as np

    values = {name: f"Qm7vT2xR{number}kL4wZpB3nD8" for number, name in enumerate(
        ("pickle0", "pickle2", "memo", "kv", "column", "blob", "file", "wide-file", "npz", "member", "netloc",
         "netloc-text"))}
    (tmp_path / "a.pkl").write_bytes(pickle.dumps({"password": values["pickle0"], "lr": 0.1}, protocol=0))
    (tmp_path / "b.pkl").write_bytes(pickle.dumps(["password", values["pickle2"], "epochs"], protocol=2))
    # the second use of a string is a fetch from the pickle's memo, not the string again
    (tmp_path / "c.pkl").write_bytes(pickle.dumps({"backup": values["memo"], "password": values["memo"]}, protocol=4))
    with sqlite3.connect(tmp_path / "cache.db") as database:
        database.execute("create table kv (k text, v text)")
        database.executemany("insert into kv values (?, ?)", [("password", values["kv"]), ("lr", "0.001")])
        database.execute("create table users (name text, api_token text)")
        database.execute("insert into users values (?, ?)", ("ann", values["column"]))
        database.execute("insert into users values (?, ?)", ("bo", values["blob"].encode()))  # a BLOB of text
    database.close()
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "db_password").write_text(values["file"] + "\n")
    (tmp_path / "secrets" / "secret.txt").write_bytes(values["wide-file"].encode("utf-16"))
    buffer = io.BytesIO()
    np.savez(buffer, db_password=np.array(values["npz"]), lr=np.array(0.1))
    (tmp_path / "run.npz").write_bytes(buffer.getvalue())
    with zipfile.ZipFile(tmp_path / "conf.zip", "w") as archive:
        archive.writestr("conf/api_token", values["member"])
    (tmp_path / "url.pkl").write_bytes(pickle.dumps(urlsplit(f"redis://:{values['netloc']}@cache:6379/0")))
    (tmp_path / "netloc.txt").write_text(f"netloc=:{values['netloc-text']}@redis:6379\n")
    named = [value for name, value in values.items() if not name.startswith("netloc")]  # user-info: by its shape
    (tmp_path / "run.log").write_text("used " + " ".join(named) + "\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert set(named) <= set(scrubbed.learned)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            left = [name for name, value in values.items()
                    if any(value.encode(encoding) in data for encoding in ("ascii", "utf-16-le", "utf-32-le"))]
            assert not left, (path.name, left)
    with sqlite3.connect(tmp_path / "cache.db") as database:  # the database still opens, the other rows kept
        assert database.execute("select v from kv where k = 'lr'").fetchone() == ("0.001",)
    database.close()
    assert pickle.loads((tmp_path / "a.pkl").read_bytes())["lr"] == 0.1


def test_ordinary_tables_pickles_and_texts_teach_the_scrub_nothing(tmp_path):
    """A vocabulary table's ``token`` column, a key-value table of settings, a pickle of ordinary words and a
    text whose last sentence ends with a full stop are left byte for byte as they were."""
    import pickle
    import sqlite3

    with sqlite3.connect(tmp_path / "vocab.db") as database:
        database.execute("create table vocab (token text, id integer)")
        database.executemany("insert into vocab values (?, ?)", [("tokenization", 1), ("transformers", 2)])
        database.execute("create table kv (key text, value text)")
        database.executemany("insert into kv values (?, ?)", [("learning_rate", "0.00012345"),
                                                               ("scheduler", "cosine_with_restarts")])
    database.close()
    (tmp_path / "words.pkl").write_bytes(pickle.dumps(["tokenizer", "attention_dropout", "key", "values"],
                                                      protocol=0))
    (tmp_path / "notes.md").write_text("The token budget was spent on the longest conversations first.")
    (tmp_path / "key").write_text("first line\nsecond line\n")  # named for a credential, but a document
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    scrubbed = scrub_folder(tmp_path, [])
    assert scrubbed.learned == ()
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_a_database_whose_schema_computes_huge_cells_is_read_within_bounds(tmp_path):
    """A generated column that would build an 800 MB string per row is refused by SQLite's length limit (the
    database's other tables are still read), rather than exhausting memory or time."""
    import sqlite3

    with sqlite3.connect(tmp_path / "bomb.db") as database:
        database.execute("create table t (a text, b text generated always as (hex(zeroblob(400000000))) virtual)")
        database.executemany("insert into t (a) values (?)", [("password",)] * 3)
        database.execute("create table kv (k text, v text)")
        database.execute("insert into kv values ('password', 'Qm7vT2xR9kL4wZpB3nD8')")
    database.close()
    assert "Qm7vT2xR9kL4wZpB3nD8" in scrub_folder(tmp_path, []).learned
    assert b"Qm7vT2xR9kL4wZpB3nD8" not in (tmp_path / "bomb.db").read_bytes()


def test_damaged_files_named_for_a_credential_do_not_stop_the_folders_scrub(tmp_path):
    """A zip whose member named for a credential does not inflate (zlib's error), a NumPy header that promises
    2**45 items, a truncated pickle and a WAL-mode database: each reader that only learns gives up on its file,
    the folder is still scrubbed, and the database's row is still read."""
    import sqlite3
    import zipfile

    with zipfile.ZipFile(tmp_path / "conf.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conf/db_password", "Qm7vT2xR9kL4wZpB3nD8" * 4)
    data = bytearray((tmp_path / "conf.zip").read_bytes())
    start = data.index(b"conf/db_password") + len("conf/db_password")
    data[start:start + 8] = b"\xff" * 8  # the member's deflate stream, broken
    (tmp_path / "conf.zip").write_bytes(bytes(data))
    header = "{'descr': '<U20', 'fortran_order': False, 'shape': (35184372088832,), }"
    (tmp_path / "api_token.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header + "\n").to_bytes(2, "little")
                                             + (header + "\n").encode())
    (tmp_path / "broken.pkl").write_bytes(b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x08password")
    with sqlite3.connect(tmp_path / "wal.db") as database:
        database.execute("pragma journal_mode = wal")
        database.execute("create table kv (k text, v text)")
        database.execute("insert into kv values ('password', 'Zx9pL3mQ7vR2kkTy')")
    database.execute("pragma wal_checkpoint(truncate)")
    database.close()
    (tmp_path / "run.log").write_text("password=Gq81-logged-value\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert {"Gq81-logged-value", "Zx9pL3mQ7vR2kkTy"} <= set(scrubbed.learned)
    assert b"Gq81-logged-value" not in (tmp_path / "run.log").read_bytes()
    assert b"Zx9pL3mQ7vR2kkTy" not in (tmp_path / "wal.db").read_bytes()


def test_credentials_in_lists_logs_nested_archives_and_passphrases_are_learned(tmp_path):
    """Every key of a pickled list under a credential's name (``{"api_keys": [k1, k2]}``, in protocols 0 and 4),
    a row that stands only in a SQLite write-ahead log, a member named for a credential inside a ``.tar.gz`` or a
    zip inside a zip or past a zip's 10,000th member, and passphrases of several words (a
    pickle's value, a key-value row, a column, a file named for one) are learned and masked in every file;
    ordinary lists, settings and a config key after a one-key list are not."""
    import gzip
    import io
    import pickle
    import sqlite3
    import tarfile
    import zipfile

    keys = [f"Qm7vT2xR{number}kL4wZpB3nD8" for number in range(9)]
    phrases = ["correct horse battery staple", "my secret pass phrase 99", "blue sky over the hills 7",
               "seven ravens fly north at dawn"]
    (tmp_path / "keys0.pkl").write_bytes(pickle.dumps({"api_keys": keys[:2], "user": "ann"}, protocol=0))
    (tmp_path / "keys4.pkl").write_bytes(pickle.dumps({"api_keys": (keys[2], keys[3]), "passwords": [keys[4]],
                                                       "scheduler": "cosine_with_restarts"}, protocol=4))
    with sqlite3.connect(tmp_path / "runs.db") as database:  # the row is written to the log only
        database.execute("pragma journal_mode = wal")
        database.execute("pragma wal_autocheckpoint = 0")
        database.execute("create table users (name text, api_token text)")
        database.execute("insert into users values (?, ?)", ("ann", keys[5]))
        database.execute("create table kv (k text, v text)")
        database.executemany("insert into kv values (?, ?)", [("password", phrases[1]), ("user", "ann")])
        database.execute("insert into users values (?, ?)", ("bo", phrases[2]))
        database.commit()
        files = {name: (tmp_path / name).read_bytes() for name in ("runs.db", "runs.db-wal")}
    database.close()
    for name, data in files.items():  # as the unit left them: the log not yet checkpointed into the database
        (tmp_path / name).write_bytes(data)
    assert keys[5].encode() in files["runs.db-wal"] and keys[5].encode() not in files["runs.db"]
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w") as archive:
        member = tarfile.TarInfo("secrets/api_token")
        member.size = len(keys[6])
        archive.addfile(member, io.BytesIO(keys[6].encode()))
    (tmp_path / "secrets.tar.gz").write_bytes(gzip.compress(written.getvalue()))
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conf/db_password", keys[7])
    with zipfile.ZipFile(tmp_path / "bundle.zip", "w") as archive:
        archive.writestr("inner.zip", inner.getvalue())
    with zipfile.ZipFile(tmp_path / "many.zip", "w") as archive:
        for number in range(10_001):
            archive.writestr(f"parts/{number}", b"0")
        archive.writestr("conf/db_password", keys[8])
    (tmp_path / "phrase.pkl").write_bytes(pickle.dumps({"password": phrases[0], "epochs": 3}, protocol=4))
    (tmp_path / "db_passphrase").write_text(phrases[3] + "\n")
    (tmp_path / "run.log").write_text("used " + " and ".join(keys + phrases) + "\n")
    (tmp_path / "settings.pkl").write_bytes(pickle.dumps({"api_keys": [], "models": ["bert base uncased",
                                                          "distilroberta_base"], "scheduler": "linear_warmup"}))
    settings = (tmp_path / "settings.pkl").read_bytes()
    scrubbed = scrub_folder(tmp_path, [])
    assert set(keys + phrases) <= set(scrubbed.learned)
    assert not {"cosine_with_restarts", "bert base uncased", "distilroberta_base", "linear_warmup"} & set(scrubbed.learned)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [value for value in keys + phrases if value.encode() in data], path.name
            for archive_path in (("secrets.tar.gz",) if path.name == "secrets.tar.gz" else ()):
                with tarfile.open(tmp_path / archive_path) as archive:
                    assert archive.extractfile("secrets/api_token").read() != keys[6].encode()
    with zipfile.ZipFile(tmp_path / "bundle.zip") as archive:
        with zipfile.ZipFile(io.BytesIO(archive.read("inner.zip"))) as nested:
            assert keys[7].encode() not in nested.read("conf/db_password")
    assert (tmp_path / "settings.pkl").read_bytes() == settings
    assert pickle.loads((tmp_path / "keys4.pkl").read_bytes())["scheduler"] == "cosine_with_restarts"


def test_values_written_below_their_name_or_in_a_credential_column_are_masked(tmp_path):
    """A YAML block scalar (``password: |`` then the value, indented), a TOML multi-line string, a Hadoop XML
    property (``<name>fs.s3a.secret.key</name><value>X</value>``) and a CSV column named ``password`` each name a
    credential on another line than its name: each is learned and masked in every file (the program's stderr
    that printed the row too), the YAML marker ``|`` is kept, and a description block or a table with no
    credential column is left as it was."""
    values = {name: f"Wq8zP{number}xK3mR7vT" for number, name in enumerate(("yaml", "toml", "xml", "csv"))}
    (tmp_path / "app.yaml").write_text(f"db:\n  password: |\n    {values['yaml']}\n  user: ann\n")
    (tmp_path / "conf.toml").write_text(f"[db]\nsecret_key = '''\n{values['toml']}\n'''\n")
    (tmp_path / "core-site.xml").write_text(f"<property><name>fs.s3a.secret.key</name><value>{values['xml']}</value>"
                                            "</property>\n")
    (tmp_path / "users.csv").write_text(f"user,password,role\nalice,{values['csv']},admin\n")
    (tmp_path / "stderr.txt").write_text(f"alice,{values['csv']}\n")
    clean = {"notes.yaml": "description: |\n  The password is kept in the vault.\n",
             "vocab.csv": "token,count\ntokenization,3\ntransformers,2\n"}
    for name, text in clean.items():
        (tmp_path / name).write_text(text)
    scrubbed = scrub_folder(tmp_path, [])
    assert set(values.values()) <= set(scrubbed.learned)
    for path in tmp_path.iterdir():
        assert not [value for value in values.values() if value in path.read_text()], path.name
    assert "password: |\n" in (tmp_path / "app.yaml").read_text()
    assert {name: (tmp_path / name).read_text() for name in clean} == clean


def test_the_new_readers_leave_ordinary_data_and_stay_within_their_budget(tmp_path):
    """An empty list or tuple under a credential's name teaches nothing (the dict's next keys and values are no
    secrets); a Markdown table's rule and a sentence with a comma below a ``password`` header are no values; the
    reading inside nested archives takes its 16 MB from one budget, however deep."""
    import io
    import pickle
    import zipfile

    from evalkit.grid.compressed import inner_contents
    from evalkit.grid.named_values import named_in_pickle
    from evalkit.grid.printed_secrets import output_secrets

    for protocol in range(6):
        for empty in ([], (), set()):
            settings = {"api_keys": empty, "model_name": "gpt2-medium-v3", "output_dir": "/runs/exp_2024_11"}
            assert named_in_pickle(pickle.dumps(settings, protocol=protocol)) == [], (protocol, empty)
    assert output_secrets("user | password\n--- | ---\nann | Cv-8k2m9q\nNote, the values above are fake\n") \
        == ["Cv-8k2m9q"]

    def zipped(name: str, data: bytes) -> bytes:
        written = io.BytesIO()
        with zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(name, data)
        return written.getvalue()

    nested = zipped("d.bin", b"0" * 6 * 2**20)
    for level in "cba":  # each archive holds a 6 MB member and the next archive: 24 MB in all
        written = io.BytesIO()
        with zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("inner.zip", nested)
            archive.writestr(f"{level}.bin", b"0" * 6 * 2**20)
        nested = written.getvalue()
    budget = [16 * 2**20]
    read = 0

    def counted(data: bytes, depth: int = 0) -> None:
        nonlocal read
        for _, content in inner_contents(data, budget):
            read += len(content)
            if depth < 3:
                counted(content, depth + 1)

    counted(nested)
    assert 12 * 2**20 <= read <= 16 * 2**20


def test_named_credentials_in_many_configuration_forms_are_learned_and_ordinary_ones_kept(tmp_path):
    """Each form writes a value under a credential's name that a line-by-line reading missed, and a log repeats
    it: unquoted passphrases (YAML, INI, .env, .properties), YAML blocks behind a tag or an anchor, with CRLF
    line ends or a quoted key, YAML lists and TOML arrays of keys one per line, a TOML multi-line string under a
    quoted key, Hadoop XML properties in other orders and spellings, a CSV with a byte order mark, a SQLite row
    that stands only in its write-ahead log (beside its database, alone, or packed in a .tar.gz), and pickled
    maps, lists with a None or pairs, and a list of more than 1,000 keys. Ordinary lists, maps and settings are
    left as they were."""
    import gzip
    import io
    import pickle
    import sqlite3
    import tarfile

    values = [f"Vk{number}q-8xZ3mR7vT" for number in range(27)]
    phrases = ["Xk9v horse7 Qp2zt battery", "Lm3k river8 Zt5q stone", "Wq2e cloud4 Rt6y field", "Pz1x lamp9 Nb4m sea"]
    files = {
        "a.yaml": f"password: {phrases[0]}\n", "b.ini": f"[db]\npassword = {phrases[1]}\n",
        ".env": f"DB_PASSWORD={phrases[2]}\n", "c.properties": f"db.password={phrases[3]}\n",
        "d.yaml": f"db:\n  password: !!str |\n    {values[0]}\n  secret: &pw |\n    {values[1]}\n",
        "e.yaml": f"db:\r\n  password: |\r\n    {values[2]}\r\n  \"api_key\": |\n    {values[3]}\n",
        "f.yaml": f"api_keys:\n  - {values[4]}\n  - {values[5]}\nlabels:\n  - positive\n",
        "g.toml": f'api_keys = [\n  "{values[6]}",\n  "{values[7]}",\n]\n"client_secret" = """\n{values[8]}\n"""\n',
        "h.xml": (f"<property><value>{values[9]}</value><name>db.password</name></property>"
                  f"<property><name>db.password</name><!-- c --><value>{values[10]}</value></property>"
                  f"<property><name>db.password</name><value><![CDATA[{values[11]}]]></value></property>"
                  f"<c:property><c:name>db.password</c:name><c:value>{values[12]}</c:value></c:property>"
                  f"<PROPERTY><NAME>db.password</NAME><VALUE>{values[13]}</VALUE></PROPERTY>"
                  f'<property name="db.password" value="{values[14]}"/>'),
        "i.csv": f"\ufeffuser,password\nann,{values[15]}\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)

    def logged(folder, rows):  # a database whose rows stand only in its write-ahead log
        database = sqlite3.connect(folder / "kv.db")
        database.execute("pragma journal_mode = wal")
        database.execute("pragma wal_autocheckpoint = 0")
        database.execute("create table kv (k text, v text)")
        database.executemany("insert into kv values (?, ?)", rows)
        database.commit()
        kept = {name: (folder / name).read_bytes() for name in ("kv.db", "kv.db-wal")}
        database.close()
        return kept

    for number, (folder, keep) in enumerate((("beside", ("kv.db", "kv.db-wal")), ("alone", ("kv.db-wal",)))):
        (tmp_path / folder).mkdir()
        kept = logged(tmp_path / folder, [("password", values[16 + number])])
        for name in keep:
            (tmp_path / folder / name).write_bytes(kept[name])
    (tmp_path / "packed").mkdir()
    kept = logged(tmp_path / "packed", [("password", values[18])])
    for path in (tmp_path / "packed").iterdir():
        path.unlink()
    written = io.BytesIO()
    with tarfile.open(fileobj=written, mode="w") as archive:
        for name, data in kept.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    (tmp_path / "packed" / "db.tar.gz").write_bytes(gzip.compress(written.getvalue()))
    pickles = {"map.pkl": {"credentials": {"prod": values[19], "dev": values[20]}, "model": "gpt2-medium-v3"},
               "none.pkl": {"api_keys": [None, values[21], values[22]]},
               "pairs.pkl": {"api_keys": [("prod", values[23]), ("dev", values[24])]},
               "plain.pkl": {"tokens": {"bos": "<s>", "eos": "</s>"}, "api_keys": [], "model_name": "gpt2-medium-v3"}}
    for name, content in pickles.items():
        (tmp_path / name).write_bytes(pickle.dumps(content, protocol=4))
    plain = (tmp_path / "plain.pkl").read_bytes()
    (tmp_path / "run.log").write_text(" ".join(values[:25] + phrases) + "\n")
    scrubbed = scrub_folder(tmp_path, [])
    missed = [value for value in values[:25] + phrases if value not in scrubbed.learned]
    assert not missed, missed
    assert not {"gpt2-medium-v3", "positive", "api_keys"} & set(scrubbed.learned)
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.suffix not in (".gz",):
            assert not [value for value in values[:25] + phrases if value.encode() in path.read_bytes()], path.name
    assert (tmp_path / "plain.pkl").read_bytes() == plain
    from evalkit.grid.named_values import named_in_pickle

    long = [f"Ak-{number:05d}x9z" for number in range(1000)] + [values[25]]  # two batches of APPENDS
    assert named_in_pickle(pickle.dumps({"api_keys": long}, protocol=4)) == long


def test_a_long_record_code_assignments_and_a_reused_sqlite_log_are_read_right(tmp_path):
    """A JSON Lines record with a 200 KB field and a token count (read as a table's header, its field past the
    csv module's limit) no longer stops the whole scrub; assignments in code (``password = getpass(...)``) teach
    nothing; a SQLite log reused after a checkpoint is read up to its first frame of an earlier generation (the
    stale frames hid the new row); a pickled map's values pair with their keys past a None."""
    import json
    import pickle
    import sqlite3

    from evalkit.grid.named_values import named_in_pickle

    (tmp_path / "data.jsonl").write_text(json.dumps({"id": 1, "tokens": 512, "image": "A" * 200_000}) + "\n")
    code = ('api_key = os.environ.get("OPENAI_API_KEY", "")\npassword = getpass.getpass("Password: ")\n'
            "secret_key = settings.SECRET_KEY or default_key()\npassphrase: set via ENV_VAR\n")
    (tmp_path / "train.py").write_text(code)
    database = sqlite3.connect(tmp_path / "runs.db")
    database.execute("pragma journal_mode = wal")
    database.execute("create table kv (k text, v text)")
    database.executemany("insert into kv values (?, ?)", [(f"run{number}", "x" * 50) for number in range(200)])
    database.commit()
    database.execute("pragma wal_checkpoint(passive)")
    database.execute("insert into kv values ('password', 'Qm7vT2xR9kL4wZpB')")
    database.commit()
    kept = {name: (tmp_path / name).read_bytes() for name in ("runs.db", "runs.db-wal")}
    database.close()
    for name, data in kept.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "run.log").write_text("used Qm7vT2xR9kL4wZpB\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert "Qm7vT2xR9kL4wZpB" in scrubbed.learned and not scrubbed.kept
    assert b"Qm7vT2xR9kL4wZpB" not in (tmp_path / "run.log").read_bytes()
    # (the code is masked where it stands by the redaction's shapes; nothing of it is learned for other files)
    assert not [value for value in scrubbed.learned if any(word in value for word in ("environ", "getpass",
                                                                                      "settings", "via"))]
    values = {"credentials": {"prod": None, "prod_db_primary": "Xk9vQ2pL7mZ3", "retries": 3,
                              "staging_replica": "Yp3rT8wQ1nB6"}}
    assert named_in_pickle(pickle.dumps(values, protocol=4)) == ["Xk9vQ2pL7mZ3", "Yp3rT8wQ1nB6"]


def test_stored_values_with_punctuation_and_lists_with_comments_are_learned(tmp_path):
    """A password with punctuation (``Tr0ub4dor&3{prod}``, ``Qm7v,T2xR9kL4``) stored whole in a pickle, a SQLite
    credential column or a file named for one is learned; so are list items under a commented header, after a
    tab, or followed by a comment; an ``auth:`` list of methods and an empty map before a setting teach nothing."""
    import pickle
    import sqlite3

    from evalkit.grid.named_values import named_in_pickle
    from evalkit.grid.printed_secrets import output_secrets

    stored = ["Tr0ub4dor&3{prod}", "Qm7v,T2xR9kL4", "Pa[ss]w0rd-2024x"]
    (tmp_path / "c.pkl").write_bytes(pickle.dumps({"password": stored[0]}, protocol=4))
    with sqlite3.connect(tmp_path / "u.db") as database:
        database.execute("create table u (name text, api_token text)")
        database.execute("insert into u values ('ann', ?)", (stored[1],))
    database.close()
    (tmp_path / "db_password").write_text(stored[2] + "\n")
    (tmp_path / "run.log").write_text("used " + " ".join(stored) + "\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert set(stored) <= set(scrubbed.learned)
    assert not [value for value in stored if value in (tmp_path / "run.log").read_text()]
    assert output_secrets("api_keys: # prod\n  - Qm7vT2xR9kL4\n  -\tXk9vQ2pL7mZ3\n") == ["Qm7vT2xR9kL4", "Xk9vQ2pL7mZ3"]
    assert output_secrets('api_keys = [ # keys\n  "Qm7vT2xR9kL4", # prod\n]\n') == ["Qm7vT2xR9kL4"]
    assert output_secrets("auth:\n  - oauth2-client\n  - basic-auth-v2\n") == []
    assert named_in_pickle(pickle.dumps({"passwords": {}, "model": "gpt2-medium-v2"}, protocol=4)) == []


def test_dotnet_and_hadoop_attributes_name_their_value_in_either_order(tmp_path):
    """``<add name="DbPassword" value="X"/>``, single quotes, and a Hadoop property whose ``value`` attribute comes
    before its ``name`` are learned and masked in a log that repeats them; an ordinary setting is not."""
    values = ["Qm7vT2xR9kL4", "Xk9vQ2pL7mZ3", "Yp3rT8wQ1nB6"]
    (tmp_path / "web.config").write_text(f'<add name="DbPassword" value="{values[0]}"/>\n'
                                         f"<add key='ApiKey' value='{values[1]}'/>\n"
                                         '<add name="LogLevel" value="Information"/>\n')
    (tmp_path / "core-site.xml").write_text(f'<property value="{values[2]}" name="fs.s3a.secret.key"/>\n')
    (tmp_path / "run.log").write_text("used " + " ".join(values) + " at Information level\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert set(values) <= set(scrubbed.learned) and "Information" not in scrubbed.learned
    assert (tmp_path / "run.log").read_text() == "used *** *** *** at Information level\n"


def test_every_form_the_redaction_masks_where_it_stands_is_learned_for_the_other_files(tmp_path):
    """A value under a credential's name that the redaction masks where it stands (a YAML value on the next
    line, a flow map, an INI continuation, a one-line netrc, a compose ``environment`` list in JSON, a JSON value
    holding ``{prod}``) is learned too, and so are the forms no reader took: a quoted key with a space, flow
    lists and a TOML array opening on its name's line, a CSV ``name,value`` table and a passphrase cell,
    ``os.environ.setdefault``, ``os.putenv``, a config's ``set`` and a plural ``api_tokens``: a log that repeats
    each value bare loses it. Code and names where a value would stand teach nothing."""
    values = [f"Wq8zP{number}xK3mR7vT" for number in range(16)]
    forms = {
        "app.yaml": f"db:\n  password:\n    {values[0]}\n  pool: {{user: ann, password: {values[1]}}}\n",
        "setup.cfg": f"[db]\npassword =\n    {values[2]}\n",
        "netrc": f"machine api.example.com login bob password {values[3]}\n",
        "compose.json": f'{{"services": {{"a": {{"environment": ["DB_PASSWORD={values[4]}", "X=1"]}}}}}}\n',
        "settings.json": f'{{"password": "Tr{{prod}}{values[5]}", "api key": "{values[6]}"}}\n',
        "keys.yaml": f"api_keys: [{values[7]}, '{values[8]}']\napi_tokens: [{values[9]}]\n",
        "keys.toml": f'api_keys = ["{values[10]}", # first\n  "{values[11]}"]\n',
        "vars.csv": f'name,value\npassword,{values[12]}\nuser,ann\n',
        "users.csv": f'user,password\nbob,"correct horse 9 {values[13]}"\n',
        "run.py": f'os.environ.setdefault("DB_PASSWORD", "{values[14]}")\nos.putenv("HF_TOKEN", "{values[15]}")\n'
                  f'config.set("db", "password", "{values[0]}")\n',
    }
    for name, text in forms.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "stdout.txt").write_text(" ".join(values) + "\n")
    clean = {"notebook.py": 'api_key = os.environ["OPENAI_API_KEY"]\ntoken = tokens[i]\npassword: db_password\n'
                            "secret_key = settings.SECRET_KEY\nmax_tokens: [64, 128]\n"
                            'special_tokens = ["<s>", "</s>"]\nvalue = row.get("token", "default")\n'
                            "argv ['--password', 'literal', '--seed', '1']\n",
             "params.csv": "name,value\nlr,0.001\ntokenizer,gpt2\n"}
    for name, text in clean.items():
        (tmp_path / name).write_text(text)
    scrubbed = scrub_folder(tmp_path, [])
    missed = [value for value in values if not any(value in learned for learned in scrubbed.learned)]
    assert not missed
    assert not [learned for learned in scrubbed.learned if not any(value in learned for value in values)]
    for path in tmp_path.iterdir():
        assert not [value for value in values if value in path.read_text()], (path.name, path.read_text())
    # (code is masked where it stands, not learned: the argument list keeps its "--password")
    assert "argv ['--password', 'literal', '--seed', '1']" in (tmp_path / "notebook.py").read_text()
    assert (tmp_path / "params.csv").read_text() == clean["params.csv"]


def test_record_ids_special_tokens_and_a_token_type_teach_the_scrub_nothing(tmp_path):
    """A JSON Lines file whose records are named by ``"key"``, a tokenizer's special tokens (``eos_token``,
    ``<|endoftext|>``), an OAuth ``token_type: bearer`` followed by another field, and a results table that
    repeats the same ids are ordinary data: nothing is learned and every file keeps its bytes."""
    import json
    import pickle

    files = {
        "items.jsonl": "".join(json.dumps({"key": f"item-{number:04d}", "score": number % 5}) + "\n"
                               for number in range(20)),
        "tokenizer_config.json": json.dumps({"eos_token": "<|endoftext|>", "bos_token": "<|im_start|>",
                                             "pad_token": "[PAD]", "unk_token": "<unk>"}),
        "oauth.yaml": "token_type: bearer\nauth_method: oauth2\nitems:\n  - key: item-0003\n",
        "results.csv": "key,score,note\nitem-0003,3,<|endoftext|> kept\nitem-0004,4,auth_method:\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "special.pkl").write_bytes(pickle.dumps({"eos_token": "<|endoftext|>", "pad_token": "[PAD]"}))
    kept = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    scrubbed = scrub_folder(tmp_path, [])
    assert not scrubbed.learned
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == kept


@pytest.mark.parametrize("text, learned", [
    ("DB_PASSWORD=supersecretvalue", ["supersecretvalue"]),
    ("password: myDogSpot", ["myDogSpot"]),
    ("secret: correct.horse.battery", ["correct.horse.battery"]),
    ("client_secret = tiger_lily_moon", ["tiger_lily_moon"]),
    ("password: hunter(2)", ["hunter(2)"]),
    ("Authorization: Bearer  abc123xyzQ", ["abc123xyzQ"]),
    ("api_keys: [Ak-1x9z, Ak-2y8w]", ["Ak-1x9z", "Ak-2y8w"]),
    ("rng_key = jax.random.PRNGKey(42)", []),
    ("password = db_password\nsecret_key = settings.SECRET_KEY\ntoken = tokens[i]", []),
    ('st.text_input("Password", "enter your password")\nclean = text.replace("password", "word piece")', []),
    ('os.getenv("API_KEY", "sk-placeholder")\nenv.get("SECRET", "changeme123")', []),
    ('secrets: [prod-db, staging-9]\nauth: [oauth2, "saml-v2"]', []),
    ("Starting pass epoch_1 / finished pass step-100\nstep 100 loss 2.31 secret 42abcdef lr 1e-4", []),
    ("metric,value\nacc,0.9\nkey,train-split-1\nauth,oauth2-v2", []),
    ("Password: ********", []),
    ("\n*Authorization: Token token= key=login bob password abc123xx:password: password=", []),
    ('{"password": " "}\nDB_PASSWORD=Zq8vLm3pXy7\n', ["Zq8vLm3pXy7"]),
    ("password: " + "a_" * 30 + "a9!\n", ["a_" * 30 + "a9!"]),
    ("password: Secr3t(pass)\npassword: Zq8v[x]Lm3p\npassword: ab***cd9\n", ["Secr3t(pass)", "Zq8v[x]Lm3p", "ab***cd9"]),
    ('{"fields": ["id", "token"], "rows": [["a2", "tokenizer123abc"]]}\n', []),
    ("[rank0] Using token: 4096ctx1 for padding\nINFO Session: run-2024-01-01T12\nEpoch 1 pass: 2of3abc done\n", []),
    ("- key: password\n  value: ${DB_PASSWORD}\nauth:\n  password: !ENV DB_PASS1\n  token: *tok\n", []),
    ("password = Zq8vLm3pXy7 # prod\n", ["Zq8vLm3pXy7"]),
    ("Incorrect API key provided: PT37QDHscOgbbVaRPvx5fPZ3MCG31C. You can find your API key", ["PT37QDHscOgbbVaRPvx5fPZ3MCG31C"]),
    ('password: "!Qaz2wsx3"\nDB_PASSWORD=*Zq8v-Lm3p\nsecret_key: HUNTER_2_PASS\n', ["!Qaz2wsx3", "*Zq8v-Lm3p", "HUNTER_2_PASS"]),
])
def test_what_a_unit_writes_under_a_name_is_learned_only_where_it_is_a_value(text, learned):
    """A password in letters only, with dots, underscores or brackets, is a value; code where a value would
    stand (a name, a call, a subscript), a getter's default, prose, a training log's "pass epoch_1", a flow list
    under a name that lists names, a key-value table's lone ``key`` or ``auth``, stars and a mask's neighbours
    are none: learned, their 6-character pieces would mask every "password" of the unit's files."""
    from evalkit.grid.printed_secrets import output_secrets

    assert output_secrets(text) == learned


def test_pairs_lists_inline_log_names_json_tables_and_numpy_records_are_learned(tmp_path):
    """A YAML list of ``key:``/``value:`` pairs, an XML ``<entry><key>password</key><value>X</value>``, a headers
    list ``[["X-Api-Key", X]]``, a log line naming its key mid-line (``Using API key: X for requests``), a JSON
    table with its column names apart from its rows, and a NumPy record array with a ``password`` field each name
    a credential: learned, and a log repeating each value bare loses it. A result's ``key``, ``secret_santa`` and
    ``eval_key`` fields teach nothing."""
    import json

    np = pytest.importorskip("numpy")
    values = [f"Rc8Xq3Wz{number}Lp1Rm4" for number in range(7)]
    (tmp_path / "deploy.yaml").write_text(f"env:\n  - key: DB_PASSWORD\n    value: {values[0]}\n")
    (tmp_path / "conf.xml").write_text(f"<map><entry><key>password</key><value>{values[1]}</value></entry></map>\n")
    (tmp_path / "request.json").write_text(json.dumps({"headers": [["Accept", "*/*"], ["X-Api-Key", values[2]]]}))
    (tmp_path / "run.log").write_text(f"2026-12-07 INFO Using API key: {values[3]} for requests\n")
    (tmp_path / "table.json").write_text(json.dumps({"fields": ["user", "api_token"], "rows": [["bob", values[4]]]}))
    records = np.array([("ann", values[5]), ("bob", values[6])], dtype=[("user", "U8"), ("password", "U24")])
    np.save(tmp_path / "users.npy", records)
    (tmp_path / "bare.log").write_text(" ".join(values) + "\n")
    result = {"key": "item-0042", "secret_santa": "alice", "eval_key": "mmlu/abstract_algebra"}
    (tmp_path / "result.json").write_text(json.dumps(result))
    scrubbed = scrub_folder(tmp_path, [])
    assert set(values) <= set(scrubbed.learned)
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        assert not [value for value in values if value.encode() in data or value.encode("utf-32-le") in data], path
    assert not set(result.values()) & set(scrubbed.learned)
    assert json.loads((tmp_path / "result.json").read_text())["secret_santa"] == "alice"


def test_yaml_anchors_tags_nested_values_and_secret_data_are_masked_learned_and_keep_the_yaml_loading(tmp_path):
    """A credential behind a YAML anchor or tag (``hf_token: &tok V``, ``api_key: !!str V``, ``password: &p "V"``,
    in a flow map, with the value on the next line), a run config's ``openai_api_key:`` / ``value: &key V`` and a
    Kubernetes Secret's base64 ``data`` are masked where they stand and learned for a log repeating them bare; the
    anchors, tags, aliases and other fields stay as they were."""
    import base64

    values = [f"Wq7Zr2Lx{number}Mv4Kp8Nt3Ys" for number in range(8)]
    config = (f"defaults:\n  hf_token: &tok {values[0]}\ndb:\n  password: &p \"{values[1]}\"\n"
              f"api_key: !!str {values[2]}\nserver: {{host: h, token: &t {values[3]}}}\n"
              f"creds:\n  password: &pw {values[4]}  # prod\nbackup:\n  pass_copy: *pw\n  token: *tok\n"
              f"nested:\n  secret: &s\n    {values[5]}\n"
              f"openai_api_key:\n  desc: null\n  value: &key {values[6]}\n")
    (tmp_path / "config.yaml").write_text(config)
    (tmp_path / "secret.yaml").write_text("kind: Secret\ndata:\n  password: "
                                          f"{base64.b64encode(values[7].encode()).decode()}\n")
    (tmp_path / "bare.log").write_text(" ".join(values) + "\n")
    scrubbed = scrub_folder(tmp_path, [])
    assert set(values) <= set(scrubbed.learned)
    for path in tmp_path.iterdir():
        assert not [value for value in values if value in path.read_text()], (path.name, path.read_text())
    scrubbed_config = (tmp_path / "config.yaml").read_text()
    def names(text: str) -> list[str]:
        return [line.split(":")[0] for line in text.splitlines() if ":" in line]

    assert names(scrubbed_config) == names(config)
    assert all(mark in scrubbed_config for mark in ("&tok", "&p", "!!str", "&t", "&pw", "*pw", "*tok", "&s", "&key",
                                                    "desc: null"))
