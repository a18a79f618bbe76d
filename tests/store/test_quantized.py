"""The int8 first pass: its bounds hold for every row, and a search through it answers exactly
what sqlite-vec's exact scan answers, on random and clustered vectors, with archived and
rejected memories, zero vectors, and after incremental updates."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from timothy.store import Store
from timothy.store.quantized import QuantizedRows, _dots, shifted
from timothy.store.vector_index import VectorIndex, best_of_status, unit_rows
from timothy.store.vectors import EmbeddingModel

DIM = 256


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.array(rows, dtype=np.float32)
    unit_rows(rows)
    return rows


def random_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    return unit(rng.standard_normal((n, dim)))


def clustered_rows(rng: np.random.Generator, n: int, centres: int = 12) -> np.ndarray:
    """Tight clusters: many rows within a hair of each other, the hard case for a bound."""
    middle = random_rows(rng, centres)
    picks = rng.integers(0, centres, n)
    return unit(middle[picks] + 0.03 * rng.standard_normal((n, DIM)) / np.sqrt(DIM))


# -- the bound ---------------------------------------------------------------------------------


def assert_bounds_hold(rows: np.ndarray, query: np.ndarray, keep: int = 5) -> np.ndarray:
    """Every row's float32 score, however computed, lies within its bounds; returns widths."""
    codes = QuantizedRows(rows.shape[1])
    codes.put(np.arange(rows.shape[0]), rows)
    zero = np.flatnonzero(~rows.any(axis=1))
    lower, upper = codes.bounds(query, rows.shape[0], keep=keep, excluded=zero)
    live = np.setdiff1d(np.arange(rows.shape[0]), zero)
    assert np.all(lower[zero] == -np.inf) and np.all(upper[zero] == -np.inf)
    whole = (rows @ query)[live]  # as the float32 path computes it
    one_by_one = np.array([np.dot(rows[i], query) for i in live], dtype=np.float32)
    gathered = rows[live] @ query  # as the re-scoring computes it
    for scores in (whole, one_by_one, gathered):
        assert np.all(lower[live] <= scores), (lower[live] - scores).max()
        assert np.all(scores <= upper[live]), (scores - upper[live]).max()
    return np.asarray(upper[live] - lower[live])


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    count=st.integers(1, 40),
    dim=st.integers(1, 96),
)
def test_bounds_hold_for_any_vectors(data: st.DataObject, count: int, dim: int) -> None:
    rows = data.draw(hnp.arrays(np.float32, (count, dim), elements=finite))
    # Some rows that are hard to code: one big number among tiny ones, zeros, constants.
    if data.draw(st.booleans()):
        rows[0] = 1e-6
        rows[0, 0] = 1e6
    if count > 1 and data.draw(st.booleans()):
        rows[1] = 0.0
    query = data.draw(hnp.arrays(np.float32, dim, elements=finite))
    if not np.any(query):
        query[0] = 1.0
    assert_bounds_hold(unit(rows), unit(query[None])[0], keep=data.draw(st.integers(1, 50)))


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_bounds_are_tight_enough_to_leave_most_rows_out(kind: str) -> None:
    rng = np.random.default_rng(11)
    rows = random_rows(rng, 3000) if kind == "random" else clustered_rows(rng, 3000)
    query = rows[17] if kind == "clustered" else random_rows(rng, 1)[0]
    widths = assert_bounds_hold(rows, query, keep=30)
    # Int8 codes lose about 1% of a unit vector's length: the bounds are that narrow.
    assert np.median(widths) < 0.1


# -- the search through the codes equals sqlite-vec's exact scan --------------------------------


def populate(store: Store, rows: np.ndarray) -> tuple[EmbeddingModel, list[str]]:
    model = store.vectors.ensure_model("test/quantized", rows.shape[1])
    store.vectors.set_active_model(model.name)
    with store.db.write():
        ids = [store.memories.add(f"memory {i}").id for i in range(rows.shape[0])]
    store.vectors.put_many(model, zip(ids, rows, strict=True))
    return model, ids


