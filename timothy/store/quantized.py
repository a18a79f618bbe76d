"""Int8 codes of an index's unit rows: a first pass four times lighter, with a proven error bound.

Each row x is stored as codes c (int8) and one scale s, x~ = s*c, with the exact length of
what was lost, e = ||x - x~||. The query q is coded the same way, q~ = t*d. One integer dot
product per row, d.c (SIMD int8 through simsimd, exact), gives a = t*s*(d.c) = q~.x~, and

    |q.x - a| = |q.(x - x~) + (q - q~).x~| <= ||q||*e + ||q - q~||*||x~||    (Cauchy-Schwarz)

so every row's exact cosine lies in [a - bound, a + bound]. The ~1% of rows still in the
running get a second code of what the first left of the query (its share of the bound nearly
drops out), and the caller re-scores exactly only the rows whose upper bound reaches the k-th
best lower bound, which cannot miss one of the top k: the answer is exact, not approximate.
At 100k rows of 1,536 numbers the scan reads 150 MB instead of 600 MB.

The codes are kept shifted by 128, as unsigned bytes u = c + 128, with each row's
128*sum(c) + 128*128*n beside them: then d.c = u.v - 128*sum(c) - 128*sum(d) - 128*128*n
(v = d + 128), the same integer, and simsimd's unsigned kernel is quicker than its signed
one where the CPU has AVX2 and no AVX-512 (0.70-0.74x the time, 10k-100k rows of 384 and
1,536 numbers: the signed one widens to 16 bits first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from timothy.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

try:
    import simsimd
except ImportError:  # pragma: no cover - a platform without a wheel: exact float32 scan only
    simsimd = None  # type: ignore[assignment]

FloatArray: TypeAlias = "npt.NDArray[np.float32]"
Float64Array: TypeAlias = "npt.NDArray[np.float64]"
CodeArray: TypeAlias = "npt.NDArray[np.int8]"
ShiftedArray: TypeAlias = "npt.NDArray[np.uint8]"

# The largest code; -127..127 keeps the codes symmetric (no -128 without a +128).
CODE_MAX = 127
# Codes are kept as c + _SHIFT, unsigned (see the module's docstring).
_SHIFT = 128
# Rows coded per step when coding many at once (bounds the float64 temporaries to ~12 MB).
_CHUNK = 1024


def available() -> bool:
    """Whether the int8 scan can run here (simsimd imported)."""
    return simsimd is not None


def float32_dot_error(dimension: int) -> float:
    """How far a float32 dot product of two vectors of length <= 1 (plus float32 rounding of
    their lengths) can be from the real dot product: gamma_n = n*u/(1 - n*u), u = 2**-24,
    doubled for the rounding of the unit lengths and of the sum's blocking. Tiny (1e-4 for
    1,536 numbers) next to the codes' bound (about 1e-2), it makes the bound hold for the
    float32 score the exact pass computes, not only for the real one."""
    unit = 2.0**-24
    n = dimension + 2
    return 2.0 * n * unit / (1.0 - n * unit)


def encode(
    rows: FloatArray | Float64Array,
) -> tuple[CodeArray, Float64Array, Float64Array, Float64Array]:
    """Codes, scales, error lengths ||x - s*c|| and code lengths ||s*c|| of a few float32 rows.

    Computed in float64 from the float32 rows, so the lengths are exact to ~1e-16; they are
    then rounded up by a relative 1e-9 to stay bounds. An all-zero row gets scale 0, codes 0
    and error 0 (it matches nothing; the caller leaves it out).
    """
    part = rows.astype(np.float64)
    scale = np.abs(part).max(axis=1) / CODE_MAX
    safe = np.where(scale > 0, scale, 1.0)
    code = np.clip(np.rint(part / safe[:, None]), -CODE_MAX, CODE_MAX)
    decoded = code * scale[:, None]
    lost = part - decoded
    errors = np.sqrt(np.einsum("ij,ij->i", lost, lost)) * (1.0 + 1e-9)
    lengths = np.sqrt(np.einsum("ij,ij->i", decoded, decoded)) * (1.0 + 1e-9)
    return code.astype(np.int8), scale, errors, lengths


class QuantizedRows:
    """Int8 codes of row-aligned float32 unit rows, grown and rewritten with them."""

    def __init__(self, dimension: int, capacity: int = 0) -> None:
        self.dimension = dimension
        # The codes shifted by 128 (c + 128, unsigned; 128 is code 0), and for each row what
        # the shift adds to its dot product with a shifted query: 128*sum(c) + 128*128*n.
        # Room not yet written holds code 0 (see `reserve`).
        self.codes: ShiftedArray = np.zeros((0, dimension), dtype=np.uint8)
        self.shifts: Float64Array = np.zeros(0, dtype=np.float64)
        self.scales: Float64Array = np.zeros(0, dtype=np.float64)
        self.errors: Float64Array = np.zeros(0, dtype=np.float64)
        self.lengths: Float64Array = np.zeros(0, dtype=np.float64)
        self._dot_error = float32_dot_error(dimension)
        self.reserve(capacity)

    @property
    def capacity(self) -> int:
        return int(self.codes.shape[0])

    @property
    def nbytes(self) -> int:
        return int(
            self.codes.nbytes
            + self.shifts.nbytes
            + self.scales.nbytes
            + self.errors.nbytes
            + self.lengths.nbytes
        )

    def reserve(self, capacity: int) -> None:
        """Room for `capacity` rows, keeping the rows already coded."""
        if capacity <= self.capacity:
            return
        old = self.capacity
        codes = np.full((capacity, self.dimension), _SHIFT, dtype=np.uint8)
        codes[:old] = self.codes
        self.codes = codes
        shifts = np.full(capacity, _SHIFT * _SHIFT * self.dimension, dtype=np.float64)
        shifts[:old] = self.shifts
        self.shifts = shifts
        for name in ("scales", "errors", "lengths"):
            array = np.zeros(capacity, dtype=np.float64)
            array[:old] = getattr(self, name)
            setattr(self, name, array)

    def put(self, places: npt.NDArray[np.intp], rows: FloatArray) -> None:
        """Code `rows` (float32, unit or zero) into `places`, a chunk at a time (no full-size
        float64 temporary)."""
        if places.shape[0]:
            self.reserve(int(places.max()) + 1)
        for start in range(0, places.shape[0], _CHUNK):
            where = places[start : start + _CHUNK]
            codes, scales, errors, lengths = encode(rows[start : start + _CHUNK])
            self.codes[where] = shifted(codes)
            self.shifts[where] = _SHIFT * (
                codes.sum(axis=1, dtype=np.int64) + _SHIFT * self.dimension
            )
            self.scales[where] = scales
            self.errors[where] = errors
            self.lengths[where] = lengths

    def bounds(
        self,
        query: FloatArray,
        count: int,
        *,
        keep: int,
        excluded: npt.NDArray[np.intp],
    ) -> tuple[Float64Array, Float64Array]:
        """Lower and upper bounds of the float32 dot product of `query` (the unit float32
        vector the exact pass multiplies by) with each of rows [0, count).

        Rows in `excluded` get -inf (they match nothing). The rows that can still reach the
        `keep`-th best (about 1% of them) get tighter bounds from a second code of the query,
        for what the first left over: that leaves about a fifth of them to re-score.
        """
        if simsimd is None:
            raise RuntimeError("the int8 scan needs simsimd")
        exact_query = query.astype(np.float64)
        query_length = float(np.sqrt(np.dot(exact_query, exact_query)))
        first, first_scale, first_error, _ = encode(exact_query.reshape(1, -1))
        left = exact_query - first[0].astype(np.float64) * first_scale[0]
        second, second_scale, second_error, _ = encode(left.reshape(1, -1))

        codes, shifts, scales = self.codes[:count], self.shifts[:count], self.scales[:count]
        errors, lengths = self.errors[:count], self.lengths[:count]
        approx = _dots(first, codes, shifts)  # a fresh array: scaled in place
        approx *= scales
        approx *= first_scale[0]
        slack = lengths * first_error[0]
        slack += errors * query_length
        slack += self._dot_error
        lower = approx - slack
        upper = np.add(approx, slack, out=slack)
        lower[excluded] = -np.inf
        upper[excluded] = -np.inf
        eligible = count - int(np.unique(excluded).shape[0])
        if eligible == 0:
            return lower, upper

        floor = kth_largest(lower, min(keep, eligible))
        places = np.flatnonzero(upper >= floor)
        again = _dots(second, codes[places], shifts[places])
        approx = approx[places] + again * scales[places] * second_scale[0]
        slack = errors[places] * query_length + lengths[places] * second_error[0]
        slack += self._dot_error
        lower[places] = np.maximum(lower[places], approx - slack)
        upper[places] = np.minimum(upper[places], approx + slack)
        return lower, upper


def kth_largest(values: Float64Array, k: int) -> float:
    """The k-th largest of `values` (1 <= k <= len)."""
    return float(np.partition(values, values.shape[0] - k)[values.shape[0] - k])


def shifted(codes: CodeArray) -> ShiftedArray:
    """Codes c as unsigned bytes c + 128 (the same bits with the top one flipped)."""
    return codes.view(np.uint8) ^ np.uint8(_SHIFT)


def _dots(query: CodeArray, codes: ShiftedArray, shifts: Float64Array) -> Float64Array:
    """Integer dot products of one coded query with each coded row, from their shifted
    codes: u.v less the row's shift and the query's 128*sum(d). Exact: every term is an
    integer below 255 * 255 * dimension (1e8 for 1,536 numbers), far inside float64's."""
    assert simsimd is not None
    found = simsimd.cdist(shifted(query), codes, metric="dot", threads=1)
    dots = np.asarray(found, dtype=np.float64).reshape(-1)
    dots -= shifts
    dots -= _SHIFT * float(query.sum(dtype=np.int64))
    return dots
