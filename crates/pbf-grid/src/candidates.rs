//! Candidate ranges: for every occupied cell, the points of the `3^D` cells around it
//! as ascending, merged ranges of sorted indices.
//!
//! # Walking the neighbour cells in Morton order without sorting them
//!
//! Cell indices follow Morton order, so a cell's neighbours come out as ascending
//! ranges if they are visited in key order, and Morton-consecutive neighbours merge
//! into one range. That order depends only on a little of the centre cell:
//!
//! On one axis the three coordinates `v - 1, v, v + 1` split into a tight pair that
//! differs only in bit 0 (`{v, v + 1}` when `v` is even, `{v - 1, v}` when odd) and a
//! lone value, which differs from the pair first at bit `L = trailing_zeros` of the
//! even one of `v`, `v + 1`. In the key that bit sits at position `D L + axis`
//! (always >= D), the pair's bit 0 at position `axis` (< D). Comparing two neighbour
//! keys means finding the highest differing key bit, so the key order is the
//! lexicographic order over: the axes' "which group" choices by descending
//! `D L + axis`, then the "which of the pair" choices by descending axis. The parity
//! of each axis and the order of the `D` priorities pick one of `2^D * 2^(D(D-1)/2)`
//! fixed visiting orders, all tabulated at compile time.

use rayon::prelude::*;

use crate::cell_table::CellTable;
use crate::cells::CellRange;
use crate::morton;
use crate::parts::reserve_total;

/// Cells per task (and per output buffer).
pub(crate) const CELL_CHUNK: usize = 1024;
/// log2 of [`CELL_CHUNK`].
const CELL_CHUNK_SHIFT: u32 = CELL_CHUNK.trailing_zeros();

/// Visiting orders of the 27 neighbours in 3D, indexed by the pattern of
/// [`Neighbourhood::pattern`]: each entry is `i_x | i_y << 2 | i_z << 4` for the
/// neighbour at offsets `i - 1`.
static ORDER3: [[u8; 27]; 64] = build_orders::<3, 27, 64>();
/// The same for the 9 neighbours in 2D: `i_x | i_y << 2`.
static ORDER2: [[u8; 9]; 8] = build_orders::<2, 9, 8>();

/// Flag of a unit that stands for a tight x-pair (see [`fold_pairs`]).
const PAIR: u8 = 0x80;
/// [`ORDER3`] with its x-pairs folded: 9 pairs and 9 single cells.
static UNITS3: [[u8; 18]; 64] = fold_pairs::<3, 27, 18, 64>(build_orders::<3, 27, 64>());
/// [`ORDER2`] with its x-pairs folded: 3 pairs and 3 single cells.
static UNITS2: [[u8; 6]; 8] = fold_pairs::<2, 9, 6, 8>(build_orders::<2, 9, 8>());

/// Folds each tight x-pair of an order into one unit: the two cells whose x
/// coordinates differ only in bit 0 (`v, v + 1` for even `v`, `v - 1, v` for odd)
/// have keys `k` and `k + 1` and always come one after the other in the order, so
/// one look-up of two adjacent slots finds both. A pair unit is its lower entry with
/// the [`PAIR`] flag.
const fn fold_pairs<const D: usize, const M: usize, const U: usize, const P: usize>(
    orders: [[u8; M]; P],
) -> [[u8; U]; P] {
    let mut units = [[0u8; U]; P];
    let mut p = 0;
    while p < P {
        let lower = if p & 1 == 0 { 1 } else { 0 };
        let (mut e, mut u) = (0, 0);
        // Rows of impossible patterns (inconsistent priority comparisons in 3D) may
        // not fold to U units; they are never used.
        while e < M && u < U {
            let entry = orders[p][e];
            if entry & 3 == lower && e + 1 < M && orders[p][e + 1] == entry + 1 {
                units[p][u] = entry | PAIR;
                e += 2;
            } else {
                units[p][u] = entry;
                e += 1;
            }
            u += 1;
        }
        p += 1;
    }
    units
}

