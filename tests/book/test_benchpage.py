"""The Performance page: benchmarks run as scripts, their JSON gathered, the page rendered."""
from __future__ import annotations

from pathlib import Path

from evalkit.book import benchpage

GOOD = '''
import argparse
from evalkit.book.benchpage import write_measurement
parser = argparse.ArgumentParser()
parser.add_argument("--json")
args = parser.parse_args()
write_measurement(args.json, title="Toy work", workload="10 toy items",
                  rows=[{"way": "naive", "seconds": 2.0}, {"way": "kit", "seconds": 0.25}],
                  ratios={"kit vs naive": 8.0}, notes=["measured in the same run"])
'''
BROKEN = "raise SystemExit('no data here')\n"
# Standard library only, so it starts well inside a short time limit on a loaded 2-core machine.
QUICK = '''
import json, sys
path = sys.argv[sys.argv.index("--json") + 1]
json.dump({"title": "Quick work", "workload": "1 item", "rows": [{"way": "kit", "seconds": 0.25}],
           "ratios": {}, "notes": []}, open(path, "w"))
'''


def test_benchmarks_are_run_and_rendered_with_the_machine(tmp_path: Path):
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_broken.py").write_text(BROKEN)
    (tmp_path / "_helper.py").write_text("raise RuntimeError('helpers are not benchmarks')\n")
    results = benchpage.run_benchmarks(tmp_path)
    assert [r["script"] for r in results] == ["a_good.py", "b_broken.py"]
    assert results[0]["rows"][1] == {"way": "kit", "seconds": 0.25} and "error" in results[1]
    assert not list(tmp_path.glob(".*.json"))  # the scripts' JSON files are cleaned up
    machine = benchpage.machine_description()
    assert machine["cores"] >= 1 and "torch" in machine["libraries"]
    page = benchpage.render_page(results, machine)
    assert page.startswith("# Performance") and "## Toy work" in page
    assert "| kit | 0.250 |" in page and "| kit vs naive | 8.00x |" in page
    assert "b_broken.py` failed" in page and "no data here" in page
    assert f"{machine['cores']} cores" in page


def test_the_committed_page_lists_every_benchmark():
    page = benchpage.PAGE.read_text()
    for script in sorted(benchpage.BENCHMARK_DIR.glob("*.py")):
        assert f"benchmarks/{script.name}" in page, f"rerun `make bench`: {script.name} is not on the page"
    assert "failed on this run" not in page


def test_a_benchmark_past_its_time_limit_is_reported_and_the_rest_still_run(tmp_path: Path):
    (tmp_path / "a_slow.py").write_text("import time\ntime.sleep(30)\n")
    (tmp_path / "b_quick.py").write_text(QUICK)
    results = benchpage.run_benchmarks(tmp_path, timeout_s=5)
    assert [r["script"] for r in results] == ["a_slow.py", "b_quick.py"]
    assert "stopped after 5 s (the time limit)" in results[0]["error"]
    assert results[1].get("rows") == [{"way": "kit", "seconds": 0.25}], results[1].get("error")
