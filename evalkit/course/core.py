"""The check model: an exercise, its public and hidden checks, and what they say.

An :class:`Exercise` names the variables a student assigns (``answers``) and two lists of checks. A check is
a plain function of one :class:`Work` (the student's answers and the notebook's variables) that returns
nothing when the answer is right and raises :class:`Wrong` with a sentence saying what is wrong — never the
expected value. *Public* checks run from the notebook (:func:`evalkit.course.check`); *hidden* checks run
only when the teacher grades. Checks compute the expected value from the chapter's own data (the notebook's
variables, read through :meth:`Work.chapter`) with a tolerance that any correct method meets.

An exercise scores all or nothing: its points when every public and hidden check passes.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Wrong", "Unavailable", "Work", "Exercise", "CheckResult", "Feedback", "run_exercise",
           "number", "whole", "keyed", "series", "pair", "choice", "close"]


class Wrong(Exception):
    """What is wrong with an answer, in words a student can act on (the expected value never appears)."""


class Unavailable(Wrong):
    """The check cannot run: a chapter variable it needs is missing (the cells above were not run)."""


_MISSING = object()


class Work:
    """What a check reads: the student's answers by name and the notebook's variables (``env``)."""

    def __init__(self, exercise: "Exercise", answers: Mapping[str, Any], env: Mapping[str, Any]):
        self.exercise, self._answers, self._env = exercise, dict(answers), env
        self._memo: dict[Any, Any] = {}

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per exercise run (an expected value a public and a hidden check share)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def __getitem__(self, name: str) -> Any:
        value = self._answers.get(name, _MISSING)
        if value is _MISSING:
            value = self._env.get(name, _MISSING)
        if value is _MISSING:
            raise Wrong(f"`{name}` is not defined: assign your answer to `{name}` in the exercise's cell and "
                        "run it")
        if value is Ellipsis or value is None:
            raise Wrong(f"no answer yet: replace the `...` after `{name} =` with your answer and run the cell")
        return value

    def chapter(self, name: str) -> Any:
        """A variable the chapter's cells define (the data the expected value is computed from)."""
        value = self._env.get(name, _MISSING)
        if value is _MISSING:
            raise Unavailable(f"the chapter's `{name}` is not defined here: run the chapter's cells above this "
                              "exercise first")
        return value

    def setting(self, name: str, default: Any) -> Any:
        """A chapter parameter (a seed, a resample count) when the notebook defines it, else ``default``."""
        return self._env.get(name, default)


Check = Callable[[Work], None]


@dataclass(frozen=True)
class Exercise:
    """One exercise: its label (as in the chapter's ``{exercise}`` directive), the chapter's notebook stem,
    the answer variables, what each holds (shown in messages), the checks and the points."""

    label: str
    chapter: str
    answers: tuple[str, ...]
    public: tuple[Check, ...]
    hidden: tuple[Check, ...]
    asks: str = ""
    points: float = 1.0

    def check_names(self, *, hidden: bool) -> list[str]:
        return [_name(test) for test in (self.hidden if hidden else self.public)]


def _name(test: Check) -> str:
    return test.__name__.lstrip("_")


@dataclass(frozen=True)
class CheckResult:
    exercise: str
    check: str
    hidden: bool
    passed: bool
    message: str = ""


@dataclass
class Feedback:
    """The outcome of an exercise's checks: shown as text, and as HTML in a notebook."""

    exercise: Exercise
    results: list[CheckResult] = field(default_factory=list)
    ran_hidden: bool = False

    @property
    def passed(self) -> bool:
        expected = len(self.exercise.public) + (len(self.exercise.hidden) if self.ran_hidden else 0)
        return len(self.results) == expected and all(result.passed for result in self.results)

    @property
    def score(self) -> float:
        return self.exercise.points if self.passed else 0.0

    @property
    def failures(self) -> list[CheckResult]:
        return [result for result in self.results if not result.passed]

    def message(self) -> str:
        """One line: passed, or the first thing that is wrong."""
        label = self.exercise.label
        public = [r for r in self.results if not r.hidden]
        if self.passed:
            shown = "all public and hidden checks" if self.ran_hidden else f"all {len(public)} public checks"
            return f"{label}: {shown} passed"
        first = self.failures[0]  # its check's name is the key's business, not the student's
        return f"{label}: not yet{' (a hidden check)' if first.hidden else ''}: {first.message}"

    def __repr__(self) -> str:
        return self.message()

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.passed else "#b42318"
        mark = "&#10004;" if self.passed else "&#10008;"
        return (f'<p style="color:{colour};font-weight:600">{mark} {html.escape(self.message())}</p>')


def run_exercise(exercise: Exercise, answers: Mapping[str, Any], env: Mapping[str, Any], *,
                 hidden: bool = False) -> Feedback:
    """Run the public checks in order, stopping at the first that fails; then, with ``hidden`` and only when
    every public check passed, the hidden ones the same way. A check that breaks on an answer of an unexpected
    kind fails with the error's type only (its message might quote a computed value)."""
    feedback = Feedback(exercise, ran_hidden=hidden)
    work = Work(exercise, answers, env)
    groups: list[tuple[bool, Sequence[Check]]] = [(False, exercise.public)] + ([(True, exercise.hidden)] if hidden else [])
    for is_hidden, tests in groups:
        for test in tests:
            try:
                test(work)
            except Wrong as wrong:
                feedback.results.append(CheckResult(exercise.label, _name(test), is_hidden, False, str(wrong)))
                return feedback
            except Exception as error:  # an answer of a kind the check did not foresee
                feedback.results.append(CheckResult(
                    exercise.label, _name(test), is_hidden, False,
                    f"the answer could not be checked ({type(error).__name__}); see the exercise's cell for "
                    "the form the answer takes"))
                return feedback
            feedback.results.append(CheckResult(exercise.label, _name(test), is_hidden, True))
    return feedback


