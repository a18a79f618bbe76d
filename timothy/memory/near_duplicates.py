"""Near-duplicate groups among embedding vectors: cosine pairs by blocked matrix products,
joined into groups by a union-find whose hooking and path compression run in numpy.

Nothing here loops over pairs in Python: a tile of rows is compared with a tile of later rows
in one matrix product, the pairs above the threshold come out of a scan of the tile, and the
union-find takes them a whole tile at a time.

Comparing every pair in full costs n^2/2 dot products of the whole dimension (50k 1536-d
vectors: 3.8 TFLOP). An exact filter saves most of it. For unit vectors, cosine >= t means
|u - v|^2 <= 2 - 2t, and projecting onto orthonormal directions never lengthens a vector,
so a pair whose projections are further apart than that cannot be a near-duplicate. Pairs
are first compared in 128 directions (close to the principal ones of a sample, where
vectors differ most, so few unrelated pairs survive) and only the survivors in full. The
answer is the same as comparing everything in full; only the work changes (50k planted
1536-d vectors: 4.3 s of CPU instead of 48). Where most pairs survive (a store of
near-identical vectors) a tile falls back to the full comparison, so the worst case costs
what comparing everything would, plus the projection.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeAlias

from timothy.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

# One tile of similarities is ROW_BLOCK x COLUMN_BLOCK float32 (32 MB): large enough on both
# sides for BLAS to run near full speed, small enough to keep memory flat at any store size.
ROW_BLOCK = 1_024
COLUMN_BLOCK = 8_192
# Directions compared first; with fewer than twice as many dimensions, pairs go straight to
# the full comparison.
PROJECTED = 128
# A tile where more than this share of pairs survive the projection is compared in full: one
# matrix product is then cheaper than gathering the survivors' rows.
DENSE_TILE = 0.005
PROJECTION_SAMPLE = 4_096
# Float32 rounding in lengths and projections is far below this; it keeps the filter exact.
SLACK = 1e-4
VERIFY_CHUNK = 4_096

IndexArray: TypeAlias = "npt.NDArray[np.intp]"


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


def principal_directions(
    matrix: npt.NDArray[np.float32], inverse: npt.NDArray[np.float32], count: int, seed: int = 0
) -> npt.NDArray[np.float32]:
    """`count` orthonormal directions (rows) close to the principal ones of a sample of the
    unit rows (one randomized power iteration). Any orthonormal rows keep the filter exact;
    principal ones make it sharp."""
    rng = np.random.default_rng(seed)
    rows = matrix.shape[0]
    picked = np.sort(rng.choice(rows, size=min(rows, PROJECTION_SAMPLE), replace=False))
    sample = matrix[picked] * inverse[picked, None]
    sample -= sample.mean(axis=0)  # differences between vectors carry no mean
    probe = rng.standard_normal((matrix.shape[1], count)).astype(np.float32)
    # Orthonormalised in float64: the filter is exact only if the directions are.
    basis, _ = np.linalg.qr((sample.T @ (sample @ probe)).astype(np.float64))
    directions: npt.NDArray[np.float32] = np.ascontiguousarray(basis.T, dtype=np.float32)
    return directions


def near_duplicate_pairs(
    matrix: npt.NDArray[np.float32],
    threshold: float,
    *,
    row_block: int = ROW_BLOCK,
    column_block: int = COLUMN_BLOCK,
    projected: int = PROJECTED,
) -> Iterator[tuple[IndexArray, IndexArray]]:
    """Every pair (i, j), i < j, of rows whose cosine similarity is >= threshold, one tile
    of rows x later rows at a time (tiles left of the diagonal are never computed).

    Rows need not be normalised: dot products are scaled by the inverse norms, so no
    normalised copy of the matrix is made.
    """
    if matrix.ndim != 2:
        raise ValueError("expected a 2-d matrix of row vectors")
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    rows, dimension = matrix.shape
    if rows < 2:
        return
    inverse = inverse_norms(matrix)
    bar = np.float32(threshold)
    row_block, column_block = max(1, row_block), max(1, column_block)
    shadows: npt.NDArray[np.float32] | None = None
    if projected > 0 and 2 * projected <= dimension:
        shadows = matrix @ principal_directions(matrix, inverse, projected).T
        shadows *= inverse[:, None]  # the projections of the unit rows
        # |a - b|^2 <= reach  <=>  a.b - |a|^2/2 >= |b|^2/2 - reach/2
        halves = np.einsum("ij,ij->i", shadows, shadows) / 2
        bars = halves - np.float32((2.0 - 2.0 * threshold + SLACK) / 2)
    for top in range(0, rows, row_block):
        bottom = min(rows, top + row_block)
        for left in range(top, rows, column_block):
            right = min(rows, left + column_block)
            if shadows is None:
                found = _full_tile(matrix, inverse, bar, top, bottom, left, right)
            else:
                tile = shadows[top:bottom] @ shadows[left:right].T
                tile -= halves[top:bottom, None]
                near = tile >= bars[None, left:right]
                del tile
                first, second = _later_pairs(near, top, left)
                if first.size > DENSE_TILE * near.size:
                    found = _full_tile(matrix, inverse, bar, top, bottom, left, right)
                else:
                    found = _verified(matrix, inverse, bar, first, second)
            if found[0].size:
                yield found


def true_cells(mask: npt.NDArray[np.bool_]) -> tuple[IndexArray, IndexArray]:
    """np.nonzero for a sparse 2-d mask, about 10x faster: it scans the mask 8 cells at a
    time as 64-bit words and looks closer only inside the words that are not all false."""
    flat = np.ascontiguousarray(mask).reshape(-1)
    whole = flat.size - flat.size % 8
    words = np.flatnonzero(flat[:whole].view(np.uint64))
    cells = (words[:, None] * 8 + np.arange(8)).reshape(-1)
    cells = np.concatenate([cells[flat[cells]], np.flatnonzero(flat[whole:]) + whole])
    rows, columns = np.divmod(cells, mask.shape[1])
    return rows.astype(np.intp), columns.astype(np.intp)


def _later_pairs(mask: npt.NDArray[np.bool_], top: int, left: int) -> tuple[IndexArray, IndexArray]:
    """The (row, column) pairs of a tile's true cells, in matrix indices, with row < column
    (drops the diagonal and the pairs below it)."""
    tile_rows, tile_columns = true_cells(mask)
    first = tile_rows + top
    second = tile_columns + left
    later = second > first
    return first[later], second[later]


def _full_tile(
    matrix: npt.NDArray[np.float32],
    inverse: npt.NDArray[np.float32],
    bar: np.float32,
    top: int,
    bottom: int,
    left: int,
    right: int,
) -> tuple[IndexArray, IndexArray]:
    tile = matrix[top:bottom] @ matrix[left:right].T
    tile *= inverse[top:bottom, None]
    tile *= inverse[None, left:right]
    return _later_pairs(tile >= bar, top, left)


def _verified(
    matrix: npt.NDArray[np.float32],
    inverse: npt.NDArray[np.float32],
    bar: np.float32,
    first: IndexArray,
    second: IndexArray,
) -> tuple[IndexArray, IndexArray]:
    """The candidate pairs whose full cosine reaches the bar (rows gathered a chunk at a
    time, so memory stays flat however many candidates there are)."""
    keep = np.zeros(first.size, dtype=bool)
    for start in range(0, first.size, VERIFY_CHUNK):
        a, b = first[start : start + VERIFY_CHUNK], second[start : start + VERIFY_CHUNK]
        cosine = np.einsum("ij,ij->i", matrix[a], matrix[b]) * inverse[a] * inverse[b]
        keep[start : start + VERIFY_CHUNK] = cosine >= bar
    return first[keep], second[keep]


def near_duplicate_groups(
    matrix: npt.NDArray[np.float32],
    threshold: float,
    *,
    row_block: int = ROW_BLOCK,
    column_block: int = COLUMN_BLOCK,
    projected: int = PROJECTED,
) -> list[IndexArray]:
    """Groups (two rows or more) of rows joined by cosine >= threshold, transitively.

    Each group's row indices ascend; groups are ordered by their first row.
    """
    sets = UnionFind(matrix.shape[0])
    touched: list[IndexArray] = []
    pairs = near_duplicate_pairs(
        matrix, threshold, row_block=row_block, column_block=column_block, projected=projected
    )
    for left, right in pairs:
        sets.union_many(left, right)
        touched.append(np.unique(np.concatenate([left, right])))
    if not touched:
        return []
    return sets.groups(np.concatenate(touched))
