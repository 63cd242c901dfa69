"""Tests of `evalkit.course`."""
