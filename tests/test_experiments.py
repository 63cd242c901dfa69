"""The lab (``experiments/``): every script runs at smoke size and records what its rule decided; the README's
table lists every script with the result its docstring records; every baseline is pinned in its script."""
from __future__ import annotations

import ast
import doctest
import importlib.util
import inspect
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from evalkit.paireval.recipes import JudgeRecipe

LAB = Path(__file__).resolve().parent.parent / "experiments"
SCRIPTS = sorted(path.stem for path in LAB.glob("*.py") if not path.name.startswith("_"))
DECIMAL = re.compile(r"[+-]?\d+\.\d+")


def _load(name: str):
    """An experiment script as a module, imported by path (the scripts import ``_common`` from their folder)."""
    if str(LAB) not in sys.path:
        sys.path.append(str(LAB))
    spec = importlib.util.spec_from_file_location(f"lab_{name}", LAB / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_rows() -> dict[str, list[str]]:
    """The README table's cells, by script."""
    rows = {}
    for line in (LAB / "README.md").read_text().splitlines():
        found = re.match(r"\| \[`(\w+)\.py`\]", line)
        if found:
            assert found.group(1) not in rows, f"{found.group(1)} has two rows"
            rows[found.group(1)] = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
    return rows


def test_the_readme_table_has_one_row_per_script():
    assert SCRIPTS and set(_readme_rows()) == set(SCRIPTS)


def test_each_readme_result_is_the_one_its_docstring_records():
    for name, cells in _readme_rows().items():
        assert len(cells) == 6, name
        doc = ast.get_docstring(ast.parse((LAB / f"{name}.py").read_text()))
        result = cells[4]
        numbers = DECIMAL.findall(result)
        assert numbers or result == "pending", name
        missing = [number for number in numbers if number not in DECIMAL.findall(doc)]
        assert not missing, f"{name}: README numbers not in the docstring: {missing}"


def _baseline_call(tree: ast.Module) -> ast.expr | None:
    """The value assigned to a module-level ``BASELINE``, if the script has one."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "BASELINE" for t in node.targets):
            return node.value
    return None


@pytest.mark.parametrize("name", SCRIPTS)
def test_each_script_states_its_rule_and_pins_its_baseline(name):
    source = (LAB / f"{name}.py").read_text()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert re.search(r"\brule\b", doc, re.IGNORECASE) and "pinned" in doc
    call = _baseline_call(tree)
    if call is not None:  # a recipe baseline is written out here, not derived from a recipe that may change
        assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "JudgeRecipe"
        assert any(isinstance(arg, ast.Call) and getattr(arg.func, "id", None) == "EncoderRecipe"
                   for arg in call.args)
    else:  # a judge baseline (no training): its settings are named in the docstring
        assert re.search(r"pinned: ``[^`]+``", doc), f"{name}: no pinned baseline"
    # the baseline is never read from the book recipe at run time (a later adoption would compare it with itself)
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Subscript)
                and getattr(node.value, "id", None) == "RECIPES"]
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & (set(SCRIPTS) - {name}), "experiments share code through _common.py only"


@pytest.mark.parametrize("name", SCRIPTS)
def test_no_candidate_is_the_baseline_again_and_the_doctests_pass(name):
    module = _load(name)
    assert callable(module.run)
    if hasattr(module, "candidates"):
        assert isinstance(module.BASELINE, JudgeRecipe)
        recipes = list(module.candidates(module.BASELINE).values())
        assert module.BASELINE in recipes
        encoders = [tuple(sorted(asdict(recipe.encoder).items())) for recipe in recipes]
        assert len(set(encoders)) == len(encoders), f"{name}: two candidates train the same recipe"
    assert doctest.testmod(module).failed == 0


def test_interpolated_mixes_every_encoder_weight_and_keeps_the_fine_tuned_rest(tmp_path):
    import torch

    from evalkit import paireval as pe

    interpolated = _load("weight_interpolation").interpolated
    judge = pe.EncoderJudge()
    tuned = tmp_path / "tuned"
    judge.model.save_pretrained(tuned)
    judge.tokenizer.save_pretrained(tuned)
    fine = pe.EncoderJudge(tuned, scale=7.0)
    with torch.no_grad():
        for tensor in fine.model.state_dict().values():
            if tensor.is_floating_point():
                tensor.add_(0.01)
    fine.model.save_pretrained(tuned)
    fine = pe.EncoderJudge(tuned, scale=7.0)
    base = judge.model.state_dict()
    for weight in (0.0, 0.5, 1.0):
        mixed = interpolated(fine, weight)
        assert mixed.scale == 7.0 and mixed.path == fine.path
        for key, tensor in mixed.model.state_dict().items():
            if tensor.is_floating_point():
                assert torch.allclose(tensor, base[key] + 0.01 * weight, atol=1e-6), key
    contexts, replies = [["Do you like tea?"]], ["Yes, with milk."]
    assert interpolated(fine, 0.0).relevance(contexts, replies) == pytest.approx(
        judge.relevance(contexts, replies), abs=1e-5)
    with pytest.raises(ValueError, match="weight"):
        interpolated(fine, 1.5)


# --------------------------------------------------------------------------- every script at smoke size

@pytest.fixture(scope="module")
def lab_cache(tmp_path_factory):
    """One training cache for the module: a baseline two scripts share is trained once."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("lab-cache")))
        yield


def _check_validation_record(module, record: dict) -> None:
    for key in ("experiment", "question", "baseline", "candidates", "recipes", "accuracy", "paired", "adopted",
                "timing"):
        assert key in record, key
    assert record["smoke"] is True and record["baseline"] in record["candidates"]
    pinned = module.lab.at_size(module.BASELINE, True)
    assert record["recipes"][record["baseline"]]["encoder"] == asdict(pinned.encoder)  # the pinned one ran
    assert all(recipe["encoder"]["pairs"] < module.BASELINE.encoder.pairs for recipe in record["recipes"].values())
    assert set(record["adopted"]) <= set(record["candidates"])
    for judge, checks in record["accuracy"].items():
        for check, share in checks.items():
            assert 0.0 <= share["low"] <= share["value"] <= share["high"] <= 1.0, (judge, check)
            assert share["n"] == module.lab.check_size(True), (judge, check)
    for judge, checks in record["paired"].items():
        assert judge in record["candidates"] and judge != record["baseline"]
        for gap in checks.values():
            assert -1.0 <= gap["low"] <= gap["high"] <= 1.0 and -1.0 <= gap["difference"] <= 1.0
    for name in record["adopted"]:
        assert not record.get("fails", {}).get(name), f"{name} adopted though it failed its rule"


def _check_dev_record(module, record: dict) -> None:
    """A decision on dev halves (``evalkit.stats.selection.choose_on_dev``): its choice is a candidate, on few items."""
    decision = record["decision"]
    assert decision["choice"] in decision["candidates"] and decision["rule"]
    assert all(-1.0 <= row["pearson"] <= 1.0 for row in decision["dev"] if row["pearson"] == row["pearson"])
    assert record["dev_items"] and all(0 < n <= 6 for n in record["dev_items"].values())
    if "direct_decision" in record:  # training_pairs.py: a decision per kind of judge, then its own rule
        choices = {"pairwise": decision["choice"], "direct": record["direct_decision"]["choice"]}
        assert record["direct_decision"]["candidates"] == decision["candidates"]
        assert record["adopted"] == module.adopted_size(choices, record["validation_drop"], *decision["candidates"])
    elif "validation_accuracy" in record:  # domains.py: a constraint on DailyDialog validation pairs
        assert record["adopted"] in decision["candidates"]
        assert record["adopted"] == decision["candidates"][0] or decision["choice"] == record["adopted"]
        for checks in record["validation_accuracy"].values():
            assert all(0.0 <= value <= 1.0 for value in checks.values())


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_each_experiment_runs_at_smoke_size(name, real_data_dir, request):
    module = _load(name)
    if isinstance(getattr(module, "BASELINE", None), JudgeRecipe) or hasattr(module, "PINNED"):  # it trains:
        # into the module's cache, not the user's
        request.getfixturevalue("lab_cache")
    started = time.time()
    if "items" in inspect.signature(module.run).parameters:  # dev-half experiments: six items per set
        record = module.run(smoke=True, data_dir=real_data_dir, items=6)
    else:
        record = module.run(smoke=True, data_dir=real_data_dir)
    print(f"{name}: {time.time() - started:.0f} s at smoke size")
    if "decision" in record:
        _check_dev_record(module, record)
        return
    _check_validation_record(module, record)
    if name == "direct_copies":
        means = {float(share): mean for share, mean in record["ranking_means"].items()}
        assert record["adopted"] == [f"{module.choose(means):g}"]
        assert all(np.isclose(means[float(share)], np.mean([record["accuracy"][share][check]["value"]
                                                            for check in module.RANKING]))
                   for share in record["candidates"])
