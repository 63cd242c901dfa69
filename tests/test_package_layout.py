"""The package's shape: its folders are its layers, each package says what it offers, and the tests mirror it."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evalkit"
TESTS = Path(__file__).resolve().parent
#: The layers and chapters a newcomer finds by folder name, and the few modules at the top.
PACKAGES = {"data", "stats", "models", "judges", "upheld", "paireval", "userproxy", "judgecard", "book", "cli",
            "course", "grid"}
TOP_MODULES = {"__init__.py", "encoders.py"}


def test_the_top_level_is_the_layers_and_chapters():
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    modules = {path.name for path in PACKAGE.glob("*.py")}
    assert packages == PACKAGES, f"packages added or gone: {packages ^ PACKAGES}"
    assert modules == TOP_MODULES, f"modules at the top (put them in their layer): {modules - TOP_MODULES}"


def test_every_package_says_what_it_offers():
    """Each ``__init__`` has a docstring (the map) and an explicit ``__all__`` whose names it defines."""
    for name in sorted(PACKAGES):
        tree = ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"evalkit/{name}/__init__.py has no docstring"
        exported = next((node.value for node in tree.body if isinstance(node, ast.Assign)
                         and any(getattr(t, "id", "") == "__all__" for t in node.targets)), None)
        assert isinstance(exported, ast.List) and exported.elts, f"evalkit/{name}/__init__.py has no __all__ list"
        defined = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                   for alias in node.names}
        defined |= {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
        defined |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}
        missing = [e.value for e in exported.elts if e.value not in defined]
        assert not missing, f"evalkit/{name}/__init__.py lists names it does not define: {missing}"


def test_the_tests_mirror_the_package():
    """Every package has a test folder of the same name."""
    missing = sorted(name for name in PACKAGES if not (TESTS / name).is_dir())
    assert not missing, f"packages without a tests/<name>/ folder: {missing}"


#: What each lower layer may import when it is loaded: a layer leans on the ones below it, never on a chapter's
#: package or the book's tooling (which would also load their heavy imports, torch among them, with it).
BELOW = {"data": {"data"}, "stats": {"data", "stats"}, "models": {"data", "models"},
         "judges": {"data", "stats", "models", "judges"}}


def test_the_lower_layers_import_only_what_lies_below_them():
    crossing = []
    for layer, allowed in BELOW.items():
        for path in sorted((PACKAGE / layer).glob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module level: what loading it loads
                names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                         else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
                for name in names:
                    parts = name.split(".")
                    if parts[0] == "evalkit" and len(parts) > 1 and parts[1] not in allowed:
                        crossing.append(f"evalkit/{layer}/{path.name}: {name}")
    assert not crossing, f"a lower layer imports from above it: {crossing}"