def assert_exact(
    store: Store,
    index: VectorIndex,
    model: EmbeddingModel,
    query: np.ndarray,
    k: int = 30,
    *,
    zeros: int = 0,
) -> list[str]:
    """The index's top k equals sqlite-vec's exact cosine top k (a floating-point tie aside),
    and equals the float32 product's answer. sqlite-vec puts `zeros` zero vectors first
    (their distance is NULL); the index leaves them out."""
    with store.db.read() as conn:
        ours = index.nearest(conn, query, k)
        plain = VectorIndex(model, quantized_from=None).nearest(conn, query, k)
    exact = store.vectors.nearest(model, query, k + zeros)
    assert all(math.isinf(d) for _, d in exact[:zeros])
    exact = exact[zeros:]
    assert len(ours) == len(exact) == len(plain)
    distance = dict(exact)
    for (mine, score), (theirs, d), (other, plain_score) in zip(ours, exact, plain, strict=True):
        assert abs(score - plain_score) < 1e-6
        if mine != theirs:  # only a floating-point tie may swap two places
            mine_d = distance.get(mine)
            assert mine_d is not None and abs(mine_d - d) < 1e-6, (mine, theirs)
        if mine != other:
            assert abs(score - plain_score) < 1e-6
    return [memory_id for memory_id, _ in ours]


def quantized(model: EmbeddingModel) -> VectorIndex:
    index = VectorIndex(model, quantized_from=0)
    assert index.quantized_from == 0  # simsimd is there: the int8 pass is what is tested
    return index


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_top_30_through_codes_equals_sqlite_vec(store: Store, kind: str) -> None:
    rng = np.random.default_rng(21)
    rows = random_rows(rng, 2500) if kind == "random" else clustered_rows(rng, 2500)
    rows[100:110] = rows[99]  # exact duplicates: ties broken by memory order
    model, ids = populate(store, rows)
    index = quantized(model)
    queries = [*random_rows(rng, 8), *rows[[5, 99, 1234]], *clustered_rows(rng, 4)]
    for query in queries:
        assert_exact(store, index, model, query)
    # Duplicates come out in memory order, as sqlite-vec orders them.
    found = assert_exact(store, index, model, rows[99], k=11)
    assert found == ids[99:110]
    assert index.size == 2500


def test_archived_and_rejected_memories_are_skipped(store: Store) -> None:
    rng = np.random.default_rng(22)
    rows = clustered_rows(rng, 2000, centres=4)
    model, ids = populate(store, rows)
    for memory_id in ids[::3]:
        store.memories.archive(memory_id)
    for memory_id in ids[1::6]:
        store.memories.reject(memory_id)
    index = quantized(model)
    for query in [*rows[:6], *random_rows(rng, 4)]:
        found = assert_exact(store, index, model, query)
        assert not set(found) & (set(ids[::3]) | set(ids[1::6]))


def test_a_store_mostly_archived_still_finds_its_best_active(store: Store) -> None:
    rng = np.random.default_rng(23)
    rows = clustered_rows(rng, 1500, centres=3)
    model, ids = populate(store, rows)
    active = set(ids[::40])  # 38 stay active
    with store.db.write():
        for memory_id in ids:
            if memory_id not in active:
                store.memories.archive(memory_id)
    index = quantized(model)
    for query in rows[:5]:
        found = assert_exact(store, index, model, query)
        assert set(found) <= active and len(found) == 30
    # Fewer of a status than asked for: all of them.
    with store.db.read() as conn:
        staged = index.nearest(conn, rows[0], 30, status="staged")
    assert staged == []


def test_zero_vectors_match_nothing(store: Store) -> None:
    rng = np.random.default_rng(24)
    rows = random_rows(rng, 1200)
    rows[[3, 500, 1199]] = 0.0
    model, ids = populate(store, rows)
    index = quantized(model)
    for query in random_rows(rng, 5):
        found = assert_exact(store, index, model, query, k=1197, zeros=3)
        assert not {ids[3], ids[500], ids[1199]} & set(found)
    with store.db.read() as conn:
        assert index.nearest(conn, np.zeros(DIM), 30) == []
        assert len(index.nearest(conn, random_rows(rng, 1)[0], 5000)) == 1197


