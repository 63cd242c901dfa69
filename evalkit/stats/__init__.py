"""The statistics every chapter shares: a result is a number with its n and an interval.

* :mod:`.estimates` — correlation with human scores (the paper's kinds), proportions, summaries, partial
  correlation, ICC;
* :mod:`.bootstrap` — the bootstrap engine: items or whole context groups, one score or a paired difference;
* :mod:`.halves` — the fixed dev/test split of every human-scored set (dev decides, test reports);
* :mod:`.selection` — the rule that picks a judge on the dev halves.
"""
from evalkit.stats.bootstrap import (CorrelationDifference, correlation_difference, group_resamples,
                                     grouped_correlation_intervals, mean_correlation, mean_correlation_difference,
                                     percentile_interval, resample_items)
from evalkit.stats.estimates import (HumanCorrelation, Kind, Proportion, bootstrap_ci, correlation,
                                     correlation_with_humans, cramers_v, icc_oneway, paper_kind, partial_correlation,
                                     proportion, proportion_difference, summarise)

__all__ = ["Kind", "correlation", "cramers_v", "paper_kind", "bootstrap_ci", "Proportion", "proportion",
           "proportion_difference", "summarise", "HumanCorrelation", "correlation_with_humans",
           "CorrelationDifference", "correlation_difference", "mean_correlation_difference", "mean_correlation",
           "resample_items", "group_resamples", "percentile_interval", "grouped_correlation_intervals",
           "partial_correlation", "icc_oneway"]
