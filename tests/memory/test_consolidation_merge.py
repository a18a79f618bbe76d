"""Merging near-duplicates through a real chat provider talking to the fake OpenAI server:
chains, entity union, max confidence, the numbers guard, malformed answers, failures."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import OpenAIServer
from timothy.memory.consolidation import (
    MERGE_INSTRUCTIONS,
    LeftAlone,
    consolidate,
    last_run,
)
from timothy.memory.settings import ConsolidationSettings
from timothy.providers.base import ChatProvider
from timothy.providers.factory import chat_provider
from timothy.settings import Settings
from timothy.store import Store
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
DIM = 8


def days(n: float) -> datetime:
    return T0 + timedelta(days=n)


def chat(server: OpenAIServer) -> ChatProvider:
    provider = chat_provider(
        Settings(chat_provider="openai", openai=server.settings(chat_model="merge-mini"))
    )
    assert provider is not None
    return provider


def answer(content: str) -> str:
    return json.dumps({"same_fact": True, "content": content})


def direction(seed: int, wobble: float = 0.0) -> list[float]:
    """A fixed direction per seed, nudged by `wobble` (0.02 keeps cosine above 0.99)."""
    base = np.random.default_rng(seed).standard_normal(DIM)
    nudge = np.random.default_rng(seed * 7919 + int(wobble * 1e6)).standard_normal(DIM)
    return list(base / np.linalg.norm(base) + wobble * nudge / np.linalg.norm(nudge))


def embed(store: Store, vectors: dict[str, Sequence[float]]) -> None:
    model = store.vectors.ensure_model("test/embedder", DIM)
    store.vectors.put_many(model, vectors.items())
    store.vectors.set_active_model(model.name)


def group(store: Store, seed: int, texts: Sequence[str], **kwargs: Any) -> list[Memory]:
    """Active memories whose vectors are near-duplicates of each other."""
    made = [store.memories.add(text, now=days(index), **kwargs) for index, text in enumerate(texts)]
    embed(store, {m.id: direction(seed, 0.01 * i) for i, m in enumerate(made)})
    return made


def user_facts(request: dict[str, Any]) -> list[str]:
    """The facts a merge request sent, read back from its user message."""
    messages = request["messages"]
    assert messages[0]["role"] == "system"
    user = messages[-1]["content"]
    assert user.startswith("Facts, oldest first:\n")
    return [item["fact"] for item in json.loads(user.split("\n", 1)[1])]


def test_a_group_is_merged_into_one_canonical_memory(
    store: Store, openai_server: OpenAIServer
) -> None:
    repo = store.memories
    a = repo.add("I like green tea", entities=["Tea"], confidence=0.6, now=days(0))
    b = repo.add("I really like green tea", entities=["tea", "Kyoto"], confidence=0.9, now=days(2))
    c = repo.add("Green tea is my thing", entities=["Matcha"], confidence=0.7, now=days(1))
    repo.reconfirm(c.id, now=days(20))
    embed(store, {a.id: direction(1), b.id: direction(1, 0.01), c.id: direction(1, 0.02)})
    openai_server.reply(answer("I really like green tea"))

    report = consolidate(store, chat(openai_server), now=NOW)

    (request,) = openai_server.chat_requests
    assert request["model"] == "merge-mini"
    assert request["messages"][0]["content"] == MERGE_INSTRUCTIONS
    assert user_facts(request) == [a.content, c.content, b.content]  # oldest first
    assert request["max_tokens"] == ConsolidationSettings().merge_max_tokens

    (merged,) = report.merged
    canonical = repo.get(merged.canonical or "")
    assert merged.members == (a.id, c.id, b.id)
    assert merged.content == canonical.content == "I really like green tea"
    assert canonical.status is MemoryStatus.ACTIVE
    assert canonical.source is MemorySource.CONSOLIDATION
    assert canonical.entities == ("Tea", "Matcha", "Kyoto")
    assert canonical.confidence == 0.9
    assert canonical.last_confirmed_at == days(20)
    assert canonical.created_at == NOW
    assert canonical.supersedes == b.id
    everyone = [a.id, c.id, b.id, canonical.id]
    assert list(merged.chain) == everyone
    for member in (a, b, c):
        stored = repo.get(member.id)
        assert stored.status is MemoryStatus.SUPERSEDED
        assert stored.superseded_by == canonical.id
        assert [m.id for m in repo.chain(member.id)] == everyone
    assert [m.id for m in repo.chain(canonical.id)] == everyone
    assert report.chat_model == "openai/merge-mini"
    assert report.summary() == "Consolidation: merged 3 memories into 1."
    assert last_run(store) == NOW

    # The next run finds nothing left to merge and asks the model nothing.
    again = consolidate(store, chat(openai_server), now=NOW + timedelta(days=1))
    assert again.merged == () and again.left_alone == ()
    assert len(openai_server.chat_requests) == 1


def test_the_numbers_guard_runs_before_the_model_is_asked(
    store: Store, openai_server: OpenAIServer
) -> None:
    budgets = group(store, 1, ["My budget is 500", "My budget is 800"])
    dates = group(store, 2, ["Dentist on March 3", "Dentist on March 5"])
    same = group(store, 3, ["My budget for Rome is $500", "My Rome budget: 500 dollars"])
    openai_server.reply(answer("My budget for Rome is $500"))

    report = consolidate(store, chat(openai_server), now=NOW)

    (request,) = openai_server.chat_requests  # only the group whose figures agree
    assert user_facts(request) == [m.content for m in same]
    guarded = report.left_alone_for(LeftAlone.FIGURES_DIFFER)
    assert [g.members for g in guarded] == [
        tuple(m.id for m in budgets),
        tuple(m.id for m in dates),
    ]
    assert "500 / 800" in guarded[0].detail
    for memory in (*budgets, *dates):
        assert store.memories.get(memory.id).status is MemoryStatus.ACTIVE
    assert len(report.merged) == 1


@pytest.mark.parametrize(
    "written",
    [
        "My budget for Rome is $800",  # changed
        "My budget for Rome is 500",  # dropped the currency
        "My budget for Rome is $500 for 2 weeks",  # added
        "My budget for Rome is healthy",  # dropped the amount
    ],
)
def test_a_merged_text_that_changes_a_figure_is_refused(
    store: Store, openai_server: OpenAIServer, written: str
) -> None:
    members = group(store, 3, ["My budget for Rome is $500", "My Rome budget: 500 dollars"])
    openai_server.reply(answer(written))

    report = consolidate(store, chat(openai_server), now=NOW)

    (left,) = report.left_alone
    assert left.reason is LeftAlone.FIGURES_CHANGED
    assert left.members == tuple(m.id for m in members)
    assert report.merged == ()
    assert store.memories.count() == 2
    assert {m.status for m in store.memories.list()} == {MemoryStatus.ACTIVE}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Sure! They are the same: I like tea.", "not JSON"),
        ('["I like tea"]', "not a JSON object"),
        ('{"content": "I like tea"}', "'same_fact'"),
        ('{"same_fact": "yes", "content": "I like tea"}', "'same_fact'"),
        ('{"same_fact": true}', "'content'"),
        ('{"same_fact": true, "content": "   "}', "'content'"),
        ('{"same_fact": true, "content": 42}', "'content'"),
        ('{"same_fact": true, "content": "I like tea", "entities": ["Tea"]}', "unexpected"),
        ('{"same_fact": false, "content": "I like tea"}', "'content'"),
        ('{"same_fact": true, "content": "I like tea"} and more', "not JSON"),
        (json.dumps({"same_fact": True, "content": "I like tea. " * 20}), "more than its"),
        ("", "not JSON"),
    ],
)
def test_a_malformed_answer_leaves_the_group_untouched(
    store: Store, openai_server: OpenAIServer, reply: str, reason: str
) -> None:
    members = group(store, 1, ["I like tea", "I do like tea"])
    openai_server.reply(reply)

    report = consolidate(store, chat(openai_server), now=NOW)

    (left,) = report.left_alone
    assert left.reason is LeftAlone.MALFORMED_ANSWER
    assert reason in left.detail
    assert left.members == tuple(m.id for m in members)
    assert report.merged == () and report.complete
    assert store.memories.count() == 2
    assert {m.status for m in store.memories.list()} == {MemoryStatus.ACTIVE}


def test_a_fenced_json_answer_is_accepted(store: Store, openai_server: OpenAIServer) -> None:
    group(store, 1, ["I like tea", "I do like tea"])
    openai_server.reply('```json\n{"same_fact": true, "content": "I like tea"}\n```')
    report = consolidate(store, chat(openai_server), now=NOW)
    assert [m.content for m in report.merged] == ["I like tea"]


def test_the_model_can_keep_facts_apart(store: Store, openai_server: OpenAIServer) -> None:
    members = group(store, 1, ["I like tea", "I don't like tea"])
    openai_server.reply(json.dumps({"same_fact": False, "reason": "they contradict"}))
    report = consolidate(store, chat(openai_server), now=NOW)
    (left,) = report.left_alone
    assert left.reason is LeftAlone.NOT_DUPLICATES and left.detail == "they contradict"
    assert all(store.memories.get(m.id).status is MemoryStatus.ACTIVE for m in members)


def test_a_failing_provider_leaves_groups_and_stops_after_three_in_a_row(
    store: Store, openai_server: OpenAIServer
) -> None:
    groups = [
        group(store, seed, [f"I like sport {seed}", f"Sport {seed} is what I like"])
        for seed in range(1, 6)
    ]
    openai_server.fail(400, message="This model does not exist here.", times=3)

    report = consolidate(store, chat(openai_server), now=NOW)

    assert len(openai_server.chat_requests) == 3
    failed = report.left_alone_for(LeftAlone.PROVIDER_FAILED)
    deferred = report.left_alone_for(LeftAlone.DEFERRED)
    assert [g.members for g in failed] == [tuple(m.id for m in g) for g in groups[:3]]
    assert [g.members for g in deferred] == [tuple(m.id for m in g) for g in groups[3:]]
    assert "failed 3 times in a row" in deferred[0].detail
    assert report.merged == ()
    assert store.memories.count(status=MemoryStatus.ACTIVE) == 10
    assert report.complete  # the run ended normally; the groups wait for tomorrow

    for g in groups:
        openai_server.reply(answer(g[0].content))
    retry = consolidate(store, chat(openai_server), now=NOW + timedelta(days=1))
    assert len(retry.merged) == 5


def test_one_failure_does_not_stop_the_others(store: Store, openai_server: OpenAIServer) -> None:
    first = group(store, 1, ["I like tea", "I do like tea"])
    second = group(store, 2, ["I live in Lyon", "I live in Lyon, France"])
    openai_server.fail(400)
    openai_server.reply(answer("I live in Lyon, France"))
    report = consolidate(store, chat(openai_server), now=NOW)
    assert [g.members for g in report.left_alone_for(LeftAlone.PROVIDER_FAILED)] == [
        tuple(m.id for m in first)
    ]
    assert [g.members for g in report.merged] == [tuple(m.id for m in second)]


def test_a_model_that_never_answers_times_out_and_the_group_waits(
    store: Store, openai_server: OpenAIServer
) -> None:
    stuck = group(store, 1, ["I like tea", "I do like tea"])
    second = group(store, 2, ["I live in Lyon", "I live in Lyon, France"])
    openai_server.hang()
    openai_server.reply(answer("I live in Lyon, France"))
    settings = ConsolidationSettings(merge_timeout_seconds=0.5)

    report = consolidate(store, chat(openai_server), settings, now=NOW)

    (failed,) = report.left_alone_for(LeftAlone.PROVIDER_FAILED)
    assert failed.members == tuple(m.id for m in stuck)
    assert "did not answer" in failed.detail
    assert [g.members for g in report.merged] == [tuple(m.id for m in second)]
    assert all(store.memories.get(m.id).status is MemoryStatus.ACTIVE for m in stuck)


def test_a_run_stops_merging_at_its_limit_and_the_next_run_goes_on(
    store: Store, openai_server: OpenAIServer
) -> None:
    first = group(store, 1, ["I like tea", "I do like tea"])
    second = group(store, 2, ["I live in Lyon", "I live in Lyon, France"])
    settings = ConsolidationSettings(max_merges_per_run=1)
    openai_server.reply(answer("I like tea"))
    report = consolidate(store, chat(openai_server), settings, now=NOW)
    assert [g.members for g in report.merged] == [tuple(m.id for m in first)]
    (deferred,) = report.left_alone
    assert deferred.reason is LeftAlone.DEFERRED and "limit of 1" in deferred.detail

    openai_server.reply(answer("I live in Lyon, France"))
    later = consolidate(store, chat(openai_server), settings, now=NOW + timedelta(days=1))
    assert [g.members for g in later.merged] == [tuple(m.id for m in second)]


def test_members_changed_while_merging_are_left_alone(
    store: Store, openai_server: OpenAIServer
) -> None:
    first = group(store, 1, ["I like tea", "I do like tea"])
    second = group(store, 2, ["I live in Lyon", "I live in Lyon, France"])
    repo = store.memories

    def owner_edits(event: str, memory: Memory) -> None:
        # The owner edits a member of the second group while the run is merging the first.
        if event == "superseded" and memory.source is MemorySource.CONSOLIDATION:
            repo.listeners.remove(owner_edits)
            repo.supersede(second[1].id, "I live in Lyon, in France", now=NOW)

    repo.listeners.append(owner_edits)
    openai_server.reply(answer("I like tea"))
    openai_server.reply(answer("I live in Lyon, France"))

    report = consolidate(store, chat(openai_server), now=NOW)

    assert [g.members for g in report.merged] == [tuple(m.id for m in first)]
    (left,) = report.left_alone
    assert left.reason is LeftAlone.MEMBERS_CHANGED and "superseded" in left.detail
    assert repo.get(second[0].id).status is MemoryStatus.ACTIVE


def test_a_crash_between_merges_keeps_the_done_ones_and_the_next_run_finishes(
    store: Store, openai_server: OpenAIServer
) -> None:
    first = group(store, 1, ["I like tea", "I do like tea"])
    second = group(store, 2, ["I live in Lyon", "I live in Lyon, France"])
    repo = store.memories

    def crash(event: str, memory: Memory) -> None:
        if event == "superseded":
            raise KeyboardInterrupt  # the process dies right after the first merge committed

    repo.listeners.append(crash)
    openai_server.reply(answer("I like tea"))
    with pytest.raises(KeyboardInterrupt):
        consolidate(store, chat(openai_server), now=NOW)
    repo.listeners.remove(crash)

    canonical = repo.get(repo.get(first[0].id).superseded_by or "")
    assert [m.id for m in repo.chain(canonical.id)] == [first[0].id, first[1].id, canonical.id]
    assert all(repo.get(m.id).status is MemoryStatus.ACTIVE for m in second)
    assert last_run(store) is None

    openai_server.reply(answer("I live in Lyon, France"))
    report = consolidate(store, chat(openai_server), now=NOW)
    assert [g.members for g in report.merged] == [tuple(m.id for m in second)]
    assert user_facts(openai_server.chat_requests[-1]) == [m.content for m in second]
    assert len(openai_server.chat_requests) == 2
    assert last_run(store) == NOW


def test_groups_of_different_types_are_never_mixed(
    store: Store, openai_server: OpenAIServer
) -> None:
    fact = store.memories.add("I like tea", now=days(0))
    preference = store.memories.add("I like tea", type=MemoryType.PREFERENCE, now=days(1))
    embed(store, {fact.id: direction(1), preference.id: direction(1, 0.01)})
    report = consolidate(store, chat(openai_server), now=NOW)
    assert report.merged == () and report.left_alone == ()
    assert openai_server.chat_requests == []
