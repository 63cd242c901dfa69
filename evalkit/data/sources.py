"""Where datasets come from: a local directory or a checksum-verified download.

Resolution order for every dataset:

1. ``$EVALKIT_DATA_DIR/<name>/`` (the layout of ``../shared/data``; large files may be gzipped);
2. ``data/<name>/`` in the project (the download cache);
3. a download from the dataset's public source into that cache, each file checked against its sha256.

Offline with neither, :func:`dataset_dir` raises :class:`DataUnavailable` explaining how to set
``EVALKIT_DATA_DIR``. The pins — each dataset's source URL, licence and every file's sha256 — are a table in
``sources.yaml`` beside this module (package data), read once into :data:`DATASETS`.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

__all__ = ["DataUnavailable", "ChecksumMismatch", "DataFileDamaged", "UnknownDataset", "Dataset", "DATASETS",
           "dataset_dir", "find_file", "project_data_dir", "sha256_of", "GitTree", "git_blob_sha1"]


class DataUnavailable(RuntimeError):
    """Neither a local copy nor a download of a dataset could be had."""


class DataFileDamaged(ValueError):
    """A data file that cannot be read at all (a truncated or damaged archive); names the file."""


class UnknownDataset(KeyError):
    """A dataset name the kit does not know; the message lists the names it does."""

    def __str__(self) -> str:  # KeyError would print only the quoted name
        return str(self.args[0])


class ChecksumMismatch(RuntimeError):
    """A file's sha256 differs from the pinned one."""


@dataclass(frozen=True)
class Dataset:
    """A dataset's public source: a base URL and the files (relative paths) with pinned sha256.

    ``metadata_file`` names a Croissant ``metadata.json`` whose ``distribution[].sha256`` values
    are checked too (they must agree with the pins).
    """

    name: str
    base_url: str
    files: dict[str, str]
    licence: str
    attribution: str
    metadata_file: str | None = None
    tree: "GitTree | None" = None


@dataclass(frozen=True)
class GitTree:
    """A folder of many small files in a GitHub repository, fetched file by file and packed into one tar.

    ``manifest_sha256`` pins the content: the sha256 of the sorted lines ``<path>\t<git blob sha1>\n``
    over every file under ``folder``. Each downloaded file is checked against its blob hash from the git
    tree, the tree against the manifest, and a local tarball (``archive``) against the same manifest.
    """

    repo: str
    commit: str
    folder: str
    archive: str
    manifest_sha256: str


def _read_table() -> dict[str, Dataset]:
    """The pinned table, ``sources.yaml`` beside this module (package data): one entry per dataset, checked here
    (known fields, a URL and a 64-hex sha256 for every file) so that a damaged table fails on import, by name."""
    text = resources.files(__package__).joinpath("sources.yaml").read_text(encoding="utf-8")
    datasets = {}
    for name, entry in yaml.safe_load(text).items():
        unknown = set(entry) - {"base_url", "files", "licence", "attribution", "metadata_file", "tree"}
        if unknown or not str(entry.get("base_url", "")).startswith("https://"):
            raise ValueError(f"sources.yaml, {name!r}: unknown fields {sorted(unknown)} or no https base_url")
        pins = [*entry["files"].values(), *([entry["tree"]["manifest_sha256"]] if "tree" in entry else [])]
        if not all(re.fullmatch(r"[0-9a-f]{64}", str(pin)) for pin in pins):
            raise ValueError(f"sources.yaml, {name!r}: a sha256 pin that is not 64 hex digits")
        tree = GitTree(**entry["tree"]) if "tree" in entry else None
        datasets[name] = Dataset(name=name, **{**entry, "tree": tree})
    return datasets


#: Every dataset the kit knows, by name (``sources.yaml``, in its order).
DATASETS: dict[str, Dataset] = _read_table()
(UPHELD, DAILYDIALOG, DAILYDIALOG_PLUSPLUS, KHALID_LEE, MIRRORBENCH, METAEVAL_GRADE, METAEVAL_USR, METAEVAL_FED,
 METAEVAL_ZHAO, TOPICAL_CHAT, PERSONACHAT, COMMONSENSE_DIALOGUES) = (DATASETS[name] for name in (
    "upheld", "dailydialog", "dailydialog_plusplus", "khalid_lee_2022", "mirrorbench", "metaeval/grade",
    "metaeval/usr", "metaeval/fed", "metaeval/dailydialog_zhao", "topical_chat", "personachat",
    "commonsense_dialogues"))

