"""Near-duplicate groups among embedding vectors: cosine pairs by blocked matrix products,
joined into groups by a union-find whose hooking and path compression run in numpy.

Nothing here loops over pairs in Python: a block of rows is compared with every later row in
one matrix product, the pairs above the threshold come out of `np.nonzero`, and the
union-find takes them a whole block at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

# Bound on one block of similarities (rows x later rows, float32): about 64 MB.
BLOCK_CELLS = 16_000_000

IndexArray = npt.NDArray[np.intp]


class UnionFind:
    """Disjoint sets over 0..n-1 as a parent array; `parent[i] <= i` always, so no cycles."""

    def __init__(self, size: int) -> None:
        self.parent: IndexArray = np.arange(size, dtype=np.intp)

    def roots(self, items: IndexArray) -> IndexArray:
        """The root of each item, compressing the paths it walked."""
        current = self.parent[items]
        while True:
            above = self.parent[current]
            if np.array_equal(above, current):
                break
            current = above
        self.parent[items] = current
        return current

    def union_many(self, left: IndexArray, right: IndexArray) -> None:
        """Join left[k] and right[k] for every k.

        Each round hooks the higher root of every still-separate pair under the lower one.
        When several pairs hook the same root only one write lands; the others see the new
        root next round, so rounds repeat until every pair shares a root.
        """
        while left.size:
            left_roots, right_roots = self.roots(left), self.roots(right)
            apart = left_roots != right_roots
            if not apart.any():
                return
            left_roots, right_roots = left_roots[apart], right_roots[apart]
            self.parent[np.maximum(left_roots, right_roots)] = np.minimum(left_roots, right_roots)
            left, right = left[apart], right[apart]

    def groups(self, items: IndexArray) -> list[IndexArray]:
        """The items partitioned by set, each group ascending, groups by their first item."""
        if items.size == 0:
            return []
        items = np.unique(items)
        roots = self.roots(items)
        order = np.lexsort((items, roots))
        items, roots = items[order], roots[order]
        starts = np.flatnonzero(np.r_[True, roots[1:] != roots[:-1]])
        found = np.split(items, starts[1:])
        found.sort(key=lambda group: int(group[0]))
        return found


def inverse_norms(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """1 / the length of each row; 0 for an all-zero row, which then matches nothing."""
    norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
    inverse: npt.NDArray[np.float32] = np.zeros(norms.shape, dtype=np.float32)
    np.divide(1.0, norms, out=inverse, where=norms > 0)
    return inverse


def near_duplicate_pairs(
    matrix: npt.NDArray[np.float32], threshold: float, *, block_cells: int = BLOCK_CELLS
) -> Iterator[tuple[IndexArray, IndexArray]]:
    """Every pair (i, j), i < j, of rows whose cosine similarity is >= threshold, a block of
    rows at a time (each block compared with itself and every later row: each pair once).

    Rows need not be normalised: each block of dot products is scaled by the inverse norms
    in place, so no normalised copy of the whole matrix is made.
    """
    if matrix.ndim != 2:
        raise ValueError("expected a 2-d matrix of row vectors")
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    inverse = inverse_norms(matrix)
    bar = np.float32(threshold)
    rows = matrix.shape[0]
    start = 0
    while start < rows:
        stop = min(rows, start + max(1, block_cells // (rows - start)))
        block = matrix[start:stop] @ matrix[start:].T
        block *= inverse[start:stop, None]
        block *= inverse[None, start:]
        local_rows, local_cols = np.nonzero(block >= bar)
        del block
        later = local_cols > local_rows  # drops the diagonal and pairs inside the block twice
        if later.any():
            yield (
                (local_rows[later] + start).astype(np.intp),
                (local_cols[later] + start).astype(np.intp),
            )
        start = stop


def near_duplicate_groups(
    matrix: npt.NDArray[np.float32], threshold: float, *, block_cells: int = BLOCK_CELLS
) -> list[IndexArray]:
    """Groups (two rows or more) of rows joined by cosine >= threshold, transitively.

    Each group's row indices ascend; groups are ordered by their first row.
    """
    sets = UnionFind(matrix.shape[0])
    touched: list[IndexArray] = []
    for left, right in near_duplicate_pairs(matrix, threshold, block_cells=block_cells):
        sets.union_many(left, right)
        touched.append(np.unique(np.concatenate([left, right])))
    if not touched:
        return []
    return sets.groups(np.concatenate(touched))
