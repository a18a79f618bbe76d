"""`timothy doctor` finds every part working; `timothy --self-check` from source: one line per
part, honours the data folder, fails loudly."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import run_timothy

CHECKS = (
    "sqlite-vec",
    "FTS5",
    "token encoding",
    "data folder",
    "database",
    "keyring",
    "OpenAI client",
    "Bedrock client",
    "local embedder",
    *(("Qt libraries",) if sys.platform.startswith("linux") else ()),
    "Qt window",
    "code highlighting",
    "user guide",
)


def lines_by_check(stdout: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        status, _, rest = line.partition("  ")
        name = rest.strip().partition(":")[0]
        if status in ("ok", "FAIL") and name:
            found[name] = status
    return found


def test_doctor_reports_every_check_ok() -> None:
    result = run_timothy("doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("sqlite-vec", "FTS5", "token encoding", "data folder", "database", "keyring"):
        assert any(line.startswith("ok") and name in line for line in result.stdout.splitlines())


def test_self_check_passes_with_one_line_per_part(data_dir: Path) -> None:
    result = run_timothy("--self-check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines_by_check(result.stdout) == dict.fromkeys(CHECKS, "ok")
    assert result.stdout.splitlines()[-1] == f"{len(CHECKS)} of {len(CHECKS)} checks passed"
    # TIMOTHY_DATA_DIR (set by the isolated_env fixture) is where it looked, not the owner's data.
    assert f"data folder: {data_dir} is writable" in result.stdout
    assert (data_dir / "timothy.db").is_file()


def test_self_check_uses_the_data_dir_option(tmp_path: Path, data_dir: Path) -> None:
    chosen = tmp_path / "chosen"
    result = run_timothy("--self-check", "--data-dir", str(chosen))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (chosen / "timothy.db").is_file()
    assert not (data_dir / "timothy.db").exists()


def test_self_check_reports_each_broken_part_and_exits_non_zero(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run_timothy(
        "--self-check",
        "--data-dir",
        str(blocker / "data"),  # a folder inside a file: cannot be created
        env={
            # keyring's own "no backend": what a headless machine without Secret Service gets
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            # a display no X server answers: Qt's xcb plugin fails, which would abort the process
            "QT_QPA_PLATFORM": "",
            "DISPLAY": ":987",
            "WAYLAND_DISPLAY": "",
        },
    )
    assert result.returncode == 1, result.stdout + result.stderr
    failed = {name for name, status in lines_by_check(result.stdout).items() if status == "FAIL"}
    assert failed == {"data folder", "database", "keyring", "Qt window"}
    assert "API keys cannot be stored safely" in result.stdout
    assert "the xcb platform plugin could not be loaded (fell back to offscreen)" in result.stdout
    # the other parts were still checked and reported
    assert result.stdout.splitlines()[-1] == f"{len(CHECKS) - 4} of {len(CHECKS)} checks passed"
