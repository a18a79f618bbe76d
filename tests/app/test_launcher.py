"""The launcher's start before Qt: PySide's import hook keeps no module's source.

Each case runs in a fresh interpreter, so that PySide's hook is installed there by the code
under test and the two modules below are new to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CHILD = """
import json, linecache, sys
sys.path.insert(0, {folder!r})
if {quiet}:
    from app.launcher import keep_no_module_sources
    keep_no_module_sources()
    keep_no_module_sources()  # a second call does not wrap the hook twice
import PySide6.QtCore
import names_qt, plain
feature = sys.modules["PySide6.support.feature"]
print(json.dumps({{
    "cached": [name for name in linecache.cache if name.endswith(("names_qt.py", "plain.py"))],
    "all_cached": len(linecache.cache),
    "names_qt": feature.pyside_feature_dict.get("names_qt"),
    "plain": feature.pyside_feature_dict.get("plain"),
    "wrapped": getattr(feature._mod_uses_pyside, "keeps_no_sources", False),
    "wrapped_twice": getattr(
        feature._mod_uses_pyside.__closure__[0].cell_contents, "keeps_no_sources", False
    ) if feature._mod_uses_pyside.__closure__ else False,
}}))
"""


def _start(folder: Path, *, quiet: bool) -> dict[str, object]:
    (folder / "names_qt.py").write_text(
        "from PySide6.QtCore import QObject\n\nVALUE = QObject\n", encoding="utf-8"
    )
    (folder / "plain.py").write_text("VALUE = 1\n" * 2000, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(folder=str(folder), quiet=quiet)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_pyside_keeps_every_imported_module_source_without_it(tmp_path: Path) -> None:
    # What the launcher works around: without it the hook leaves whole files in the cache.
    found = _start(tmp_path, quiet=False)
    assert len(found["cached"]) == 2  # type: ignore[arg-type]


def test_the_hook_answers_the_same_and_keeps_no_source(tmp_path: Path) -> None:
    found = _start(tmp_path, quiet=True)
    assert found["cached"] == []
    assert found["all_cached"] == 0  # PySide's own modules' sources are dropped too
    # PySide's answer is unchanged: a module naming PySide6 takes part in its feature
    # switching (0), another is left alone (-1).
    assert found["names_qt"] == 0
    assert found["plain"] == -1
    assert found["wrapped"] is True
    assert found["wrapped_twice"] is False
