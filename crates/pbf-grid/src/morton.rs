//! Morton (Z-order) keys of integer cell coordinates.
//!
//! A Morton key interleaves the bits of the coordinates: in 3D, bit `3 i + a` of the
//! key is bit `i` of coordinate `a` (x is axis 0, the lowest bit); in 2D, bit
//! `2 i + a`. Sorting cells by key walks space along a Z-shaped curve that keeps
//! cells which are near in space mostly near in the order, which is why the grid
//! stores its particles in this order.
//!
//! 3D keys hold 21 bits per axis (63 bits in all), 2D keys 32 bits per axis.
//!
//! ```
//! use pbf_grid::morton;
//!
//! assert_eq!(morton::encode3([1, 0, 0]), 0b001);
//! assert_eq!(morton::encode3([0, 1, 0]), 0b010);
//! assert_eq!(morton::encode3([0, 0, 1]), 0b100);
//! assert_eq!(morton::encode3([3, 0, 0]), 0b001_001);
//! assert_eq!(morton::decode3(morton::encode3([5, 6, 7])), [5, 6, 7]);
//! assert_eq!(morton::encode2([u32::MAX, u32::MAX]), u64::MAX);
//! ```

/// The largest coordinate a 3D key holds: 21 bits per axis.
pub const MAX_COORD3: u32 = (1 << 21) - 1;

/// The largest coordinate a 2D key holds: 32 bits per axis.
pub const MAX_COORD2: u32 = u32::MAX;

/// Spreads the low 21 bits of `v` so that bit `i` lands on bit `3 i`.
#[inline]
fn spread3(v: u32) -> u64 {
    let mut x = u64::from(v) & 0x1f_ffff;
    x = (x | (x << 32)) & 0x001f_0000_0000_ffff;
    x = (x | (x << 16)) & 0x001f_0000_ff00_00ff;
    x = (x | (x << 8)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x << 4)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x << 2)) & 0x1249_2492_4924_9249;
    x
}

/// Inverse of [`spread3`]: gathers bits `0, 3, 6, ...` of `k` into the low 21 bits.
#[inline]
fn compact3(k: u64) -> u32 {
    let mut x = k & 0x1249_2492_4924_9249;
    x = (x ^ (x >> 2)) & 0x10c3_0c30_c30c_30c3;
    x = (x ^ (x >> 4)) & 0x100f_00f0_0f00_f00f;
    x = (x ^ (x >> 8)) & 0x001f_0000_ff00_00ff;
    x = (x ^ (x >> 16)) & 0x001f_0000_0000_ffff;
    x = (x ^ (x >> 32)) & 0x1f_ffff;
    x as u32
}

/// Spreads the 32 bits of `v` so that bit `i` lands on bit `2 i`.
#[inline]
fn spread2(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    x = (x | (x << 1)) & 0x5555_5555_5555_5555;
    x
}

