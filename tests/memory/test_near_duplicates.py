"""Near-duplicate grouping: blocked cosine pairs and the vectorised union-find."""

from __future__ import annotations

from unittest import mock

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from timothy.memory import near_duplicates
from timothy.memory.near_duplicates import (
    UnionFind,
    near_duplicate_groups,
    near_duplicate_pairs,
    true_cells,
)


def _reference_groups(matrix: npt.NDArray[np.float32], threshold: float) -> list[list[int]]:
    """Brute force: every pair compared one by one, components by depth-first search."""
    n = len(matrix)
    norms = [float(np.linalg.norm(row)) for row in matrix]
    edges: dict[int, set[int]] = {i: set() for i in range(n)}
    for i in range(n):
        for j in range(i + 1, n):
            if norms[i] == 0 or norms[j] == 0:
                continue
            cosine = float(np.dot(matrix[i], matrix[j])) / (norms[i] * norms[j])
            if cosine >= threshold:
                edges[i].add(j)
                edges[j].add(i)
    seen: set[int] = set()
    groups = []
    for start in range(n):
        if start in seen or not edges[start]:
            continue
        stack, component = [start], set()
        while stack:
            node = stack.pop()
            if node in component:
                continue
            component.add(node)
            stack.extend(edges[node] - component)
        seen |= component
        groups.append(sorted(component))
    return sorted(groups)


def _clustered(
    seed: int, clusters: int, size: int, dim: int, noise: float, rank: int | None = None
) -> npt.NDArray[np.float32]:
    """Clusters and loners; with `rank`, all in a random subspace of that many dimensions."""
    rng = np.random.default_rng(seed)
    inner = dim if rank is None else rank
    rows = []
    for _ in range(clusters):
        centre = rng.standard_normal(inner)
        rows += [centre + noise * rng.standard_normal(inner) for _ in range(size)]
    rows += list(rng.standard_normal((clusters * 2, inner)))  # loners
    matrix = np.array(rows, dtype=np.float64).reshape(-1, inner)
    if rank is not None:
        matrix = matrix @ np.linalg.qr(rng.standard_normal((dim, rank)))[0].T
    return matrix.astype(np.float32)[rng.permutation(len(matrix))]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    clusters=st.integers(0, 6),
    size=st.integers(1, 5),
    noise=st.sampled_from([0.0, 0.05, 0.2, 0.3, 1.0]),
    threshold=st.sampled_from([0.5, 0.9, 0.95, 0.99]),
    row_block=st.sampled_from([1, 3, 8, 1_024]),
    column_block=st.sampled_from([1, 5, 16, 8_192]),
    projected=st.sampled_from([0, 2, 4, 12]),  # 0: every pair in full; else filter first
    # (24 dimensions: each of 2, 4, 12 is at most half, so the filter runs)
    dense_tile=st.sampled_from([near_duplicates.DENSE_TILE, 1.0]),  # 1.0: always verify one by one
    # In a subspace no wider than the projection, projected distances equal full ones, so a
    # filter a hair too strict drops pairs just above the threshold.
    rank=st.sampled_from([None, 2, 4, 12]),
)
def test_groups_match_brute_force(
    seed: int,
    clusters: int,
    size: int,
    noise: float,
    threshold: float,
    row_block: int,
    column_block: int,
    projected: int,
    dense_tile: float,
    rank: int | None,
) -> None:
    matrix = _clustered(seed, clusters, size, 24, noise, rank)
    with mock.patch.object(near_duplicates, "DENSE_TILE", dense_tile):
        found = near_duplicate_groups(
            matrix, threshold, row_block=row_block, column_block=column_block, projected=projected
        )
    assert sorted(group.tolist() for group in found) == _reference_groups(matrix, threshold)


