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
