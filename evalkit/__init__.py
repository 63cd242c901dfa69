"""evalkit: a teaching and experiment kit for evaluating LLM dialogue."""
__version__ = "0.1.0"

from evalkit.models.defaults import plain_progress_bars as _plain_progress_bars

_plain_progress_bars()  # before any model library imports tqdm.auto: no ipywidgets warning on a notebook page
