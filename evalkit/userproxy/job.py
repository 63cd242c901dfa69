"""User-proxy evaluation jobs: a declarative configuration, its plan of units, a resumable execution into the
run store, and the report (JSON and HTML).

A job names proxies, datasets, metrics, judges and seeds (see ``jobs/userproxy_example.yml``). The plan
expands it into units — for every seed, dataset and proxy one ``rollout`` unit and one ``metric`` unit per
metric (and per judge for the judge metrics). Execution walks the plan in order; a unit already done is
skipped and a unit's episodes are written in chunks as they finish, so a run stopped at any point and
started again picks up where it stopped. Every model call goes through the cached model door, so the
calls of an unfinished chunk are answered from the cache on the second pass: nothing is asked twice.

The same configuration gives the same run id (a hash of everything that changes a number), so ``run``
twice is a resume, and an edited configuration is a new run in the same store.
"""
from __future__ import annotations

import hashlib
import html
import json
import time
import traceback
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ..models import CachedBackend, open_backend
from ..results import json_ready
from . import realism
from .data import MIRROR_SETS, load_mirror_set, read_mirror_set, stratified_episodes
from .evaluate import JUDGE_METRICS, control_scores, lexical_z_scores
from .lexical import LEXICAL_METRICS, lm_tokenizer, word_tokenizer
from .rollout import mirror_rollouts, synthesize_goals
from .runstore import RunStore, Unit
from .stats import summarise

__all__ = ["ModelSpec", "ProxySpec", "JobConfig", "JobConfigError", "load_job", "plan", "execute", "RunOutcome",
           "scores", "rank_stability", "judge_sensitivity", "kendalls_w", "report", "write_html"]

METRICS = tuple(LEXICAL_METRICS) + JUDGE_METRICS


class JobConfigError(ValueError):
    """A job configuration that cannot run; the message names the file and the field."""


