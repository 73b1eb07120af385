//! The pairs across a periodic face: a block's rows, as a sifter left them, get the
//! neighbours that only the minimum image brings within the radius.
//!
//! The grid bins the points where they are, so the sifters see only the pairs whose
//! plain offset is within the radius. A point near a periodic face looks for the rest
//! around its images across the faces it is near ([`Periodic::for_each_image`]) in the
//! grid's cells, and keeps a candidate `j` when the minimum-image offset is within the
//! radius (the test the passes' offsets make, [`Periodic::offset`]) and the plain one
//! is not (the sifters found those). With every period more than twice the radius
//! the two sets are disjoint, and every pair within the radius is in one of them.
//! Each row that gains entries is sorted again, so a list stays ascending.

use super::*;
use crate::Periodic;

/// Adds to `rows` (the lists of the particles `range`) the pairs within `sqrt(r2)`
/// across the periodic faces of `periodic`, each row ascending.
pub(super) fn add_images<const D: usize>(
    rows: &mut Rows,
    grid: &Grid<D>,
    positions: [&[f32]; D],
    r2: f32,
    range: core::ops::Range<usize>,
    periodic: &Periodic,
) {
    // Rows cut short by an overfull build stay as they are: the build fails.
    if rows.overfull.is_some() {
        return;
    }
    // A point within the radius of another across a face lies within twice the
    // radius of it (stray points of an iteration included): the images to look around.
    let reach = 2.0 * r2.sqrt();
    let extra = &mut rows.images;
    extra.clear();
    let mut ranges = [crate::CellRange::default(); 27];
    for i in range.clone() {
        let p: [f32; D] = core::array::from_fn(|a| positions[a][i]);
        let first = extra.len();
        periodic.for_each_image(p, reach, |image| {
            let Ok(count) = grid.ranges_around(image, &mut ranges) else {
                return;
            };
            for r in &ranges[..count] {
                for j in r.as_range() {
                    let q: [f32; D] = core::array::from_fn(|a| positions[a][j]);
                    if j != i
                        && crate::within(pbf_kernels::norm2(periodic.offset(p, q)), r2)
                        && !crate::within(crate::distance2(p, q), r2)
                    {
                        extra.push(((i - range.start) as u32, j as u32));
                    }
                }
            }
        });
        // Two images may share candidates when the period is short.
        extra[first..].sort_unstable();
        let mut keep = first;
        for k in first..extra.len() {
            if k == first || extra[k] != extra[keep - 1] {
                extra[keep] = extra[k];
                keep += 1;
            }
        }
        extra.truncate(keep);
    }
    if extra.is_empty() {
        return;
    }
    // Moves every row up by the entries added before it, from the last row down, and
    // writes each row's added entries after it.
    let total = extra.len();
    let last = rows.ends.last().copied().unwrap_or(0) as usize;
    if rows.indices.len() < last + total {
        rows.indices.resize(last + total, 0);
    }
    let mut added = total;
    let mut e = extra.len();
    for k in (0..rows.ends.len()).rev() {
        let start = if k == 0 { 0 } else { rows.ends[k - 1] as usize };
        let end = rows.ends[k] as usize;
        let mut from = e;
        while from > 0 && extra[from - 1].0 as usize == k {
            from -= 1;
        }
        let own = e - from;
        let shift = added - own;
        rows.indices.copy_within(start..end, start + shift);
        for (t, &(_, j)) in extra[from..e].iter().enumerate() {
            rows.indices[end + shift + t] = j;
        }
        let new_end = end + shift + own;
        if own > 0 {
            rows.indices[start + shift..new_end].sort_unstable();
        }
        rows.ends[k] = new_end as u32;
        added = shift;
        e = from;
    }
    debug_assert_eq!(added, 0);
}
