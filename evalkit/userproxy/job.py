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

This module gathers the four parts, each in its own module: :mod:`.config` (the checked configuration),
:mod:`.plan`, :mod:`.execute` and :mod:`.report`.
"""
from __future__ import annotations

from evalkit.userproxy.config import METRICS, JobConfig, JobConfigError, ModelSpec, ProxySpec, dataset_name, load_job
from evalkit.userproxy.execute import OpenModel, RunOutcome, execute, lexical_modes
from evalkit.userproxy.plan import plan
from evalkit.userproxy.report import judge_sensitivity, kendalls_w, rank_stability, report, scores, write_html

__all__ = ["METRICS", "ModelSpec", "ProxySpec", "JobConfig", "JobConfigError", "load_job", "dataset_name", "plan",
           "OpenModel", "execute", "RunOutcome", "scores", "rank_stability", "judge_sensitivity", "kendalls_w",
           "report", "write_html", "lexical_modes"]
