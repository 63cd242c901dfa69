"""Chapter 5 — user-proxy evaluation (MirrorBench): how human-like are simulated users?

Modules: :mod:`.data` (mirror sets, normalisation, stratified samples, human labels), :mod:`.lexical` (MATTR,
HD-D, Yule's K, human-anchored z-scores), :mod:`.rollout` (goal synthesis, mirror and single-turn drivers),
:mod:`.realism` (GTEval, pairwise indistinguishability, rubric-and-reason, HH/PP controls, calibration) and
:mod:`.stats` (means with t and bootstrap intervals, judge-human correlation).
"""