def test_the_projection_filter_finds_exactly_what_the_full_comparison_finds() -> None:
    # 1,500 rows of 128-d around 300 centres spanning 16 directions (embeddings, too, vary
    # mostly along a few), with noise that puts many pairs just above and just below each
    # threshold. With 256 x 512 tiles some tiles have few candidates (checked one by one)
    # and some many (compared in full).
    rng = np.random.default_rng(11)
    basis = np.linalg.qr(rng.standard_normal((128, 16)))[0]
    centres = rng.standard_normal((300, 16)) @ basis.T
    noise = rng.standard_normal((1_500, 128)) / np.sqrt(128)
    scale = rng.uniform(0.2, 1.5, (1_500, 1))
    matrix = (centres[rng.integers(0, 300, 1_500)] + scale * noise).astype(np.float32)
    counts = []
    for threshold in (0.8, 0.9, 0.95, 0.99):
        full = set()
        for left, right in near_duplicate_pairs(matrix, threshold, projected=0):
            full |= set(zip(left.tolist(), right.tolist(), strict=True))
        filtered = set()
        for left, right in near_duplicate_pairs(
            matrix, threshold, projected=16, row_block=256, column_block=512
        ):
            filtered |= set(zip(left.tolist(), right.tolist(), strict=True))
        assert filtered == full
        counts.append(len(full))
    assert counts == sorted(counts, reverse=True) and counts[-1] > 100  # real work, each time


def test_pairs_are_each_reported_once_with_the_lower_index_first() -> None:
    matrix = np.array([[1, 0], [1, 0.01], [0, 1], [1, 0]], dtype=np.float32)
    pairs = set()
    for left, right in near_duplicate_pairs(matrix, 0.95, row_block=2, column_block=3):
        pairs |= set(zip(left.tolist(), right.tolist(), strict=True))
    assert pairs == {(0, 1), (0, 3), (1, 3)}


def test_scale_does_not_matter_and_zero_rows_match_nothing() -> None:
    matrix = np.array([[1, 2, 3], [10, 20, 30], [0, 0, 0], [0, 0, 0], [-1, -2, -3]], np.float32)
    assert [g.tolist() for g in near_duplicate_groups(matrix, 0.95)] == [[0, 1]]


def test_a_chain_of_neighbours_is_one_group_even_when_its_ends_differ() -> None:
    angles = np.radians([0, 15, 30, 45, 90 + 45])
    matrix = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    # cos(15 degrees) = 0.966: each neighbour is a near-duplicate, the ends are not.
    assert [g.tolist() for g in near_duplicate_groups(matrix, 0.95)] == [[0, 1, 2, 3]]


def test_empty_and_single_row_matrices_have_no_groups() -> None:
    assert near_duplicate_groups(np.zeros((0, 8), np.float32), 0.95) == []
    assert near_duplicate_groups(np.ones((1, 8), np.float32), 0.95) == []


def test_union_find_joins_a_long_chain_and_a_star() -> None:
    sets = UnionFind(2_000)
    left = np.arange(0, 999, dtype=np.intp)
    sets.union_many(left[::-1].copy(), left[::-1] + 1)  # 0-1-2-...-999, hooked in reverse
    sets.union_many(np.full(500, 1_500, np.intp), np.arange(1_000, 1_500, dtype=np.intp))
    groups = [g.tolist() for g in sets.groups(np.arange(2_000, dtype=np.intp))]
    assert list(range(1_000)) in groups
    assert list(range(1_000, 1_501)) in groups
    assert len(groups) == 2 + (2_000 - 1_501)  # everything else on its own


@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(0, 40),
    columns=st.integers(1, 67),
    density=st.sampled_from([0.0, 0.01, 0.2, 1.0]),
    seed=st.integers(0, 2**16),
)
def test_true_cells_is_nonzero(rows: int, columns: int, density: float, seed: int) -> None:
    mask = np.random.default_rng(seed).random((rows, columns)) < density
    expected = np.nonzero(mask)
    found = true_cells(mask)
    assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])
