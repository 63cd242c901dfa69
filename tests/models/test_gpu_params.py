"""The accelerator parameter sets (params/gpu.yml, params/gpu-smoke.yml) load, name only real parameters and
name recipes and judge files that exist. Running them is a GPU's job (gpu.yml) or a command of the README
(gpu-smoke.yml); no notebook runs here."""
from __future__ import annotations

import pytest

from evalkit.book import runner
from evalkit.paireval.recipes import RECIPES


@pytest.mark.parametrize("name", ["gpu", "gpu-smoke"])
def test_the_accelerator_sets_load_and_train_on_the_device(name):
    params = runner.load_params(name)  # refuses a parameter no chapter has, or a value of the wrong type
    chapter = params["notebooks"]["04_pairwise_judge"]
    assert chapter["device"] == "auto" and chapter["dtype"] == "auto"
    recipe = RECIPES[chapter["judge_recipe"]]
    assert recipe.lm.epochs == 1 and recipe.lm.accumulation > 1


def test_the_gpu_set_trains_the_paper_recipe_and_its_served_judges_parse(monkeypatch):
    from evalkit.judgecard.spec import parse_spec

    notebooks = runner.load_params("gpu")["notebooks"]
    assert notebooks["04_pairwise_judge"]["judge_recipe"] == "paper"
    assert "model" in notebooks["04_pairwise_judge"]  # the base model is the set's parameter
    monkeypatch.chdir(runner.PROJECT_ROOT / "notebooks")  # chapters run there
    files = [judge for judge in notebooks["06_judge_leaderboard"]["judges"] if judge.endswith(".yml")]
    specs = [parse_spec(path) for path in files]
    assert len(specs) == 2 and {(s.backend, s.model, s.base_url) for s in specs} == {
        ("openai", notebooks["03_metric_correlation"]["model"], notebooks["03_metric_correlation"]["base_url"])}
