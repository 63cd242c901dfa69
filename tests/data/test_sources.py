"""Dataset resolution: the pinned table the package ships, a local directory, verified download from a loopback
server, clear offline errors."""
from __future__ import annotations

import functools
import hashlib
import http.server
import re
import threading
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalkit.data import sources
from evalkit.data.sources import ChecksumMismatch, DataUnavailable, Dataset, dataset_dir

PACKAGE = Path(sources.__file__).resolve().parents[1]
PAYLOAD = {"a.csv": b"x,y\n1,2\n", "sub/b.csv": b"z\n3\n"}


def _dataset(base_url: str, corrupt: bool = False) -> Dataset:
    files = {name: hashlib.sha256(body).hexdigest() for name, body in PAYLOAD.items()}
    if corrupt:
        files["sub/b.csv"] = "0" * 64
    return Dataset(name="toy", base_url=base_url, files=files, licence="test", attribution="test")


@pytest.fixture
def server(tmp_path):
    """A static file server on loopback holding PAYLOAD; yields its base URL and a request log."""
    root = tmp_path / "served"
    for name, body in PAYLOAD.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            requests.append(self.path)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/", requests
    httpd.shutdown()


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALKIT_DATA_DIR", raising=False)
    monkeypatch.setenv("EVALKIT_CACHE_DATA", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_download_verifies_and_caches(server, isolated, monkeypatch):
    base, requests = server
    monkeypatch.setitem(sources.DATASETS, "toy", _dataset(base))
    folder = dataset_dir("toy")
    assert folder == isolated / "toy"
    assert (folder / "sub" / "b.csv").read_bytes() == PAYLOAD["sub/b.csv"]
    served = len(requests)
    assert dataset_dir("toy") == folder and len(requests) == served  # second call: cache, no request


def test_checksum_mismatch_keeps_nothing(server, isolated, monkeypatch):
    base, _ = server
    monkeypatch.setitem(sources.DATASETS, "toy", _dataset(base, corrupt=True))
    with pytest.raises(ChecksumMismatch, match="sub/b.csv"):
        dataset_dir("toy")
    assert not (isolated / "toy" / "sub" / "b.csv").exists()


def test_offline_without_data_dir_says_how_to_set_it(isolated, monkeypatch):
    monkeypatch.setitem(sources.DATASETS, "toy", _dataset("http://127.0.0.1:9/"))
    with pytest.raises(DataUnavailable, match="EVALKIT_DATA_DIR"):
        dataset_dir("toy")


def test_local_directory_is_verified(tmp_path, monkeypatch):
    monkeypatch.setitem(sources.DATASETS, "toy", _dataset("http://127.0.0.1:9/"))
    local = tmp_path / "local" / "toy"
    for name, body in PAYLOAD.items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_bytes(body)
    monkeypatch.setenv("EVALKIT_DATA_DIR", str(tmp_path / "local"))
    assert dataset_dir("toy") == local
    (local / "a.csv").write_bytes(b"changed")
    with pytest.raises(ChecksumMismatch, match="a.csv"):
        dataset_dir("toy")
    assert dataset_dir("toy", verify=False) == local
    (local / "a.csv").unlink()
    with pytest.raises(DataUnavailable, match="a.csv"):
        dataset_dir("toy", verify=False)


def test_a_truncated_gzip_and_an_unknown_name_are_named(tmp_path, monkeypatch, capsys):
    import gzip

    from evalkit.cli.commands import main
    from evalkit.data.jsonl import read_text

    monkeypatch.setitem(sources.DATASETS, "toy", _dataset("http://127.0.0.1:9/"))
    local = tmp_path / "local" / "toy"
    for name, body in PAYLOAD.items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / (name + ".gz")).write_bytes(gzip.compress(body * 200)[:30])  # cut short, as an interrupted copy
    monkeypatch.setenv("EVALKIT_DATA_DIR", str(tmp_path / "local"))
    with pytest.raises(sources.DataFileDamaged, match=r"toy/a.csv.gz: the gzip file is truncated or damaged"):
        dataset_dir("toy")
    with pytest.raises(ValueError, match=r"a.csv.gz: the gzip file is truncated or damaged"):
        read_text(local / "a.csv.gz")  # what the loaders read through, with verify=False
    assert main(["data", "no-such-set"]) == 2
    message = capsys.readouterr().err
    assert "unknown dataset 'no-such-set'; the kit knows: " in message and "upheld" in message


def test_real_upheld_matches_pinned_checksums(real_data_dir):
    assert dataset_dir("upheld", data_dir=real_data_dir) == real_data_dir / "upheld"


def test_pins_agree_with_croissant_metadata(real_data_dir):
    sources._check_croissant(sources.UPHELD, real_data_dir / "upheld")  # raises on any disagreement
    assert sum(1 for name in sources.UPHELD.files if "/" not in name and name.endswith(".csv")) == 10