/// Builds the visiting orders for dimension `D` (`M = 3^D` neighbours, `P` patterns:
/// `D` parity bits, then one bit per axis pair `a < b` telling whether axis `a`'s
/// lone-value split ranks above axis `b`'s).
const fn build_orders<const D: usize, const M: usize, const P: usize>() -> [[u8; M]; P] {
    let mut table = [[0u8; M]; P];
    let mut p = 0;
    while p < P {
        let parity = p & ((1 << D) - 1);
        let cmp = p >> D;
        // rank[a]: how many axes' splits rank below axis a's.
        let mut rank = [0usize; 3];
        let mut bit = 0;
        let mut a = 0;
        while a < D {
            let mut b = a + 1;
            while b < D {
                if (cmp >> bit) & 1 == 1 {
                    rank[a] += 1;
                } else {
                    rank[b] += 1;
                }
                bit += 1;
                b += 1;
            }
            a += 1;
        }
        let mut order_key = [0u32; M];
        let mut codes = [0u8; M];
        let mut code = 0;
        while code < M {
            let mut rest = code;
            let mut value = 0u32;
            let mut entry = 0u8;
            let mut axis = 0;
            while axis < D {
                let i = rest % 3;
                rest /= 3;
                entry |= (i as u8) << (2 * axis);
                let odd = (parity >> axis) & 1 == 1;
                // (group, element-within-group) of offset i - 1.
                let (group, element) = if odd {
                    if i == 2 { (1, 0) } else { (0, i as u32) }
                } else if i == 0 {
                    (0, 0)
                } else {
                    (1, i as u32 - 1)
                };
                value |= group << (D + rank[axis]);
                value |= element << axis;
                axis += 1;
            }
            order_key[code] = value;
            codes[code] = entry;
            code += 1;
        }
        // Insertion sort of the entries by their order key.
        let mut i = 1;
        while i < M {
            let mut j = i;
            while j > 0 && order_key[j - 1] > order_key[j] {
                let t = codes[j - 1];
                codes[j - 1] = codes[j];
                codes[j] = t;
                let k = order_key[j - 1];
                order_key[j - 1] = order_key[j];
                order_key[j] = k;
                j -= 1;
            }
            i += 1;
        }
        table[p] = codes;
        p += 1;
    }
    table
}

/// The key bits of one axis.
#[inline(always)]
const fn axis_mask<const D: usize>(axis: usize) -> u64 {
    (if D == 3 {
        0x1249_2492_4924_9249u64
    } else {
        0x5555_5555_5555_5555u64
    }) << axis
}

/// The units (pairs and single cells) of `D` in Morton order for a pattern.
#[inline(always)]
fn units<const D: usize>(pattern: usize) -> &'static [u8] {
    if D == 3 {
        &UNITS3[pattern]
    } else {
        &UNITS2[pattern]
    }
}

/// The neighbour entries of `D` in Morton order for a pattern.
#[inline(always)]
fn order<const D: usize>(pattern: usize) -> &'static [u8] {
    if D == 3 {
        &ORDER3[pattern]
    } else {
        &ORDER2[pattern]
    }
}

/// Per-axis dilated coordinates `v - 1, v, v + 1` of one cell's neighbours (index
/// 0, 1, 2), with flags for those outside `0 ..= extent`.
struct Neighbourhood<const D: usize> {
    dilated: [[u64; 4]; D],
    valid: [[bool; 4]; D],
    all_valid: bool,
    pattern: usize,
}

impl<const D: usize> Neighbourhood<D> {
    /// The neighbourhood of the cell with `key`, straight from the key: dilated
    /// increments and decrements instead of decoding and re-encoding.
    #[inline(always)]
    fn from_key(key: u64, extent_dilated: [u64; D]) -> Self {
        let mut dilated = [[0; 4]; D];
        let mut valid = [[true; 4]; D];
        let mut all_valid = true;
        let mut priority = [0u32; D];
        for a in 0..D {
            let m = axis_mask::<D>(a);
            let one = 1u64 << a;
            let v = key & m;
            let up = (v | !m).wrapping_add(one) & m;
            dilated[a] = [v.wrapping_sub(one) & m, v, up, 0];
            valid[a][0] = v != 0;
            valid[a][2] = v < extent_dilated[a];
            all_valid &= valid[a][0] & valid[a][2];
            // Split level of the lone value: trailing zeros of the even one of v, v + 1
            // (in dilated form, D * level + axis directly).
            let even = if key & one != 0 { up } else { v };
            priority[a] = even.trailing_zeros();
        }
        let parity = (key & ((1 << D) - 1)) as usize;
        Self {
            dilated,
            valid,
            all_valid,
            pattern: parity | (compare_bits::<D>(priority) << D),
        }
    }