def test_codes_follow_new_replaced_and_zeroed_vectors(store: Store, data_dir: Path) -> None:
    rng = np.random.default_rng(25)
    rows = clustered_rows(rng, 1500)
    model, ids = populate(store, rows)
    index = quantized(model)
    queries = [*random_rows(rng, 3), *rows[[10, 20]]]
    for query in queries:
        assert_exact(store, index, model, query)
    # New memories (past the copy's spare room), replaced vectors, a zeroed and a revived one.
    new_ids = [store.memories.add(f"new {i}").id for i in range(200)]
    store.vectors.put_many(model, zip(new_ids, clustered_rows(rng, 200), strict=True))
    store.vectors.put(ids[10], model, -rows[10])
    store.vectors.put(ids[11], model, rows[20])
    store.vectors.put(ids[12], model, np.zeros(DIM, dtype=np.float32))
    store.vectors.put(new_ids[0], model, queries[0] * 5.0)
    for query in queries:
        assert_exact(store, index, model, query, zeros=1)
    assert assert_exact(store, index, model, queries[0], k=1, zeros=1) == [new_ids[0]]
    assert ids[10] not in assert_exact(store, index, model, rows[10], k=100, zeros=1)
    assert ids[12] not in assert_exact(store, index, model, rows[12], k=1699, zeros=1)
    store.vectors.put(ids[12], model, rows[12])
    assert assert_exact(store, index, model, rows[12], k=1) == [ids[12]]
    # Written by another process: the copy catches up through vector_changes.
    with Store.open(data_dir) as other:
        added = other.memories.add("written elsewhere")
        other.vectors.put(added.id, model, queries[1])
        other.vectors.put(ids[0], model, -queries[1])
    assert assert_exact(store, index, model, queries[1], k=1) == [added.id]
    assert ids[0] not in assert_exact(store, index, model, queries[1], k=200)
    assert index.size == 1701
    # A backfill (most vectors rewritten) is read again whole; still exact.
    store.vectors.put_many(model, zip(ids, random_rows(rng, 1500), strict=True))
    for query in queries:
        assert_exact(store, index, model, query)


def test_a_lean_copy_holds_the_codes_and_no_float_rows(store: Store) -> None:
    rows = random_rows(np.random.default_rng(26), 1000)
    model, _ = populate(store, rows)
    with_codes = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
    without = VectorIndex(model, quantized_from=None)
    with store.db.read() as conn:
        with_codes.refresh(conn)
        without.refresh(conn)
    # One byte per number, and a few per row (scale, error, length, seq), with spare room;
    # the float32 rows (four bytes per number) stay in the store.
    assert with_codes.coded and with_codes.lean and not without.lean
    assert 1000 * DIM <= with_codes.nbytes <= 1.2 * 1064 * (DIM + 32)
    assert without.nbytes >= 4 * 1000 * DIM
    assert with_codes.nbytes < without.nbytes / 3


def assert_brute_force(
    found: list[tuple[str, float]],
    ids: list[str],
    rows: np.ndarray,
    active: list[int],
    query: np.ndarray,
    k: int = 30,
) -> None:
    """`found` is the k active rows nearest `query` by cosine, as worked out in float64 over
    every row: the same ids in the same order, but for rows whose cosines differ by less
    than float32's rounding (which may swap them), with the same scores."""
    exact = rows.astype(np.float64)
    exact /= np.linalg.norm(exact, axis=1, keepdims=True)
    scores = exact @ (query.astype(np.float64) / np.linalg.norm(query))
    best = sorted(active, key=lambda row: (-scores[row], row))[:k]
    row_of = {memory_id: row for row, memory_id in enumerate(ids)}
    assert len(found) == len(best)
    for (memory_id, score), row in zip(found, best, strict=True):
        assert abs(score - scores[row]) < 1e-5
        if memory_id != ids[row]:
            assert abs(scores[row_of[memory_id]] - scores[row]) < 1e-6, (memory_id, ids[row])


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_a_lean_copy_reads_float_rows_back_and_stays_exact(store: Store, kind: str) -> None:
    rng = np.random.default_rng(29)
    rows = random_rows(rng, 3000) if kind == "random" else clustered_rows(rng, 3000, centres=6)
    model, ids = populate(store, rows)
    for memory_id in ids[5::9]:
        store.memories.archive(memory_id)
    index = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
    active = [row for row in range(3000) if row % 9 != 5]
    queries = [*random_rows(rng, 4), *rows[[0, 7, 2999]], *clustered_rows(rng, 3, centres=6)]
    with store.db.read() as conn:
        for query in queries:
            assert_brute_force(index.nearest(conn, query, 30), ids, rows, active, query)
        assert index.lean and index.nbytes < 3000 * DIM * 1.3  # no float row is held
    # Rows written after the load are coded, not kept; re-scoring reads them back too.
    rows[[1, 2]] = random_rows(rng, 2)
    store.vectors.put_many(model, zip(ids[1:3], rows[1:3], strict=True))
    with store.db.read() as conn:
        for query in [rows[1], rows[2], *queries]:
            assert_brute_force(index.nearest(conn, query, 30), ids, rows, active, query)
        assert index.lean


