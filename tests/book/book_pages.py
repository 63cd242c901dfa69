"""What a reader sees on a built page of the book, checked from the built HTML folder.

Each check takes the built site (jupyter-book's ``_build/html``), a page in it and that page's DOM (as headless
Chromium leaves it after the page's scripts ran, or the file itself) and returns the problems it found, each a
short sentence naming what is wrong; an empty list means none. ``tests/book/test_book.py`` runs them on every page
of the smoke build; ``tests/book/test_book_pages.py`` tests them on hand-written pages.
"""
from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["reader_pages", "visible_text", "unrendered_tables", "plumbing", "header_links", "unresolved_links", "image_sources",
           "missing_images", "browser_probe", "broken_images", "page_problems"]

_HIDDEN = {"script", "style", "head", "template", "noscript", "textarea"}
_BLOCKS = {"p", "div", "br", "li", "tr", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section", "article",
           "blockquote", "details", "summary", "figure", "figcaption", "dt", "dd", "ul", "ol", "hr"}
# A Markdown table that did not render: a text line that opens with "|" and holds a separator cell, in
# hyphens or in the en or em dashes a typographer turns them into ("| a | b |", "|---|---|", "|—|—|").
_TABLE_LINE = re.compile(r"\|\s*:?[-\u2013\u2014]+:?\s*\|")
_WARNING = re.compile(r"\b[A-Za-z]*Warning: ")
_TRACEBACK = "Traceback (most recent call last)"
MACHINE_PATHS = ("/.venv/", "/root/", "/tmp/", "site-packages")


def reader_pages(html_root: Path) -> list[Path]:
    """The pages of the built site a reader reads: every ``.html`` but the theme's templates (``_static``), the
    search and index pages and redirect stubs (the root ``index.html`` only forwards to the first page).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "_static").mkdir(); (root / "book").mkdir()
    >>> _ = (root / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    >>> for name in ("book/intro.html", "search.html", "genindex.html", "_static/webpack-macros.html"):
    ...     _ = (root / name).write_text("<html><body>x</body></html>")
    >>> [str(page.relative_to(root)) for page in reader_pages(root)]
    ['book/intro.html']
    """
    root = Path(html_root)
    pages = []
    for page in sorted(root.glob("**/*.html")):
        relative = page.relative_to(root)
        if relative.parts[0] == "_static" or str(relative) in ("search.html", "genindex.html"):
            continue
        if re.match(r"\s*<meta http-equiv=\"refresh\"", page.read_text()[:200], re.IGNORECASE):
            continue
        pages.append(page)
    return pages


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag, attrs):
        if tag in _HIDDEN:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in _HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append("\t")

    def handle_data(self, data):
        if not self.hidden:
            self.parts.append(data)


def visible_text(dom: str) -> str:
    """The page's text as lines, block elements on lines of their own; scripts, styles, the head and form
    fields left out. Text folded in a toggle counts: a reader who opens it sees it.

    >>> visible_text("<html><head><title>T</title></head><body><p>a</p><p>b &amp; c</p><script>x</script></body>")
    'a\\nb & c'
    """
    parser = _Text()
    parser.feed(dom)
    parser.close()
    lines = (line.strip() for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def unrendered_tables(text: str) -> list[str]:
    """Lines of ``text`` that are a Markdown table shown as text instead of a ``<table>``.

    >>> unrendered_tables("Rank 1 is BERTScore.\\n| Rank | Judge |\\u2014|\\u2014|\\n| 1 | BERTScore |")
    ['a Markdown table shown as text: | Rank | Judge |—|—|']
    >>> unrendered_tables("r = 0.29 | 0.31 (two sets)\\nPearson\\tSpearman")
    []
    """
    return [f"a Markdown table shown as text: {line[:80]}" for line in text.splitlines()
            if line.startswith("|") and _TABLE_LINE.search(line)]


MAX_COLUMNS = 8  # a table a reader can take in without scrolling sideways, its row labels counted


class _Widths(HTMLParser):
    """The widest row (cells, colspans counted) and first header of each ``<table>`` not folded in a toggle."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list] = []  # [widest row, first cells' text]
        self.open: list[list] = []
        self.folded = 0
        self.row = 0
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.folded += 1
        elif tag == "table":
            self.open.append([0, []])
        elif tag == "tr" and self.open:
            self.row = 0
        elif tag in ("td", "th") and self.open:
            span = dict(attrs).get("colspan") or "1"
            self.row += int(span) if span.isdigit() else 1
            self.open[-1][0] = max(self.open[-1][0], self.row)
            self.cell = [] if len(self.open[-1][1]) < 3 else None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag):
        if tag == "details":
            self.folded = max(0, self.folded - 1)
        elif tag in ("td", "th") and self.cell is not None and self.open:
            self.open[-1][1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "table" and self.open:
            table = self.open.pop()
            if not self.folded:
                self.tables.append(table)


def wide_tables(dom: str, limit: int = MAX_COLUMNS) -> list[str]:
    """Tables of ``dom`` wider than ``limit`` columns (row labels and colspans counted), unless folded in a
    toggle (``<details>``), where wide detail may live.

    >>> row = lambda n: "<tr>" + "<td>x</td>" * n + "</tr>"
    >>> wide_tables(f"<table>{row(9)}</table><table>{row(8)}</table><details><table>{row(12)}</table></details>")
    ['a table of 9 columns (at most 8): x | x | x']
    """
    parser = _Widths()
    parser.feed(dom)
    parser.close()
    return [f"a table of {width} columns (at most {limit}): {' | '.join(first)[:60]}"
            for width, first in parser.tables if width > limit]


def plumbing(text: str) -> list[str]:
    """Warnings, tracebacks and machine paths in ``text``: what a run leaves on a page that is not the subject.

    >>> plumbing("/x/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found")
    ['a warning: TqdmWarning: IProgress not found', 'a machine path (/.venv/): /x/.venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found']
    >>> plumbing("The judge's warnings are counted; no path is shown.")
    []
    """
    problems = []
    for line in text.splitlines():
        found = _WARNING.search(line)
        if found:
            problems.append(f"a warning: {line[found.start():][:100]}")
        if _TRACEBACK in line:
            problems.append(f"a traceback: {line[:100]}")
        path = next((marker for marker in MACHINE_PATHS if marker in line), None)
        if path:
            problems.append(f"a machine path ({path}): {line[:100]}")
    return problems


class _HeaderLinks(HTMLParser):
    """The ``href`` of every link in the page header's button bar (``div.article-header-buttons``: downloads,
    launch buttons, the repository link)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # open divs inside the button bar; 0: outside it
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "div" and (self.depth or "article-header-buttons" in (attributes.get("class") or "").split()):
            self.depth += 1
        elif tag == "a" and self.depth and attributes.get("href"):
            self.links.append(attributes["href"])

    def handle_endtag(self, tag):
        if tag == "div" and self.depth:
            self.depth -= 1


