"""Tests of `evalkit.paireval`."""
