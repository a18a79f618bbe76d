"""Odd input through the real command line: ids that are not UTF-8, a data folder that cannot
be made, a database from a newer Timothy, a moment outside the years Timothy can store. Each
gets one plain line, never "unexpected error"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from tests.conftest import REPO, run_timothy
from timothy.cli import main
from timothy.store import Store
from timothy.store.migrations import SCHEMA_VERSION

# Bytes that are not UTF-8, as a shell would pass them; Python hands them to `timothy` as
# lone surrogates (surrogateescape), and they reach the child process as the raw bytes.
NOT_UTF8 = [os.fsdecode(b"\xff\xfe"), os.fsdecode(b"01M8\xc3("), os.fsdecode(b"caf\xe9")]


@pytest.mark.parametrize("raw", NOT_UTF8)
def test_ids_that_are_not_utf8_are_not_found(data_dir: Path, raw: str) -> None:
    assert run_timothy("memories", "add", "a fact").returncode == 0
    for args in (
        ("memories", "show", raw),
        ("memories", "chain", raw),
        ("memories", "archive", raw),
        ("sessions", "show", raw),
    ):
        result = run_timothy(*args)
        assert result.returncode == 1, (args, result.stderr)
        assert "unexpected error" not in result.stderr
        assert result.stderr.startswith("timothy: No ") and " has the id " in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_a_data_folder_under_a_file_is_named_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    folder = blocker / "data"
    for args in (("memories", "list"), ("memories", "add", "x"), ("backup",)):
        result = run_timothy(*args, "--data-dir", str(folder))
        assert result.returncode == 1
        assert result.stderr == (
            f"timothy: Cannot create the data folder {folder}: {blocker} is a file, not a folder.\n"
        )
    assert blocker.read_text() == "not a folder"


def test_a_data_folder_in_a_folder_that_refuses_it_is_named(tmp_path: Path) -> None:
    """/proc refuses new folders even to root (who ignores permission bits)."""
    folder = Path("/proc/timothy-test/data")
    if not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    result = run_timothy("memories", "list", "--data-dir", str(folder))
    assert result.returncode == 1
    assert result.stderr.startswith(f"timothy: Cannot create the data folder {folder} in /proc: ")
    assert "unexpected error" not in result.stderr


def test_a_newer_database_in_rollback_mode_is_left_byte_for_byte(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        store.memories.add("from a newer Timothy")
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    files = sorted(os.listdir(data_dir))
    for args in (("memories", "list"), ("memories", "add", "x"), ("doctor",), ("backup",)):
        result = run_timothy(*args)
        assert result.returncode == 1
        assert "was written by a newer Timothy" in result.stdout + result.stderr
        assert "the file was left untouched" in result.stdout + result.stderr
        assert path.read_bytes() == before, args
        assert sorted(os.listdir(data_dir)) == files, args


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# Before 1970 an id's milliseconds go negative (two processes made the same id); before year
# 1000 the stored time lost its fourth digit and every later read of the memory failed; past
# year 1 or 9999 a zone offset overflowed.
OUT_OF_RANGE = [
    "0999-01-01T00:00:00Z",
    "0001-01-01T00:00:00+05:00",
    "1969-12-31T23:59:59Z",
    "9999-06-01T00:00:00Z",
    "9999-12-31T23:59:59-05:00",
]


@pytest.mark.parametrize("moment", OUT_OF_RANGE)
def test_a_now_outside_the_years_ids_and_stored_times_hold_is_refused(
    capsys: pytest.CaptureFixture[str], moment: str
) -> None:
    assert cli(capsys, "memories", "add", "My dentist is Dr. Ana Lopes")[0] == 0
    for args in (
        ("memories", "add", "I moved to Porto"),
        ("recall", "dentist"),
        ("memories", "fading"),
        ("consolidate", "--dry-run"),
    ):
        code, _, err = cli(capsys, *args, "--now", moment)
        assert code == 1, (args, err)
        assert err == (
            "timothy: --now needs an ISO 8601 time from 1970 to 9998 such as "
            f"2026-01-31T09:00:00Z, not {moment!r}.\n"
        )
    code, out, err = cli(capsys, "memories", "list")
    assert code == 0, err
    assert [line.split(None, 3)[3] for line in out.splitlines()] == ["My dentist is Dr. Ana Lopes"]
    code, out, err = cli(capsys, "recall", "dentist")
    assert code == 0 and "My dentist is Dr. Ana Lopes" in out, err


@pytest.mark.parametrize("moment", OUT_OF_RANGE)
@pytest.mark.parametrize("field", ["created_at", "last_confirmed_at", "last_retrieved_at"])
def test_an_imported_time_outside_those_years_aborts_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, moment: str
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"content": "I drink green tea"}\n'
        + json.dumps({"content": "My dentist is Dr. Ana Lopes", field: moment})
        + "\n"
    )
    code, _, err = cli(capsys, "memories", "import", str(source))
    assert code == 1
    assert err == (
        f"timothy: line 2: {field!r} is not an ISO 8601 time from 1970 to 9998: {moment!r} "
        "(nothing was imported)\n"
    )
    assert cli(capsys, "memories", "list")[:2] == (0, "")


def test_a_batch_request_with_a_now_outside_those_years_is_refused_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "memories", "add", "My dentist is Dr. Ana Lopes")[0] == 0
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        "".join(json.dumps({"query": "dentist", "now": m}) + "\n" for m in OUT_OF_RANGE)
        + '{"query": "dentist"}\n'
    )
    code, out, _ = cli(capsys, "recall", "--batch", str(requests))
    results = [json.loads(line) for line in out.splitlines()]
    assert results[:-1] == [
        {"error": f"line {n}: 'now' must be an ISO 8601 time from 1970 to 9998"}
        for n in range(1, len(OUT_OF_RANGE) + 1)
    ]
    assert [item["content"] for item in results[-1]["items"]] == ["My dentist is Dr. Ana Lopes"]
    code, out, err = cli(capsys, "memories", "list")
    assert code == 0 and "My dentist is Dr. Ana Lopes" in out, err


@pytest.mark.parametrize(
    ("args", "given", "refused"),
    [
        (
            ("memories", "add", "-"),
            b"caf\xe9 au lait\n",
            "timothy: This text holds broken characters (unpaired UTF-16 surrogates) and cannot "
            "be saved.\n",
        ),
        (
            ("memories", "import", "-"),
            b'{"content": "caf\xe9 au lait"}\n',
            "timothy: line 1: This text holds broken characters (unpaired UTF-16 surrogates) and "
            "cannot be saved (nothing was imported)\n",
        ),
    ],
)
def test_stdin_that_is_not_utf8_is_refused_plainly_in_a_utf8_locale(
    data_dir: Path, args: tuple[str, ...], given: bytes, refused: str
) -> None:
    """A UTF-8 locale's stdin is strict: the read itself raised ("unexpected error")."""
    result = subprocess.run(
        [sys.executable, "-m", "app", *args],
        input=given,
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
        cwd=REPO,
    )
    assert (result.returncode, result.stderr.decode()) == (1, refused)
    with Store.open(data_dir) as store:
        assert store.memories.list() == []
