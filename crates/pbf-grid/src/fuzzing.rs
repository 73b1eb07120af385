//! The harness of the `grid_rebuild` fuzz target (`fuzz/fuzz_targets/grid_rebuild.rs`).
//!
//! It lives in the crate, not in `fuzz/`, so that the stable test suite replays every
//! file of the committed corpus (`fuzz/corpus/grid_rebuild/`) through the same code
//! (`tests/fuzz_corpus.rs`). Not part of the public API.
//!
//! The input bytes become a dimension, a radius and up to [`MAX_POINTS`] points (raw
//! `f32` bits, so NaN, infinities, subnormals and huge values all occur, or small
//! lattice values, so that points share cells and have neighbours). The harness then
//! checks more than "no panic": a rebuild that fails must fail with the error the
//! input calls for and leave the grid as it was; one that succeeds must give a valid
//! permutation and exactly the neighbours of a brute-force search, also after a second
//! rebuild of the moved points (the re-sort path).

use crate::{Grid, GridError, distance2, within};

/// The fewest inputs a committed corpus may hold: fewer means it was not found or was
/// emptied, and the replay would check nothing.
pub const MIN_CORPUS_INPUTS: usize = 10;

/// The line a corpus replay prints when it skips because the corpus is absent.
pub const SKIPPED: &str = "skipped: fuzz corpus not present (packaged crate)";

/// Whether the crate at `manifest_dir` (its `env!("CARGO_MANIFEST_DIR")`) sits in the
/// repository checkout: two folders up is a `Cargo.toml` with a `[workspace]` table.
/// A packaged crate (unpacked from its `.crate` file) has no such file above it.
///
/// ```
/// assert!(!pbf_grid::fuzzing::in_repository("/nonexistent/crates/pbf-grid"));
/// ```
pub fn in_repository(manifest_dir: &str) -> bool {
    let root = std::path::Path::new(manifest_dir).join("../../Cargo.toml");
    std::fs::read_to_string(root)
        .is_ok_and(|text| text.lines().any(|line| line.trim() == "[workspace]"))
}

/// The committed corpus folder `fuzz/corpus/TARGET/` of the repository that holds the
/// crate at `manifest_dir`, or `None` (after printing [`SKIPPED`]) when the folder is
/// absent outside the repository: a packaged crate does not ship the corpus.
///
/// # Panics
/// When the folder is absent although the crate is in the repository checkout
/// ([`in_repository`]): there the corpus must be replayed, so a broken path fails
/// instead of skipping.
pub fn corpus_dir(manifest_dir: &str, target: &str) -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(manifest_dir)
        .join("../../fuzz/corpus")
        .join(target);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        !in_repository(manifest_dir),
        "{} is missing from the repository checkout",
        dir.display()
    );
    println!("{SKIPPED}");
    None
}

/// Replays every file of the committed corpus `fuzz/corpus/TARGET/` through the
/// target's `harness`, in name order: the stable tests (`tests/fuzz_corpus.rs` of
/// `pbf-grid`, `pbf-solver` and `pbf-cli`, which reaches it as
/// `pbf_solver::fuzzing::replay_corpus`) call it so that CI checks every corpus input,
/// and every crash turned regression input, on every submission. `manifest_dir` is
/// the calling crate's `env!("CARGO_MANIFEST_DIR")` (a crate of `crates/`). In a
/// packaged crate, which has no corpus, it prints [`SKIPPED`] and checks nothing
/// ([`corpus_dir`]).
///
/// # Panics
/// When the directory cannot be read (or is absent in the repository checkout), holds
/// fewer than [`MIN_CORPUS_INPUTS`] files, or an input makes the harness panic (the
/// message names the input).
pub fn replay_corpus(
    manifest_dir: &str,
    target: &str,
    harness: impl Fn(&[u8]) + std::panic::RefUnwindSafe,
) {
    let Some(dir) = corpus_dir(manifest_dir, target) else {
        return;
    };
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= MIN_CORPUS_INPUTS,
        "{} holds only {} inputs",
        dir.display(),
        files.len()
    );
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = std::panic::catch_unwind(|| harness(&data));
        assert!(outcome.is_ok(), "corpus input {} fails", file.display());
    }
}

