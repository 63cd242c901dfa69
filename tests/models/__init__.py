"""Tests of `evalkit.models`."""
