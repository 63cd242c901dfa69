"""A Sphinx extension for the book (``_config.yml``: ``sphinx.extra_extensions``): launch buttons that open files
the repository holds, and the edition the site is.

The book is built from *executed* ``.ipynb`` copies that only exist in ``_build``; the repository holds each
chapter as MyST (``notebooks/NN_name.md``), which JupyterLab opens as a notebook through jupytext (Binder
builds from ``environment.yml`` and ``postBuild``). sphinx-book-theme names the launch target after the
staged source, so its links would point at an ``.ipynb`` the repository lacks; this extension rewrites them
to the ``.md`` when the repository has it (:func:`repository_target`). Only links into the repository (absolute
URLs) are rewritten: the download button's relative ``_sources/...ipynb`` is the executed notebook the build
copies beside the page, and it stays as it is. With no repository configured (``_config.yml``) there are no
launch buttons and nothing to rewrite.

The edition (``instructor``: solutions in toggles, or ``student``: none) comes from the ``EVALKIT_EDITION``
environment variable that :func:`evalkit.book.runner.build_book` sets, and is shown as the theme's announcement
bar on every page.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["EDITIONS", "repository_target", "rewrite_buttons", "setup"]

ROOT = Path(__file__).resolve().parents[2]
EDITIONS = {"instructor": "Instructor edition: every exercise's solution is in a toggle below it.",
            "student": "Student edition: the exercises check your answers; the solutions are left out."}


def repository_target(url: str, pagename: str, root: Path = ROOT) -> str:
    """``url``, a link into the repository, with the page's ``.ipynb`` replaced by its ``.md`` when only the
    ``.md`` is in the repository; a relative link (a file of the built site) is returned unchanged.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()); (folder / "notebooks").mkdir()
    >>> _ = (folder / "notebooks" / "01_x.md").write_text("# x")
    >>> repository_target("https://b/v2/gh/o/r/main?urlpath=lab/tree/notebooks/01_x.ipynb", "notebooks/01_x", folder)
    'https://b/v2/gh/o/r/main?urlpath=lab/tree/notebooks/01_x.md'
    >>> repository_target("https://b/lab/tree/book/intro.ipynb", "book/intro", folder)
    'https://b/lab/tree/book/intro.ipynb'
    >>> repository_target("../_sources/notebooks/01_x.ipynb", "notebooks/01_x", folder)  # the build's own download
    '../_sources/notebooks/01_x.ipynb'
    """
    staged = f"{pagename}.ipynb"
    if not url.startswith(("http://", "https://")):
        return url
    if url.endswith(staged) and not (root / staged).exists() and (root / f"{pagename}.md").exists():
        return url[: -len(staged)] + f"{pagename}.md"
    return url


def rewrite_buttons(buttons: list[dict[str, Any]], pagename: str, root: Path = ROOT) -> list[dict[str, Any]]:
    """The header buttons (nested groups included) with their launch targets made repository files; a Colab
    button is dropped, since Colab opens only ``.ipynb`` files from GitHub."""
    kept = []
    for button in buttons:
        if button.get("text") == "Colab":
            continue
        button = dict(button)
        if isinstance(button.get("buttons"), list):
            button["buttons"] = rewrite_buttons(button["buttons"], pagename, root)
        if isinstance(button.get("url"), str):
            button["url"] = repository_target(button["url"], pagename, root)
        kept.append(button)
    return kept


def _page_context(app, pagename: str, templatename: str, context: dict[str, Any], doctree) -> None:
    if isinstance(context.get("header_buttons"), list):
        context["header_buttons"] = rewrite_buttons(context["header_buttons"], pagename)


def _edition(app, config) -> None:
    edition = os.environ.get("EVALKIT_EDITION", "instructor")
    options = dict(config.html_theme_options or {})
    options["announcement"] = EDITIONS.get(edition, EDITIONS["instructor"])
    config.html_theme_options = options


def setup(app) -> dict[str, Any]:
    app.connect("config-inited", _edition)
    app.connect("html-page-context", _page_context, priority=502)  # after the theme's buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
