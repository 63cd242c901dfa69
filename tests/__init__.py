"""The test suite as a package: its helpers are `tests.fakes`, `tests.llama`, `tests.conftest` from any folder."""
