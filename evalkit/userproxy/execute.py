"""Running a job's plan into the run store: each unit in order, finished units skipped, episodes stored
in fixed chunks as they finish, so a run stopped anywhere resumes where it stopped without repeating a
model call (unfinished chunks are answered from the call cache)."""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from evalkit.models import DEFAULT_API_KEY_ENV, CachedBackend, configured_secrets, open_backend, redact
from evalkit.book.results import json_ready
from evalkit.userproxy import realism
from evalkit.userproxy.config import JobConfig, ModelSpec, dataset_name
from evalkit.userproxy.data import MIRROR_SETS, load_mirror_set, read_mirror_set, stratified_episodes
from evalkit.userproxy.evaluate import JUDGE_SCORE_RANGE, calibrated_summary, control_scores, lexical_mode_table, lexical_z_scores
from evalkit.userproxy.lexical import LEXICAL_METRICS, LEXICAL_MODES, Tokenizer, tokenizer_named
from evalkit.userproxy.plan import plan
from evalkit.userproxy.rollout import mirror_rollouts, synthesize_goals
from evalkit.userproxy.runstore import RunStore, Unit
from evalkit.stats import summarise

__all__ = ["OpenModel", "RunOutcome", "execute"]


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

    def sentence(self) -> str:
        """The outcome in one sentence, for a page: the job's name, no run id, store path or unit ids.

        >>> RunOutcome("goal-levels-6148e05aa6", "/x/store.sqlite", ran=["a", "b"], skipped=["c"]).sentence()
        'The goal-levels job ran 2 units (1 more was already in the store); none failed.'
        """
        name = self.run_id.rsplit("-", 1)[0] if "-" in self.run_id else self.run_id
        stored = f" ({len(self.skipped)} more {'was' if len(self.skipped) == 1 else 'were'} already in the store)" \
            if self.skipped else ""
        failed = f"{len(self.failed)} failed" if self.failed else "none failed"
        return f"The {name} job ran {len(self.ran)} units{stored}; {failed}."


