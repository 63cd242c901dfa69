"""Tests of `evalkit.grid`."""
