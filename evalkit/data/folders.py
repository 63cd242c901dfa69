"""An output folder named on a command line (``--out``), checked before anything is written into it."""
from __future__ import annotations

from pathlib import Path

__all__ = ["out_folder"]


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
