"""The checks of what a reader sees (``tests/book/book_pages.py``), on a hand-written site of three pages: one a
reader may see, one with every fault the book has had (a table printed as text, a progress-bar warning with
its path, a download link to a file the build does not hold, a launch button to a placeholder repository,
a missing figure), and one whose figure is not an image."""
from __future__ import annotations

import doctest
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from tests.book import book_pages

HEAD = '<html><head><title>{title}</title></head><body>'
HEADER = ('<div class="bd-header-article"><div class="article-header-buttons">'
          '<div class="dropdown dropdown-download-buttons"><ul class="dropdown-menu">'
          '<li><a href="{download}" class="btn btn-sm btn-download-source-button dropdown-item">.ipynb</a></li>'
          '</ul></div>{launch}</div></div>')


def _png() -> bytes:
    """A 2 x 1 PNG, written out by hand."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"\x00\xff\x00\x00\x00\xff\x00"  # one row: filter 0, two RGB pixels
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def site(tmp_path) -> Path:
    """A built site in jupyter-book's layout: notebooks/, _sources/, _images/."""
    for folder in ("notebooks", "_sources/notebooks", "_images"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "_sources" / "notebooks" / "01_good.ipynb").write_text("{}")
    (tmp_path / "_images" / "figure.png").write_bytes(_png())
    (tmp_path / "_images" / "not-an-image.png").write_text("a page that lost its figure")
    (tmp_path / "notebooks" / "01_good.html").write_text(
        HEAD.format(title="Good") + HEADER.format(download="../_sources/notebooks/01_good.ipynb", launch="")
        + "<h1>A chapter</h1><p>The judges agree | as the table shows.</p>"
        "<table><tr><th>Rank</th><th>Judge</th></tr><tr><td>1</td><td>BERTScore</td></tr></table>"
        '<img src="../_images/figure.png" alt="a figure"><p>The judge\'s warnings are counted.</p></body></html>')
    (tmp_path / "notebooks" / "02_bad.html").write_text(
        HEAD.format(title="Bad") + HEADER.format(
            download="../_sources/notebooks/02_bad.md",
            launch='<a href="https://mybinder.org/v2/gh/evalkit-org/evalkit/main?urlpath=lab/tree/notebooks/02_bad.md">'
                   'Binder</a>')
        + "<h1>The board</h1><p>| Rank | Judge | Share |\u2014|\u2014|\u2014|\n| 1 | BERTScore | 0.42 |</p>"
        '<div class="output stderr"><pre>/work/main/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: '
        "TqdmWarning: IProgress not found. Please update jupyter and ipywidgets.</pre></div>"
        '<img src="../_images/gone.png" alt="a figure"></body></html>')
    (tmp_path / "notebooks" / "03_no_figure.html").write_text(
        HEAD.format(title="No figure") + '<img src="../_images/not-an-image.png" alt="a figure"></body></html>')
    return tmp_path


def test_the_checks_doctests_pass():
    assert doctest.testmod(book_pages).failed == 0


def test_a_page_a_reader_may_see_has_no_problems(site):
    page = site / "notebooks" / "01_good.html"
    assert book_pages.page_problems(site, page, page.read_text()) == []


def test_every_fault_the_book_has_had_is_found(site):
    page = site / "notebooks" / "02_bad.html"
    problems = book_pages.page_problems(site, page, page.read_text())
    assert problems == [
        "a Markdown table shown as text: | Rank | Judge | Share |\u2014|\u2014|\u2014|",
        "a warning: TqdmWarning: IProgress not found. Please update jupyter and ipywidgets.",
        "a machine path (/.venv/): /work/main/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: "
        "IProgress not found. Ple",
        "a link to a missing file: ../_sources/notebooks/02_bad.md",
        "a link outside the book: https://mybinder.org/v2/gh/evalkit-org/evalkit/main?urlpath=lab/tree/notebooks/"
        "02_bad.md",
        "an image whose file is missing: ../_images/gone.png",
    ]


def test_a_table_that_rendered_is_not_text(site):
    text = book_pages.visible_text((site / "notebooks" / "01_good.html").read_text())
    assert "Rank\tJudge" in text and book_pages.unrendered_tables(text) == []
    assert book_pages.unrendered_tables("| a | b |\n|---|---|\n| 1 | 2 |") == [
        "a Markdown table shown as text: |---|---|"]  # the plain-hyphen form too


def test_a_traceback_on_a_page_is_found():
    assert book_pages.plumbing("Traceback (most recent call last):\n  File \"<x>\", line 1") == [
        "a traceback: Traceback (most recent call last):"]
    assert book_pages.plumbing("saved to /tmp/pytest-of-root/out.json") == [
        "a machine path (/tmp/): saved to /tmp/pytest-of-root/out.json"]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip("chromium is not installed (tests/book/test_book.py installs it for the book's browser check)")
    return found


@pytest.mark.slow
def test_the_browser_reports_which_images_loaded(site, tmp_path_factory):
    chromium = _chromium()
    profile = tmp_path_factory.mktemp("profile")
    dom, images = book_pages.browser_probe(chromium, site / "notebooks" / "01_good.html", profile)
    assert images == [{"src": "../_images/figure.png", "complete": True, "naturalWidth": 2}]
    assert "<table" in dom and "evalkit-probe" not in dom
    assert not (site / "notebooks" / "01_good.evalkit-probe.html").exists()  # the probe's copy is removed
    _, images = book_pages.browser_probe(chromium, site / "notebooks" / "03_no_figure.html", profile)
    assert book_pages.broken_images(images) == [
        "an image that did not load in the browser: ../_images/not-an-image.png"]
    assert book_pages.missing_images(site, site / "notebooks" / "03_no_figure.html",
                                     (site / "notebooks" / "03_no_figure.html").read_text()) == []  # the file is there


def test_a_screenshot_shows_what_the_page_shows_and_a_blank_one_is_found(tmp_path):
    chromium = _chromium()
    text, blank = tmp_path / "text.html", tmp_path / "blank.html"
    text.write_text("<html><body><h1>Chapter 1</h1><p>What the reader sees first.</p></body></html>")
    blank.write_text("<html><body></body></html>")
    shots = {page: book_pages.screenshot(chromium, page, tmp_path / f"{page.stem}.png", tmp_path / "profile")
             for page in (text, blank)}
    assert not book_pages.blank_screen(shots[text]) and book_pages.blank_screen(shots[blank])
