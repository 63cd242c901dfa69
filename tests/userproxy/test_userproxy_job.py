"""User-proxy jobs: configuration, plan, the SQLite run store, kill-and-resume, report and CLI."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
import yaml

from evalkit.models.cache import CallCache
from evalkit.cli.commands import main
from evalkit.models import CachedBackend, GenerationResult, LabelResult
from evalkit.userproxy import job
from evalkit.userproxy.runstore import RunStore

WORDS = "please could you tell me about the weather trains recipe cheap flights today fix my code why".split()


def _conversation(i: int, users: int) -> dict:
    turns = []
    for t in range(users):
        turns.append({"role": "user", "content": " ".join(WORDS[(i * 3 + t + k) % len(WORDS)] for k in range(4 + t))})
        turns.append({"role": "assistant", "content": f"Here is an answer number {i}.{t}."})
    return {"dataset": "tiny", "conversation_id": f"c{i}", "task_description": f"A person who wants thing {i}.",
            "turns": turns, "metadata": {"language": "en"}}


def write_mirror(path: Path, n: int = 6) -> Path:
    path.write_text("".join(json.dumps(_conversation(i, 1 + i % 3)) + "\n" for i in range(n)))
    return path


class Meter:
    """Prompts answered by all the backends of one process; a kill (KeyboardInterrupt) once ``budget`` is spent."""

    def __init__(self, budget: int | None = None):
        self.budget, self.calls = budget, 0

    def spend(self, n: int) -> None:
        if self.budget is not None and self.calls + n > self.budget:
            raise KeyboardInterrupt("simulated kill")
        self.calls += n


class HashBackend:
    """Deterministic answers derived from (name, prompt): varied probabilities and short texts."""

    def __init__(self, name: str, meter: Meter):
        self.name, self.meter = name, meter

    def _spend(self, n: int) -> None:
        self.meter.spend(n)

    def _digest(self, messages) -> bytes:
        return hashlib.sha256((self.name + json.dumps(messages)).encode()).digest()

    def label_probs(self, prompts, labels):
        self._spend(len(prompts))
        out = []
        for messages in prompts:
            weights = np.array([b + 1 for b in self._digest(messages)[:len(labels)]], dtype=float)
            probs = dict(zip(labels, (weights / weights.sum()).tolist()))
            out.append(LabelResult(probs, max(probs, key=probs.get), "logprobs", 1.0, 20, 1))
        return out

    def generate(self, prompts, *, max_tokens=128, temperature=0.0, n=1, seed=0):
        self._spend(len(prompts))
        return [GenerationResult([" ".join(WORDS[b % len(WORDS)] for b in self._digest(m)[:5])] * n, 20, 5)
                for m in prompts]


def opener(tmp: Path, budget: int | None = None):
    """An ``open_model`` for jobs: one HashBackend per model spec behind one call cache in ``tmp``."""
    meter = Meter(budget)
    cache = CallCache(tmp / "calls.sqlite")

    def open_model(spec: job.ModelSpec) -> CachedBackend:
        return CachedBackend(HashBackend(f"hash:{spec.model}", meter), cache)

    open_model.meter = meter  # type: ignore[attr-defined]
    return open_model


def calls(open_model) -> int:
    return open_model.meter.calls


def config(tmp: Path, **overrides) -> job.JobConfig:
    raw = {"name": "t", "datasets": ["tiny_mirror.jsonl", "other_mirror.jsonl"], "episodes": 5, "seeds": [1, 2],
           "proxies": {"p1": {"model": "one"}, "p2": {"model": "two", "goal_level": "topic"}},
           "judges": {"j1": {"model": "judge"}, "j2": "judge-two"},
           "metrics": ["mattr", "yules_k", "gteval", "pi", "rnr"],
           "tokenizer": "words", "chunk": 2, "bootstrap": 200, "store": "runs.sqlite", "min_tokens": 2}
    raw.update(overrides)
    return job.JobConfig.from_dict(raw, base_dir=tmp)


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    write_mirror(tmp_path / "tiny_mirror.jsonl")
    write_mirror(tmp_path / "other_mirror.jsonl", n=7)
    return tmp_path


def test_plan_expands_proxies_datasets_metrics_judges_and_seeds(job_dir):
    units = job.plan(config(job_dir))
    # per (seed, dataset, proxy): 1 rollout + 2 lexical + 3 judge metrics x 2 judges
    assert len(units) == 2 * 2 * 2 * (1 + 2 + 3 * 2)
    assert len({u.unit_id for u in units}) == len(units)
    assert units[0].kind == "rollout" and all(u.rollout_id in {v.unit_id for v in units} for u in units)
    assert {u.dataset for u in units} == {"tiny", "other"}


def test_run_id_follows_what_changes_numbers_only(job_dir):
    base = config(job_dir)
    assert base.run_id() == config(job_dir, chunk=3, store="elsewhere.sqlite").run_id()
    assert base.run_id() != config(job_dir, seeds=[1]).run_id()


def test_config_errors_name_the_file_and_field(job_dir):
    with pytest.raises(job.JobConfigError, match="unknown field.*epsiodes"):
        job.JobConfig.from_dict({"epsiodes": 3})
    with pytest.raises(job.JobConfigError, match=r"proxies\.p\.goal_level"):
        job.JobConfig.from_dict({"proxies": {"p": {"goal_level": "some"}}})
    with pytest.raises(job.JobConfigError, match="field 'judges.j': an openai model needs model and base_url"):
        job.JobConfig.from_dict({"judges": {"j": {"kind": "openai", "model": "m"}}})
    bad = job_dir / "bad.yml"
    bad.write_text("metrics: [mattr, bleu]\n")
    with pytest.raises(job.JobConfigError, match=rf"{bad}, field 'metrics\[1\]': 'bleu' is not one of"):
        job.load_job(bad)


class _BackendWithLanes:
    """A backend whose constructor has an option no job-file table knows of: ``lanes``."""

    option_checks = {"lanes": {"minimum": 1}}

    def __init__(self, model: str | None = None, *, adapter: str | None = None, lanes: int = 2,
                 tag: str | None = None, retry: object = None):
        self.lanes = lanes


def test_backend_options_are_read_from_the_backends_signature(job_dir, monkeypatch):
    from evalkit.models import options as backend_options

    monkeypatch.setitem(backend_options.BACKEND_CLASSES, "transformers", _BackendWithLanes)
    config = job.JobConfig.from_dict({"judges": {"j": {"options": {"lanes": 3, "tag": None}}}})
    assert config.judges["j"].options == {"lanes": 3, "tag": None}
    path = job_dir / "lanes.yml"
    for options, message in [("{lanes: 0}", r"options\.lanes': must be at least 1, got 0"),
                             ("{lanes: many}", r"options\.lanes': expected a whole number, got the text 'many'"),
                             ("{lane: 3}", r"options': unknown field\(s\) lane; known: lanes, tag$"),
                             ("{retry: 1}", r"options': unknown field\(s\) retry; known: lanes, tag$")]:
        path.write_text(f"judges: {{j: {{options: {options}}}}}\n")
        with pytest.raises(job.JobConfigError, match=rf"^{path}, field 'judges\.j\.{message}"):
            job.load_job(path)


def test_the_real_backends_options_and_their_checks():
    from evalkit.models.options import backend_options

    assert list(backend_options("openai")) == ["api_key_env", "max_concurrency", "max_retries", "backoff_s",
                                               "timeout_s", "deadline_s", "top_logprobs"]
    assert set(backend_options("transformers")) == {"batch_size", "dtype", "device", "share_prefixes",
                                                    "min_shared_prefix", "generate_batch_size"}
    assert backend_options("llamacpp")["weights"].checks == {"choices": ("f32", "f16", "q8_0", "shipped")}
    assert backend_options("llamacpp")["share_prefixes"].default is False
    with pytest.raises(job.JobConfigError, match=r"field 'judges\.j\.options\.top_logprobs': must be at most 20"):
        job.JobConfig.from_dict({"judges": {"j": {"kind": "openai", "model": "m", "base_url": "http://h/v1",
                                                  "options": {"top_logprobs": 21}}}})

    class Renamed(_BackendWithLanes):
        option_checks = {"lanez": {"minimum": 1}}

    with pytest.raises(TypeError, match="Renamed.option_checks names lanez, not keyword options"):
        backend_options(Renamed)


def test_a_killed_run_resumes_without_repeating_a_call_and_ends_equal(job_dir):
    whole_dir, cut_dir = job_dir / "whole", job_dir / "cut"
    whole_dir.mkdir(), cut_dir.mkdir()
    whole = opener(whole_dir)
    outcome = job.execute(config(job_dir, store=str(whole_dir / "runs.sqlite")), open_model=whole)
    assert not outcome.failed and len(outcome.ran) == len(job.plan(config(job_dir)))
    total = calls(whole)

    cut_config = config(job_dir, store=str(cut_dir / "runs.sqlite"))
    killed = opener(cut_dir, budget=total // 2)
    with pytest.raises(KeyboardInterrupt):
        job.execute(cut_config, open_model=killed)
    done_before = calls(killed)
    store = RunStore(cut_config.store)
    units = store.units(cut_config.run_id())
    stored_episodes = {u: store.episodes(u) for u in units["unit_id"]}
    store.close()
    assert 0 < done_before <= total // 2 and (units["status"] == "done").sum() > 0
    assert (units["status"] == "running").sum() == 1  # the unit the kill interrupted

    resumed = opener(cut_dir)
    outcome = job.execute(cut_config, open_model=resumed)
    assert not outcome.failed and outcome.skipped
    assert done_before + calls(resumed) == total  # no call made twice, none missing
    store = RunStore(cut_config.store)
    for unit_id, before in stored_episodes.items():  # episodes finished before the kill were not redone
        after = store.episodes(unit_id)
        assert all(after[p]["seconds"] == before[p]["seconds"] for p in before)
    store.close()

    columns = ["proxy", "dataset", "metric", "judge", "seed", "mean", "n", "HH", "PP", "calibrated"]
    first = pd.DataFrame(job.report(whole_dir / "runs.sqlite")["scores"])[columns]
    second = pd.DataFrame(job.report(cut_dir / "runs.sqlite")["scores"])[columns]
    pd.testing.assert_frame_equal(first, second)

    again = opener(cut_dir)
    outcome = job.execute(cut_config, open_model=again)
    assert calls(again) == 0 and not outcome.ran and len(outcome.skipped) == len(job.plan(cut_config))


def test_store_keeps_episodes_telemetry_and_controls(job_dir):
    cfg = config(job_dir, seeds=[1], datasets=["tiny_mirror.jsonl"], proxies={"p1": {"model": "one"}},
                 judges={"j1": "judge"}, metrics=["mattr", "pi"])
    job.execute(cfg, open_model=opener(job_dir))
    store = RunStore(cfg.store)
    units = store.units(cfg.run_id()).set_index("metric")
    rollout = store.episodes(units.at["rollout", "unit_id"])
    assert len(rollout) == 5 and all(e["payload"]["turns"][0]["role"] == "user" for e in rollout.values())
    pi = units.at["pi", "summary"]
    assert {"mean", "t_low", "t_high", "boot_low", "HH", "PP", "calibrated", "delta_w"} <= set(pi)
    slots = [e["payload"]["proxy_slot"] for e in store.episodes(units.at["pi", "unit_id"]).values()]
    assert set(slots) <= {"A", "B"} and len(slots) == 5
    telemetry = store.telemetry(cfg.run_id())
    assert set(telemetry["role"]) == {"proxy", "assistant", "judge"}
    assert (telemetry["prompt_tokens"] > 0).all()
    store.close()


def test_kendalls_w_rank_stability_and_judge_sensitivity():
    rows = []
    for seed, means in ((1, {"a": 0.9, "b": 0.5, "c": 0.1}), (2, {"a": 0.8, "b": 0.6, "c": 0.2}),
                        (3, {"a": 0.7, "b": 0.75, "c": 0.3})):
        for proxy, mean in means.items():
            rows.append({"proxy": proxy, "dataset": "d", "metric": "gteval", "judge": "j", "seed": seed, "mean": mean})
            rows.append({"proxy": proxy, "dataset": "d", "metric": "gteval", "judge": "k", "seed": seed,
                         "mean": mean / 2})
    table = pd.DataFrame(rows)
    stability = job.rank_stability(table).set_index("judge")
    assert not stability.at["j", "same_order_every_seed"]
    ranks = np.array([[1, 2, 3], [1, 2, 3], [2, 1, 3]])
    assert stability.at["j", "kendalls_w"] == pytest.approx(job.kendalls_w(ranks))
    s = ranks.sum(axis=0)
    assert job.kendalls_w(ranks) == pytest.approx(12 * ((s - s.mean()) ** 2).sum() / (9 * 24))
    sensitivity = job.judge_sensitivity(table)
    assert sensitivity.loc[("a", "d", "gteval"), "spread"] == pytest.approx(0.4)
    # the leader (a: mean 0.8) against the runner-up (b: 0.617), per seed: 0.4, 0.2, -0.05
    differences = np.array([0.4, 0.2, -0.05])
    half = stats.t.ppf(0.975, 2) * differences.std(ddof=1) / np.sqrt(3)
    assert (stability.at["j", "leader leader"], stability.at["j", "leader runner_up"]) == ("a", "b")
    assert stability.at["j", "leader difference"] == pytest.approx(differences.mean())
    assert stability.at["j", "leader low"] == pytest.approx(differences.mean() - half)
    # exact permutation p of W: the first seed's order fixed, the other two seeds' 36 order pairs enumerated
    from itertools import permutations
    others = [np.array(p) + 1 for p in permutations(range(3))]
    w = [job.kendalls_w(np.vstack([ranks[0], a, b])) for a in others for b in others]
    assert stability.at["j", "kendalls_w_p"] == pytest.approx(np.mean(np.array(w) >= job.kendalls_w(ranks) - 1e-12))


def test_report_as_json_and_html(job_dir):
    cfg = config(job_dir, seeds=[1], datasets=["tiny_mirror.jsonl"], metrics=["hdd", "gteval"])
    job.execute(cfg, open_model=opener(job_dir))
    data = job.report(cfg.store)
    assert data["run"]["done"] == data["run"]["units"] and json.dumps(data)
    assert len(data["judge_sensitivity"]) == 2  # two proxies x gteval, two judges
    page = job.write_html(data, job_dir / "report.html").read_text()
    assert "Judge sensitivity" in page and "<script" not in page


def test_failed_unit_is_recorded_and_retried(job_dir):
    (job_dir / "broken_mirror.jsonl").write_text("{not a conversation\n")  # fails when read, at run time
    cfg = config(job_dir, seeds=[1], datasets=["tiny_mirror.jsonl", "broken_mirror.jsonl"],
                 proxies={"p1": {"model": "one"}}, judges={"j1": "judge"}, metrics=["mattr"])
    outcome = job.execute(cfg, open_model=opener(job_dir))
    assert set(outcome.failed) == {u.unit_id for u in job.plan(cfg) if u.dataset == "broken"}
    assert "broken_mirror.jsonl" in next(iter(outcome.failed.values()))
    write_mirror(job_dir / "broken_mirror.jsonl")
    outcome = job.execute(cfg, open_model=opener(job_dir))
    assert not outcome.failed and len(outcome.ran) == 2


@pytest.mark.slow
def test_cli_plan_run_kill_resume_report_on_the_default_model(job_dir, tmp_path):
    """A real process on the real default model, killed with SIGKILL mid-run, resumed by running it again."""
    spec = {"name": "cli", "datasets": ["tiny_mirror.jsonl"], "episodes": 4, "seeds": [3], "mode": "single",
            "proxies": {"smol": {}}, "judges": {"smol": {}}, "metrics": ["mattr", "gteval"], "tokenizer": "words",
            "chunk": 1, "user_tokens": 6, "assistant_tokens": 6, "store": "cli.sqlite", "bootstrap": 0}
    (job_dir / "job.yml").write_text(yaml.safe_dump(spec))
    assert main(["userproxy", "plan", "--config", str(job_dir / "job.yml")]) == 0
    env = {**os.environ, "EVALKIT_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "evalkit.cli.commands", "userproxy", "run", "--config", str(job_dir / "job.yml")]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 300
    stored = 0
    while time.time() < deadline and process.poll() is None:
        if (job_dir / "cli.sqlite").exists():
            with sqlite3.connect(job_dir / "cli.sqlite", timeout=30) as db:
                try:
                    stored = db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
                except sqlite3.OperationalError:  # the file exists a moment before the run creates its tables
                    stored = 0
            if stored >= 2:
                process.send_signal(signal.SIGKILL)
                break
        time.sleep(0.2)
    process.wait()
    assert stored >= 2, process.stderr.read().decode()[-2000:]
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "skipped" in finished.stdout
    out_json, out_html = job_dir / "report.json", job_dir / "report.html"
    assert main(["userproxy", "report", "--config", str(job_dir / "job.yml"), "--json", str(out_json),
                 "--html", str(out_html)]) == 0
    data = json.loads(out_json.read_text())
    assert data["run"]["done"] == data["run"]["units"] == 3
    gteval = next(s for s in data["scores"] if s["metric"] == "gteval")
    assert gteval["n"] == 4 and 0 <= gteval["mean"] <= 1
    # the resumed run equals a run from scratch on a fresh store (same cache: every call a hit)
    spec["store"] = "fresh.sqlite"
    (job_dir / "fresh.yml").write_text(yaml.safe_dump(spec))
    fresh = subprocess.run([*command[:-1], str(job_dir / "fresh.yml")], env=env, capture_output=True, text=True,
                           timeout=600)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    again = job.report(job_dir / "fresh.sqlite")
    assert [s["mean"] for s in again["scores"]] == [s["mean"] for s in data["scores"]]
    assert all(row["cache_hits"] == row["calls"] for row in again["telemetry"])


def test_rollouts_of_several_units_run_together_and_equal_one_unit_at_a_time(job_dir):
    """Proxies that differ only in their goal level, over two seeds of a greedy proxy, roll out in one lockstep
    (``chunk`` large enough): the same conversations and goals as unit by unit, each unit charged with the
    calls of its own episodes and a share of the seconds, in fewer batched calls."""
    runs = {}
    for chunk in (1, 32):
        folder = job_dir / f"chunk{chunk}"
        folder.mkdir()
        batches: list[int] = []

        class Counting(HashBackend):
            def generate(self, prompts, **options):
                batches.append(len(prompts))
                return super().generate(prompts, **options)

        meter, cache = Meter(), CallCache(folder / "calls.sqlite")
        cfg = config(job_dir, chunk=chunk, store=str(folder / "runs.sqlite"), seeds=[1, 2], episodes=3,
                     datasets=["tiny_mirror.jsonl"], judges={"j1": "judge"}, metrics=["mattr"],
                     proxies={"full": {"model": "one"}, "topic": {"model": "one", "goal_level": "topic"},
                              "none": {"model": "one", "goal_level": "none"}})
        outcome = job.execute(cfg, open_model=lambda spec: CachedBackend(Counting(f"hash:{spec.model}", meter), cache))
        assert not outcome.failed
        store = RunStore(cfg.store)
        units = store.units(cfg.run_id())
        rollouts = units[units["kind"] == "rollout"]
        episodes = {u: {p: (e["episode_id"], e["payload"]) for p, e in store.episodes(u).items()}
                    for u in rollouts["unit_id"]}
        store.close()
        with sqlite3.connect(folder / "runs.sqlite") as db:
            charged = dict(((u, r), n) for u, r, n in db.execute(
                "SELECT unit_id, role, COUNT(*) FROM calls GROUP BY unit_id, role"))
        runs[chunk] = episodes, charged, batches, meter.calls, rollouts
    (alone, alone_calls, alone_batches, alone_prompts, _), (together, together_calls, batches, prompts, rollouts) = \
        runs[1], runs[32]
    assert together == alone and len(together) == 6 and all(len(e) == 3 for e in together.values())
    assert {goal for e in together.values() for _, payload in e.values() for goal in [payload["goal"]]} > {""}
    assert together_calls == alone_calls  # every unit charged with its own episodes' proxy, assistant, goal calls
    assert {role for _, role in together_calls} == {"proxy", "assistant", "goal_writer"}
    assert prompts == alone_prompts and len(batches) < len(alone_batches) / 3
    assert (rollouts["seconds"] > 0).all()


def test_a_prompt_asked_twice_in_one_call_is_computed_once(tmp_path):
    meter = Meter()
    door = CachedBackend(HashBackend("hash:x", meter), CallCache(tmp_path / "calls.sqlite"))
    one, other = [{"role": "user", "content": "hello"}], [{"role": "user", "content": "bye"}]
    answers = door.generate([one, other, one])
    assert meter.calls == 2 and answers[0].texts == answers[2].texts != answers[1].texts
    assert [r.cache_hit for r in door.telemetry.records] == [False, False, True]