class _Executor:
    def __init__(self, config: JobConfig, store: RunStore, roles: _Roles):
        self.config, self.store, self.roles = config, store, roles
        self._frames: dict[str, pd.DataFrame] = {}
        self._samples: dict[tuple[str, int, int], pd.DataFrame] = {}
        self._tokenizer: Tokenizer | None = None
        # Seconds a unit's rollouts took when they ran together with other units' (see roll_out_together).
        self.prepaid: dict[str, float] = {}

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

    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            fixed = LEXICAL_MODES[self.config.lexical_mode].tokenizer
            self._tokenizer = tokenizer_named(fixed if fixed is not None else self.config.tokenizer)
        return self._tokenizer

    def chunks(self, unit: Unit, n: int) -> list[range]:
        """Fixed chunks of positions (the same on every pass) not yet stored for the unit."""
        stored = self.store.episodes(unit.unit_id)
        size = self.config.chunk
        return [r for r in (range(s, min(s + size, n)) for s in range(0, n, size))
                if not all(p in stored for p in r)]

    def _unfinished(self, unit: Unit) -> list[int]:
        stored = self.store.episodes(unit.unit_id)
        return [p for p in range(len(self.sample(unit.dataset, unit.seed))) if p not in stored]

    def companions(self, unit: Unit, later: Sequence[Unit]) -> list[Unit]:
        """``unit`` and the unfinished rollout units in ``later`` whose proxies can share its model calls (the
        same proxy model and temperature, and the same seed when sampling: proxies that differ only in their
        goal level, or seeds of a greedy proxy), up to ``chunk`` unfinished episodes in all — a stored chunk
        spanning units, so a resumed run loses no more than before."""
        spec = self.config.proxies[unit.proxy]

        def alike(other: Unit) -> bool:
            theirs = self.config.proxies[other.proxy]
            return (other.kind == "rollout" and theirs.model.key() == spec.model.key()
                    and theirs.temperature == spec.temperature and (spec.temperature == 0 or other.seed == unit.seed))

        group, size = [], 0
        for other in [unit, *(u for u in later if u.unit_id != unit.unit_id)]:
            if not alike(other) or self.store.status(other) == "done":
                continue
            pending = len(self._unfinished(other))
            if not pending or (group and size + pending > self.config.chunk):
                continue
            group.append(other)
            size += pending
        return group

    def roll_out_together(self, group: Sequence[Unit]) -> None:
        """The unfinished episodes of ``group`` (see :meth:`companions`) in one lockstep: each step is one batched
        call per model for every unit's episodes instead of one per unit (a unit of three episodes alone
        decodes three rows at a time). Each unit's episodes, its model calls (charged to the episodes that
        caused them) and its share of the seconds are stored under it; the units are then finished in plan
        order as usual."""
        config, spec = self.config, self.config.proxies[group[0].proxy]
        started = time.perf_counter()
        owners, positions, turns, goals, levels = [], [], [], [], []
        for unit in group:
            sample, level = self.sample(unit.dataset, unit.seed), config.proxies[unit.proxy].goal_level
            for position in self._unfinished(unit):
                owners.append(unit)
                positions.append(position)
                turns.append(sample.at[position, "turns"])
                levels.append(level)
                goals.append(sample.at[position, "goal"] if level == "full" else "")
        writer = self.roles.door("goal_writer", config.goal_writer)
        written_for: list[int] = []
        for level in sorted(set(levels) - {"full", "none"}):
            chosen = [i for i, own in enumerate(levels) if own == level]
            for i, goal in zip(chosen, synthesize_goals([turns[i] for i in chosen], level, writer)):
                goals[i] = goal
            written_for += chosen
        proxy, assistant = self.roles.door("proxy", spec.model), self.roles.door("assistant", config.assistant)
        empty: list[dict[str, Any]] = []
        repairs: list[dict[str, Any]] = []
        served: list[tuple[str, list[int]]] = []
        rolled = mirror_rollouts(turns, goals, levels, proxy, assistant, mode=config.mode,
                                 user_tokens=config.user_tokens, assistant_tokens=config.assistant_tokens,
                                 guided=config.guided, temperature=spec.temperature, seed=group[0].seed,
                                 empty_turns=empty, served=served, echo_guard=config.echo_guard,
                                 echo_repairs=repairs)
        seconds = (time.perf_counter() - started) / len(turns)
        charged: dict[tuple[str, str], list[Any]] = {}
        for role, door, episodes in (
                ("goal_writer", writer, written_for),
                ("proxy", proxy, [i for who, ix in served if who == "proxy" for i in ix]),
                ("assistant", assistant, [i for who, ix in served if who == "assistant" for i in ix])):
            records = door.telemetry.drain()
            if len(records) != len(episodes):  # not one record per prompt: charge the first unit, lose nothing
                episodes = [0] * len(records)
            for i, record in zip(episodes, records):
                charged.setdefault((owners[i].unit_id, role), []).append(record)
        for unit in group:
            mine = [i for i, owner in enumerate(owners) if owner is unit]
            sample = self.sample(unit.dataset, unit.seed)
            self.store.put_episodes(unit, [
                (positions[i], sample.at[positions[i], "conversation_id"], None,
                 {"goal": goals[i], "turns": rolled[i],
                  "empty_turns": [{**e, "episode": positions[i]} for e in empty if e["episode"] == i],
                  "echo_repairs": [{**e, "episode": positions[i]} for e in repairs if e["episode"] == i]}, seconds)
                for i in mine])
            for role in ("goal_writer", "proxy", "assistant"):
                if charged.get((unit.unit_id, role)):
                    self.store.add_calls(unit, role, charged[(unit.unit_id, role)])
            self.prepaid[unit.unit_id] = self.prepaid.get(unit.unit_id, 0.0) + seconds * len(mine)

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
            empty: list[dict[str, Any]] = []
            repairs: list[dict[str, Any]] = []
            rolled = mirror_rollouts(turns, goals, spec.goal_level, proxy, assistant, mode=config.mode,
                                     user_tokens=config.user_tokens, assistant_tokens=config.assistant_tokens,
                                     guided=config.guided, temperature=spec.temperature, seed=unit.seed,
                                     empty_turns=empty, echo_guard=config.echo_guard, echo_repairs=repairs)
            seconds = (time.perf_counter() - started) / len(positions)
            self.store.put_episodes(unit, [
                (p, sample.at[p, "conversation_id"], None,
                 {"goal": g, "turns": r, "empty_turns": [e for e in empty if e["episode"] == k],
                  "echo_repairs": [e for e in repairs if e["episode"] == k]}, seconds)
                for k, (p, g, r) in enumerate(zip(positions, goals, rolled))])
            self.roles.drain(self.store, unit)
        episodes = self.store.episodes(unit.unit_id)
        words = [sum(len(t["content"].split()) for t in e["payload"]["turns"] if t["role"] == "user")
                 for e in episodes.values()]
        empty_turns = [e for episode in episodes.values() for e in episode["payload"].get("empty_turns", [])]
        repairs = [e["how"] for episode in episodes.values() for e in episode["payload"].get("echo_repairs", [])]
        return {"episodes": len(episodes), "proxy_user_words": float(np.mean(words)),
                "real_user_words": float(sample["user_tokens"].mean()),
                "empty_user_turns": sum(e["role"] == "user" for e in empty_turns),
                "empty_assistant_turns": sum(e["role"] == "assistant" for e in empty_turns),
                "echoes_asked_again": repairs.count("asked again"),
                "echoes_given_the_real_reply": repairs.count("real reply"),
                "echoes_kept": repairs.count("still an echo")}

    def metric(self, unit: Unit) -> dict[str, Any]:
        """Score a finished rollout with the unit's metric (a lexical z-score, or a judge's verdicts stored
        chunk by chunk) and return the metric's summary."""
        sample = self.sample(unit.dataset, unit.seed)
        rolled = self.store.episodes(unit.rollout_id)
        if len(rolled) != len(sample):
            raise RuntimeError(f"{unit.rollout_id} is not finished ({len(rolled)} of {len(sample)} episodes)")
        human = list(sample["turns"])
        proxy = [rolled[p]["payload"]["turns"] for p in range(len(sample))]
        if unit.metric in LEXICAL_METRICS:
            return self._lexical_metric(unit, sample, proxy)
        return self._judged_metric(unit, sample, human, proxy)

    def _lexical_metric(self, unit: Unit, sample: pd.DataFrame, proxy: list[Any]) -> dict[str, Any]:
        """The proxy episodes' z-scores against the dataset's real users (no model call), stored per episode."""
        config = self.config
        ids = list(sample["conversation_id"])
        started = time.perf_counter()
        # The human side of a z-score costs no model call, so it is anchored on a larger stratified sample
        # of the dataset's real users (as the paper's 200 per dataset) than the proxy episodes.
        anchor_frame = self.sample(unit.dataset, unit.seed, config.human_anchor)
        anchor = list(anchor_frame["turns"])
        z = lexical_z_scores(anchor, proxy, self.tokenizer(), min_tokens=config.min_tokens,
                             mode=LEXICAL_MODES[config.lexical_mode],
                             topic_restored=list(anchor_frame["topic_restored"]),
                             proxy_topic_restored=list(sample["topic_restored"]))
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

    def _judged_metric(self, unit: Unit, sample: pd.DataFrame, human: list[Any], proxy: list[Any]) -> dict[str, Any]:
        """The judge's verdicts on the episodes (chunks not yet stored only), summarised; with the job's
        controls, the real-vs-real and proxy-vs-proxy scores and the calibrated summary too."""
        config = self.config
        ids = list(sample["conversation_id"])
        judge = self.roles.door("judge", config.judges[unit.judge])
        slots = realism.proxy_slots(len(sample), unit.seed)
        for positions in self.chunks(unit, len(sample)):
            started = time.perf_counter()
            verdicts = self._verdicts(unit, judge, [(human[p], proxy[p]) for p in positions],
                                      [slots[p] for p in positions])
            seconds = (time.perf_counter() - started) / len(positions)
            parsed = verdicts.parsed or [False] * len(positions)
            self.store.put_episodes(unit, [
                (p, ids[p], None if np.isnan(score) else score,
                 {"raw": raw, "parsed": flag, **({"proxy_slot": slots[p]} if unit.metric == "pi" else {})}, seconds)
                for p, score, raw, flag in zip(positions, verdicts.scores, verdicts.raw, parsed)])
            self.roles.drain(self.store, unit)
        stored = self.store.episodes(unit.unit_id)
        values = [np.nan if stored[p]["value"] is None else stored[p]["value"] for p in range(len(sample))]
        summary = summarise(values, bootstrap=config.bootstrap, seed=unit.seed, bounds=JUDGE_SCORE_RANGE)
        # Verdicts parsed from generated text (an endpoint without log-probabilities) are 0/1, not
        # probabilities: counted so a report can say what its means are made of.
        summary["parsed_verdicts"] = sum(bool(stored[p]["payload"].get("parsed")) for p in range(len(sample)))
        if config.controls:
            controls = control_scores(human, proxy, judge, seed=unit.seed, mode=config.judge_mode,
                                      samples=config.judge_samples, metrics=(unit.metric,))[unit.metric]
            self.roles.drain(self.store, unit)
            # The interval the mean's t-interval maps to (the controls' own sampling error is not in it).
            summary.update(HH=controls["HH"], PP=controls["PP"],
                           calibrated=calibrated_summary(unit.metric, summary["mean"], controls["HH"], controls["PP"]),
                           calibrated_low=calibrated_summary(unit.metric, summary["t_low"], controls["HH"],
                                                             controls["PP"]),
                           calibrated_high=calibrated_summary(unit.metric, summary["t_high"], controls["HH"],
                                                              controls["PP"]))
        if unit.metric == "pi":
            summary["delta_w"] = summary["mean"] - 0.5
        return summary

    def _verdicts(self, unit: Unit, judge: CachedBackend, pairs: list[tuple[Any, Any]], slots: list[str]):
        """The judge's verdicts on one chunk of (human, proxy) episode pairs under the unit's realism metric
        (``slots``: where PI shows the proxy's side; the rubric reads the proxy's side alone)."""
        options = {"mode": self.config.judge_mode, "samples": self.config.judge_samples}
        if unit.metric == "gteval":
            return realism.gteval(pairs, judge, **options)
        if unit.metric == "pi":
            return realism.pairwise_indistinguishability(pairs, judge, slots=slots, **options)
        return realism.rubric_and_reason([proxy for _, proxy in pairs], judge, **options)


