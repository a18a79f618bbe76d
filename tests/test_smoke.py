"""The command runs, and the doctor finds every part working."""

from __future__ import annotations

from tests.conftest import run_timothy


def test_doctor_reports_every_check_ok() -> None:
    result = run_timothy("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("sqlite-vec", "FTS5", "token encoding", "data folder", "database", "keyring"):
        assert any(line.startswith("ok") and name in line for line in result.stdout.splitlines())
