"""The launcher's start before Qt: PySide's import hook keeps no module's source.

Each case runs in a fresh interpreter, so that PySide's hook is installed there by the code
under test and the two modules below are new to it."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
import zipfile
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
sys.path.insert(0, {folder!r} + "/kinds.zip")
import latin, compiled_only, zipped, package_qt
feature = sys.modules["PySide6.support.feature"]
kinds = ("names_qt", "plain", "latin", "compiled_only", "zipped", "package_qt")
print(json.dumps({{
    "answers": {{name: feature.pyside_feature_dict.get(name) for name in kinds}},
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
    folder.mkdir(exist_ok=True)
    (folder / "names_qt.py").write_text(
        "from PySide6.QtCore import QObject\n\nVALUE = QObject\n", encoding="utf-8"
    )
    (folder / "plain.py").write_text("VALUE = 1\n" * 2000, encoding="utf-8")
    # Other kinds of module: a source in another encoding that names PySide6; one compiled
    # only (no source: PySide's own check answers); one in a zip; a package naming it.
    (folder / "latin.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# \xe9t\xe9 with PySide6\nVALUE = '\xe9'\n"
    )
    compiled = folder / "compiled_only.py"
    compiled.write_text("NAME = 'PySide6'\n", encoding="utf-8")
    py_compile.compile(str(compiled), cfile=str(folder / "compiled_only.pyc"), doraise=True)
    compiled.unlink()
    with zipfile.ZipFile(folder / "kinds.zip", "w") as archive:
        archive.writestr("zipped.py", "import PySide6\n")
    (folder / "package_qt").mkdir()
    (folder / "package_qt" / "__init__.py").write_text(
        "from PySide6 import QtCore\n", encoding="utf-8"
    )
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


def test_the_hook_answers_as_pyside_for_every_kind_of_module(tmp_path: Path) -> None:
    """The answer read from a module's file is PySide's own: for a source in another
    encoding, a package, and (PySide's own check) a module compiled only or zipped."""
    quiet = _start(tmp_path / "quiet", quiet=True)
    plain = _start(tmp_path / "plain", quiet=False)
    assert quiet["answers"] == plain["answers"]
    assert quiet["answers"] == {
        "names_qt": 0,
        "plain": -1,
        "latin": 0,
        "compiled_only": -1,  # no source to read: "not using PySide"
        "zipped": 0,
        "package_qt": 0,
    }
