"""How the tests run the ``hivepark`` command: the venv's script, else ``python -m``."""

from __future__ import annotations

import sys
from pathlib import Path


def hivepark_command() -> list[str]:
    exe = Path(sys.executable).parent / "hivepark"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "hivepark.cli"]
