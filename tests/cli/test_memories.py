"""The `timothy memories ...` contract: commands, JSON shape, errors, export and import."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_timothy
from timothy.cli import main
from timothy.store import Store
from timothy.store.transfer import MAX_IMPORT_LINE_CHARS

FIELDS = {
    "id",
    "type",
    "content",
    "status",
    "confidence",
    "source",
    "session_id",
    "supersedes",
    "superseded_by",
    "created_at",
    "last_confirmed_at",
    "last_retrieved_at",
    "entities",
}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_add_show_list_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    [added] = cli_json(
        capsys,
        "memories",
        "add",
        "I prefer aisle seats",
        "--type",
        "preference",
        "--entity",
        "Zoë",
        "--entity",
        "Lufthansa",
        "--confidence",
        "0.9",
        "--now",
        "2026-03-01T10:00:00+01:00",
    )
    assert set(added) == FIELDS
    assert added["content"] == "I prefer aisle seats"
    assert added["type"] == "preference"
    assert added["status"] == "active"
    assert added["source"] == "manual"
    assert added["confidence"] == 0.9
    assert added["entities"] == ["Zoë", "Lufthansa"]
    assert added["created_at"] == "2026-03-01T09:00:00.000000Z"
    assert added["last_confirmed_at"] == added["created_at"]
    assert cli_json(capsys, "memories", "show", str(added["id"])) == [added]
    assert cli_json(capsys, "memories", "list") == [added]
    assert cli_json(capsys, "memories", "list", "--status", "staged") == []
    assert cli_json(capsys, "memories", "list", "--type", "preference") == [added]


def test_words_without_quotes_make_one_fact(capsys: pytest.CaptureFixture[str]) -> None:
    [added] = cli_json(capsys, "memories", "add", "I", "like", "green", "tea")
    assert added["content"] == "I like green tea"


def test_staged_confirm_reject_archive(capsys: pytest.CaptureFixture[str]) -> None:
    [a] = cli_json(capsys, "memories", "add", "fact a", "--staged")
    [b] = cli_json(capsys, "memories", "add", "fact b", "--staged")
    assert a["status"] == "staged" and a["last_confirmed_at"] is None
    code, out, _ = cli(capsys, "memories", "confirm", str(a["id"]))
    assert code == 0 and out.strip() == f"Confirmed {a['id']}"
    [rejected] = cli_json(capsys, "memories", "reject", str(b["id"]))
    assert rejected["status"] == "rejected"
    [archived] = cli_json(capsys, "memories", "archive", str(a["id"]))
    assert archived["status"] == "archived"


def test_confirm_of_several_reports_each_failure(capsys: pytest.CaptureFixture[str]) -> None:
    [a] = cli_json(capsys, "memories", "add", "fact a", "--staged")
    code, out, err = cli(capsys, "memories", "confirm", "MISSING", str(a["id"]))
    assert code == 1
    assert out.strip() == f"Confirmed {a['id']}"
    assert err.strip() == "timothy: No memory has the id 'MISSING'."


def test_edit_and_chain(capsys: pytest.CaptureFixture[str]) -> None:
    [v1] = cli_json(capsys, "memories", "add", "Zoë lives in Paris", "--entity", "Zoë")
    [v2] = cli_json(capsys, "memories", "edit", str(v1["id"]), "Zoë lives in Berlin")
    assert v2["supersedes"] == v1["id"] and v2["entities"] == ["Zoë"]
    chain = cli_json(capsys, "memories", "chain", str(v2["id"]))
    assert [m["id"] for m in chain] == [v1["id"], v2["id"]]
    assert [m["status"] for m in chain] == ["superseded", "active"]
    assert chain[0]["superseded_by"] == v2["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memories", "add", "   "], "empty"),
        (["memories", "add", "x" * 20_001], "20,000"),
        (["memories", "show", "NOPE"], "No memory has the id 'NOPE'"),
        (["memories", "edit", "NOPE", "text"], "No memory has the id 'NOPE'"),
        (["memories", "add", "x", "--confidence", "7"], "from 0 to 1"),
        (["memories", "add", "x", "--now", "yesterday"], "ISO 8601"),
        (["memories", "import", "/no/such/file.jsonl"], "Cannot read"),
    ],
)
def test_errors_are_one_plain_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = cli(capsys, *args)
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("timothy: ")
    assert message in err


def test_errors_from_the_real_executable_have_no_traceback() -> None:
    result = run_timothy("memories", "show", "NOPE")
    assert result.returncode == 1
    assert result.stderr == "timothy: No memory has the id 'NOPE'.\n"


def test_data_dir_option_and_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    cli_json(capsys, "memories", "add", "in the default folder")
    cli_json(capsys, "--data-dir", str(elsewhere), "memories", "add", "elsewhere (before)")
    cli_json(capsys, "memories", "add", "elsewhere (after)", "--data-dir", str(elsewhere))
    assert (elsewhere / "timothy.db").is_file()
    contents = [
        m["content"] for m in cli_json(capsys, "memories", "list", "--data-dir", str(elsewhere))
    ]
    assert contents == ["elsewhere (after)", "elsewhere (before)"]
    assert [m["content"] for m in cli_json(capsys, "memories", "list")] == ["in the default folder"]
    result = run_timothy("memories", "list", "--json", env={"TIMOTHY_DATA_DIR": str(elsewhere)})
    assert len(result.stdout.splitlines()) == 2


def _populate(data_dir: Path) -> None:
    rng = np.random.default_rng(7)
    with Store.open(data_dir) as store:
        model = store.vectors.ensure_model("test/model-8", 8)
        a = store.memories.add("Zoë lives in Paris", entities=["Zoë", "Paris"])
        b = store.memories.supersede(a.id, "Zoë lives in Berlin 🐻", entities=["Zoë", "Berlin"])
        c = store.memories.stage("maybe likes jazz", type="preference", confidence=0.4)
        store.memories.reject(c.id)
        d = store.memories.add("went to Porto", type="episodic", session_id="sess-1")
        store.memories.archive(d.id)
        store.memories.mark_retrieved([b.id])
        for memory in (a, b, d):
            store.vectors.put(memory.id, model, rng.standard_normal(8))
        store.vectors.set_active_model(model.name)


def test_export_import_round_trip_is_identical(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _populate(data_dir)
    code, first, _ = cli(capsys, "memories", "export")
    assert code == 0
    lines = [json.loads(line) for line in first.splitlines()]
    assert len(lines) == 4
    assert all(set(line) - FIELDS <= {"embedding", "embedding_model"} for line in lines)
    assert sum("embedding" in line for line in lines) == 3

    export_file = tmp_path / "backup.jsonl"
    assert cli(capsys, "memories", "export", str(export_file))[0] == 0
    assert export_file.read_text(encoding="utf-8") == first
    fresh = tmp_path / "fresh"
    code, _, err = cli(capsys, "--data-dir", str(fresh), "memories", "import", str(export_file))
    assert code == 0, err
    code, second, _ = cli(capsys, "--data-dir", str(fresh), "memories", "export")
    assert second == first
    with Store.open(fresh) as store:
        [b] = [m for m in store.memories.list(status="active")]
        assert [m.content for m in store.memories.chain(b.id)] == [
            "Zoë lives in Paris",
            "Zoë lives in Berlin 🐻",
        ]
        model = store.vectors.model("test/model-8")
        assert model is not None and model.dimension == 8


def test_an_export_onto_a_folder_is_refused_plainly_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "memories", "add", "I like tea")[0] == 0
    folder = tmp_path / "exports"
    folder.mkdir()
    code, out, err = cli(capsys, "memories", "export", str(folder))
    assert (code, out) == (1, "")
    assert err == f"timothy: Cannot write {folder}: Is a directory; nothing was exported.\n"
    assert list(folder.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".export-")] == []


def test_import_of_content_only_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"content": "I like tea"}\n\n{"content": "Zoë", "id": "KEEP-ME"}\n')
    code, _, err = cli(capsys, "memories", "import", str(source), "--now", "2026-02-02T00:00:00Z")
    assert code == 0, err
    memories = cli_json(capsys, "memories", "list")
    assert {m["id"] for m in memories} >= {"KEEP-ME"}
    for memory in memories:
        assert memory["type"] == "semantic" and memory["status"] == "active"
        assert memory["created_at"] == "2026-02-02T00:00:00.000000Z"
        assert memory["last_confirmed_at"] == "2026-02-02T00:00:00.000000Z"


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "one JSON object"),
        ('{"text": "no content"}', "unknown field 'text'"),
        ('{"content": ""}', "empty"),
        ('{"content": "x", "type": "gossip"}', "Unknown memory type"),
        ('{"content": "x", "embedding": [1, 2]}', "go together"),
        ('{"content": "x", "embedding": [1, 2], "embedding_model": "m"}', "numbers but"),
        ('{"content": "x", "embedding": [1e39, 1, 2], "embedding_model": "m"}', "finite numbers"),
        ('{"content": "x", "supersedes": "GHOST"}', "unknown memory 'GHOST'"),
        ('{"content": "x", "id": "A1"}', "already appears on line 1"),
        ('{"content": "x", "created_at": "last week"}', "ISO 8601"),
    ],
)
def test_a_bad_line_aborts_the_whole_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad_line: str, reason: str
) -> None:
    good = '{"content": "first", "id": "A1", "embedding": [1, 2, 3], "embedding_model": "m"}'
    source = tmp_path / "in.jsonl"
    source.write_text(good + "\n" + '{"content": "second"}\n' + bad_line + "\n")
    code, _, err = cli(capsys, "memories", "import", str(source))
    assert code == 1
    assert err.startswith("timothy: line 3: ") and reason in err
    assert "nothing was imported" in err
    assert cli_json(capsys, "memories", "list") == []
    with Store.open(Path(str(tmp_path / "env" / "data"))) as store:
        assert store.vectors.models() == []


def test_a_line_too_long_to_be_a_memory_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    with source.open("w", encoding="utf-8") as out:
        out.write('{"content": "first"}\n')
        out.write("x" * (MAX_IMPORT_LINE_CHARS + 10))  # no line break: one endless line
    code, _, err = cli(capsys, "memories", "import", str(source))
    assert code == 1
    assert err.startswith("timothy: line 2: longer than 4,000,000 characters")
    assert "nothing was imported" in err
    assert cli_json(capsys, "memories", "list") == []


def test_import_refuses_ids_already_stored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"content": "x", "id": "SAME"}\n')
    assert cli(capsys, "memories", "import", str(source))[0] == 0
    code, _, err = cli(capsys, "memories", "import", str(source))
    assert code == 1 and "already stored" in err
    assert len(cli_json(capsys, "memories", "list")) == 1


def test_a_group_without_action_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "memories")
    assert code == 2 and "needs an action" in err


@pytest.mark.parametrize(
    "lines",
    [
        ['{"id": "S", "content": "I live in Lisbon", "superseded_by": "S"}'],
        [
            '{"id": "A", "content": "I live in Lisbon", "status": "superseded", '
            '"superseded_by": "B"}',
            '{"id": "B", "content": "I live in Porto", "status": "superseded", '
            '"supersedes": "A", "superseded_by": "A"}',
        ],
        [
            '{"id": "A", "content": "I live in Lisbon", "status": "superseded", '
            '"superseded_by": "B"}',
            '{"id": "B", "content": "I live in Porto", "status": "superseded", '
            '"superseded_by": "C"}',
            '{"id": "C", "content": "I live in Faro", "superseded_by": "B"}',
        ],
    ],
)
def test_versions_that_loop_back_abort_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: list[str]
) -> None:
    """Looping versions have no newest one: `chain` showed none of them and `forget --chain`
    said "Forgot 0 memories" and kept them all."""
    source = tmp_path / "in.jsonl"
    source.write_text('{"content": "I drink green tea"}\n' + "\n".join(lines) + "\n")
    code, _, err = cli(capsys, "memories", "import", str(source))
    assert code == 1
    assert err == (
        "timothy: line 2: its 'superseded_by' links come back round: no version would be the "
        "newest (nothing was imported)\n"
    )
    assert cli_json(capsys, "memories", "list") == []


def test_a_chain_that_ends_imports_and_forgets_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"id": "A", "content": "I live in Lisbon", "status": "superseded", "superseded_by": "B"}\n'
        '{"id": "B", "content": "I live in Porto", "status": "superseded", "supersedes": "A", '
        '"superseded_by": "C"}\n'
        '{"id": "C", "content": "I live in Faro", "supersedes": "B"}\n'
    )
    assert cli(capsys, "memories", "import", str(source))[0] == 0
    assert [m["id"] for m in cli_json(capsys, "memories", "chain", "A")] == ["A", "B", "C"]
    code, out, err = cli(capsys, "memories", "forget", "A", "--chain")
    assert code == 0 and out.startswith("Forgot 3 memories for good"), err
