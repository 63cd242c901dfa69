"""What a sandboxed run sees besides its own folder and the system's: the variables of the grader's environment it
keeps (:data:`ENVIRONMENT_ALLOWED`), the interpreter, the kit's package and the data and cache folders, read-only
(:func:`visible_paths`, refused where one would show the class, the key or the grader's home:
:func:`check_visible_folders`), and the files among them that may hold credentials, which it reads as empty
(:func:`credential_files`, :func:`machine_credential_files`).
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

__all__ = ["with_kit_cache", "unreadable_models", "ENVIRONMENT_ALLOWED", "CREDENTIAL_FILES", "is_credential_name", "is_credential_folder",
           "credential_files", "machine_credential_files", "check_visible_folders", "visible_paths",
           "data_folders"]

#: The only variables of the grader's environment a submission sees (paths and switches, no credentials).
ENVIRONMENT_ALLOWED = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "EVALKIT_DATA_DIR", "EVALKIT_CACHE_DIR",
                       "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_CACHE",
                       "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

#: Names a cache folder may hold that are credentials, not data (Hugging Face's tokens, a ``.netrc``, a ``.env``
#: of API keys); :func:`is_credential_name` matches these and every name shaped like one.
CREDENTIAL_FILES = ("token", "stored_tokens", ".netrc", ".git-credentials", "credentials", "credentials.json",
                    ".env")

#: Parts of a name that make it a credential's wherever they appear (case-insensitive).
_CREDENTIAL_PARTS = ("secret", "credential", "password", "passwd", "pgpass", "netrc", "pypirc", "npmrc", "apikey",
                     "api_key", "api-key", "access_key", "private_key")
#: Words (between dots, dashes, underscores) that make a name a credential's: ``token.txt``, ``server.key``,
#: ``.env.local``; not ``tokenizer.json``, ``special_tokens_map.json`` or ``environment``, which models hold.
_CREDENTIAL_WORDS = frozenset({"token", "key", "keys", "env", "envrc", "auth", "pem", "p12", "pfx", "kdbx"})


def is_credential_name(name: str) -> bool:
    """Whether a file named ``name`` in a cache folder may hold a credential: a hidden name (``.pgpass``,
    ``.envrc``, ``.ENV``), an SSH key (``id_*``), or a name with a credential's word in it (case-insensitive).

    >>> [is_credential_name(name) for name in (".env.local", "id_rsa", "API_KEY.txt", "my-token", "secrets.toml")]
    [True, True, True, True, True]
    >>> [is_credential_name(name) for name in ("tokenizer.json", "special_tokens_map.json", "environment")]
    [False, False, False]
    """
    lowered = name.lower()
    if name in CREDENTIAL_FILES or lowered.startswith((".", "id_")):
        return True
    return any(part in lowered for part in _CREDENTIAL_PARTS) or bool(
        _CREDENTIAL_WORDS.intersection(re.split(r"[^a-z0-9]+", lowered)))


#: Whole folder names (case-insensitive) that hold credentials: ``keys/``, ``auth/``. A word inside a longer name
#: (``bert-token-classification``, a model's cache folder) does not make a folder a credential's.
_CREDENTIAL_FOLDERS = frozenset({"token", "tokens", "key", "keys", "auth"})


def is_credential_folder(name: str) -> bool:
    """Whether a folder named ``name`` in a cache folder holds credentials, so that every file inside it reads as
    empty: a hidden name (``.docker``), a name holding a credential's part (``secrets``, ``credentials``,
    ``db_passwords``), or one of :data:`_CREDENTIAL_FOLDERS` whole.

    >>> [is_credential_folder(name) for name in (".docker", "secrets", "Credentials", "keys", "api_keys")]
    [True, True, True, True, True]
    >>> [is_credential_folder(name) for name in ("models--x--bert-token-classification", "snapshots", "keyphrase")]
    [False, False, False]
    """
    lowered = name.lower()
    return (lowered.startswith(".") or lowered in _CREDENTIAL_FOLDERS
            or any(part in lowered for part in _CREDENTIAL_PARTS))


def credential_files(folders: Sequence[Path]) -> list[Path]:
    """The files anywhere in each folder that :func:`is_credential_name` names, and every file inside a folder
    that :func:`is_credential_folder` names, hidden (``.docker/config.json``, ``.streamlit/secrets.toml``) or not
    (``secrets/openai.txt``, ``credentials/gcp.json``): a sandboxed run reads each as an empty file. A link so
    named counts by the file it points to, when that file lies in one of the folders.

    >>> import tempfile
    >>> home = Path(tempfile.mkdtemp())
    >>> _ = (home / "hub" / "models--x").mkdir(parents=True), (home / "hub" / "models--x" / "token").write_text("t")
    >>> _ = (home / "hub" / "model.bin").write_text("w"), (home / ".netrc").symlink_to(home / "hub" / "model.bin")
    >>> _ = (home / ".docker").mkdir(), (home / ".docker" / "config.json").write_text("{}")
    >>> _ = (home / "hub" / "tokenizer.json").write_text("{}")
    >>> _ = (home / "secrets").mkdir(), (home / "secrets" / "openai.txt").write_text("sk")
    >>> sorted(str(path.relative_to(home)) for path in credential_files([home]))
    ['.docker/config.json', 'hub/model.bin', 'hub/models--x/token', 'secrets/openai.txt']
    """
    roots = [Path(os.path.realpath(folder)) for folder in folders]
    found: dict[Path, None] = {}
    for root in roots:
        for here, _, names in os.walk(root):
            inside_credential = any(is_credential_folder(part) for part in Path(here).relative_to(root).parts)
            for name in names:
                if not (inside_credential or is_credential_name(name)):
                    continue
                target = Path(os.path.realpath(os.path.join(here, name)))
                if target.is_file() and any(target.is_relative_to(other) for other in roots):
                    found[target] = None
    return list(found)


#: Where a machine keeps credentials for every user: environment settings, package indexes' and tools' logins,
#: login scripts that export tokens. A run sees the system's ``/etc`` (its libraries and settings need it), but
#: reads each of these as an empty file. (Not every credential-looking name of ``/etc``: ``passwd`` is the user
#: table a run's programs look themselves up in.)
MACHINE_CREDENTIALS = ("/etc/environment", "/etc/pip.conf", "/etc/netrc", "/etc/npmrc", "/etc/gitconfig",
                       "/etc/wgetrc", "/etc/boto.cfg", "/etc/apt/auth.conf", "/etc/profile", "/etc/bash.bashrc",
                       "/etc/zshenv", "/etc/zprofile")
MACHINE_CREDENTIAL_FOLDERS = ("/etc/profile.d", "/etc/apt/auth.conf.d", "/etc/docker", "/etc/containers",
                              "/etc/xdg/pip", "/etc/pip", "/etc/uv", "/etc/zsh")
#: The package tools' settings an interpreter's own folder may hold (a virtual environment's ``pip.conf``).
PREFIX_CREDENTIALS = ("pip.conf", "pip.ini", "uv.toml", ".pypirc")


def machine_credential_files() -> list[Path]:
    """The files of the machine's ``/etc`` that a sandboxed run reads as empty: :data:`MACHINE_CREDENTIALS`, the
    files in :data:`MACHINE_CREDENTIAL_FOLDERS` and the interpreter's folders' :data:`PREFIX_CREDENTIALS` (not
    links: a link's target is what a bind would cover).

    >>> Path("/etc/environment") in machine_credential_files() or not Path("/etc/environment").is_file()
    True
    """
    prefixes = [os.path.join(prefix, name) for prefix in {sys.prefix, sys.base_prefix} for name in PREFIX_CREDENTIALS]
    found = [Path(name) for name in (*MACHINE_CREDENTIALS, *prefixes) if os.path.isfile(name)
             and not os.path.islink(name)]
    for folder in MACHINE_CREDENTIAL_FOLDERS:
        for here, _, names in os.walk(folder):
            found += [Path(here) / name for name in names if os.path.isfile(os.path.join(here, name))
                      and not os.path.islink(os.path.join(here, name))]
    return found


def check_visible_folders(env: dict[str, str], private: Sequence[Path]) -> None:
    """Refuse (``ValueError``) a data, cache or model folder of ``env`` that a run would see whole but that holds
    what no run may read: the file system's root, the grader's home, the temporary folder, the project around
    the kit's package, or any of ``private`` (the class, key and output folders) — a run sees such a folder in
    full, read-only, so ``EVALKIT_CACHE_DIR=/tmp`` would show it every other grading's files."""
    import evalkit

    guarded = {"the file system's root": Path("/"), "your home folder": Path.home(),
               "the temporary folder": Path(tempfile.gettempdir()),
               "the project around the kit": Path(evalkit.__file__).resolve().parents[1],
               **{f"{path}": path for path in private}}
    for name in ENVIRONMENT_ALLOWED:
        value = env.get(name, "")
        if not (name.endswith(("_DIR", "_HOME", "_CACHE")) and value.startswith("/")):
            continue
        folder = Path(os.path.realpath(value))
        for what, path in guarded.items():
            path = Path(os.path.realpath(path))
            if folder == path or path.is_relative_to(folder):
                raise ValueError(f"{name}={value} holds {what} ({path}); a graded notebook sees that folder whole: "
                                 f"point {name} at a folder of its own (the data or the model cache only)")


def with_kit_cache(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with ``EVALKIT_CACHE_DIR`` naming the kit's default cache folder where it names none and that folder
    exists: the models ``make models`` converted are there, and a run that cannot see them would convert them again
    inside its own folder, past its file-size limit (every honest notebook that loads a model would fail).

    >>> with_kit_cache({"EVALKIT_CACHE_DIR": "/srv/cache"})["EVALKIT_CACHE_DIR"]
    '/srv/cache'
    """
    from evalkit.models.defaults import default_cache_dir

    found = dict(env)
    if not found.get("EVALKIT_CACHE_DIR") and default_cache_dir().is_dir():
        found["EVALKIT_CACHE_DIR"] = str(default_cache_dir().resolve())
    return found


#: The folders of a kit cache that hold what a graded notebook loads: converted models and trained judges.
MODEL_FOLDERS = ("models", "encoder-judges", "realism-judges", "adapters", "comparison-readers")


def unreadable_models(env: Mapping[str, str], most: int = 3) -> list[Path]:
    """Up to ``most`` files of the model folders of the cache ``env`` names (:data:`MODEL_FOLDERS`) that a run,
    as another user, cannot read (no read permission for others): a model saved private, as safetensors writes
    its weights whatever the umask, fails every honest notebook that loads it.

    >>> import tempfile; cache = Path(tempfile.mkdtemp()); (cache / "models").mkdir(); weights = cache / "models" / "w"
    >>> _ = weights.write_bytes(b"w"); weights.chmod(0o600); [path.name for path in unreadable_models({"EVALKIT_CACHE_DIR": str(cache)})]
    ['w']
    """
    cache = env.get("EVALKIT_CACHE_DIR", "")
    found: list[Path] = []
    for name in MODEL_FOLDERS if cache else ():
        for path in sorted(Path(cache, name).rglob("*")) if Path(cache, name).is_dir() else ():
            if path.is_file() and not path.is_symlink() and not path.stat().st_mode & 0o004:
                found.append(path)
                if len(found) >= most:
                    return found
    return found


def visible_paths(env: dict[str, str]) -> list[Path]:
    """What a sandboxed run sees besides the system folders and its own: the interpreter and its environment,
    the kit's package (not the project around it), the project's download cache of datasets, and the data,
    cache and model folders that ``env`` names; those that exist, links resolved, read-only.

    >>> import evalkit
    >>> Path(evalkit.__file__).parent.resolve() in visible_paths({})
    True
    """
    found = [Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent, Path(sys.prefix), _package(),
             *data_folders(env)]
    return list(dict.fromkeys(Path(os.path.realpath(path)) for path in found if os.path.exists(path)))


def _package() -> Path:
    """The kit's package folder, links resolved."""
    import evalkit

    return Path(evalkit.__file__).resolve().parent


def data_folders(env: dict[str, str]) -> list[Path]:
    """The data and cache folders a sandboxed run sees (each read through :func:`credential_files`): the
    project's download cache of datasets (``data`` beside the kit's package) and the data, cache and model
    folders ``env`` names; those that exist, links resolved. Not the interpreter's folders nor the package.

    >>> import evalkit, tempfile
    >>> cache = tempfile.mkdtemp()
    >>> Path(os.path.realpath(cache)) in data_folders({"EVALKIT_CACHE_DIR": cache})
    True
    >>> Path(evalkit.__file__).resolve().parent in data_folders({})
    False
    """
    found = [_package().parent / "data", *_env_folders(env)]
    return list(dict.fromkeys(Path(os.path.realpath(path)) for path in found if os.path.isdir(path)))


def _env_folders(env: dict[str, str]) -> list[Path]:
    """The data, cache and model folders ``env`` names (absolute paths that exist, links resolved)."""
    named = [env[name] for name in ENVIRONMENT_ALLOWED if name.endswith(("_DIR", "_HOME", "_CACHE"))
             and env.get(name, "").startswith("/")]
    return [Path(os.path.realpath(path)) for path in named if os.path.isdir(path)]
