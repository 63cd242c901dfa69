"""A user-proxy job's configuration: what it runs (proxies, datasets, metrics, judges, seeds), read from a
YAML file or built in Python, with every field checked for type and range before anything runs.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from evalkit.models.options import BACKEND_CLASSES, backend_options, read_option
from evalkit.data.specfile import Fields, SpecError, read_yaml
from evalkit.userproxy.data import MIRROR_SETS
from evalkit.userproxy.evaluate import JUDGE_METRICS
from evalkit.userproxy.lexical import LEXICAL_METRICS, LEXICAL_MODES

__all__ = ["METRICS", "ModelSpec", "ProxySpec", "JobConfig", "JobConfigError", "load_job", "dataset_name",
           "check_sample_sizes"]

METRICS = tuple(LEXICAL_METRICS) + JUDGE_METRICS


class JobConfigError(SpecError):
    """A job configuration that cannot run; the message names the file and the field."""


@dataclass(frozen=True)
class ModelSpec:
    """A model behind the model door: ``kind`` transformers (``model`` a folder or Hugging Face id, None for
    the default LM; optional LoRA ``adapter``), llamacpp (``model`` a GGUF file, None for the default LM's;
    an ``adapter`` is merged in) or openai (``model`` and ``base_url``); ``options`` go to the backend: any
    keyword option of its constructor (e.g. ``max_concurrency``, ``api_key_env``, ``weights``; see
    :mod:`evalkit.models.options`)."""

    kind: str = "transformers"
    model: str | None = None
    base_url: str | None = None
    adapter: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass(frozen=True)
class ProxySpec:
    """A user proxy: its model, what it is told about the user (``goal_level``) and its sampling temperature."""

    model: ModelSpec = field(default_factory=ModelSpec)
    goal_level: str = "full"
    temperature: float = 0.0


@dataclass
class JobConfig:
    """Everything a user-proxy job needs; build with :func:`load_job` or :meth:`from_dict`."""

    name: str = "userproxy"
    datasets: list[str] = field(default_factory=lambda: ["chatbot_arena"])
    episodes: int = 10
    minimum_per_stratum: int = 1
    seeds: list[int] = field(default_factory=lambda: [0])
    mode: str = "multi"
    proxies: dict[str, ProxySpec] = field(default_factory=lambda: {"smollm2": ProxySpec()})
    assistant: ModelSpec = field(default_factory=ModelSpec)
    guided: bool = True
    echo_guard: bool = True
    goal_writer: ModelSpec = field(default_factory=ModelSpec)
    judges: dict[str, ModelSpec] = field(default_factory=lambda: {"smollm2": ModelSpec()})
    metrics: list[str] = field(default_factory=lambda: list(METRICS))
    judge_mode: str = "probs"
    judge_samples: int = 1
    controls: bool = True
    user_tokens: int = 40
    assistant_tokens: int = 48
    min_tokens: int = 5
    human_anchor: int = 200
    tokenizer: str | None = None
    lexical_mode: str = "kit"
    bootstrap: int = 1000
    chunk: int = 32
    data_dir: str | None = None
    cache: bool | str = True
    store: str = "userproxy-runs.sqlite"

    # Fields that change no number: where things are kept and how work is cut into stored chunks.
    _NOT_IN_IDENTITY = ("store", "cache", "chunk", "data_dir")

    @classmethod
    def from_dict(cls, raw: Any, *, source: str = "job configuration",
                  base_dir: str | Path | None = None) -> "JobConfig":
        """Validate a parsed configuration; relative ``store`` and dataset paths are taken from ``base_dir``
        (a dataset file that does not exist is refused here, not at run time)."""
        values = _checked(raw, source)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        if "store" in values and not Path(values["store"]).is_absolute():
            values["store"] = str(base / values["store"])
        if values.get("data_dir") is not None and not Path(values["data_dir"]).expanduser().is_absolute():
            values["data_dir"] = str(base / values["data_dir"])
        if values.get("data_dir") is not None and not Path(values["data_dir"]).expanduser().is_dir():
            raise JobConfigError(f"{source}, field 'data_dir': {values['data_dir']} is not a directory")
        if "datasets" in values:
            values["datasets"] = [d if d in MIRROR_SETS or Path(d).is_absolute() else str(base / d)
                                  for d in values["datasets"]]
            for index, dataset in enumerate(values["datasets"]):
                if dataset not in MIRROR_SETS and not Path(dataset).is_file():
                    raise JobConfigError(f"{source}, field 'datasets[{index}]': no such file {dataset}")
        config = cls(**values)
        if "store" not in values:
            config.store = str(base / config.store)
        return config

    def __post_init__(self) -> None:
        # Built in Python (a notebook) or from a file: the same checks, so a bad value fails here.
        for name, value in _checked({f.name: getattr(self, f.name) for f in fields(self)},
                                    "job configuration").items():
            setattr(self, name, value)

    def identity(self) -> dict[str, Any]:
        """What decides the numbers, for the run id: the settings (paths and chunking left out) and a
        fingerprint of this package's code, so a changed metric or prompt is a new run, never stale
        results (its model calls still come from the cache where the prompts did not change)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in self._NOT_IN_IDENTITY}
        data["datasets"] = [Path(d).name if d.endswith(".jsonl") else d for d in self.datasets]
        data["code"] = _code_fingerprint()
        # The identity is stored with the run and printed in reports: credentials in an endpoint URL are masked.
        return _masked(json.loads(json.dumps(data, default=lambda o: asdict(o), sort_keys=True)))

    def run_id(self) -> str:
        """``<name>-<10 hex digits of the identity hash>``."""
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"


