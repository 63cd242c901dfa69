"""Tests of `evalkit.judgecard`."""