def lexical_modes(config: JobConfig, store: RunStore, *, modes: tuple[str, ...] = ("kit", "mirrorbench"),
                  proxy: str | None = None, seed: int | None = None) -> pd.DataFrame:
    """The run's finished rollouts scored in each lexical mode side by side (no model call): per dataset,
    metric and mode, the human and proxy means, the mean z with its t-interval and the short texts counted.
    The human anchors are the very samples the run's lexical units used. One proxy and seed (default: the
    job's first of each)."""
    proxy = proxy if proxy is not None else next(iter(config.proxies))
    seed = seed if seed is not None else config.seeds[0]
    executor = _Executor(config, store, _Roles(config, None))  # samples only: no model is opened
    units = store.units(config.run_id())
    rollouts = units[(units["kind"] == "rollout") & (units["status"] == "done") & (units["proxy"] == proxy)
                     & (units["seed"] == seed)]
    anchors, proxies, restored = {}, {}, {}
    for _, row in rollouts.iterrows():
        anchors[row["dataset"]] = executor.sample(row["dataset"], seed, config.human_anchor)
        proxies[row["dataset"]] = [e["payload"]["turns"] for _, e in sorted(store.episodes(row["unit_id"]).items())]
        restored[row["dataset"]] = list(executor.sample(row["dataset"], seed)["topic_restored"])
    return lexical_mode_table(anchors, proxies, kit_tokenizer=config.tokenizer, min_tokens=config.min_tokens,
                              modes=modes, proxy_topic_restored=restored)