    /// The neighbourhood of a cell coordinate that may lie outside the grid.
    fn from_coords(coords: [i64; D], extent: [u32; D]) -> Self {
        let mut dilated = [[0; 4]; D];
        let mut valid = [[false; 4]; D];
        for a in 0..D {
            for i in 0..3 {
                let v = coords[a] + i as i64 - 1;
                if v >= 0 && v <= i64::from(extent[a]) {
                    valid[a][i] = true;
                    dilated[a][i] = morton::dilate::<D>(v as u32, a);
                }
            }
        }
        Self {
            dilated,
            valid,
            all_valid: false,
            pattern: 0,
        }
    }

    /// Whether neighbour `entry` lies inside the occupied extent.
    #[inline(always)]
    fn is_valid(&self, entry: u8) -> bool {
        (0..D).all(|a| self.valid[a][((entry >> (2 * a)) & 3) as usize])
    }

    /// The key of neighbour `entry` (meaningful when it is valid).
    #[inline(always)]
    fn key(&self, entry: u8) -> u64 {
        let mut key = 0;
        for a in 0..D {
            key |= self.dilated[a][((entry >> (2 * a)) & 3) as usize];
        }
        key
    }
}

/// One bit per axis pair `a < b` (in the order (0,1), (0,2), (1,2)): whether axis
/// `a`'s split ranks above axis `b`'s.
#[inline(always)]
fn compare_bits<const D: usize>(priority: [u32; D]) -> usize {
    let mut cmp = 0;
    let mut bit = 0;
    for a in 0..D {
        for b in a + 1..D {
            cmp |= usize::from(priority[a] > priority[b]) << bit;
            bit += 1;
        }
    }
    cmp
}

/// Candidate ranges of every occupied cell, in reused buffers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Candidates {
    /// One buffer per chunk of [`CELL_CHUNK`] cells.
    buffers: Vec<Vec<CellRange>>,
    /// For each cell, its ranges' position inside its chunk's buffer.
    spans: Vec<CellRange>,
}

impl Candidates {
    /// Recomputes the candidate ranges of all cells.
    pub fn rebuild<const D: usize>(
        &mut self,
        cell_keys: &[u64],
        table: &CellTable,
        extent: [u32; D],
        points: usize,
    ) {
        // Reserve for the most cells `points` points occupy (one each) and the most
        // ranges a chunk of cells can have (one per neighbour cell), so that rebuilding
        // with as many points never allocates.
        // Untouched capacity costs address space, not memory, where the system commits
        // pages when they are first written (Linux, macOS, Windows' working set).
        let points = points.max(cell_keys.len());
        reserve_total(&mut self.spans, points);
        let most_ranges = CELL_CHUNK.min(points) * 3usize.pow(D as u32);
        let most_chunks = points.div_ceil(CELL_CHUNK);
        if self.buffers.len() < most_chunks {
            self.buffers.resize_with(most_chunks, Vec::new);
        }
        for buffer in &mut self.buffers {
            reserve_total(buffer, most_ranges);
        }
        let extent_dilated: [u64; D] = std::array::from_fn(|a| morton::dilate::<D>(extent[a], a));
        match table.dense_slots() {
            Some((min_key, slots)) => {
                let slot = |s: usize| slots.get(s).copied().unwrap_or_default();
                let lookup = |key: u64| {
                    Some(slot(key.wrapping_sub(min_key) as usize)).filter(|r| !r.is_empty())
                };
                let lookup_pair = |key: u64| {
                    let s = key.wrapping_sub(min_key) as usize;
                    join(slot(s), slot(s.wrapping_add(1)))
                };
                self.rebuild_with::<D>(cell_keys, extent_dilated, &lookup, &lookup_pair);
            }
            None => {
                let lookup = |key: u64| table.get(key);
                let lookup_pair = |key: u64| {
                    join(
                        table.get(key).unwrap_or_default(),
                        table.get(key + 1).unwrap_or_default(),
                    )
                };
                self.rebuild_with::<D>(cell_keys, extent_dilated, &lookup, &lookup_pair);
            }
        }
    }

    fn rebuild_with<const D: usize>(
        &mut self,
        cell_keys: &[u64],
        extent_dilated: [u64; D],
        lookup: &(impl Fn(u64) -> Option<CellRange> + Sync),
        lookup_pair: &(impl Fn(u64) -> Option<CellRange> + Sync),
    ) {
        let chunks = cell_keys.len().div_ceil(CELL_CHUNK);
        if self.buffers.len() < chunks {
            self.buffers.resize_with(chunks, Vec::new);
        }
        self.spans.resize(cell_keys.len(), CellRange::default());
        self.spans
            .par_chunks_mut(CELL_CHUNK)
            .zip(self.buffers[..chunks].par_iter_mut())
            .enumerate()
            .for_each(|(t, (spans, buffer))| {
                buffer.clear();
                let first = t * CELL_CHUNK;
                for (off, span) in spans.iter_mut().enumerate() {
                    let start = buffer.len() as u32;
                    let hood = Neighbourhood::<D>::from_key(cell_keys[first + off], extent_dilated);
                    if hood.all_valid {
                        push_candidates::<D, false>(&hood, lookup, lookup_pair, buffer);
                    } else {
                        push_candidates::<D, true>(&hood, lookup, lookup_pair, buffer);
                    }
                    *span = CellRange {
                        start,
                        end: buffer.len() as u32,
                    };
                }
            });
    }