def test_without_the_fast_reader_a_coded_copy_is_still_lean_and_exact(store: Store) -> None:
    # Loading goes through the vec0 table row by row; re-scoring reads the float rows from
    # their own table either way.
    rng = np.random.default_rng(30)
    rows = random_rows(rng, 1200)
    model, ids = populate(store, rows)
    index = VectorIndex(model, quantized_from=0, read_shadow_tables=False, lean_from_bytes=0)
    query = random_rows(rng, 1)[0]
    with store.db.read() as conn:
        assert_brute_force(index.nearest(conn, query, 30), ids, rows, list(range(1200)), query)
    assert index.coded and index.lean and index.nbytes < 2 * 1200 * DIM


def test_a_copy_that_keeps_its_float_rows_is_exact_too(store: Store) -> None:
    rng = np.random.default_rng(31)
    rows = random_rows(rng, 1200)
    model, ids = populate(store, rows)
    index = VectorIndex(model, quantized_from=0, float_rows_from_store=False)
    query = random_rows(rng, 1)[0]
    with store.db.read() as conn:
        assert_brute_force(index.nearest(conn, query, 30), ids, rows, list(range(1200)), query)
    assert index.coded and not index.lean and index.nbytes >= 4 * 1200 * DIM


def test_the_float_rows_the_copy_reads_are_the_stored_ones(store: Store) -> None:
    """Re-scoring reads only the float rows table: rows changed there (and only there) change
    the exact scores, so a lean copy cannot be answering from anything else."""
    rng = np.random.default_rng(32)
    rows = random_rows(rng, 1000)
    model, ids = populate(store, rows)
    index = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
    query = rows[10]
    with store.db.read() as conn:
        found = index.nearest(conn, query, 5)
    assert found[0][0] == ids[10] and abs(found[0][1] - 1.0) < 1e-5
    with store.db.write() as conn:
        # The same direction, scaled: the codes (of unit rows) stay right, the float row is
        # read back and scaled to length 1 again; a zeroed row matches nothing.
        conn.execute(
            f'UPDATE "{model.rows_table}" SET vector = ? WHERE seq = '
            "(SELECT seq FROM memories WHERE id = ?)",
            ((rows[10] * 3).astype(np.float32).tobytes(), ids[10]),
        )
    with store.db.read() as conn:
        assert index.nearest(conn, query, 1)[0][0] == ids[10]
    with store.db.write() as conn:
        conn.execute(
            f'DELETE FROM "{model.rows_table}" WHERE seq = (SELECT seq FROM memories WHERE id = ?)',
            (ids[10],),
        )
    with store.db.read() as conn:
        assert ids[10] not in [memory_id for memory_id, _ in index.nearest(conn, query, 30)]


