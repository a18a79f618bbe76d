"""`timothy sessions show` prints the branch the app shows; `--all-branches` every version."""

from __future__ import annotations

import json

from tests.conftest import run_timothy
from timothy.store import Store


def test_show_prints_the_active_branch_and_all_branches_on_request(store: Store) -> None:
    session = store.sessions.create(title="Trains")
    question = store.sessions.add_message(session.id, "user", "Lisbon to Porto?")
    store.sessions.add_message(session.id, "assistant", "About three hours.")
    store.sessions.add_message(session.id, "user", "Lisbon to Faro?", parent_id=None)
    reply = store.sessions.add_message(session.id, "assistant", "About four hours.")
    store.sessions.update_message(reply.id, input_tokens=812, output_tokens=5)

    shown = run_timothy("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    assert "Lisbon to Faro?" in shown.stdout and "Lisbon to Porto?" not in shown.stdout
    assert "812 tokens in, 5 out" in shown.stdout
    listed = run_timothy("sessions", "show", session.id, "--json", "--all-branches")
    every = json.loads(listed.stdout)
    assert [m["content"] for m in every["messages"]] == [
        "Lisbon to Porto?",
        "About three hours.",
        "Lisbon to Faro?",
        "About four hours.",
    ]
    assert every["messages"][1]["parent_id"] == question.id
    assert every["active_leaf"] == reply.id
