"""Batch grids: spec checks, a local process pool, a real local Ray instance, and a notebook grid."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from evalkit import grid
from evalkit.cli import main

# A unit: logs that it ran, fails for x == 3, else prints its result as JSON on the last line.
UNIT = ("import json, sys; x = int(sys.argv[1]); open(sys.argv[2], 'a').write(f'{x}\\n'); "
        "assert x != 3, 'unit three fails on purpose'; "
        "print('working...'); print(json.dumps({'square': x * x, 'nested': {'half': x / 2}}))")


def command_spec(tmp_path: Path, **overrides) -> grid.GridSpec:
    raw = {"name": "t", "kind": "command", "command": [sys.executable, "-c", UNIT, "{x}", str(tmp_path / "ran.log")],
           "grid": {"x": [1, 2, 3, 4]}, "out": str(tmp_path / "out"), "retries": 1, "workers": 2}
    raw.update(overrides)
    return grid.parse_grid(raw)


def executions(tmp_path: Path) -> list[int]:
    return sorted(int(line) for line in (tmp_path / "ran.log").read_text().split())


def test_spec_errors_name_the_field(tmp_path):
    with pytest.raises(grid.GridSpecError, match="unknown field.*gird"):
        grid.parse_grid({"gird": {}})
    with pytest.raises(grid.GridSpecError, match="field 'notebook'.*exactly one notebook"):
        grid.parse_grid({"kind": "notebook", "notebook": "99_missing", "grid": {"seed": [1]}})
    with pytest.raises(grid.GridSpecError, match=r"field 'grid.seed': expected a list"):
        grid.parse_grid({"kind": "command", "command": ["echo"], "grid": {"seed": 3}})
    path = tmp_path / "g.yml"
    path.write_text("kind: command\ncommand: [echo]\ngrid: {a: [1]}\nworkers: 0\n")
    with pytest.raises(grid.GridSpecError, match=rf"{path}, field 'workers'"):
        grid.load_grid(path)


def test_units_are_the_product_of_the_grid_with_stable_ids(tmp_path):
    spec = command_spec(tmp_path, grid={"x": [1, 2], "y": ["a", "b", "c"]}, fixed={"z": 0})
    units = grid.expand(spec)
    assert len(units) == 6 and len({u.unit_id for u in units}) == 6
    assert units[0].params == {"z": 0, "x": 1, "y": "a"}
    assert [u.unit_id for u in units] == [u.unit_id for u in grid.expand(command_spec(tmp_path, grid=spec.grid,
                                                                                       fixed={"z": 0}))]


def _check_first_run(outcome: grid.GridOutcome, tmp_path: Path) -> None:
    assert len(outcome.ran) == 3 and not outcome.skipped
    (error,) = outcome.failed.values()
    assert error.startswith("RuntimeError: exit status 1") and "unit three fails on purpose" in error
    table = outcome.table.set_index("param/x")
    assert table.loc[4, "square"] == 16 and table.loc[2, "nested/half"] == 1.0
    assert table.loc[3, "status"] == "failed" and table.loc[3, "attempts"] == 2  # retried once
    assert executions(tmp_path) == [1, 2, 3, 3, 4]
    assert outcome.csv.is_file()


def test_local_pool_runs_retries_reports_and_skips_finished_units(tmp_path):
    spec = command_spec(tmp_path)
    _check_first_run(grid.run_grid(spec, engine="local"), tmp_path)
    again = grid.run_grid(spec, engine="local")
    assert not again.ran and len(again.skipped) == 3 and len(again.failed) == 1
    assert executions(tmp_path) == [1, 2, 3, 3, 3, 3, 4]  # only the unfinished unit ran again


def test_a_real_local_ray_instance_runs_the_grid(tmp_path):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        spec = command_spec(tmp_path)
        _check_first_run(grid.run_grid(spec, engine="ray"), tmp_path)
        again = grid.run_grid(spec, engine="ray")
        assert not again.ran and len(again.skipped) == 3
        assert executions(tmp_path).count(1) == 1 and executions(tmp_path).count(4) == 1
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_cli_notebook_grid(tmp_path, capsys):
    path = tmp_path / "grid.yml"
    path.write_text(json.dumps({"name": "nb", "kind": "notebook", "notebook": "00_models", "base_params": "smoke",
                                "grid": {"cache_path": [str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")]},
                                "out": "out", "workers": 1}))
    assert main(["grid", "--spec", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "2 units run, 0 skipped" in printed
    records = [json.loads(p.read_text()) for p in (tmp_path / "out" / "units").glob("*/unit.json")]
    assert len(records) == 2 and all(r["status"] == "ok" and r["result"] for r in records)
    assert all((tmp_path / f"{name}.sqlite").is_file() for name in "ab")  # each unit got its own parameter
    assert main(["grid", "--spec", str(path)]) == 0
    assert "0 units run, 2 skipped" in capsys.readouterr().out


# Unit 3 sleeps as long as the file beside the log says (long in the killed run, short in the rerun).
SLOW_UNIT = ("import sys, time, pathlib; x = int(sys.argv[1]); log = pathlib.Path(sys.argv[2]); "
             "open(log, 'a').write(f'{x}\\n'); "
             "time.sleep(float((log.parent / 'sleep').read_text()) if x == 3 else 0); print('{\"x\": %d}' % x)")


def _driver_running_unit_three(tmp_path: Path, values: list[int], workers: int, sleep_s: int):
    """A grid driver started through the CLI in its own session, returned once unit 3 (which sleeps
    ``sleep_s``) has started; and the grid file's path."""
    import subprocess
    import time

    import yaml

    (tmp_path / "sleep").write_text(str(sleep_s))
    spec_path = tmp_path / "grid.yml"
    spec_path.write_text(yaml.safe_dump({
        "name": "driver", "kind": "command", "command": [sys.executable, "-c", SLOW_UNIT, "{x}",
                                                          str(tmp_path / "ran.log")],
        "grid": {"x": values}, "out": "out", "retries": 0, "workers": workers}))
    driver = subprocess.Popen([sys.executable, "-m", "evalkit.cli", "grid", "--spec", str(spec_path)],
                              start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and not ((tmp_path / "ran.log").is_file() and 3 in executions(tmp_path)):
        time.sleep(0.1)
    assert 3 in executions(tmp_path), "the third unit never started"
    return driver, spec_path


def test_a_grid_killed_mid_run_repeats_no_finished_unit(tmp_path):
    """Kill the driver while the third unit runs: the rerun runs only that unit."""
    import os
    import signal
    import time

    driver, spec_path = _driver_running_unit_three(tmp_path, [1, 2, 3], workers=1, sleep_s=60)
    assert executions(tmp_path) == [1, 2, 3]
    os.killpg(driver.pid, signal.SIGKILL)  # the driver and the unit it runs, as a kill -9 of the job would
    driver.wait()
    records = sorted((tmp_path / "out" / "units").glob("*/unit.json"))
    assert len(records) == 2 and all(json.loads(r.read_text())["status"] == "ok" for r in records)

    (tmp_path / "sleep").write_text("4")
    spec = grid.load_grid(spec_path)
    # The rerun runs in the background so that a second run can try the same folder meanwhile.
    outcome_holder = {}

    import threading

    thread = threading.Thread(target=lambda: outcome_holder.update(o=grid.run_grid(spec)), daemon=True)
    thread.start()
    deadline = time.time() + 60
    while time.time() < deadline and executions(tmp_path) != [1, 2, 3, 3]:
        time.sleep(0.2)
    assert executions(tmp_path) == [1, 2, 3, 3]  # units 1 and 2 were not run again
    # A second run on the same folder while this one holds it is refused, naming the folder.
    with pytest.raises(grid.GridLocked, match=rf"{tmp_path / 'out'} is in use by another grid run"):
        grid.run_grid(spec)
    thread.join(timeout=120)
    outcome = outcome_holder["o"]
    assert len(outcome.skipped) == 2 and len(outcome.ran) == 1 and not outcome.failed


def test_worker_processes_do_not_keep_a_dead_drivers_lock(tmp_path):
    """SIGTERM to the driver alone leaves its pool workers running; they must not hold the folder's lock."""
    import os
    import signal
    import subprocess
    import time

    driver, spec_path = _driver_running_unit_three(tmp_path, [3, 4], workers=2, sleep_s=3)
    os.kill(driver.pid, signal.SIGTERM)
    driver.wait()
    outcome = grid.run_grid(grid.load_grid(spec_path))  # not refused as "in use"
    assert not outcome.failed and len(outcome.ran) + len(outcome.skipped) == 2
    # The dead driver's pool workers went with it (none is left idle, holding anything).
    time.sleep(1)
    left = subprocess.run(["pgrep", "-f", str(spec_path)], capture_output=True, text=True).stdout.split()
    assert not left, f"workers of the killed driver still alive: {left}"
