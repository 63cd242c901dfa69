"""Tests of `evalkit.userproxy`."""
