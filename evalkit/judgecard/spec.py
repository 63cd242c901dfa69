"""What a card judges: a judge named by a string or a YAML file, as a :class:`JudgeSpec` value (the judges
themselves, and the one protocol they answer, are in :mod:`evalkit.judgecard.judges`).

The strings::

    length  bleu2  rouge-l  cosine  bertscore  encoder  paireval:<recipe>  directeval:<recipe>  reader:<recipe>
    lm:<prompt>  lm-pair  lora:<recipe>

(``lm-pair``: chapter 4's pairwise LM prompt, "which reply is better, A or B?", zero-shot through the model
door — in a YAML file with any ``backend``/``model``/``base_url``; ``lora:<recipe>``: chapter 4's SmolLM2 + LoRA
judge of the recipe. Both are scored by PairEval against chapter 4's pool, and their slots are real.)

(``<recipe>`` a name in :data:`evalkit.paireval.RECIPES`, ``<prompt>`` a name in
:data:`evalkit.upheld.llm_judges.JUDGES`) or the path of a ``.yml``/``.yaml`` file whose fields are those of :class:`JudgeSpec`::

    kind: lm                      # one of KINDS
    name: my-likert               # shown on the card (default: made from the fields)
    backend: openai               # transformers | llamacpp | openai
    model: qwen2.5-7b-instruct
    base_url: http://127.0.0.1:8080/v1
    template: |                   # or prompt: likert (a name in evalkit.upheld.llm_judges.JUDGES)
      Conversation: {history}
      Reply: {candidate}
      Rate the reply from 1 to 5. Answer with one number.
    labels: ["1", "2", "3", "4", "5"]
    values: [1, 2, 3, 4, 5]       # default: the labels read as numbers
    target: reasonable            # the label it was written for (all labels are reported)
    price_per_1k_tokens: 0.0005

>>> parse_spec("bleu2").kind, parse_spec("lm:likert").prompt, parse_spec("paireval:smoke").recipe
('bleu2', 'likert', 'smoke')
>>> parse_spec("reader").kind, parse_spec("reader").recipe
('reader', 'book')
>>> parse_spec("paireval:x")
Traceback (most recent call last):
...
evalkit.data.specfile.SpecError: judge 'paireval:x': no recipe 'x' in evalkit.paireval.RECIPES (known: book, large, lab, smoke, paper, paper-smoke)
"""
from __future__ import annotations

import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evalkit.data.specfile import Fields, SpecError, read_yaml

__all__ = ["KINDS", "METRIC_KINDS", "JudgeSpec", "parse_spec", "read_spec_file", "public_record"]

METRIC_KINDS = ("length", "bleu2", "rouge-l", "cosine", "bertscore")
KINDS = (*METRIC_KINDS, "encoder", "paireval", "directeval", "reader", "lm", "lm-pair", "lora", "scores")
RECIPE_KINDS = ("paireval", "directeval", "reader", "lora")
DOOR_KINDS = ("lm", "lm-pair")  # the kinds that name a backend, a model and an endpoint
_NEEDS_REFERENCE = ("bleu2", "rouge-l", "cosine", "bertscore")
_BACKENDS = ("transformers", "llamacpp", "openai")
_PLACEHOLDERS = ("history", "reference", "candidate")
_FIELDS = ("kind", "name", "recipe", "backend", "model", "base_url", "prompt", "template", "labels", "values",
           "generates", "target", "price_per_1k_tokens")


@dataclass(frozen=True)
class JudgeSpec:
    """A judge, as a value: its ``kind`` (one of :data:`KINDS`) and the settings that kind reads. Not to be
    confused with :class:`evalkit.upheld.llm_judges.PromptSpec`, which is one LM prompt; an ``lm`` judge names one
    (``prompt``) or writes its own (``template``, ``labels``, ``values``)."""

    kind: str
    name: str = ""
    recipe: str | None = None
    backend: str = "transformers"
    model: str | None = None
    base_url: str | None = None
    prompt: str | None = None
    template: str | None = None
    labels: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    generates: bool = False
    target: str | None = None
    price_per_1k_tokens: float | None = None
    source: str = ""  # where the spec came from (a string or a file), for messages

    @property
    def title(self) -> str:
        """The judge's name on its card and the board: ``name`` when given (a label of one's own), else made
        from the fields, with the endpoint's host and path (:func:`~evalkit.models.endpoint_label`) so that one
        model served from two endpoints makes two judges; credentials masked either way.

        >>> JudgeSpec("lm", prompt="likert", backend="openai", model="m", base_url="http://u:pw@10.0.0.2:80/v1").title
        'lm:likert (openai m at 10.0.0.2:80/v1)'
        >>> JudgeSpec("lm", prompt="likert", backend="openai", model="dep-Zx9Qw8Er7", base_url="http://u:Zx9Qw8Er7@h").title
        'lm:likert (openai dep-*** at h)'
        """
        from evalkit.models.redaction import endpoint_label

        detail = self.recipe or self.prompt or ("template" if self.template else None)
        where = f" at {endpoint_label(self.base_url)}" if self.base_url else ""
        model = f" ({self.backend} {self.model}{where})" if self.kind in DOOR_KINDS and self.model else ""
        title = self.name or (f"{self.kind}:{detail}{model}" if detail else f"{self.kind}{model}")
        # every part masked as a shared record is, a model named after the endpoint's password included
        return public_record({"title": title, "base_url": self.base_url})["title"]

    def as_record(self) -> dict[str, Any]:
        """The spec as plain values that may be shared (a card's ``spec``): see :func:`public_record`."""
        return public_record({key: list(value) if isinstance(value, tuple) else value
                              for key, value in asdict(self).items()})


