"""Chapter 5 — user-proxy evaluation (MirrorBench): how human-like are simulated users?

Modules: :mod:`.data` (mirror sets, normalisation, stratified samples, human labels), :mod:`.lexical` (MATTR,
HD-D, Yule's K, human-anchored z-scores), :mod:`.rollout` (goal synthesis, mirror and single-turn drivers),
:mod:`.realism` (GTEval, pairwise indistinguishability, rubric-and-reason, HH/PP controls, calibration),
:mod:`.realism_encoder` (the realism judge the kit trains), :mod:`.human_labels` (judges against MirrorBench's
human labels, and the choice of the chapter's realism judges on the dev half), :mod:`.evaluate` (the tables and the figure),
:mod:`.runstore` (the SQLite run store) and the job in :mod:`.config`, :mod:`.plan`, :mod:`.execute` and
:mod:`.report` (:mod:`.job` re-exports them). Statistics — means with t and bootstrap intervals, judge-human
correlation — come from the kit's one statistics module, :mod:`evalkit.stats`.
"""
from evalkit.userproxy.data import MIRROR_SETS, load_human_labels, load_mirror_set, stratified_episodes
from evalkit.userproxy.job import JobConfig, execute, load_job, plan, report
from evalkit.userproxy.lexical import LEXICAL_METRICS, human_anchored_z, lexical_features
from evalkit.userproxy.runstore import RunStore

__all__ = ["MIRROR_SETS", "load_mirror_set", "load_human_labels", "stratified_episodes", "LEXICAL_METRICS",
           "lexical_features", "human_anchored_z", "JobConfig", "load_job", "plan", "execute", "report", "RunStore"]