def header_links(dom: str) -> list[str]:
    """The links of the page's header buttons (download, launch, repository), in page order.

    >>> header_links('<div class="article-header-buttons"><div class="dropdown"><a href="../_sources/x.ipynb">'
    ...              '.ipynb</a></div><a href="https://mybinder.org/v2/gh/o/r/main">Binder</a></div>'
    ...              '<a href="other.html">not in the header</a>')
    ['../_sources/x.ipynb', 'https://mybinder.org/v2/gh/o/r/main']
    """
    parser = _HeaderLinks()
    parser.feed(dom)
    parser.close()
    return parser.links


def _local_file(html_root: Path, page: Path, link: str) -> Path | None:
    """The file of the built site that a relative ``link`` on ``page`` names (None for an anchor)."""
    path = unquote(urlsplit(link).path)
    if not path:
        return None
    return (page.parent / path).resolve() if not path.startswith("/") else (html_root / path.lstrip("/")).resolve()


def unresolved_links(html_root: Path, page: Path, links: list[str]) -> list[str]:
    """The ``links`` (a page's download and launch links) that do not resolve: a relative link must name a file
    of the built site, and the book links no outside address (no repository is published, so a launch or
    repository button would point at a placeholder).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "notebooks").mkdir(); (root / "_sources").mkdir()
    >>> _ = (root / "_sources" / "01.ipynb").write_text("{}")
    >>> unresolved_links(root, root / "notebooks" / "01.html", ["../_sources/01.ipynb", "../_sources/01.md",
    ...                                                         "https://mybinder.org/v2/gh/o/r/main", "#top"])
    ['a link to a missing file: ../_sources/01.md', 'a link outside the book: https://mybinder.org/v2/gh/o/r/main']
    """
    problems = []
    for link in links:
        parts = urlsplit(link)
        if parts.scheme in ("javascript", "mailto") or link.startswith("#"):
            continue
        if parts.scheme or parts.netloc:
            problems.append(f"a link outside the book: {link}")
            continue
        target = _local_file(Path(html_root), Path(page), link)
        if target is not None and not target.is_file():
            problems.append(f"a link to a missing file: {link}")
    return problems