def test_codes_are_made_once_the_copy_grows_large(store: Store) -> None:
    rng = np.random.default_rng(27)
    model, _ = populate(store, random_rows(rng, 900))
    index = VectorIndex(model, quantized_from=1000, lean_from_bytes=1000 * DIM * 4)
    plain = VectorIndex(model, quantized_from=None)
    query = random_rows(rng, 1)[0]
    assert_exact(store, index, model, query)
    with store.db.read() as conn:
        plain.refresh(conn)
    assert index.nbytes == plain.nbytes and not index.coded  # small: no codes yet
    new_ids = [store.memories.add(f"new {i}").id for i in range(200)]
    store.vectors.put_many(model, zip(new_ids, random_rows(rng, 200), strict=True))
    store.vectors.put(new_ids[-1], model, query)
    assert assert_exact(store, index, model, query)[0] == new_ids[-1]
    with store.db.read() as conn:
        plain.refresh(conn)
    # Coded, and lean: the float rows it held while smaller are let go.
    assert index.coded and index.lean and index.nbytes < plain.nbytes / 3


def test_a_copy_keeps_its_float_rows_until_they_would_take_much_room(store: Store) -> None:
    rng = np.random.default_rng(33)
    model, _ = populate(store, random_rows(rng, 1100))
    query = random_rows(rng, 1)[0]
    small = VectorIndex(
        model, quantized_from=0, lean_from_bytes=1200 * DIM * 4, short_row_bytes=DIM * 4 - 1
    )
    large = VectorIndex(
        model, quantized_from=0, lean_from_bytes=1100 * DIM * 4, short_row_bytes=DIM * 4 - 1
    )
    short_rows = VectorIndex(
        model, quantized_from=0, lean_from_bytes=1200 * DIM * 4, short_row_bytes=DIM * 4
    )
    for index in (small, large, short_rows):
        assert_exact(store, index, model, query)
    assert small.coded and not small.lean and large.coded and large.lean
    # Rows short enough to read back cheaply: lean however few.
    assert short_rows.coded and short_rows.lean


@pytest.mark.parametrize("kind", ["random", "clustered"])
def test_a_small_lean_copy_gives_the_exact_top_k(store: Store, kind: str) -> None:
    # A small copy made lean: it holds only the codes, and its top k is still the exact one
    # (through its first re-scoring of the likeliest rows), also among archived memories
    # and as new ones come.
    rng = np.random.default_rng(41)
    rows = random_rows(rng, 1500) if kind == "random" else clustered_rows(rng, 1500, centres=4)
    model, ids = populate(store, rows)
    for memory_id in ids[3::7]:
        store.memories.archive(memory_id)
    active = [row for row in range(1500) if row % 7 != 3]
    index = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
    queries = [*random_rows(rng, 3), rows[0], rows[3], *clustered_rows(rng, 2, centres=4)]
    with store.db.read() as conn:
        for query in queries:
            assert_brute_force(index.nearest(conn, query, 30), ids, rows, active, query)
    assert index.coded and index.lean
    assert index.nbytes < 1500 * DIM * 1.6  # codes, no float row (those are 4 bytes a number)
    assert_exact(store, index, model, queries[0])
    # New memories are coded as they come and found exactly.
    added = [store.memories.add(f"new {i}").id for i in range(5)]
    more = random_rows(rng, 5)
    store.vectors.put_many(model, zip(added, more, strict=True))
    ids, rows = [*ids, *added], np.vstack([rows, more])
    active += list(range(1500, 1505))
    with store.db.read() as conn:
        for query in [more[2], *queries]:
            assert_brute_force(index.nearest(conn, query, 30), ids, rows, active, query)
    assert index.lean and index.size == 1505