# --- reading answers: each raises Wrong naming the variable and the form it should take ---------------------

def number(value: Any, name: str, *, low: float = -math.inf, high: float = math.inf, what: str = "a number") -> float:
    """``value`` as a finite float within [low, high]."""
    if isinstance(value, bool) or not _is_real(value):
        raise Wrong(f"`{name}` should be {what}, not {_kind(value)}")
    result = float(value)
    if not math.isfinite(result):
        raise Wrong(f"`{name}` should be {what}, not {result}")
    if not low <= result <= high:
        raise Wrong(f"`{name}` should be {what} between {low:g} and {high:g}: yours is outside that range")
    return result


def whole(value: Any, name: str, *, low: int, high: int, what: str = "a whole number") -> int:
    """``value`` as an int within [low, high] (a float such as 3.0 is accepted)."""
    result = number(value, name, what=what)
    if result != round(result):
        raise Wrong(f"`{name}` should be {what} (a count), not a fraction")
    if not low <= result <= high:
        raise Wrong(f"`{name}` should be {what} from {low} to {high}: yours is outside that range")
    return int(round(result))


def keyed(value: Any, name: str, keys: Iterable, *, what: str) -> dict:
    """``value`` (a dict, a pandas Series or a one-column DataFrame) as a dict with exactly ``keys``."""
    items = _as_dict(value, name, what)
    wanted = list(keys)
    given = {_norm_key(key): item for key, item in items.items()}
    missing = [key for key in wanted if _norm_key(key) not in given]
    extra = [key for key in given if key not in {_norm_key(k) for k in wanted}]
    if missing:
        raise Wrong(f"`{name}` should hold {what} for each of {_listing(wanted)}; "
                    f"{_listing(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    if extra:
        raise Wrong(f"`{name}` should hold {what} for {_listing(wanted)} only; it also has {_listing(extra[:3])}")
    return {key: given[_norm_key(key)] for key in wanted}


def series(value: Any, name: str, length: int, *, what: str, low: float = -math.inf,
           high: float = math.inf) -> list[float]:
    """``value`` (list, array, Series) as ``length`` finite floats within [low, high]."""
    import numpy as np

    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
        raise Wrong(f"`{name}` should be {length} values ({what}), not {_kind(value)}")
    values = list(np.asarray(value, dtype=object).ravel())
    if len(values) != length:
        raise Wrong(f"`{name}` should hold {length} values ({what}); it holds {len(values)}")
    return [number(item, f"each value of {name}", low=low, high=high, what=what) for item in values]


def pair(value: Any, name: str, *, what: str, low: float = -math.inf, high: float = math.inf) -> tuple[float, float]:
    """``value`` as (smallest, largest), two numbers in order."""
    first, second = series(value, name, 2, what=what, low=low, high=high)
    if first > second:
        raise Wrong(f"`{name}` should be (smallest, largest): its first value is the larger")
    return first, second


def choice(value: Any, name: str, options: Iterable, *, what: str) -> Any:
    """``value`` as one of ``options`` (strings compared without case or surrounding space; tuples as tuples)."""
    options = list(options)
    key = _norm_key(value)
    for option in options:
        if _norm_key(option) == key:
            return option
    raise Wrong(f"`{name}` should be {what}: one of {_listing(options)}")


def close(value: float, expected: float, *, tolerance: float, message: str) -> None:
    """Raise ``Wrong(message)`` unless ``|value - expected| <= tolerance`` (the message names no value)."""
    if not abs(value - expected) <= tolerance:
        raise Wrong(message)


def _is_real(value: Any) -> bool:
    try:
        import numpy as np

        if isinstance(value, np.ndarray):
            return value.ndim == 0 and np.issubdtype(value.dtype, np.number)
        return isinstance(value, (int, float, np.integer, np.floating))
    except ImportError:  # pragma: no cover - numpy is a dependency
        return isinstance(value, (int, float))


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return "a text"
    return f"a {type(value).__name__}"


def _as_dict(value: Any, name: str, what: str) -> dict:
    try:
        import pandas as pd

        if isinstance(value, pd.DataFrame):
            if value.shape[1] != 1:
                raise Wrong(f"`{name}` should be one value per key ({what}), not a table of "
                            f"{value.shape[1]} columns")
            value = value.iloc[:, 0]
        if isinstance(value, pd.Series):
            return dict(value.items())
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, Mapping):
        return dict(value)
    raise Wrong(f"`{name}` should be a dict or a pandas Series ({what}), not {_kind(value)}")


def _norm_key(key: Any) -> Any:
    if isinstance(key, str):
        return key.strip().lower()
    if isinstance(key, (tuple, list)):
        return tuple(_norm_key(part) for part in key)
    if _is_real(key) and not isinstance(key, bool) and float(key) == round(float(key)):
        return int(round(float(key)))
    return key


def _listing(items: Sequence) -> str:
    shown = [str(item) if not isinstance(item, str) else repr(item) for item in items]
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]