def test_git_tree_download_packs_verified_files_and_checks_the_manifest(server, isolated, tmp_path):
    base, _ = server
    served = tmp_path / "served"
    entries = {"folder/" + name: sources.git_blob_sha1(body) for name, body in PAYLOAD.items()}
    for path, body in zip(entries, PAYLOAD.values()):
        (served / "raw" / path).parent.mkdir(parents=True, exist_ok=True)
        (served / "raw" / path).write_bytes(body)
    listing = {"tree": [{"path": p, "type": "blob", "sha": sha} for p, sha in entries.items()]
               + [{"path": "elsewhere/c.txt", "type": "blob", "sha": "0" * 40}], "truncated": False}
    (served / "tree.json").write_text(__import__("json").dumps(listing))
    manifest = sources._manifest_digest(entries)
    tree = sources.GitTree(repo="o/r", commit="c" * 40, folder="folder/", archive="all.tar.gz",
                           manifest_sha256=manifest)
    toy = Dataset(name="toytree", base_url="", files={}, licence="t", attribution="t", tree=tree)
    sources._download_tree(toy, isolated / "toytree", api_url=base + "tree.json", raw_url=base + "raw/")
    sources._verify_tree(isolated / "toytree", toy, True)  # the packed tar carries the pinned content
    import tarfile
    with tarfile.open(isolated / "toytree" / "all.tar.gz") as bundle:
        assert sorted(bundle.getnames()) == sorted(entries)
    (served / "raw" / "folder" / "a.csv").write_bytes(b"tampered\n")
    with pytest.raises(ChecksumMismatch, match="a.csv"):
        sources._download_tree(toy, isolated / "again", api_url=base + "tree.json", raw_url=base + "raw/")
    assert not any((isolated / "again").iterdir())  # nothing half-written is kept
    wrong = Dataset(name="w", base_url="", files={}, licence="t", attribution="t",
                    tree=sources.GitTree("o/r", "c" * 40, "folder/", "all.tar.gz", "0" * 64))
    with pytest.raises(ChecksumMismatch, match="manifest"):
        sources._download_tree(wrong, isolated / "w", api_url=base + "tree.json", raw_url=base + "raw/")


def test_the_dataset_table_loads_with_a_url_and_a_sha256_for_every_file():
    assert set(sources.DATASETS) == {
        "upheld", "dailydialog", "dailydialog_plusplus", "khalid_lee_2022", "mirrorbench", "metaeval/grade",
        "metaeval/usr", "metaeval/fed", "metaeval/dailydialog_zhao", "topical_chat", "personachat",
        "commonsense_dialogues"}
    for name, dataset in sources.DATASETS.items():
        assert dataset.name == name
        assert dataset.base_url.startswith("https://") and dataset.base_url.endswith("/"), name
        assert re.search(r"/[0-9a-f]{40}/", dataset.base_url) or dataset.tree is not None, f"{name}: no commit pinned"
        assert dataset.licence and dataset.attribution, name
        pins = list(dataset.files.values()) + ([dataset.tree.manifest_sha256] if dataset.tree else [])
        assert pins, f"{name}: no file and no tree pinned"
        assert all(re.fullmatch(r"[0-9a-f]{64}", pin) for pin in pins), name
        if dataset.tree is not None:
            assert re.fullmatch(r"[0-9a-f]{40}", dataset.tree.commit), name
    # The values came through exactly (spot checks against the release pins).
    assert sources.UPHELD.files["metadata.json"] == "c0a2b6e49a7b02d26f133f7d0b0b2b69b8bce6ae6bdc8b4e2324806c36f6ebb5"
    assert len(sources.UPHELD.files) == 31 and len(sources.METAEVAL_GRADE.files) == 24
    assert sources.KHALID_LEE.tree.manifest_sha256.startswith("6f5acec4230891bc")


def test_a_damaged_table_is_refused_by_name(monkeypatch, tmp_path):
    text = (PACKAGE / "data" / "sources.yaml").read_text(encoding="utf-8")
    (tmp_path / "sources.yaml").write_text(text.replace(sources.UPHELD.files["metadata.json"], "c0a2b6e4", 1))
    monkeypatch.setattr(sources, "resources", SimpleNamespace(files=lambda package: tmp_path))
    with pytest.raises(ValueError, match=r"sources.yaml, 'upheld': a sha256 pin that is not 64 hex digits"):
        sources._read_table()


def test_the_table_is_package_data():
    """``pip install .`` (not only an editable install) must ship sources.yaml beside sources.py."""
    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "data/sources.yaml" in project["tool"]["setuptools"]["package-data"]["evalkit"]