class _Images(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.sources.append(dict(attrs).get("src") or "")


def image_sources(dom: str) -> list[str]:
    """The ``src`` of every ``<img>`` of the page ("" for one without a source).

    >>> image_sources('<p><img src="../_images/a.png" alt="a"><img alt="none"></p>')
    ['../_images/a.png', '']
    """
    parser = _Images()
    parser.feed(dom)
    parser.close()
    return parser.sources


def missing_images(html_root: Path, page: Path, dom: str) -> list[str]:
    """Images whose file is not in the built site (or that have no source); ``data:`` images are inline.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "_images").mkdir(); _ = (root / "_images" / "a.png").write_bytes(b"x")
    >>> missing_images(root, root / "index.html", '<img src="_images/a.png"><img src="_images/b.png">')
    ['an image whose file is missing: _images/b.png']
    """
    problems = []
    for source in image_sources(dom):
        if not source:
            problems.append("an image without a source")
        elif urlsplit(source).scheme == "data":
            continue
        elif urlsplit(source).scheme or urlsplit(source).netloc:
            problems.append(f"an image from outside the book: {source}")
        else:
            target = _local_file(Path(html_root), Path(page), source)
            if target is None or not target.is_file():
                problems.append(f"an image whose file is missing: {source}")
    return problems


# Appended to a copy of the page: once the page has loaded, it asks every image to decode (loading it even if
# lazy) and writes what each one came to into a hidden field that Chromium's --dump-dom then shows.
_PROBE = """<script>
window.addEventListener("load", async () => {
  const images = Array.from(document.images);
  await Promise.allSettled(images.map((image) => { image.loading = "eager"; return image.decode(); }));
  const field = document.createElement("textarea");
  field.id = "evalkit-probe";
  field.hidden = true;
  field.textContent = JSON.stringify(images.map((image) => ({src: image.getAttribute("src") || "",
    complete: image.complete, naturalWidth: image.naturalWidth})));
  document.body.appendChild(field);
});
</script>"""
_PROBE_RESULT = re.compile(r'<textarea[^>]*id="evalkit-probe"[^>]*>(.*?)</textarea>', re.DOTALL)


def browser_probe(chromium: str, page: Path, profile: Path, *,
                  budgets_ms: tuple[int, ...] = (3000, 30000)) -> tuple[str, list[dict] | None]:
    """The page's DOM after its scripts ran in headless Chromium, and each ``<img>``'s state there
    (``src``, ``complete``, ``naturalWidth``; None when the probe did not report). A long page on a busy
    machine may not reach its load event within the first virtual-time budget: it is read again with the next.
    The page is copied beside itself with a small script added, so its relative links resolve as on the original."""
    for budget_ms in budgets_ms:
        dom, images = _probe_once(chromium, page, profile, budget_ms)
        if images is not None:
            break
    return dom, images


def _probe_once(chromium: str, page: Path, profile: Path, budget_ms: int) -> tuple[str, list[dict] | None]:
    probe = page.with_name(f"{page.stem}.evalkit-probe.html")
    html = page.read_text()
    probe.write_text(html.replace("</body>", _PROBE + "</body>") if "</body>" in html else html + _PROBE)
    try:
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", "--dump-dom", probe.as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink(missing_ok=True)
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed on {page}: {done.stderr[-2000:]}")
    dom = done.stdout.replace(_PROBE, "")
    found = _PROBE_RESULT.search(dom)
    if not found:
        return dom, None
    from html import unescape

    return _PROBE_RESULT.sub("", dom), json.loads(unescape(found.group(1)))


def broken_images(images: list[dict] | None) -> list[str]:
    """Images the browser did not load (``naturalWidth`` 0), from :func:`browser_probe`'s report.

    >>> broken_images([{"src": "a.png", "complete": True, "naturalWidth": 640},
    ...                {"src": "b.png", "complete": True, "naturalWidth": 0}])
    ['an image that did not load in the browser: b.png']
    >>> broken_images(None)
    ['the browser did not report the images (the probe script did not finish)']
    """
    if images is None:
        return ["the browser did not report the images (the probe script did not finish)"]
    return [f"an image that did not load in the browser: {image['src']}" for image in images
            if not image.get("naturalWidth")]


def page_problems(html_root: Path, page: Path, dom: str, images: list[dict] | None = None) -> list[str]:
    """Everything a reader should not meet on ``page``: unrendered tables, tables too wide to read without
    scrolling sideways (:func:`wide_tables`), warnings, tracebacks and machine
    paths in its text, download and launch links that do not resolve, images that are missing or (given the
    browser's ``images``) did not load."""
    text = visible_text(dom)
    problems = unrendered_tables(text) + plumbing(text) + wide_tables(dom)
    problems += unresolved_links(html_root, page, header_links(dom))
    problems += missing_images(html_root, page, dom)
    if images is not None:
        problems += broken_images(images)
    return problems


def screenshot(chromium: str, page: Path, out: Path, profile: Path, *, size: tuple[int, int] = (1280, 900)) -> Path:
    """The first screen of ``page`` as a reader's browser shows it, saved as the PNG ``out`` (kept for review)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
               "--virtual-time-budget=3000", f"--screenshot={out}", page.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium made no screenshot of {page}: {done.stderr[-2000:]}")
    return out


def blank_screen(png: Path) -> bool:
    """Whether a screenshot shows (almost) nothing: under 0.1% of its pixels differ from its most common colour
    (a heading and one line of text are about 0.2%; a chapter's first screen of text is several per cent)."""
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 24)
    counts = sorted((count for count, _ in colours), reverse=True)
    return counts[0] > 0.999 * sum(counts)
