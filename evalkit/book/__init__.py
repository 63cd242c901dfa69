"""The book's own tooling, apart from the subject it teaches.

* :mod:`.runner` — runs the chapters with papermill under a parameter set and builds the book;
* :mod:`.results` — each chapter's results record, read by the tests and the performance page;
* :mod:`.findings`, :mod:`.findings_userproxy`, :mod:`.prose` — the sentences a chapter writes from its
  numbers (verdicts with their intervals);
* :mod:`.benchpage` — the performance page from ``benchmarks/``;
* :mod:`.links` — the Sphinx extension behind the launch buttons and the edition banner.
"""
from evalkit.book.results import read_results, record_results
from evalkit.book.runner import build_book, load_params, run_notebooks

__all__ = ["read_results", "record_results", "build_book", "load_params", "run_notebooks"]