def test_an_empty_lean_copy_is_lean_from_its_first_vector(store: Store) -> None:
    model = store.vectors.ensure_model("test/quantized", DIM)
    store.vectors.set_active_model(model.name)
    index = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
    query = random_rows(np.random.default_rng(42), 1)[0]
    with store.db.read() as conn:
        assert index.nearest(conn, query, 5) == []
    memory = store.memories.add("the only one")
    store.vectors.put(memory.id, model, query)
    with store.db.read() as conn:
        [(found, score)] = index.nearest(conn, query, 5)
    assert found == memory.id and abs(score - 1.0) < 1e-5
    assert index.lean and index.size == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_probing_the_likeliest_rows_first_re_scores_fewer_and_answers_the_same(
    seed: int,
) -> None:
    # The same bounds and rows, with and without first re-scoring the likeliest rows: the
    # same top k (rows of another status left out), from far fewer rows re-scored.
    rng = np.random.default_rng(seed)
    # Long random rows: their cosines bunch up near 0, so many rows reach the threshold.
    rows = random_rows(rng, 4000, dim=1536)
    query = random_rows(rng, 1, dim=1536)[0]
    codes = QuantizedRows(1536)
    codes.put(np.arange(4000), rows)
    lower, upper = codes.bounds(query, 4000, keep=30, excluded=np.zeros(0, dtype=np.intp))
    seqs = np.arange(1, 4001, dtype=np.int64)
    archived = set(range(1, 4001, 6))  # a sixth of them is of another status

    def ids_of_status(some: list[int]) -> dict[int, str]:
        return {seq: f"m{seq}" for seq in some if seq not in archived}

    answers, counts = [], []
    for probe in (False, True):
        rescored: list[int] = []

        def rescore(places: np.ndarray, rescored: list[int] = rescored) -> np.ndarray:
            rescored.extend(places.tolist())
            return (rows[places] @ query).astype(np.float64)

        answers.append(best_of_status(ids_of_status, seqs, lower, upper, rescore, 30, probe=probe))
        counts.append(len(rescored))
        assert len(set(rescored)) == len(rescored)  # no row is re-scored twice
    scores = rows @ query
    best = sorted(
        (seq for seq in seqs.tolist() if seq not in archived), key=lambda s: -scores[s - 1]
    )
    assert [memory_id for memory_id, _ in answers[1]] == [f"m{seq}" for seq in best[:30]]
    # The same ids; a score may differ in float32's last place (a product over other rows).
    assert [memory_id for memory_id, _ in answers[0]] == [memory_id for memory_id, _ in answers[1]]
    assert np.allclose([s for _, s in answers[0]], [s for _, s in answers[1]], atol=1e-6)
    assert counts[1] < 0.75 * counts[0]


# -- the shifted codes ---------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [1, 7, 384, 1536, 4096])
def test_the_shifted_codes_give_the_signed_codes_exact_integer_dot_products(dim: int) -> None:
    # The codes are kept as unsigned c + 128 for simsimd's quicker unsigned kernel; the dot
    # products recovered from them are the signed codes' own, to the unit, at the extremes
    # too (every code +-127, where an accumulator too narrow would overflow).
    rng = np.random.default_rng(dim)
    codes = rng.integers(-127, 128, (64, dim), dtype=np.int8)
    codes[0], codes[1], codes[2] = 127, -127, 0
    queries = [rng.integers(-127, 128, dim, dtype=np.int8), np.full(dim, 127, np.int8)]
    queries += [np.full(dim, -127, np.int8), np.zeros(dim, np.int8)]
    kept = QuantizedRows(dim, 64)
    kept.codes[:] = shifted(codes)
    kept.shifts[:] = 128 * (codes.sum(axis=1, dtype=np.int64) + 128 * dim)
    for query in queries:
        exact = codes.astype(np.int64) @ query.astype(np.int64)
        found = _dots(query.reshape(1, -1), kept.codes, kept.shifts)
        assert found.dtype == np.float64
        assert np.array_equal(found, exact.astype(np.float64))


def test_rows_put_and_grown_keep_their_shifted_codes_and_shifts() -> None:
    # Rows coded by `put`, then room grown: each row's shift matches its codes, and room not
    # yet written holds code 0 (128 shifted), whose dot product with anything is 0.
    rng = np.random.default_rng(5)
    rows = random_rows(rng, 50, dim=96)
    kept = QuantizedRows(96, 10)
    kept.put(np.arange(50), rows)
    kept.reserve(80)
    codes = kept.codes.astype(np.int64) - 128
    assert np.array_equal(kept.shifts, 128 * (codes.sum(axis=1) + 128 * 96))
    assert np.all(kept.codes[50:] == 128)
    query = rng.integers(-127, 128, 96, dtype=np.int8)
    found = _dots(query.reshape(1, -1), kept.codes, kept.shifts)
    assert np.array_equal(found, (codes @ query.astype(np.int64)).astype(np.float64))
    assert np.all(found[50:] == 0)