def public_record(record: dict[str, Any]) -> dict[str, Any]:
    """A judge's record as a card or a board may keep it: its ``base_url`` as
    :func:`~evalkit.models.public_endpoint` gives it, and every other text redacted with that endpoint's
    credentials and the environment's (:func:`~evalkit.models.redact`), so that a password, a query secret or
    a key copied from the environment into any field is written nowhere.

    >>> public_record({"kind": "lm", "name": "mine ?token=abcdef12", "base_url": "http://u:pw123@h/v1?key=K9"})
    {'kind': 'lm', 'name': 'mine ?token=***', 'base_url': 'http://***@h/v1?key=***'}
    """
    from evalkit.models.redaction import configured_secrets, environment_secrets, public_endpoint, redact

    base_url = record.get("base_url")
    base_url = base_url if isinstance(base_url, str) else None
    secrets = [*configured_secrets(base_url), *environment_secrets()] if base_url else environment_secrets()

    def shown(key: str, value: Any) -> Any:
        if key == "base_url" and isinstance(value, str):
            return public_endpoint(value)
        if isinstance(value, str):
            return redact(value, secrets)
        if isinstance(value, list):
            return [shown("", item) for item in value]
        if isinstance(value, dict):
            return {redact(str(k), secrets): shown(str(k), v) for k, v in value.items()}
        return value

    return {key: shown(key, value) for key, value in record.items()}


def _recipes() -> tuple[str, ...]:
    from evalkit.paireval.recipes import RECIPES

    return tuple(RECIPES)


def _prompts() -> dict[str, Any]:
    from evalkit.upheld.llm_judges import JUDGES

    return JUDGES


def parse_spec(text: str) -> JudgeSpec:
    """A :class:`JudgeSpec` from a ``--judge`` string (or the path of a YAML spec file). A string that names
    no judge raises :class:`~evalkit.data.specfile.SpecError` naming it and what is known."""
    text = text.strip()
    if text.lower().endswith((".yml", ".yaml")):
        return read_spec_file(text)
    kind, _, detail = text.partition(":")
    where = f"judge {text!r}"
    if kind in (*METRIC_KINDS, "encoder", "lm-pair") and not detail:
        return JudgeSpec(kind, source=text)
    if kind in RECIPE_KINDS:
        recipe = detail or "book"
        if recipe not in _recipes():
            raise SpecError(f"{where}: no recipe {recipe!r} in evalkit.paireval.RECIPES (known: "
                            f"{', '.join(_recipes())})")
        return JudgeSpec(kind, recipe=recipe, source=text)
    if kind == "lm":
        if detail not in _prompts():
            raise SpecError(f"{where}: no prompt {detail!r} in evalkit.upheld.llm_judges.JUDGES (known: "
                            f"{', '.join(sorted(_prompts()))})")
        return JudgeSpec("lm", prompt=detail, target=_prompts()[detail].target, source=text)
    known = ", ".join([*METRIC_KINDS, "encoder", "paireval:<recipe>", "directeval:<recipe>", "reader:<recipe>",
                       "lm:<prompt>", "lm-pair", "lora:<recipe>", "a .yml spec file"])
    raise SpecError(f"{where}: not a judge the kit knows (known: {known}; a file of scores: --scores FILE)")


def read_spec_file(path: str | Path) -> JudgeSpec:
    """A :class:`JudgeSpec` from a YAML file; every error names the file, the line and the field, with the
    credentials of the spec's ``base_url`` masked wherever the message quotes a field (a password pasted into
    another field too)."""
    from evalkit.models.redaction import configured_secrets, redact

    raw = read_yaml(path, lines=True)
    base_url = raw.get("base_url") if isinstance(raw, dict) else None
    try:
        return _read_spec(path, raw)
    except SpecError as error:
        if not isinstance(base_url, str) or not configured_secrets(base_url):
            raise
        raise SpecError(redact(str(error), configured_secrets(base_url))) from None