/// Inverse of [`spread2`].
#[inline]
fn compact2(k: u64) -> u32 {
    let mut x = k & 0x5555_5555_5555_5555;
    x = (x ^ (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x ^ (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x ^ (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x ^ (x >> 8)) & 0x0000_ffff_0000_ffff;
    x = (x ^ (x >> 16)) & 0x0000_0000_ffff_ffff;
    x as u32
}

/// The 3D Morton key of cell `c = [x, y, z]`.
///
/// Only the low 21 bits of each coordinate are used (coordinates up to
/// [`MAX_COORD3`]); the grid checks the range before it encodes, so it never
/// produces a wrapped key.
///
/// ```
/// use pbf_grid::morton::{encode3, MAX_COORD3};
/// assert_eq!(encode3([0, 0, 0]), 0);
/// assert_eq!(encode3([MAX_COORD3; 3]), (1 << 63) - 1);
/// ```
#[inline]
pub fn encode3(c: [u32; 3]) -> u64 {
    debug_assert!(
        c.iter().all(|&v| v <= MAX_COORD3),
        "3D Morton coordinate out of range"
    );
    spread3(c[0]) | (spread3(c[1]) << 1) | (spread3(c[2]) << 2)
}

/// The cell coordinates of a 3D Morton key (bit 63 is ignored).
///
/// ```
/// use pbf_grid::morton::{decode3, encode3};
/// assert_eq!(decode3(encode3([2_000_000, 7, 123_456])), [2_000_000, 7, 123_456]);
/// ```
#[inline]
pub fn decode3(k: u64) -> [u32; 3] {
    [compact3(k), compact3(k >> 1), compact3(k >> 2)]
}

/// The 2D Morton key of cell `c = [x, y]` (32 bits per axis).
///
/// ```
/// use pbf_grid::morton::encode2;
/// assert_eq!(encode2([1, 0]), 0b01);
/// assert_eq!(encode2([0, 1]), 0b10);
/// assert_eq!(encode2([2, 3]), 0b1110);
/// ```
#[inline]
pub fn encode2(c: [u32; 2]) -> u64 {
    spread2(c[0]) | (spread2(c[1]) << 1)
}

/// The cell coordinates of a 2D Morton key.
///
/// ```
/// use pbf_grid::morton::{decode2, encode2};
/// assert_eq!(decode2(encode2([u32::MAX, 12345])), [u32::MAX, 12345]);
/// ```
#[inline]
pub fn decode2(k: u64) -> [u32; 2] {
    [compact2(k), compact2(k >> 1)]
}

/// The key bits of coordinate `v` on `axis` in a `D`-dimensional key, so that a key
/// is the bitwise OR of its axes' dilated coordinates. `D` is 2 or 3.
#[inline]
pub(crate) fn dilate<const D: usize>(v: u32, axis: usize) -> u64 {
    if D == 3 {
        spread3(v) << axis
    } else {
        spread2(v) << axis
    }
}

/// [`encode3`] or [`encode2`] for a dimension known at compile time (2 or 3).
#[inline]
pub(crate) fn encode<const D: usize>(c: [u32; D]) -> u64 {
    let mut key = 0;
    for (axis, &v) in c.iter().enumerate() {
        key |= dilate::<D>(v, axis);
    }
    key
}

/// The largest coordinate a `D`-dimensional key holds.
#[inline]
pub(crate) const fn max_coord<const D: usize>() -> u32 {
    if D == 3 { MAX_COORD3 } else { MAX_COORD2 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-by-bit definition the magic-number versions must match.
    fn encode_slow(c: &[u32], bits: u32) -> u64 {
        let d = c.len() as u32;
        let mut key = 0u64;
        for i in 0..bits {
            for (a, &v) in c.iter().enumerate() {
                key |= u64::from((v >> i) & 1) << (d * i + a as u32);
            }
        }
        key
    }

    #[test]
    fn matches_the_bitwise_definition() {
        let samples = [
            0u32,
            1,
            2,
            3,
            5,
            0x155555,
            0x0aaaaa,
            0x1fffff,
            1 << 20,
            123_456,
        ];
        for &x in &samples {
            for &y in &samples {
                for &z in &samples {
                    assert_eq!(encode3([x, y, z]), encode_slow(&[x, y, z], 21));
                    assert_eq!(decode3(encode3([x, y, z])), [x, y, z]);
                }
                let (x2, y2) = (x.rotate_left(11) ^ y, y.wrapping_mul(2_654_435_761));
                assert_eq!(encode2([x2, y2]), encode_slow(&[x2, y2], 32));
                assert_eq!(decode2(encode2([x2, y2])), [x2, y2]);
            }
        }
    }

    #[test]
    fn generic_forms_agree_with_named_forms() {
        assert_eq!(encode::<3>([7, 9, 11]), encode3([7, 9, 11]));
        assert_eq!(encode::<2>([7, 9]), encode2([7, 9]));
        assert_eq!(max_coord::<3>(), MAX_COORD3);
        assert_eq!(max_coord::<2>(), MAX_COORD2);
    }

    #[test]
    fn keys_order_cells_along_the_z_curve() {
        // The four cells of a 2x2 block come in the order (0,0) (1,0) (0,1) (1,1).
        let order: Vec<u64> = [[0, 0], [1, 0], [0, 1], [1, 1]].map(encode2).to_vec();
        assert_eq!(order, vec![0, 1, 2, 3]);
        // A block of 2x2x2 cells is contiguous in key order.
        let mut block: Vec<u64> = (0..8)
            .map(|i| encode3([2 + (i & 1), 4 + ((i >> 1) & 1), 6 + (i >> 2)]))
            .collect();
        block.sort_unstable();
        assert!(block.windows(2).all(|w| w[1] == w[0] + 1));
    }
}
