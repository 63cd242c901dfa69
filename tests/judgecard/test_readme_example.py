"""The README's researcher example, run as written: export the test-half items, score them with a judge of
one's own, read the card."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def readme_example() -> list[str]:
    """The commands of the bash block under "Your own judge, step by step"."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Your own judge, step by step", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.splitlines() if line.strip()]


@pytest.mark.skipif(not os.environ.get("EVALKIT_DATA_DIR"), reason="needs the staged data (EVALKIT_DATA_DIR)")
def test_the_readme_researcher_example_runs_as_written(tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    programs = {"evalkit": str(Path(sys.executable).parent / "evalkit"), "python": sys.executable}
    commands = readme_example()
    assert [c.split()[:3] for c in commands] == [["evalkit", "judge", "export"],
                                                 ["python", "examples/score_by_length.py", "to_score.jsonl"],
                                                 ["evalkit", "judge", "card"]]
    for command in commands:
        words = shlex.split(command)
        done = subprocess.run([programs[words[0]], *words[1:]], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    items = [json.loads(line) for line in (tmp_path / "to_score.jsonl").read_text().splitlines()]
    assert items and not any("score" in item for item in items)  # no human scores leave the kit
    assert {item["dataset"] for item in items} == {"fed", "topicalchat-usr"}
    card = json.loads((tmp_path / "my-card" / "card.json").read_text())
    assert {row["set"] for row in card["rows"]} == {"fed", "topicalchat-usr"}
    assert all(row["missing"] == 0 for row in card["rows"])  # every exported item came back scored
    assert (tmp_path / "my-card" / "card.html").is_file()


def test_export_needs_a_jsonl_file(tmp_path, capsys):
    from evalkit.judgecard.cli import main

    assert main(["export", "--set", "fed", "--out", str(tmp_path / "items.csv")]) == 2
    assert "--out FILE.jsonl" in capsys.readouterr().err