def _read_spec(path: str | Path, raw) -> JudgeSpec:
    """:func:`read_spec_file` of the YAML ``raw`` read from ``path``."""
    source = str(path)
    fields = Fields(raw, source, known=_FIELDS)
    kind = fields.text("kind", choices=[k for k in KINDS if k != "scores"])
    recipe = _checked_recipe(fields, kind)
    door = [name for name in ("backend", "model", "base_url") if name in raw]
    prompt_fields = [name for name in ("prompt", "template", "labels", "values", "generates") if name in raw]
    if kind not in DOOR_KINDS and door:
        fields.fail(door[0], f"only an lm or lm-pair judge reads it (this one is {kind!r})")
    if kind != "lm" and prompt_fields:
        fields.fail(prompt_fields[0], f"only an lm judge reads it (this one is {kind!r})")
    spec = dict(kind=kind, name=fields.text("name", None, optional=True) or "", recipe=recipe, source=source,
                price_per_1k_tokens=fields.number("price_per_1k_tokens", None, minimum=0, optional=True),
                target=fields.text("target", None, optional=True))
    if kind == "lm-pair":
        return JudgeSpec(**spec, **_door(fields))
    if kind != "lm":
        return JudgeSpec(**spec)
    return _lm_spec(fields, raw, spec)


def _door(fields: Fields) -> dict[str, Any]:
    """The backend, model and endpoint of a judge that goes through the model door."""
    backend = fields.text("backend", "transformers", choices=_BACKENDS)
    base_url = fields.text("base_url", None, optional=True)
    model = fields.text("model", None, optional=True)
    if backend == "openai" and (base_url is None or model is None):
        fields.fail("base_url" if base_url is None else "model", "an openai backend needs both model and base_url")
    return {"backend": backend, "model": model, "base_url": base_url}


def _checked_recipe(fields: Fields, kind: str) -> str | None:
    """The ``recipe`` field: a recipe of evalkit.paireval.RECIPES (default ``book``) for a paireval,
    directeval or reader judge, absent for every other kind."""
    recipe = fields.text("recipe", None, optional=True)
    if kind in RECIPE_KINDS:
        recipe = recipe or "book"
        if recipe not in _recipes():
            fields.fail("recipe", f"{recipe!r} is not a recipe of evalkit.paireval.RECIPES ({', '.join(_recipes())})")
    elif recipe is not None:
        fields.fail("recipe", f"only a paireval, directeval, reader or lora judge has a recipe (this one is {kind!r})")
    return recipe


def _lm_spec(fields: Fields, raw: dict[str, Any], spec: dict[str, Any]) -> JudgeSpec:
    """An lm judge's spec: ``spec``'s common fields plus its backend, model and endpoint, and either a named
    prompt (which brings its labels, values and target) or a template of its own with its labels and values."""
    door = _door(fields)
    prompt, template = fields.text("prompt", None, optional=True), fields.text("template", None, optional=True)
    if (prompt is None) == (template is None):
        fields.fail("template" if template else "prompt", "give exactly one of prompt (a name in "
                    "evalkit.upheld.llm_judges.JUDGES) and template (a prompt of your own)")
    labels: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    if prompt is not None:
        if prompt not in _prompts():
            fields.fail("prompt", f"{prompt!r} is not in evalkit.upheld.llm_judges.JUDGES ({', '.join(sorted(_prompts()))})")
        for name in ("labels", "values"):
            if name in raw:
                fields.fail(name, "comes with the named prompt; write a template to choose your own")
        spec["target"] = spec["target"] or _prompts()[prompt].target
    else:
        labels, values = _template_scale(fields, raw, template)
    return JudgeSpec(**spec, **door, prompt=prompt, template=template,
                     labels=labels, values=values, generates=fields.boolean("generates", False))


def _template_scale(fields: Fields, raw: dict[str, Any], template: str) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """A template's placeholders checked (known ones only, ``{candidate}`` among them), and its labels with
    one number each: the ``values`` given, or the labels read as numbers."""
    names = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    unknown = sorted(set(names) - set(_PLACEHOLDERS))
    if unknown:
        fields.fail("template", f"unknown placeholder(s) {', '.join('{' + n + '}' for n in unknown)}; "
                    f"known: {', '.join('{' + n + '}' for n in _PLACEHOLDERS)}")
    if "candidate" not in names:
        fields.fail("template", "has no {candidate}: the judge would never see the reply it scores")
    labels = tuple(fields.text_list("labels"))
    if "values" in raw:
        numbers = fields.values("values")
        for index, value in enumerate(numbers):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                fields.fail(f"values[{index}]", f"expected a number, got {value!r}")
        if len(numbers) != len(labels):
            fields.fail("values", f"{len(numbers)} values for {len(labels)} labels")
        return labels, tuple(float(v) for v in numbers)
    try:
        return labels, tuple(float(label) for label in labels)
    except ValueError:
        fields.fail("labels", "are not numbers; give values: (one number per label)")