@dataclass(frozen=True)
class ModelSpec:
    """A model behind the model door: ``kind`` transformers (``model`` a folder or Hugging Face id, None for
    the default LM; optional LoRA ``adapter``) or openai (``model`` and ``base_url``); ``options`` go to the
    backend (e.g. ``max_concurrency``, ``api_key_env``)."""

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
    bootstrap: int = 1000
    chunk: int = 4
    data_dir: str | None = None
    cache: bool | str = True
    store: str = "userproxy-runs.sqlite"

    # Fields that change no number: where things are kept and how work is cut into stored chunks.
    _NOT_IN_IDENTITY = ("store", "cache", "chunk", "data_dir")

    @classmethod
    def from_dict(cls, raw: dict[str, Any], *, source: str = "job configuration",
                  base_dir: str | Path | None = None) -> "JobConfig":
        """Validate a parsed configuration; relative ``store`` and dataset paths are taken from ``base_dir``."""
        if not isinstance(raw, dict):
            raise JobConfigError(f"{source}: expected a mapping of fields")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise JobConfigError(f"{source}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values = dict(raw)

        def model(value: Any, where: str) -> ModelSpec:
            if value is None:
                return ModelSpec()
            if isinstance(value, str):
                return ModelSpec(model=value)
            if not isinstance(value, dict):
                raise JobConfigError(f"{source}, field '{where}': expected a model (a mapping or a model name)")
            extra = sorted(set(value) - {"kind", "model", "base_url", "adapter", "options"})
            if extra:
                raise JobConfigError(f"{source}, field '{where}': unknown key(s) {', '.join(extra)}")
            spec = ModelSpec(**value)
            if spec.kind not in ("transformers", "openai"):
                raise JobConfigError(f"{source}, field '{where}.kind': {spec.kind!r} is not transformers or openai")
            if spec.kind == "openai" and not (spec.model and spec.base_url):
                raise JobConfigError(f"{source}, field '{where}': an openai model needs model and base_url")
            return spec

        def named(value: Any, where: str) -> dict[str, Any]:
            if not isinstance(value, dict) or not value:
                raise JobConfigError(f"{source}, field '{where}': expected a non-empty mapping of name -> settings")
            return value

        if "proxies" in values:
            proxies = {}
            for name, settings in named(values["proxies"], "proxies").items():
                settings = dict(settings or {})
                extra = sorted(set(settings) - {"model", "goal_level", "temperature"})
                if extra:
                    raise JobConfigError(f"{source}, field 'proxies.{name}': unknown key(s) {', '.join(extra)}")
                level = settings.get("goal_level", "full")
                if level not in ("full", "topic", "none"):
                    raise JobConfigError(f"{source}, field 'proxies.{name}.goal_level': {level!r} is not full, "
                                         "topic or none")
                proxies[str(name)] = ProxySpec(model(settings.get("model"), f"proxies.{name}.model"), level,
                                               float(settings.get("temperature", 0.0)))
            values["proxies"] = proxies
        if "judges" in values:
            values["judges"] = {str(n): model(s, f"judges.{n}") for n, s in named(values["judges"], "judges").items()}
        for role in ("assistant", "goal_writer"):
            if role in values:
                values[role] = model(values[role], role)
        try:
            config = cls(**values)
        except JobConfigError as error:
            raise JobConfigError(str(error).replace("job configuration", source, 1)) from None
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        config.store = str(base / config.store) if not Path(config.store).is_absolute() else config.store
        config.datasets = [d if d in MIRROR_SETS or Path(d).is_absolute() else str(base / d) for d in config.datasets]
        return config

    def __post_init__(self) -> None:
        self._check("job configuration")

    def _check(self, source: str) -> None:
        def fail(name: str, why: str) -> None:
            raise JobConfigError(f"{source}, field '{name}': {why}")

        for dataset in self.datasets:
            if dataset not in MIRROR_SETS and not dataset.endswith(".jsonl"):
                fail("datasets", f"{dataset!r} is neither one of {', '.join(MIRROR_SETS)} nor a .jsonl file")
        bad = [m for m in self.metrics if m not in METRICS]
        if bad or not self.metrics:
            fail("metrics", f"{bad or 'none given'}; choose from {', '.join(METRICS)}")
        if self.mode not in ("multi", "single"):
            fail("mode", f"{self.mode!r} is not multi or single")
        if self.judge_mode not in ("probs", "json"):
            fail("judge_mode", f"{self.judge_mode!r} is not probs or json")
        for name in ("episodes", "chunk", "judge_samples", "user_tokens", "assistant_tokens", "human_anchor"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                fail(name, "expected a positive integer")
        if self.controls and self.episodes < 2 and any(m in JUDGE_METRICS for m in self.metrics):
            fail("episodes", "controls pair different conversations: at least 2 episodes")
        if not self.seeds or not all(isinstance(s, int) for s in self.seeds):
            fail("seeds", "expected a list of integers")
        for name in self.proxies:
            if "/" in name:
                fail("proxies", f"a proxy name cannot contain '/': {name!r}")

    def identity(self) -> dict[str, Any]:
        """What decides the numbers, for the run id: the settings (paths and chunking left out) and a
        fingerprint of this package's code, so a changed metric or prompt is a new run, never stale
        results (its model calls still come from the cache where the prompts did not change)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in self._NOT_IN_IDENTITY}
        data["datasets"] = [Path(d).name if d.endswith(".jsonl") else d for d in self.datasets]
        data["code"] = _code_fingerprint()
        return json.loads(json.dumps(data, default=lambda o: asdict(o), sort_keys=True))

    def run_id(self) -> str:
        """``<name>-<10 hex digits of the identity hash>``."""
        digest = hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:10]
        return f"{self.name}-{digest}"


def _code_fingerprint() -> str:
    """sha256 (12 hex digits) of the sources of the user-proxy package."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + source.read_bytes())
    return digest.hexdigest()[:12]


def load_job(path: str | Path) -> JobConfig:
    """Read a YAML job file (relative paths in it are relative to the file)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such job file")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as error:
        raise JobConfigError(f"{path}: not valid YAML ({error})") from error
    return JobConfig.from_dict(raw, source=str(path), base_dir=path.parent)


def dataset_name(dataset: str) -> str:
    """A dataset's label: the mirror-set name, or a file's stem without ``_mirror``.

    >>> dataset_name("qulac"), dataset_name("/data/my_set_mirror.jsonl")
    ('qulac', 'my_set')
    """
    return dataset if dataset in MIRROR_SETS else Path(dataset).stem.replace("_mirror", "")


def plan(config: JobConfig) -> list[Unit]:
    """The run's units in execution order: per seed, dataset and proxy, the rollout unit and then its metric
    units (each judge metric once per judge)."""
    run_id, units = config.run_id(), []
    for seed in config.seeds:
        for dataset in map(dataset_name, config.datasets):
            for proxy in config.proxies:
                units.append(Unit(run_id, "rollout", proxy, dataset, "rollout", "", seed))
                for metric in config.metrics:
                    judges = list(config.judges) if metric in JUDGE_METRICS else [""]
                    units.extend(Unit(run_id, "metric", proxy, dataset, metric, judge, seed) for judge in judges)
    return units


# --------------------------------------------------------------------------- execution

OpenModel = Callable[[ModelSpec], CachedBackend]


class _Roles:
    """One loaded model per distinct spec, seen through a per-role door (its own telemetry, shared cache)."""

    def __init__(self, config: JobConfig, open_model: OpenModel | None):
        self.config, self.open_model = config, open_model
        self._loaded: dict[str, CachedBackend] = {}
        self._doors: dict[tuple[str, str], CachedBackend] = {}

    def door(self, role: str, spec: ModelSpec) -> CachedBackend:
        key = spec.key()
        if key not in self._loaded:
            self._loaded[key] = (self.open_model(spec) if self.open_model is not None else
                                 open_backend(spec.kind, spec.model, base_url=spec.base_url, adapter=spec.adapter,
                                              cache=self.config.cache, **spec.options))
        if (role, key) not in self._doors:
            loaded = self._loaded[key]
            self._doors[(role, key)] = CachedBackend(loaded.backend, loaded.cache)
        return self._doors[(role, key)]

    def drain(self, store: RunStore, unit: Unit) -> None:
        """Move every door's new call records into the store, under the unit and the door's role."""
        for (role, _), door in self._doors.items():
            records = door.telemetry.drain()
            if records:
                store.add_calls(unit, role, records)


@dataclass
class RunOutcome:
    """What :func:`execute` did: the run id, units run now, units skipped as done, and failures."""

    run_id: str
    store: str
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


class _Executor:
    def __init__(self, config: JobConfig, store: RunStore, roles: _Roles):
        self.config, self.store, self.roles = config, store, roles
        self._frames: dict[str, pd.DataFrame] = {}
        self._samples: dict[tuple[str, int, int], pd.DataFrame] = {}
        self._tokenizer: Callable[[str], list[str]] | None = None

    def sample(self, dataset: str, seed: int, size: int | None = None) -> pd.DataFrame:
        """The stratified sample of ``size`` (default: the job's episodes) conversations for a seed."""
        if dataset not in self._frames:
            path = next(d for d in self.config.datasets if dataset_name(d) == dataset)
            frame, _ = (load_mirror_set(path, data_dir=self.config.data_dir) if path in MIRROR_SETS
                        else read_mirror_set(path))
            self._frames[dataset] = frame
        size = size or self.config.episodes
        if (dataset, seed, size) not in self._samples:
            self._samples[(dataset, seed, size)] = stratified_episodes(
                self._frames[dataset], size, minimum=self.config.minimum_per_stratum, seed=seed).reset_index(drop=True)
        return self._samples[(dataset, seed, size)]

    def tokenizer(self) -> Callable[[str], list[str]]:
        if self._tokenizer is None:
            name = self.config.tokenizer
            self._tokenizer = word_tokenizer if name == "words" else lm_tokenizer(name)
        return self._tokenizer

    def chunks(self, unit: Unit, n: int) -> list[range]:
        """Fixed chunks of positions (the same on every pass) not yet stored for the unit."""
        stored = self.store.episodes(unit.unit_id)
        size = self.config.chunk
        return [r for r in (range(s, min(s + size, n)) for s in range(0, n, size))
                if not all(p in stored for p in r)]

    def rollout(self, unit: Unit) -> dict[str, Any]:
        config, spec = self.config, self.config.proxies[unit.proxy]
        sample = self.sample(unit.dataset, unit.seed)
        proxy = self.roles.door("proxy", spec.model)
        assistant = self.roles.door("assistant", config.assistant)
        for positions in self.chunks(unit, len(sample)):
            started = time.perf_counter()
            turns = [sample.at[p, "turns"] for p in positions]
            if spec.goal_level == "full":
                goals = [sample.at[p, "goal"] for p in positions]
            else:
                goals = synthesize_goals(turns, spec.goal_level, self.roles.door("goal_writer", config.goal_writer))
            rolled = mirror_rollouts(turns, goals, spec.goal_level, proxy, assistant, mode=config.mode,
                                     user_tokens=config.user_tokens, assistant_tokens=config.assistant_tokens,
                                     guided=config.guided, temperature=spec.temperature, seed=unit.seed)
            seconds = (time.perf_counter() - started) / len(positions)
            self.store.put_episodes(unit, [(p, sample.at[p, "conversation_id"], None, {"goal": g, "turns": r}, seconds)
                                           for p, g, r in zip(positions, goals, rolled)])
            self.roles.drain(self.store, unit)
        episodes = self.store.episodes(unit.unit_id)
        words = [sum(len(t["content"].split()) for t in e["payload"]["turns"] if t["role"] == "user")
                 for e in episodes.values()]
        return {"episodes": len(episodes), "proxy_user_words": float(np.mean(words)),
                "real_user_words": float(sample["user_tokens"].mean())}

    def metric(self, unit: Unit) -> dict[str, Any]:
        config = self.config
        sample = self.sample(unit.dataset, unit.seed)
        rolled = self.store.episodes(unit.rollout_id)
        if len(rolled) != len(sample):
            raise RuntimeError(f"{unit.rollout_id} is not finished ({len(rolled)} of {len(sample)} episodes)")
        human = list(sample["turns"])
        proxy = [rolled[p]["payload"]["turns"] for p in range(len(sample))]
        ids = list(sample["conversation_id"])
        if unit.metric in LEXICAL_METRICS:
            started = time.perf_counter()
            # The human side of a z-score costs no model call, so it is anchored on a larger stratified sample
            # of the dataset's real users (as the paper's 200 per dataset) than the proxy episodes.
            anchor = list(self.sample(unit.dataset, unit.seed, config.human_anchor)["turns"])
            z = lexical_z_scores(anchor, proxy, self.tokenizer(), min_tokens=config.min_tokens)
            seconds = (time.perf_counter() - started) / len(sample)
            self.store.put_episodes(unit, [
                (p, ids[p], None if np.isnan(z.at[p, unit.metric]) else z.at[p, unit.metric],
                 {"proxy_value": json_ready(z.at[p, f"{unit.metric}_proxy"]), "tokens": int(z.at[p, "tokens"]),
                  "unstable": bool(z.at[p, "unstable"])}, seconds) for p in range(len(sample))])
            summary = summarise(z[unit.metric], bootstrap=config.bootstrap, seed=unit.seed)
            summary.update(proxy_value=float(z[f"{unit.metric}_proxy"].mean()),
                           human_value=float(z[f"{unit.metric}_human_mean"].iloc[0]),
                           unstable=int(z["unstable"].sum()), human_anchor=len(anchor),
                           human_unstable=int(z.attrs["human_unstable"]))
            return summary
        judge = self.roles.door("judge", config.judges[unit.judge])
        slots = realism.proxy_slots(len(sample), unit.seed)
        for positions in self.chunks(unit, len(sample)):
            started = time.perf_counter()
            pairs = [(human[p], proxy[p]) for p in positions]
            options = {"mode": config.judge_mode, "samples": config.judge_samples}
            if unit.metric == "gteval":
                verdicts = realism.gteval(pairs, judge, **options)
            elif unit.metric == "pi":
                verdicts = realism.pairwise_indistinguishability(pairs, judge, slots=[slots[p] for p in positions],
                                                                 **options)
            else:
                verdicts = realism.rubric_and_reason([proxy[p] for p in positions], judge, **options)
            seconds = (time.perf_counter() - started) / len(positions)
            self.store.put_episodes(unit, [
                (p, ids[p], None if np.isnan(score) else score,
                 {"raw": raw, **({"proxy_slot": slots[p]} if unit.metric == "pi" else {})}, seconds)
                for p, score, raw in zip(positions, verdicts.scores, verdicts.raw)])
            self.roles.drain(self.store, unit)
        stored = self.store.episodes(unit.unit_id)
        values = [np.nan if stored[p]["value"] is None else stored[p]["value"] for p in range(len(sample))]
        summary = summarise(values, bootstrap=config.bootstrap, seed=unit.seed)
        if config.controls:
            controls = control_scores(human, proxy, judge, seed=unit.seed, mode=config.judge_mode,
                                      samples=config.judge_samples, metrics=(unit.metric,))[unit.metric]
            self.roles.drain(self.store, unit)
            summary.update(HH=controls["HH"], PP=controls["PP"],
                           calibrated=realism.calibrated(summary["mean"], controls["HH"], controls["PP"]))
        if unit.metric == "pi":
            summary["delta_w"] = summary["mean"] - 0.5
        return summary


def execute(config: JobConfig, *, open_model: OpenModel | None = None, progress: bool = False,
            stop_on_error: bool = False) -> RunOutcome:
    """Run (or resume) the job: every unit not yet done, in plan order, stored as it goes.

    ``open_model`` opens a :class:`ModelSpec` as a cached backend (default: :func:`evalkit.models.open_backend`
    with the job's cache). A unit that raises is marked failed with its error and the others go on (units
    that need its rollouts fail too), unless ``stop_on_error``; running the job again retries it.
    """
    units = plan(config)
    store = RunStore(config.store)
    store.open_run(config.run_id(), config.name, config.identity(), units)
    outcome = RunOutcome(config.run_id(), str(store.path))
    executor = _Executor(config, store, _Roles(config, open_model))
    try:
        for index, unit in enumerate(units, 1):
            if store.status(unit) == "done":
                outcome.skipped.append(unit.unit_id)
                continue
            if progress:
                print(f"[{index}/{len(units)}] {unit.unit_id}", flush=True)
            store.start_unit(unit)
            started = time.perf_counter()
            try:
                summary = executor.rollout(unit) if unit.kind == "rollout" else executor.metric(unit)
            except Exception as error:  # noqa: BLE001 — recorded with its traceback, the run goes on
                executor.roles.drain(store, unit)
                store.fail_unit(unit, f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=4)}",
                                time.perf_counter() - started)
                outcome.failed[unit.unit_id] = f"{type(error).__name__}: {error}"
                if stop_on_error:
                    raise
                continue
            store.finish_unit(unit, json_ready(summary), time.perf_counter() - started)
            outcome.ran.append(unit.unit_id)
    finally:
        store.close_run(config.run_id())
        store.close()
    return outcome


# --------------------------------------------------------------------------- report

def scores(store: RunStore, run_id: str) -> pd.DataFrame:
    """One row per finished metric unit: proxy, dataset, metric, judge, seed and its summary (mean, sd, n,
    missing, t and bootstrap intervals; HH, PP and calibrated for judge metrics)."""
    units = store.units(run_id)
    done = units[(units["kind"] == "metric") & (units["status"] == "done")]
    rows = [{**{k: row[k] for k in ("proxy", "dataset", "metric", "judge", "seed")}, **row["summary"]}
            for _, row in done.iterrows()]
    return pd.DataFrame(rows)


def kendalls_w(rankings: np.ndarray) -> float:
    """Kendall's coefficient of concordance W of ``rankings`` (one row per rater — here a seed — ranking the
    same items 1..n): 1 when every rater gives the same order, near 0 when they share none.

    >>> kendalls_w(np.array([[1, 2, 3], [1, 2, 3]]))
    1.0
    >>> kendalls_w(np.array([[1, 2, 3], [3, 2, 1]]))
    0.0
    """
    m, n = rankings.shape
    if n < 2 or m < 1:
        return float("nan")
    totals = rankings.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    return 12 * s / (m ** 2 * (n ** 3 - n))


def _better_is_higher(metric: str) -> bool:
    return metric in JUDGE_METRICS  # lexical z-scores: closest to 0 is best


def rank_stability(table: pd.DataFrame) -> pd.DataFrame:
    """Per dataset, metric and judge with at least two proxies and two seeds: the proxies' order in each
    seed (judge metrics: higher mean first; lexical: |z| closest to 0 first), Kendall's W across seeds,
    whether the order is identical in every seed, and each proxy's mean ± sd over seeds."""
    out = []
    if table.empty:
        return pd.DataFrame()
    for (dataset, metric, judge), group in table.groupby(["dataset", "metric", "judge"]):
        wide = group.pivot_table(index="seed", columns="proxy", values="mean")
        if wide.shape[0] < 2 or wide.shape[1] < 2:
            continue
        key = wide if _better_is_higher(metric) else -wide.abs()
        ranks = key.rank(axis=1, ascending=False, method="average")
        orders = [" > ".join(row.sort_values(ascending=False).index) for _, row in key.iterrows()]
        out.append({"dataset": dataset, "metric": metric, "judge": judge, "seeds": wide.shape[0],
                    "proxies": wide.shape[1], "kendalls_w": kendalls_w(ranks.to_numpy()),
                    "same_order_every_seed": len(set(orders)) == 1, "orders": orders,
                    **{f"{p} mean": wide[p].mean() for p in wide.columns},
                    **{f"{p} sd over seeds": wide[p].std(ddof=1) for p in wide.columns}})
    return pd.DataFrame(out)


def judge_sensitivity(table: pd.DataFrame) -> pd.DataFrame:
    """Judge metrics with one column per judge (means over seeds), and the spread between judges."""
    judged = table[table["metric"].isin(JUDGE_METRICS)] if not table.empty else table
    if judged.empty or judged["judge"].nunique() < 2:
        return pd.DataFrame()
    wide = judged.pivot_table(index=["proxy", "dataset", "metric"], columns="judge", values="mean")
    wide["spread"] = wide.max(axis=1) - wide.min(axis=1)
    return wide


def report(store_path: str | Path, run_id: str | None = None) -> dict[str, Any]:
    """The run's report as plain JSON-able data: run, units (status, seconds), scores, judge sensitivity,
    rank stability and telemetry per role. ``run_id`` defaults to the store's latest run."""
    store = RunStore(store_path)
    try:
        runs = store.runs()
        if runs.empty:
            raise ValueError(f"{store_path}: no runs stored")
        run_id = run_id or str(runs["run_id"].iloc[-1])
        units = store.units(run_id)
        table = scores(store, run_id)
        telemetry = store.telemetry(run_id)
        by_role = (telemetry.groupby("role")[["calls", "cache_hits", "prompt_tokens", "completion_tokens",
                                              "model_seconds"]].sum().reset_index()
                   if not telemetry.empty else telemetry)
        run = runs[runs["run_id"] == run_id].iloc[0].to_dict()
        return json_ready({
            "run": {**run, "config": store.run_config(run_id), "store": str(store_path),
                    "units": len(units), "done": int((units["status"] == "done").sum()),
                    "failed": units.loc[units["status"] == "failed", ["unit_id", "error"]].to_dict("records"),
                    "seconds": float(units["seconds"].sum())},
            "units": units.drop(columns=["summary"]).to_dict("records"),
            "scores": table.to_dict("records"),
            "judge_sensitivity": judge_sensitivity(table).reset_index().to_dict("records"),
            "rank_stability": rank_stability(table).to_dict("records"),
            "telemetry": by_role.to_dict("records"),
        })
    finally:
        store.close()


_CSS = ("body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;"
        "font-size:.85em;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}"
        "th{background:#f3f3f3}caption{text-align:left;font-weight:bold;padding:.3em 0}")


def write_html(data: dict[str, Any], path: str | Path) -> Path:
    """A self-contained HTML page of :func:`report`'s data (tables only, no scripts, no network)."""
    run = data["run"]
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(run['run_id'])}</title><style>{_CSS}</style>",
             f"<h1>User-proxy run {html.escape(run['run_id'])}</h1>",
             f"<p>{run['done']} of {run['units']} units done, {len(run['failed'])} failed; "
             f"{run['seconds']:.1f} s of unit time; store <code>{html.escape(run['store'])}</code>.</p>"]
    for title, key in (("Scores (mean with 95% t-interval; HH/PP controls; calibrated)", "scores"),
                       ("Judge sensitivity", "judge_sensitivity"), ("Rank stability over seeds", "rank_stability"),
                       ("Telemetry per role", "telemetry"), ("Units", "units")):
        frame = pd.DataFrame(data[key])
        if frame.empty:
            continue
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(frame.to_html(index=False, float_format=lambda x: f"{x:.3f}", na_rep="–", border=0))
    parts.append(f"<h2>Configuration</h2><pre>{html.escape(json.dumps(run['config'], indent=2))}</pre>")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path
