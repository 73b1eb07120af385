//! Morton keys of many points at once: the first pass of every rebuild.
//!
//! Blocks of points go through two loops the compiler vectorises separately: cell
//! coordinates axis by axis (`f32 -> f64`, multiply, subtract, truncate), then the
//! keys from 1024-entry tables of spread bits instead of the shift-and-mask
//! sequence (one table look-up per axis while every extent is below 1024 cells).
//! The first radix digit is counted on the way, in four interleaved histograms so
//! that runs of equal digits (nearly sorted input) do not chain through memory.

use crate::frame::CellFrame;
use crate::morton;
use crate::sort::SortItem;

/// Points per block.
const BLOCK: usize = 64;
/// Bits spread by one table look-up.
const PIECE_BITS: u32 = 10;

/// `spread3(v)` for every 10-bit `v` (30 bits).
static SPREAD3: [u32; 1 << PIECE_BITS] = spread_table::<3>();
/// `spread2(v)` for every 10-bit `v` (20 bits).
static SPREAD2: [u32; 1 << PIECE_BITS] = spread_table::<2>();

const fn spread_table<const D: usize>() -> [u32; 1 << PIECE_BITS] {
    let mut t = [0u32; 1 << PIECE_BITS];
    let mut v = 0;
    while v < t.len() {
        let mut bit = 0;
        let mut s = 0u32;
        while bit < PIECE_BITS {
            s |= ((v as u32 >> bit) & 1) << (D as u32 * bit);
            bit += 1;
        }
        t[v] = s;
        v += 1;
    }
    t
}

/// The dilated form of `v` (as `morton::dilate::<D>(v, 0)`) from `pieces` table
/// look-ups of 10 bits each.
#[inline(always)]
fn spread<const D: usize>(v: u32, pieces: u32) -> u64 {
    let table = if D == 3 { &SPREAD3 } else { &SPREAD2 };
    let mut out = u64::from(table[(v & 1023) as usize]);
    for p in 1..pieces {
        out |= u64::from(table[((v >> (PIECE_BITS * p)) & 1023) as usize])
            << (D as u32 * PIECE_BITS * p);
    }
    out
}

/// `t as u32` (that is `floor(t)`) for `0 <= t < 2^32`, in a form the compiler
/// vectorises: the saturating float-to-integer conversions of Rust compile to scalar
/// code on x86-64, this to packed adds and compares.
///
/// `t + 2^52` rounds to the nearest integer, held in the low mantissa bits; one
/// compare turns that rounding into the floor. Every step is exact below 2^51.
#[inline(always)]
fn floor_to_u32(t: f64) -> u32 {
    const MAGIC: f64 = 4_503_599_627_370_496.0; // 2^52
    let nearest = (t + MAGIC) - MAGIC;
    let floor = if nearest > t { nearest - 1.0 } else { nearest };
    (floor + MAGIC).to_bits() as u32
}

/// Calls `f(k, key)` for points `first .. first + n` (`k` counted from 0), block by
/// block.
#[inline(always)]
fn for_each_key<const D: usize>(
    frame: &CellFrame<D>,
    positions: &[&[f32]; D],
    first: usize,
    n: usize,
    mut f: impl FnMut(usize, u64),
) {
    let widest = frame.extent.iter().copied().max().unwrap_or(0);
    let pieces = (32 - widest.leading_zeros()).div_ceil(PIECE_BITS).max(1);
    let mut start = 0;
    while start < n {
        let len = BLOCK.min(n - start);
        let mut coords = [[0u32; BLOCK]; D];
        for a in 0..D {
            let xs = &positions[a][first + start..first + start + len];
            let (inv, base) = (frame.inv_cell, frame.base[a]);
            for (c, &x) in coords[a][..len].iter_mut().zip(xs) {
                *c = floor_to_u32(f64::from(x) * inv - base);
            }
        }
        for k in 0..len {
            let mut key = 0u64;
            for (a, axis) in coords.iter().enumerate() {
                key |= spread::<D>(axis[k], pieces) << a;
            }
            debug_assert_eq!(
                key,
                morton::encode::<D>(std::array::from_fn(
                    |a| frame.coord(a, positions[a][first + start + k])
                ))
            );
            f(start + k, key);
        }
        start += len;
    }
}

/// Fills `items[k]` with the key and index of point `first + k`, and adds the first
/// radix digit `key & mask` of every key to `counts` (at most 1024 buckets).
pub(crate) fn keys_and_digits<T: SortItem, const D: usize>(
    frame: &CellFrame<D>,
    positions: &[&[f32]; D],
    first: usize,
    items: &mut [T],
    counts: &mut [usize],
    mask: u64,
) {
    let mut histograms = [[0u32; 1 << PIECE_BITS]; 4];
    for_each_key(frame, positions, first, items.len(), |k, key| {
        items[k] = T::pack(key, (first + k) as u32);
        histograms[k & 3][(key & mask) as usize] += 1;
    });
    for (d, c) in counts.iter_mut().enumerate() {
        *c += histograms.iter().map(|h| h[d] as usize).sum::<usize>();
    }
}

/// The key pass of the re-sort: a point whose key equals the key of the cell at the
/// same position in the previous rebuild (`cell_keys[cell_of[k]]`, `cell_of` given
/// for this chunk) stays, and is written to the front of `items` in order; any other
/// moved, and is pushed to `movers`. Returns the number of stayers.
pub(crate) fn keys_and_movers<T: SortItem, const D: usize>(
    frame: &CellFrame<D>,
    positions: &[&[f32]; D],
    first: usize,
    items: &mut [T],
    cell_of: &[u32],
    cell_keys: &[u64],
    movers: &mut Vec<T>,
) -> usize {
    movers.clear();
    // Every point of the chunk may move: reserve for that once, not as they come.
    crate::parts::reserve_total(movers, items.len());
    let mut stayers = 0;
    for_each_key(frame, positions, first, items.len(), |k, key| {
        let item = T::pack(key, (first + k) as u32);
        let moved = key != cell_keys[cell_of[k] as usize];
        // Always written, kept only by a stayer (stayers <= k: never ahead of k).
        items[stayers] = item;
        stayers += usize::from(!moved);
        if moved {
            movers.push(item);
        }
    });
    stayers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_matches_the_conversion() {
        let mut t = 0.0f64;
        while t < 70.0 {
            assert_eq!(floor_to_u32(t), t as u32, "{t}");
            t += 0.125;
        }
        for t in [
            0.0,
            0.49999999999999994,
            0.5,
            1.0 - 1e-16,
            2.5,
            3.5,
            2_097_151.999_999_9,
            4_294_967_295.9,
            1e-300,
        ] {
            assert_eq!(floor_to_u32(t), t as u32, "{t}");
        }
    }

    #[test]
    fn tables_spread_like_morton() {
        for v in [
            0u32, 1, 2, 3, 1023, 1024, 1025, 0x1f_ffff, 0x15_5555, 123_456,
        ] {
            let pieces3 = (32 - v.leading_zeros()).div_ceil(10).max(1);
            assert_eq!(spread::<3>(v, pieces3), morton::dilate::<3>(v, 0), "{v}");
        }
        for v in [0u32, 1, 1023, 1024, u32::MAX, 0xdead_beef, 1 << 31] {
            let pieces2 = (32 - v.leading_zeros()).div_ceil(10).max(1);
            assert_eq!(spread::<2>(v, pieces2), morton::dilate::<2>(v, 0), "{v}");
        }
    }
}
