"""sqlglot's compiled build (the ``sqlglotc`` package of ``sqlglot[c]``, which another tool
may pull into the same environment) refuses Python subclasses of its classes, and hivepark's
HiveQL dialect is one: every statement would fail with "interpreted classes cannot inherit
from compiled". ``connect()`` says so, with the fix, before it opens anything, and the
``hivepark`` command in one line. The compiled build is stood in for by a copy of sqlglot whose tokenizer core is a
sourceless module (what sqlglot itself checks to tell that its compiled build is loaded)."""

from __future__ import annotations

import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import sqlglot

from cli_command import hivepark_command

FIX = "pip uninstall sqlglotc"


def _compiled_sqlglot(root: Path) -> dict[str, str]:
    package = root / "sqlglot"
    shutil.copytree(Path(sqlglot.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    core = package / "tokenizer_core.py"
    py_compile.compile(str(core), cfile=str(package / "tokenizer_core.pyc"), doraise=True)
    core.unlink()
    src = Path(__file__).resolve().parent.parent / "src"
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(src)])}


def test_hivepark_names_the_compiled_sqlglot_build_and_the_fix(tmp_path):
    env = _compiled_sqlglot(tmp_path / "site")
    probe = subprocess.run([sys.executable, "-c", "import sqlglot.tokens as t; print(t.SQLGLOTC_INSTALLED)"],
                           env=env, capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "True", probe.stderr  # the stand-in is taken for the compiled build

    warehouse = tmp_path / "wh"
    opened = subprocess.run([sys.executable, "-c", f"import hivepark; hivepark.connect({str(warehouse)!r})"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert opened.returncode != 0
    assert "ImportError: hivepark cannot run with sqlglot's compiled build installed" in opened.stderr
    assert FIX in opened.stderr
    assert not warehouse.exists()  # refused before anything was opened

    # refused before Spark starts: a Java that cannot start would otherwise be the error
    cli = subprocess.run([*hivepark_command(), "-e", "SELECT 1", "--warehouse", str(warehouse)],
                         env={**env, "JAVA_HOME": str(tmp_path / "no-java")}, capture_output=True, text=True,
                         timeout=120)
    assert cli.returncode == 1
    lines = cli.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("FAILED: ImportError: hivepark cannot run"), cli.stderr
    assert FIX in lines[0]
    assert not warehouse.exists()  # nothing was started or written

