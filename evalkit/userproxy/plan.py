"""A job's plan: the units it expands into, in the order they run."""
from __future__ import annotations

from evalkit.userproxy.config import JobConfig, dataset_name
from evalkit.userproxy.evaluate import JUDGE_METRICS
from evalkit.userproxy.runstore import Unit

__all__ = ["plan"]


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