    /// Bytes of heap the candidate buffers hold.
    pub fn heap_bytes(&self) -> usize {
        let buffers: usize = self
            .buffers
            .iter()
            .map(|b| b.capacity() * size_of::<CellRange>())
            .sum();
        buffers
            + self.buffers.capacity() * size_of::<Vec<CellRange>>()
            + self.spans.capacity() * size_of::<CellRange>()
    }

    /// The candidate ranges of cell `c`.
    #[inline]
    pub fn get(&self, c: usize) -> &[CellRange] {
        &self.buffers[c >> CELL_CHUNK_SHIFT][self.spans[c].as_range()]
    }
}

/// The one range covering two cells with consecutive keys (either may be absent,
/// that is empty).
#[inline(always)]
fn join(low: CellRange, high: CellRange) -> Option<CellRange> {
    match (low.is_empty(), high.is_empty()) {
        (false, false) => Some(CellRange {
            start: low.start,
            end: high.end,
        }),
        (false, true) => Some(low),
        (true, false) => Some(high),
        (true, true) => None,
    }
}

/// Appends the merged candidate ranges of one cell to `out`. `CHECKED`: some
/// neighbours lie outside the occupied extent and must be skipped (cell by cell);
/// otherwise the x-pairs are looked up as units.
#[inline(always)]
fn push_candidates<const D: usize, const CHECKED: bool>(
    hood: &Neighbourhood<D>,
    lookup: &impl Fn(u64) -> Option<CellRange>,
    lookup_pair: &impl Fn(u64) -> Option<CellRange>,
    out: &mut Vec<CellRange>,
) {
    // Runs of touching ranges, without branching on the run breaks (their pattern is
    // irregular) and with the open run in registers: a cell whose range starts
    // where the open run ends extends it; any other closes it (the closed run is
    // written to `runs[count]` on every step and kept by advancing `count`).
    // `runs[0]` receives the empty sentinel run before the first cell.
    let mut runs = [CellRange::default(); 29];
    let mut count = 0usize;
    let (mut open_start, mut open_end) = (u32::MAX, u32::MAX);
    let steps = if CHECKED {
        order::<D>(hood.pattern)
    } else {
        units::<D>(hood.pattern)
    };
    for &unit in steps {
        let entry = unit & !PAIR;
        if CHECKED && !hood.is_valid(entry) {
            continue;
        }
        let found = if !CHECKED && unit & PAIR != 0 {
            lookup_pair(hood.key(entry))
        } else {
            lookup(hood.key(entry))
        };
        let Some(range) = found else {
            continue;
        };
        let new_run = range.start != open_end;
        runs[count.min(28)] = CellRange {
            start: open_start,
            end: open_end,
        };
        count += usize::from(new_run);
        open_start = if new_run { range.start } else { open_start };
        open_end = range.end;
    }
    if count > 0 {
        runs[count.min(28)] = CellRange {
            start: open_start,
            end: open_end,
        };
        out.extend_from_slice(&runs[1..=count]);
    }
}