/// The most points one input makes (the brute-force check is quadratic).
pub const MAX_POINTS: usize = 192;

/// Reads the fuzzer's bytes front to back; past the end it yields zeros. A clone
/// reads the same bytes again from where the original stands.
#[derive(Clone, Debug)]
pub struct ByteReader<'a> {
    data: &'a [u8],
}

impl<'a> ByteReader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len()
    }
    /// The next byte (0 at the end).
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
    /// The next little-endian `u32` (missing bytes read as 0).
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// The next `f32` from raw bits.
    pub fn f32_bits(&mut self) -> f32 {
        f32::from_bits(self.u32())
    }
    /// A coordinate: raw bits, or (with `small`) one byte on a lattice of step 1/16
    /// around 0, where points share cells.
    pub fn coordinate(&mut self, small: bool) -> f32 {
        if small {
            f32::from(self.u8() as i8) / 16.0
        } else {
            self.f32_bits()
        }
    }
}

/// Runs one fuzz input; panics when the grid misbehaves.
pub fn grid_rebuild(data: &[u8]) {
    let mut r = ByteReader::new(data);
    let flags = r.u8();
    if flags & 1 == 0 {
        run::<2>(flags, &mut r);
    } else {
        run::<3>(flags, &mut r);
    }
}

fn run<const D: usize>(flags: u8, r: &mut ByteReader<'_>) {
    let small = flags & 2 != 0;
    let h = if flags & 4 != 0 {
        r.f32_bits()
    } else {
        f32::from(r.u8() % 64 + 1) / 32.0
    };
    let bytes_per_point = if small { D } else { 4 * D };
    let n = (r.remaining() / bytes_per_point.max(1)).min(MAX_POINTS);
    let mut positions: [Vec<f32>; D] = std::array::from_fn(|_| Vec::with_capacity(n));
    for _ in 0..n {
        for axis in positions.iter_mut() {
            axis.push(r.coordinate(small));
        }
    }
    let mut grid = Grid::<D>::new();
    let mut sorted = check_rebuild(&mut grid, &positions, h);
    if let Some(sorted) = sorted.as_mut() {
        // Move every point a little (those that wrap to non-finite values make the
        // second rebuild fail, which is checked too) and rebuild the sorted order.
        let shift = f32::from(flags >> 4) / 64.0;
        for (axis, values) in sorted.iter_mut().enumerate() {
            for (k, v) in values.iter_mut().enumerate() {
                if (k + axis) % 3 == 0 {
                    *v += shift;
                }
            }
        }
        check_rebuild(&mut grid, sorted, h);
    }
}

/// The error a rebuild of these points must give, if any, apart from the extent check
/// (which the brute force cannot predict cheaply).
fn expected_error<const D: usize>(positions: &[Vec<f32>; D], h: f32) -> Option<GridError> {
    let h2 = h * h;
    if !(h > 0.0 && h.is_finite() && h2 > 0.0 && h2.is_finite()) {
        return Some(GridError::InvalidRadius { value: h });
    }
    for index in 0..positions[0].len() {
        for (axis, values) in positions.iter().enumerate() {
            if !values[index].is_finite() {
                return Some(GridError::NonFinitePosition {
                    index,
                    axis,
                    value: values[index],
                });
            }
        }
    }
    None
}

