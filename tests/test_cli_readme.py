"""The README's command-line examples run as written (from a copy of the repository's
``examples/``): its ``-f examples/quickstart.sql`` line failed at the script's LOAD DATA LOCAL
INPATH 'pageviews.csv', a path read from the working directory."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import background
from background import Background
from cli_command import hivepark_command

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    """The lines of the README's first bash block under "The command line"."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The command line", 1)[1]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("   #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def _runs(bg: Background) -> None:
    root = Path(bg.tmp) / "repo"
    shutil.copytree(ROOT / "examples", root / "examples")
    (line,) = [c for c in _readme_commands() if "quickstart.sql" in c]
    hivepark = " ".join(shlex.quote(a) for a in hivepark_command()) + " --master 'local[1]'"
    command = re.sub(r"(\.\./)?\.venv/bin/hivepark", lambda m: hivepark, line)
    bg.put("quickstart", (line, bg.run(["bash", "-c", command], cwd=root)))


BACKGROUND_TESTS = {"test_the_readmes_quickstart_command_runs_as_written": _runs}


def test_the_readmes_quickstart_command_runs_as_written():
    line, run = background.start(_runs).get("quickstart")
    assert isinstance(run, subprocess.CompletedProcess)
    assert run.returncode == 0, (line, run.stderr)
    assert "FAILED" not in run.stderr
    out = run.stdout.splitlines()
    assert "ds=2024-05-04/hr=0" in out  # SHOW PARTITIONS, after the LOAD and the INSERTs
    assert "2024-05-02\t29" in out  # the map-join's sale day