_ENV_VAR = "EVALKIT_DATA_DIR"


def project_data_dir() -> Path:
    """The download cache: ``$EVALKIT_CACHE_DATA`` if set, else ``data/`` beside the package."""
    override = os.environ.get("EVALKIT_CACHE_DATA")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "data"


def sha256_of(path: Path) -> str:
    """sha256 of a file's *uncompressed* bytes (``.gz`` files are read through gzip)."""
    digest = hashlib.sha256()
    opener = gzip.open if path.suffix == ".gz" else open
    from evalkit.data.jsonl import archive_errors_named

    with archive_errors_named(path, DataFileDamaged, "gzip file"), opener(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def find_file(root: Path, relative: str) -> Path | None:
    """The file ``relative`` under ``root``, plain or gzipped (``name.gz``), or None."""
    for candidate in (root / relative, root / (relative + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a file's bytes (what a git tree lists for it).

    >>> git_blob_sha1(b"")
    'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _manifest_digest(entries: dict[str, str]) -> str:
    return hashlib.sha256("".join(f"{path}\t{sha}\n" for path, sha in sorted(entries.items())).encode()).hexdigest()


def _tar_manifest(archive: Path) -> dict[str, str]:
    import tarfile

    from evalkit.data.jsonl import archive_errors_named

    with archive_errors_named(archive, DataFileDamaged), tarfile.open(archive) as bundle:
        return {m.name: git_blob_sha1(bundle.extractfile(m).read())  # type: ignore[union-attr]
                for m in bundle.getmembers() if m.isfile()}


def _verify_tree(root: Path, dataset: Dataset, check: bool) -> None:
    tree = dataset.tree
    assert tree is not None
    archive = find_file(root, tree.archive)
    if archive is None:
        raise DataUnavailable(f"{dataset.name}: {root} lacks {tree.archive!r}. Point {_ENV_VAR} at a directory "
                              f"with the layout of ../shared/data, or unset it to download.")
    if check:
        actual = _manifest_digest(_tar_manifest(archive))
        if actual != tree.manifest_sha256:
            raise ChecksumMismatch(f"{archive}: content manifest sha256 {actual[:16]}… differs from the pinned "
                                   f"{tree.manifest_sha256[:16]}… of {tree.repo}@{tree.commit[:12]}.")


def _fetch(url: str, dataset: Dataset, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read()
    except (urllib.error.URLError, OSError) as error:
        raise DataUnavailable(
            f"{dataset.name}: could not download {url} ({error}). This machine may be offline: set "
            f"{_ENV_VAR} to a directory holding '{dataset.name}/' (layout of ../shared/data), e.g. "
            f"export {_ENV_VAR}=../shared/data") from error


def _download_tree(dataset: Dataset, target: Path, timeout: float = 60.0, api_url: str | None = None,
                   raw_url: str | None = None) -> None:
    """Fetch a pinned git folder file by file, verify it and pack it into ``target/<archive>``."""
    import tarfile

    tree = dataset.tree
    assert tree is not None
    api = api_url or f"https://api.github.com/repos/{tree.repo}/git/trees/{tree.commit}?recursive=1"
    listing = json.loads(_fetch(api, dataset, timeout))
    entries = {item["path"]: item["sha"] for item in listing.get("tree", [])
               if item.get("type") == "blob" and item["path"].startswith(tree.folder)}
    if listing.get("truncated") or _manifest_digest(entries) != tree.manifest_sha256:
        raise ChecksumMismatch(f"{api}: the listed files do not match the pinned manifest of {dataset.name}")
    raw = raw_url or f"https://raw.githubusercontent.com/{tree.repo}/{tree.commit}/"
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target, suffix=".partial", delete=False) as handle:
        try:
            with tarfile.open(fileobj=handle, mode="w:gz") as bundle:
                for path, expected in sorted(entries.items()):
                    payload = _fetch(raw + urllib.request.quote(path), dataset, timeout)
                    if git_blob_sha1(payload) != expected:
                        raise ChecksumMismatch(f"{raw}{path}: content differs from git blob {expected[:12]}…")
                    info = tarfile.TarInfo(path)
                    info.size = len(payload)
                    bundle.addfile(info, io.BytesIO(payload))
        except BaseException:
            Path(handle.name).unlink(missing_ok=True)
            raise
    Path(handle.name).replace(target / tree.archive)


def _verify(root: Path, dataset: Dataset, check: bool) -> None:
    if dataset.tree is not None:
        _verify_tree(root, dataset, check)
        return
    missing = [rel for rel in dataset.files if find_file(root, rel) is None]
    if missing:
        raise DataUnavailable(
            f"{dataset.name}: {root} lacks {len(missing)} file(s), e.g. {missing[0]!r}. "
            f"Point {_ENV_VAR} at a directory with the layout of ../shared/data, or unset it to download.")
    if not check:
        return
    for rel, expected in dataset.files.items():
        path = find_file(root, rel)
        assert path is not None
        actual = sha256_of(path)
        if actual != expected:
            raise ChecksumMismatch(
                f"{path}: sha256 {actual[:16]}… differs from the pinned {expected[:16]}… of the public "
                f"release. Restore the file, or pass verify=False to use a modified copy knowingly.")


def _download(dataset: Dataset, target: Path, base_url: str | None = None, timeout: float = 60.0) -> None:
    """Download every missing file of ``dataset`` into ``target``, verifying each before it lands."""
    base = base_url or dataset.base_url
    target.mkdir(parents=True, exist_ok=True)
    for rel, expected in dataset.files.items():
        if find_file(target, rel) is not None:
            continue
        url = base + rel
        payload = _fetch(url, dataset, timeout)
        actual = hashlib.sha256(payload).hexdigest()
        if actual != expected:
            raise ChecksumMismatch(f"{url}: downloaded sha256 {actual[:16]}… differs from pinned {expected[:16]}…")
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        # Write to a temporary name first so an interrupted download never leaves a partial file.
        with tempfile.NamedTemporaryFile(dir=destination.parent, delete=False) as handle:
            handle.write(payload)
        Path(handle.name).replace(destination)
    if dataset.metadata_file:
        _check_croissant(dataset, target)


def _check_croissant(dataset: Dataset, root: Path) -> None:
    """The Croissant metadata's sha256 values must agree with the pins for the files it lists."""
    meta_path = find_file(root, dataset.metadata_file or "")
    if meta_path is None:
        return
    opener = gzip.open if meta_path.suffix == ".gz" else open
    with opener(meta_path, "rt", encoding="utf-8") as handle:
        meta = json.load(handle)
    for entry in meta.get("distribution", []):
        name, digest = entry.get("contentUrl"), entry.get("sha256")
        if name in dataset.files and digest and digest != dataset.files[name]:
            raise ChecksumMismatch(f"{meta_path}: sha256 of {name} in the Croissant metadata ({digest[:16]}…) "
                                   f"differs from the pinned {dataset.files[name][:16]}…")


def dataset_dir(name: str, *, data_dir: str | os.PathLike | None = None, verify: bool = True,
                download: bool = True, base_url: str | None = None) -> Path:
    """The directory holding dataset ``name``, fetching it first when needed.

    ``data_dir`` (or ``$EVALKIT_DATA_DIR``) is a directory that contains ``<name>/``. Without one,
    the project cache ``data/<name>/`` is used and filled from the public source when incomplete.
    ``verify`` checks every file's sha256 against the pinned release.
    """
    if name not in DATASETS:
        raise UnknownDataset(f"unknown dataset {name!r}; the kit knows: {', '.join(sorted(DATASETS))}")
    dataset = DATASETS[name]
    given = data_dir if data_dir is not None else os.environ.get(_ENV_VAR)
    if given:
        root = Path(given).expanduser() / name
        if not root.is_dir():
            raise DataUnavailable(f"{_ENV_VAR}/data_dir is {given!r} but {root} is not a directory.")
        _verify(root, dataset, verify)
        return root
    root = project_data_dir() / name
    if dataset.tree is not None:
        if find_file(root, dataset.tree.archive) is None:
            if not download:
                raise DataUnavailable(f"{dataset.name} is not in {root}; set {_ENV_VAR} or allow the download.")
            _download_tree(dataset, root)
    elif not all(find_file(root, rel) for rel in dataset.files):
        if not download:
            raise DataUnavailable(f"{dataset.name} is not in {root}; set {_ENV_VAR} or allow the download.")
        _download(dataset, root, base_url=base_url)
    _verify(root, dataset, verify)
    return root

