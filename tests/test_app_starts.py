"""`timothy` with no command opens the window; offscreen it starts and exits cleanly on close."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_timothy


def test_app_starts_creates_its_store_and_exits_cleanly(data_dir: Path) -> None:
    result = run_timothy(env={"TIMOTHY_QUIT_AFTER_MS": "300", "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 0, result.stderr
    assert (data_dir / "timothy.db").is_file()
    assert "Traceback" not in result.stderr
