"""An output folder named on a command line (``--out``), checked before anything is written into it."""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["current_umask", "out_folder", "readable_as_umask_allows"]


def out_folder(path: str | Path, *, option: str = "--out") -> Path:
    """``path`` as a folder to write into, not made here: refused with a ``ValueError`` naming the file when it or
    a folder above it is a file, or naming the reason when it cannot be looked at (a name too long).

    >>> import tempfile
    >>> a_file = Path(tempfile.mkstemp()[1])
    >>> out_folder(a_file / "board")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --out .../board: ... is a file, not a folder
    >>> out_folder(a_file.parent / "new-board").name
    'new-board'
    """
    folder = Path(path)
    for above in (folder, *folder.parents):
        try:
            if above.exists() or above.is_symlink():  # (os.path.lexists would hide a name too long)
                if not above.is_dir():
                    what = "a link that leads to no folder" if above.is_symlink() else "a file"
                    raise ValueError(f"{option} {folder}: {above} is {what}, not a folder")
                break
        except OSError as error:  # a name too long, a folder that cannot be searched
            raise ValueError(f"{option} {folder}: {error.strerror or type(error).__name__}") from None
    return folder


def current_umask() -> int:
    """The process's umask (read by setting it, so set back at once).

    >>> umask = os.umask(0o027); current_umask() == 0o027 and os.umask(umask) == 0o027
    True
    """
    umask = os.umask(0)
    os.umask(umask)
    return umask


def readable_as_umask_allows(folder: Path) -> None:
    """Give the weights files (``*.safetensors``) a model's ``save_pretrained`` wrote in ``folder`` the mode the
    user's umask allows a new file (``0644`` under ``022``): safetensors writes them private (``0600``) whatever
    the umask, so a cache shared by a class, or read by a graded notebook running as another user, could not load
    a model or judge it holds. Nothing else in the folder is touched (a user's ``output_dir`` may hold a private
    ``.env``).

    >>> import tempfile; folder = Path(tempfile.mkdtemp()); weights = folder / "model.safetensors"
    >>> _ = weights.write_bytes(b"w"); weights.chmod(0o600); umask = os.umask(0o022); readable_as_umask_allows(folder)
    >>> _ = os.umask(umask); oct(weights.stat().st_mode & 0o777)
    '0o644'
    >>> private = folder / ".env"; _ = private.write_text("KEY=x"); private.chmod(0o600); readable_as_umask_allows(folder)
    >>> oct(private.stat().st_mode & 0o777)
    '0o600'
    """
    umask = current_umask()
    for path in Path(folder).glob("*.safetensors"):
        if path.is_file() and not path.is_symlink():
            path.chmod(0o666 & ~umask)
