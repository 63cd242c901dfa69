"""The book's own tooling, apart from the subject it teaches.

* :mod:`.runner` — runs the chapters with papermill under a parameter set and builds the book;
* :mod:`.results` — each chapter's results record, read by the tests and the performance page;
* :mod:`.names` — the glossary's name of each code label (metric, judge, feature) a page shows;
* :mod:`.prose` — the verdict words a chapter's sentences use (one rule: an interval decides), and
  :mod:`.findings`, a few sentences chapters 1 and 3 write from their tables;
* :mod:`.benchpage` — the performance page from ``benchmarks/``;
* :mod:`.links` — the Sphinx extension behind the launch buttons and the edition banner.
"""
from evalkit.book.results import read_results, record_results
from evalkit.book.runner import build_book, load_params, run_notebooks

__all__ = ["read_results", "record_results", "build_book", "load_params", "run_notebooks"]
