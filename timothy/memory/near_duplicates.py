"""Near-duplicate groups among embedding vectors: cosine pairs by blocked matrix products,
joined into groups by a union-find whose hooking and path compression run in numpy.

Nothing here loops over pairs in Python: a tile of rows is compared with a tile of later rows
in one matrix product, the pairs above the threshold come out of `np.nonzero`, and the
union-find takes them a whole tile at a time.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

# One tile of similarities is ROW_BLOCK x COLUMN_BLOCK float32 (32 MB): large enough on both
# sides for BLAS to run near full speed, small enough to keep memory flat at any store size.
ROW_BLOCK = 1_024
COLUMN_BLOCK = 8_192

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
    squares = np.einsum("ij,ij->i", matrix, matrix)  # no n x d temporary, unlike norm()
    inverse: npt.NDArray[np.float32] = np.zeros(squares.shape, dtype=np.float32)
    np.divide(1.0, np.sqrt(squares), out=inverse, where=squares > 0)
    return inverse


def near_duplicate_pairs(
    matrix: npt.NDArray[np.float32],
    threshold: float,
    *,
    row_block: int = ROW_BLOCK,
    column_block: int = COLUMN_BLOCK,
) -> Iterator[tuple[IndexArray, IndexArray]]:
    """Every pair (i, j), i < j, of rows whose cosine similarity is >= threshold, one tile
    of rows x later rows at a time (tiles left of the diagonal are never computed).

    Rows need not be normalised: each tile of dot products is scaled by the inverse norms in
    place, so no normalised copy of the matrix is made.
    """
    if matrix.ndim != 2:
        raise ValueError("expected a 2-d matrix of row vectors")
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    inverse = inverse_norms(matrix)
    bar = np.float32(threshold)
    rows = matrix.shape[0]
    row_block, column_block = max(1, row_block), max(1, column_block)
    for top in range(0, rows, row_block):
        bottom = min(rows, top + row_block)
        band = matrix[top:bottom]
        for left in range(top, rows, column_block):
            right = min(rows, left + column_block)
            tile = band @ matrix[left:right].T
            tile *= inverse[top:bottom, None]
            tile *= inverse[None, left:right]
            tile_rows, tile_columns = np.nonzero(tile >= bar)
            del tile
            first = tile_rows.astype(np.intp) + top
            second = tile_columns.astype(np.intp) + left
            later = second > first  # drops the diagonal and the pairs below it
            if later.any():
                yield first[later], second[later]


def near_duplicate_groups(
    matrix: npt.NDArray[np.float32],
    threshold: float,
    *,
    row_block: int = ROW_BLOCK,
    column_block: int = COLUMN_BLOCK,
) -> list[IndexArray]:
    """Groups (two rows or more) of rows joined by cosine >= threshold, transitively.

    Each group's row indices ascend; groups are ordered by their first row.
    """
    sets = UnionFind(matrix.shape[0])
    touched: list[IndexArray] = []
    pairs = near_duplicate_pairs(matrix, threshold, row_block=row_block, column_block=column_block)
    for left, right in pairs:
        sets.union_many(left, right)
        touched.append(np.unique(np.concatenate([left, right])))
    if not touched:
        return []
    return sets.groups(np.concatenate(touched))