/// The occupied cells around a cell coordinate that may lie outside the grid (for
/// queries at arbitrary points), as their ranges in ascending order. Returns how
/// many of `out` were written.
pub(crate) fn cells_around<const D: usize>(
    coords: [i64; D],
    extent: [u32; D],
    table: &CellTable,
    out: &mut [CellRange; 27],
) -> usize {
    // A point more than one cell outside the occupied box has no neighbour cell.
    for a in 0..D {
        if coords[a] < -1 || coords[a] > i64::from(extent[a]) + 1 {
            return 0;
        }
    }
    let hood = Neighbourhood::<D>::from_coords(coords, extent);
    let mut n = 0;
    for &entry in order::<D>(0) {
        if hood.is_valid(entry)
            && let Some(c) = table.get(hood.key(entry))
        {
            out[n] = c;
            n += 1;
        }
    }
    out[..n].sort_unstable_by_key(|r| r.start);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbour_keys_sorted<const D: usize>(coords: [u32; D]) -> Vec<u64> {
        let m = if D == 3 { 27 } else { 9 };
        let mut keys: Vec<u64> = (0..m)
            .map(|code| {
                let mut rest = code;
                let mut c = [0u32; D];
                for a in 0..D {
                    c[a] = coords[a] + (rest % 3) as u32 - 1;
                    rest /= 3;
                }
                morton::encode::<D>(c)
            })
            .collect();
        keys.sort_unstable();
        keys
    }

    fn table_order<const D: usize>(coords: [u32; D]) -> Vec<u64> {
        let extent = [u32::MAX >> 12; D];
        let hood = Neighbourhood::<D>::from_key(
            morton::encode::<D>(coords),
            extent.map(|e| morton::dilate::<D>(e, 0)),
        );
        assert!(hood.all_valid);
        // The key-based neighbourhood agrees with the coordinate-based one.
        let by_coords = Neighbourhood::<D>::from_coords(coords.map(i64::from), extent);
        order::<D>(hood.pattern)
            .iter()
            .map(|&e| {
                assert!(by_coords.is_valid(e));
                assert_eq!(hood.key(e), by_coords.key(e));
                hood.key(e)
            })
            .collect()
    }

    #[test]
    fn tabulated_orders_are_morton_orders() {
        let mut state = 12345u64;
        let mut next = |bits: u32| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            1 + ((state >> 33) as u32 & ((1 << bits) - 1))
        };
        for _ in 0..3000 {
            let c3 = [next(6), next(6), next(6)];
            assert_eq!(table_order(c3), neighbour_keys_sorted(c3), "3D {c3:?}");
            let c2 = [next(9), next(9)];
            assert_eq!(table_order(c2), neighbour_keys_sorted(c2), "2D {c2:?}");
        }
        // Every combination of parities and high-bit boundaries around small values.
        for x in 1..40 {
            for y in 1..40 {
                for z in [1, 2, 3, 7, 8, 15, 16, 31, 32] {
                    assert_eq!(table_order([x, y, z]), neighbour_keys_sorted([x, y, z]));
                }
                assert_eq!(table_order([x, y]), neighbour_keys_sorted([x, y]));
            }
        }
    }

    #[test]
    fn each_order_visits_every_neighbour_once() {
        let all3: Vec<u8> = (0..27u8)
            .map(|c| (c % 3) | ((c / 3 % 3) << 2) | ((c / 9) << 4))
            .collect();
        let all2: Vec<u8> = (0..9u8).map(|c| (c % 3) | ((c / 3) << 2)).collect();
        let sorted = |row: &[u8]| {
            let mut v = row.to_vec();
            v.sort_unstable();
            v
        };
        for row in ORDER3.iter() {
            assert_eq!(sorted(row), sorted(&all3));
        }
        for row in ORDER2.iter() {
            assert_eq!(sorted(row), sorted(&all2));
        }
    }

    #[test]
    fn units_cover_the_orders() {
        for (p, row) in UNITS3.iter().enumerate() {
            // Comparison bits (x>y, x>z, y>z) that no priorities can produce.
            if matches!(p >> 3, 0b010 | 0b101) {
                continue;
            }
            let unfolded: Vec<u8> = row
                .iter()
                .flat_map(|&u| {
                    if u & PAIR != 0 {
                        vec![u & !PAIR, (u & !PAIR) + 1]
                    } else {
                        vec![u]
                    }
                })
                .collect();
            assert_eq!(unfolded, ORDER3[p].to_vec());
        }
        for (p, row) in UNITS2.iter().enumerate() {
            assert_eq!(row.iter().filter(|&&u| u & PAIR != 0).count(), 3, "{p}");
        }
    }

    #[test]
    fn edges_of_the_extent_are_skipped() {
        // Cell (0, 5, extent) in 3D: x - 1 and z + 1 do not exist.
        let key = morton::encode3([0, 5, 7]);
        let hood = Neighbourhood::<3>::from_key(
            key,
            [
                morton::encode3([9, 0, 0]),
                morton::encode3([0, 9, 0]),
                morton::encode3([0, 0, 7]),
            ],
        );
        assert!(!hood.all_valid);
        let valid = order::<3>(hood.pattern)
            .iter()
            .filter(|&&e| hood.is_valid(e))
            .count();
        assert_eq!(valid, 2 * 3 * 2);
    }
}