def _job_secrets(config: JobConfig) -> list[str]:
    """The credentials the job's HTTP models are configured with (API keys in the environment, URL
    passwords and query values), for :func:`evalkit.models.redact`."""
    specs = [proxy.model for proxy in config.proxies.values()] + [config.assistant, config.goal_writer]
    secrets: list[str] = []
    for spec in specs + list(config.judges.values()):
        if spec.kind == "openai":
            secrets += configured_secrets(spec.base_url, spec.options.get("api_key_env", DEFAULT_API_KEY_ENV))
    return secrets


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
                if unit.kind == "rollout":
                    together = time.perf_counter()
                    try:
                        group = executor.companions(unit, units[index:])
                        if len(group) > 1:
                            executor.roll_out_together(group)
                    except Exception:  # noqa: BLE001 — one unit's error must not fail its companions: the
                        pass           # units run one by one instead, and each records its own error
                    started += time.perf_counter() - together  # charged to the group's units (prepaid)
                    summary = executor.rollout(unit)
                else:
                    summary = executor.metric(unit)
            except Exception as error:  # noqa: BLE001 — recorded with its traceback, the run goes on
                executor.roles.drain(store, unit)
                # Stored, reported and printed: redacted with the credentials the job's models are given.
                secrets = _job_secrets(config)
                message = redact(f"{type(error).__name__}: {error}", secrets)
                store.fail_unit(unit, f"{message}\n{traceback.format_exc(limit=4)}", time.perf_counter() - started,
                                secrets=secrets)
                outcome.failed[unit.unit_id] = message
                if stop_on_error:
                    raise
                continue
            store.finish_unit(unit, json_ready(summary),
                              time.perf_counter() - started + executor.prepaid.pop(unit.unit_id, 0.0))
            outcome.ran.append(unit.unit_id)
    finally:
        store.close_run(config.run_id())
        store.close()
    return outcome