def _masked(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` with every ``base_url`` string as a shared record keeps it (:func:`evalkit.models.public_endpoint`)
    and the environment's credentials (:func:`evalkit.models.environment_secrets`) masked in every other text."""
    from evalkit.models import environment_secrets, public_endpoint
    from evalkit.models.redaction import mask_secrets

    secrets = environment_secrets() if secrets is None else secrets
    if isinstance(value, dict):
        return {k: public_endpoint(v) if k == "base_url" and isinstance(v, str) else _masked(v, secrets)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v, secrets) for v in value]
    return mask_secrets(value, secrets) if isinstance(value, str) else value


def _code_fingerprint() -> str:
    """sha256 (12 hex digits) of the sources of the user-proxy package."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()[:12]


def load_job(path: str | Path) -> JobConfig:
    """Read a YAML job file (relative paths in it are relative to the file)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such job file")
    return JobConfig.from_dict(read_yaml(path, JobConfigError) or {}, source=str(path), base_dir=path.parent)


def dataset_name(dataset: str) -> str:
    """A dataset's label: the mirror-set name, or a file's stem without ``_mirror``.

    >>> dataset_name("qulac"), dataset_name("/data/my_set_mirror.jsonl")
    ('qulac', 'my_set')
    """
    return dataset if dataset in MIRROR_SETS else Path(dataset).stem.replace("_mirror", "")



_MODEL_KEYS = ("kind", "model", "base_url", "adapter", "options")
_PROXY_KEYS = ("model", "goal_level", "temperature")


def _model(value: Any, where: str, source: str) -> ModelSpec:
    """A model spec from a mapping, a model name, nothing (the default LM) or a ModelSpec."""
    if value is None:
        return ModelSpec()
    if isinstance(value, str):
        if not value.strip():
            raise JobConfigError(f"{source}, field '{where}': a model name cannot be empty")
        return ModelSpec(model=value)
    if isinstance(value, ModelSpec):
        value = asdict(value)
    read = Fields(value, source, prefix=f"{where}.", known=_MODEL_KEYS, error=JobConfigError)
    kind = read.text("kind", "transformers", choices=tuple(BACKEND_CLASSES))
    spec = ModelSpec(kind=kind, model=read.text("model", None, optional=True),
                     base_url=_base_url(read),
                     adapter=read.text("adapter", None, optional=True),
                     options=_options(read, kind))
    if spec.kind == "openai" and not (spec.model and spec.base_url):
        raise JobConfigError(f"{source}, field '{where}': an openai model needs model and base_url")
    _check_one_authorization(spec, where, source)
    return spec


def _check_one_authorization(spec: ModelSpec, where: str, source: str) -> None:
    """Refuse at plan time what the backend would refuse at its first call (see
    :func:`evalkit.models.openai_compatible.credentials_conflict`)."""
    from evalkit.models.openai_compatible import DEFAULT_API_KEY_ENV, credentials_conflict

    if spec.kind == "openai" and spec.base_url:
        reason = credentials_conflict(spec.base_url, spec.options.get("api_key_env", DEFAULT_API_KEY_ENV))
        if reason:
            raise JobConfigError(f"{source}, field '{where}.base_url': {reason}")


def _base_url(read: Fields) -> str | None:
    """An endpoint URL with a scheme (http or https) and a host, and a port from 1 to 65535 if one is given;
    the message shows the URL with its credentials masked."""
    from urllib.parse import urlsplit

    from evalkit.models import redact

    url = read.text("base_url", None, optional=True)
    if url is None:
        return None
    shown = redact(url)
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        read.fail("base_url", f"{shown!r} is not an endpoint URL: expected http(s)://host[:port]/path, e.g. "
                              "http://127.0.0.1:8080/v1")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        read.fail("base_url", f"{shown!r}: the port must be a number from 1 to 65535")
    return url


def _options(read: Fields, kind: str) -> dict[str, Any]:
    """A model's backend ``options``: each a keyword option of that backend's constructor, of the type its
    signature gives and within the backend's checks (:func:`evalkit.models.options.backend_options`); an
    unknown one is refused naming the options the backend has."""
    raw = read.mapping("options", {})
    known = backend_options(kind)
    options = read.nested("options", raw, known=known)
    return {name: read_option(options, option) for name, option in known.items() if name in raw}


def _proxy(value: Any, where: str, source: str) -> ProxySpec:
    """A proxy from a mapping (model, goal_level, temperature), a model name, nothing, or a ProxySpec."""
    if value is None or isinstance(value, str):
        return ProxySpec(_model(value, f"{where}.model", source))
    if isinstance(value, ProxySpec):
        value = {"model": value.model, "goal_level": value.goal_level, "temperature": value.temperature}
    read = Fields(value, source, prefix=f"{where}.", known=_PROXY_KEYS, error=JobConfigError)
    return ProxySpec(_model(read.value("model", None), f"{where}.model", source),
                     read.text("goal_level", "full", choices=("full", "topic", "none")),
                     read.number("temperature", 0.0, minimum=0.0, maximum=5.0))


def _no_repeats(read: Fields, name: str, values: list[Any]) -> None:
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        read.fail(name, f"{', '.join(repeated)} given more than once (each would run twice)")


def _names(read: Fields, name: str, raw: dict[str, Any]) -> None:
    for key in raw:
        if not isinstance(key, str) or not key.strip() or "/" in key:
            read.fail(name, f"{key!r} is not a usable name (a non-empty text without '/')")


def _checked(raw: Any, source: str) -> dict[str, Any]:
    """The configuration's fields, each checked for type and range (and models built from their specs);
    raises :class:`JobConfigError` naming ``source`` and the field. Only the fields given are returned."""
    known = [f.name for f in fields(JobConfig)]
    read = Fields(raw, source, known=known, error=JobConfigError)
    given = read.raw
    out: dict[str, Any] = {}
    out.update(_checked_numbers(read, given))
    out.update(_checked_texts(read, given))
    out.update(_checked_models(read, given, source))
    _check_sizes(read, given, out)
    return out


def _checked_numbers(read: Fields, given: dict[str, Any]) -> dict[str, Any]:
    """The given sizes, counts, seeds and switches, each of its type and range."""
    out: dict[str, Any] = {}
    positive = ("episodes", "chunk", "judge_samples", "user_tokens", "assistant_tokens", "min_tokens")
    for name in positive:
        if name in given:
            out[name] = read.integer(name, minimum=1)
    if "human_anchor" in given:
        out["human_anchor"] = read.integer("human_anchor", minimum=2)
    if "minimum_per_stratum" in given:
        out["minimum_per_stratum"] = read.integer("minimum_per_stratum", minimum=0)
    if "bootstrap" in given:
        out["bootstrap"] = read.integer("bootstrap", minimum=0)
    if "seeds" in given:
        out["seeds"] = read.integer_list("seeds", minimum=0)
        _no_repeats(read, "seeds", out["seeds"])
    for name in ("guided", "echo_guard", "controls"):
        if name in given:
            out[name] = read.boolean(name)
    return out


def _checked_texts(read: Fields, given: dict[str, Any]) -> dict[str, Any]:
    """The given names, paths and modes (a lexical mode with a tokenizer of its own refuses another), the
    metrics, and the datasets (mirror sets or mirror-format files, none twice)."""
    out: dict[str, Any] = {}
    if "name" in given:
        out["name"] = read.text("name")
        if "/" in out["name"]:
            read.fail("name", f"{out['name']!r} cannot contain '/' (it names the run)")
    if "store" in given:
        out["store"] = read.text("store")
    for name in ("tokenizer", "data_dir"):
        if name in given:
            out[name] = read.text(name, optional=True)
    if "cache" in given:
        cache = given["cache"]
        if not isinstance(cache, bool):
            out["cache"] = read.text("cache")  # a path
        else:
            out["cache"] = cache
    if "lexical_mode" in given:
        out["lexical_mode"] = read.text("lexical_mode", choices=tuple(LEXICAL_MODES))
        fixed = LEXICAL_MODES[out["lexical_mode"]].tokenizer
        if fixed is not None and given.get("tokenizer") not in (None, fixed):
            read.fail("tokenizer", f"lexical_mode {out['lexical_mode']!r} tokenizes with {fixed}; leave "
                                   f"'tokenizer' unset (it was {given['tokenizer']!r})")
    if "mode" in given:
        out["mode"] = read.text("mode", choices=("multi", "single"))
    if "judge_mode" in given:
        out["judge_mode"] = read.text("judge_mode", choices=("probs", "json"))
    if "metrics" in given:
        out["metrics"] = read.text_list("metrics", choices=METRICS)
    if "datasets" in given:
        out["datasets"] = read.text_list("datasets")
        _no_repeats(read, "datasets", out["datasets"])
        for index, dataset in enumerate(out["datasets"]):
            if dataset not in MIRROR_SETS and not dataset.endswith(".jsonl"):
                read.fail(f"datasets[{index}]", f"{dataset!r} is neither one of {', '.join(MIRROR_SETS)} nor a "
                                                "path to a mirror-format .jsonl file")
    return out


def _checked_models(read: Fields, given: dict[str, Any], source: str) -> dict[str, Any]:
    """The given proxies and judges (by usable names) and the assistant and goal writer, as model specs."""
    out: dict[str, Any] = {}
    if "proxies" in given:
        proxies = read.mapping("proxies", nonempty=True)
        _names(read, "proxies", proxies)
        out["proxies"] = {name: _proxy(spec, f"proxies.{name}", source) for name, spec in proxies.items()}
    if "judges" in given:
        judges = read.mapping("judges", nonempty=True)
        _names(read, "judges", judges)
        out["judges"] = {name: _model(spec, f"judges.{name}", source) for name, spec in judges.items()}
    for role in ("assistant", "goal_writer"):
        if role in given:
            out[role] = _model(given[role], role, source)
    return out


def _check_sizes(read: Fields, given: dict[str, Any], out: dict[str, Any]) -> None:
    """Refuse sample sizes that cannot work together: controls need two episodes, and each stratified sample
    (episodes, human_anchor) must hold at least ``minimum_per_stratum``."""
    episodes = out.get("episodes", given.get("episodes", 10))
    controls = out.get("controls", given.get("controls", True))
    metrics = out.get("metrics", given.get("metrics", METRICS))
    if controls and episodes < 2 and any(m in JUDGE_METRICS for m in metrics):
        read.fail("episodes", "controls pair different conversations: at least 2 episodes (or controls: false)")
    minimum = out.get("minimum_per_stratum", given.get("minimum_per_stratum", 1))
    for name in ("episodes", "human_anchor"):  # both are stratified samples with the same minimum
        size = out.get(name, given.get(name, 10 if name == "episodes" else 200))
        if minimum > size:
            read.fail(name, f"{size} cannot give a stratum its minimum_per_stratum of {minimum} (the sample would "
                            f"hold {minimum} or more, not {size}); raise {name} or lower minimum_per_stratum")


def check_sample_sizes(config: JobConfig, source: str = "job configuration") -> None:
    """Refuse a job whose ``episodes`` are fewer than its datasets' strata need: each stratum is given at
    least ``minimum_per_stratum`` conversations (or all it has), so with more strata than that allows the
    sample would be larger than asked — the run would silently hold more episodes than the job says.
    Reads the datasets (as the run will)."""
    from evalkit.userproxy.data import load_mirror_set, read_mirror_set

    for index, dataset in enumerate(config.datasets):
        frame, _ = (load_mirror_set(dataset, data_dir=config.data_dir) if dataset in MIRROR_SETS
                    else read_mirror_set(dataset))
        if config.episodes >= len(frame):
            continue  # the whole set is taken
        sizes = frame["stratum"].value_counts()
        needed = int(sum(min(size, config.minimum_per_stratum) for size in sizes))
        if needed > config.episodes:
            raise JobConfigError(
                f"{source}, field 'episodes': {config.episodes} episodes cannot give each of the {len(sizes)} "
                f"strata of {dataset_name(dataset)} (datasets[{index}]) its minimum_per_stratum of "
                f"{config.minimum_per_stratum}: the sample would hold {needed}; set episodes to at least "
                f"{needed} or lower minimum_per_stratum")