/// Rebuilds and checks; returns the points in sorted order on success.
fn check_rebuild<const D: usize>(
    grid: &mut Grid<D>,
    positions: &[Vec<f32>; D],
    h: f32,
) -> Option<[Vec<f32>; D]> {
    let before = (grid.permutation().to_vec(), grid.cell_keys().to_vec());
    let refs: [&[f32]; D] = std::array::from_fn(|a| positions[a].as_slice());
    let expected = expected_error(positions, h);
    match grid.rebuild(refs, h) {
        Err(e) => {
            match (&expected, &e) {
                // NaN != NaN: compare the variant and the place.
                (Some(GridError::InvalidRadius { .. }), GridError::InvalidRadius { .. }) => {}
                (Some(want), got) if want == got => {}
                (
                    Some(GridError::NonFinitePosition { index, axis, .. }),
                    GridError::NonFinitePosition {
                        index: i, axis: a, ..
                    },
                ) if index == i && axis == a => {}
                (None, GridError::OutOfRange { .. }) => {}
                _ => panic!("rebuild gave {e:?}, expected {expected:?}"),
            }
            assert_eq!(
                (grid.permutation(), grid.cell_keys()),
                (&before.0[..], &before.1[..]),
                "a failed rebuild changed the grid"
            );
            None
        }
        Ok(()) => {
            assert!(expected.is_none(), "rebuild accepted {expected:?}");
            let n = positions[0].len();
            let mut seen = vec![false; n];
            for &i in grid.permutation() {
                assert!(!std::mem::replace(&mut seen[i as usize], true), "repeated");
            }
            assert!(seen.iter().all(|s| *s), "not a permutation");
            let covered: usize = grid.cells().iter().map(|c| c.len()).sum();
            assert_eq!(covered, n, "cells do not cover the points");
            let sorted: [Vec<f32>; D] = std::array::from_fn(|a| {
                grid.permutation()
                    .iter()
                    .map(|&i| positions[a][i as usize])
                    .collect()
            });
            let s: [&[f32]; D] = std::array::from_fn(|a| sorted[a].as_slice());
            let point = |i: usize| -> [f32; D] { std::array::from_fn(|a| s[a][i]) };
            let h2 = h * h;
            let mut found = Vec::new();
            let mut queried = Vec::new();
            for i in 0..n {
                found.clear();
                grid.for_each_neighbour(s, i, |j| found.push(j as u32));
                found.sort_unstable();
                let brute: Vec<u32> = (0..n)
                    .filter(|&j| within(distance2(point(i), point(j)), h2))
                    .map(|j| j as u32)
                    .collect();
                assert_eq!(found, brute, "neighbours of sorted point {i}");
                grid.query(s, point(i), &mut queried)
                    .expect("finite query point");
                assert_eq!(queried, brute, "query at sorted point {i}");
                let mut ranges = [crate::CellRange::default(); 27];
                let count = grid
                    .ranges_around(point(i), &mut ranges)
                    .expect("finite query point");
                let around: Vec<u32> = ranges[..count]
                    .iter()
                    .flat_map(|r| r.as_range())
                    .filter(|&j| within(distance2(point(i), point(j)), h2))
                    .map(|j| j as u32)
                    .collect();
                assert_eq!(around, brute, "ranges around sorted point {i}");
            }
            Some(sorted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_accepts_and_rejects() {
        // Empty input, a lattice in 2D and 3D, NaN coordinates, a bad radius.
        grid_rebuild(&[]);
        grid_rebuild(&[2 | 0x30, 31, 0, 0, 8, 0, 16, 0, 0, 8, 255, 255]);
        grid_rebuild(&[3, 31, 0, 0, 0, 8, 8, 8, 16, 16, 16]);
        let nan = f32::NAN.to_le_bytes();
        let mut input = vec![0, 31];
        input.extend_from_slice(&1.0f32.to_le_bytes());
        input.extend_from_slice(&nan);
        grid_rebuild(&input);
        let mut input = vec![4];
        input.extend_from_slice(&(-1.0f32).to_le_bytes());
        input.extend_from_slice(&[0; 8]);
        grid_rebuild(&input);
    }
}
