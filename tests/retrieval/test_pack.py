"""Packing: real token counts, never over budget, best first and second last."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from timothy.retrieval.fusion import Candidate, Explanation
from timothy.retrieval.pack import frame_tokens, pack, serial_order, splits_cleanly
from timothy.retrieval.render import BLOCK_CLOSE, BLOCK_OPEN, render_block, render_item
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType
from timothy.tokens import count_tokens

MOMENT = datetime(2025, 1, 1, tzinfo=UTC)


def candidate(index: int, content: str, memory_type: MemoryType = MemoryType.SEMANTIC) -> Candidate:
    memory = Memory(
        id=f"m{index:03d}",
        type=memory_type,
        content=content,
        status=MemoryStatus.ACTIVE,
        confidence=1.0,
        source=MemorySource.MANUAL,
        session_id=None,
        supersedes=None,
        superseded_by=None,
        created_at=MOMENT,
        last_confirmed_at=MOMENT,
        last_retrieved_at=None,
    )
    score = 1.0 / (60 + index)
    return Candidate(memory, Explanation({"text": index}, score, 1.0, 1.0, score, 0.0), index)


def test_serial_order_is_best_third_fourth_then_second() -> None:
    assert serial_order([1, 2, 3, 4, 5]) == [1, 3, 4, 5, 2]
    assert serial_order([1, 2, 3]) == [1, 3, 2]
    assert serial_order([1, 2]) == [1, 2]
    assert serial_order([1]) == [1]
    assert serial_order([]) == []


def test_packed_block_is_reordered_and_rendered_by_render_block() -> None:
    ranked = [candidate(i, f"fact number {i}") for i in range(1, 6)]
    packed = pack(ranked, 1000)
    assert [item.candidate.rank for item in packed.items] == [1, 3, 4, 5, 2]
    assert packed.block == render_block(item.memory for item in packed.items)
    assert packed.block == render_block(packed.items)
    assert packed.block.startswith(BLOCK_OPEN + "- [semantic] fact number 1\n")
    assert packed.block.endswith("- [semantic] fact number 2\n" + BLOCK_CLOSE)
    assert packed.tokens == count_tokens(packed.block)
    assert all(
        item.tokens == count_tokens(render_item(item.memory.type, item.memory.content))
        for item in packed.items
    )


def test_nothing_found_gives_no_block() -> None:
    packed = pack([], 1000)
    assert (packed.block, packed.tokens, packed.items) == ("", 0, ())


def test_nothing_fits_gives_no_block() -> None:
    ranked = [candidate(1, "a fact")]
    for budget in (0, 1, frame_tokens(), frame_tokens() + 2):
        packed = pack(ranked, budget)
        assert (packed.block, packed.tokens, packed.items) == ("", 0, ())


def test_the_budget_is_met_exactly_when_it_can_be() -> None:
    ranked = [candidate(1, "a fact")]
    needed = count_tokens(render_block([ranked[0].memory]))
    assert pack(ranked, needed).tokens == needed
    assert pack(ranked, needed - 1).block == ""


def test_an_item_too_big_is_skipped_and_smaller_ones_still_go_in() -> None:
    big = candidate(2, "word " * 400)
    ranked = [candidate(1, "first fact"), big, candidate(3, "third fact")]
    packed = pack(ranked, 200)
    assert [item.memory.id for item in packed.items] == ["m001", "m003"]
    assert packed.tokens <= 200


def test_greedy_best_first_stops_adding_when_the_room_is_gone() -> None:
    ranked = [candidate(i, f"memory {i} " + "detail " * 20) for i in range(1, 40)]
    packed = pack(ranked, 300)
    ids = sorted(item.candidate.rank for item in packed.items)
    assert ids == list(range(1, len(ids) + 1))  # a best-first prefix
    assert packed.tokens <= 300
    # One more would not have fit.
    nxt = ranked[len(ids)].memory
    assert count_tokens(render_block([*(i.memory for i in packed.items), nxt])) > 300


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120
).filter(lambda s: s.strip() != "")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_TEXT, st.sampled_from(list(MemoryType))), max_size=25),
    st.integers(min_value=0, max_value=1500),
)
def test_the_budget_is_never_exceeded(items: list[tuple[str, MemoryType]], budget: int) -> None:
    ranked = [candidate(i, text, kind) for i, (text, kind) in enumerate(items, start=1)]
    packed = pack(ranked, budget)
    assert count_tokens(packed.block) <= budget
    assert packed.tokens == count_tokens(packed.block)
    if packed.items:
        assert packed.block == render_block(item.memory for item in packed.items)
        ranks = [item.candidate.rank for item in packed.items]
        by_rank = sorted(ranks)
        assert ranks == serial_order(by_rank)
    else:
        assert packed.block == ""


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.sampled_from(list(MemoryType))), min_size=1, max_size=25))
def test_rendered_lines_cost_in_a_block_what_they_cost_alone(
    items: list[tuple[str, MemoryType]],
) -> None:
    """What lets pack add the lines' counts instead of counting the block again."""
    lines = [render_item(kind, text) for text, kind in items]
    assert all(splits_cleanly(line) for line in lines)
    block = BLOCK_OPEN + "".join(lines) + BLOCK_CLOSE
    assert count_tokens(block) == frame_tokens() + sum(count_tokens(line) for line in lines)


def test_hostile_texts_still_cost_what_their_lines_add_up_to() -> None:
    texts = [
        "ends with a slash/",
        "/starts with one",
        "two.  spaces  inside",
        "<|endoftext|> look-alike",
        "line\r\nbreaks\n\ninside",
        "12345678901234567890",
        "東京で寿司を食べた。",
        "emoji 🎉🎉🎉 at the end 🎉",
        "trailing punctuation?!...",
        "'s 'll 've contractions",
        "\t tabbed \t text \t",
        "</memory> tries to close the fence",
    ]
    ranked = [candidate(i, text) for i, text in enumerate(texts, start=1)]
    packed = pack(ranked, 1000)
    assert len(packed.items) == len(texts)
    assert packed.tokens == count_tokens(packed.block)


def test_a_line_the_tokenizer_would_join_to_the_next_is_not_trusted() -> None:
    # ".\n" followed by a bare line break is one piece to the tokenizer: counted apart they
    # cost one token more than together.
    assert count_tokens("a.\n\n") != count_tokens("a.\n") + count_tokens("\n")
    assert not splits_cleanly("\n")
    assert not splits_cleanly(" starts with a space\n")
    assert not splits_cleanly("/starts with a slash\n")
    assert not splits_cleanly("no line break at the end")
    assert splits_cleanly("- [semantic] anything at all.\n")
