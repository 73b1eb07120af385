//! Mending the neighbour lists: the pairs that particles moving more than half the
//! skin bring within h are added to the lists, or the solver searches again.

use super::Solver;
use super::refs;
use crate::parallel::chunk;

/// The most particles, as a fraction `1 / FAST_FRACTION` of all and at most
/// [`FAST_MOST`], whose pairs `Solver::repair_lists` checks one by one before it
/// searches again instead: a check costs about ten times a particle's share of a
/// search. With the adaptive skin, more than a thousand particles of a large splash
/// may pass half the skin within a step, and mending up to 2048 costs less than the
/// second search it spares.
pub(super) const FAST_FRACTION: usize = 32;

/// See [`FAST_FRACTION`]: each moved particle's check queries the grid and the cells
/// of the other moved ones.
pub(super) const FAST_MOST: usize = 2048;

/// The most pairs `Solver::repair_lists` adds to the lists before it searches again
/// instead: an added pair that needs a new slot in its group moves the rest of its
/// list block, so 256 pairs (512 entries) may cost as much as a search of about
/// 100,000 particles. A check in a flowing fluid adds far fewer.
pub(super) const MISSING_MOST: usize = 256;

/// Moved particles a task of [`Solver::repair_lists`] takes.
pub(super) const REPAIR_CHUNK: usize = 64;

/// The scratch of one chunk of [`Solver::repair_lists`]: the particles around a point,
/// and the missing pairs the chunk's moved particles found.
#[derive(Debug, Clone, Default)]
pub(super) struct RepairScratch {
    nearby: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    /// Whether a moved particle of the chunk had no place in the grid (not finite).
    failed: bool,
}

/// The width of [`Solver::repair_lists`]' cells of the moved particles, in h: a little
/// more than h, so that two particles the lists' distance test puts within h (in
/// `f32`) lie in neighbouring cells by the cells' `f64` arithmetic.
pub(super) const MOVER_CELL: f64 = 1.001;

/// The cell of `p` among cells `cell` wide, as a key whose order is the lexicographic
/// order of the cell coordinates (whole cells from the origin, each clamped to
/// `-2^20..=2^20 - 2` and stored in 21 bits, so that the cell above always has a
/// coordinate: far-out points share the outermost cells, which only adds candidates; a
/// NaN coordinate takes cell 0, and its particle makes the repair give up).
pub(super) fn mover_cell<const D: usize>(p: [f32; D], cell: f64) -> u64 {
    const FAR: f64 = (1u32 << 20) as f64;
    (0..D).fold(0, |key, a| {
        let c = (f64::from(p[a]) / cell).floor().clamp(-FAR, FAR - 2.0) + FAR;
        (key << 21) | c as u64
    })
}

/// The `3^(D-1)` runs of cells around the cell `centre` (a [`mover_cell`] key): for
/// each offset of the first `D - 1` axes, the keys of the cells from the last axis'
/// `-1` to its `+1`, first and last; no run twice, and none of a coordinate below 0
/// (which holds no point). The runs ascend (the first axis' offset changes slowest),
/// so a search for each in a sorted list may start where the last one ended.
pub(super) fn columns_around<const D: usize>(centre: u64) -> impl Iterator<Item = (u64, u64)> {
    const MASK: u64 = (1 << 21) - 1;
    let coordinate = move |a: usize| (centre >> (21 * (D - 1 - a))) & MASK;
    (0..3usize.pow(D as u32 - 1)).filter_map(move |code| {
        let mut key = 0;
        for a in 0..D - 1 {
            // Axis `a`'s offset is digit `D - 2 - a` of the code in base 3.
            let digit = code / 3usize.pow((D - 2 - a) as u32) % 3;
            // No cell below 0 (the coordinates are at most MASK - 1, so the one above
            // always exists): each run once.
            let c = (coordinate(a) + digit as u64).checked_sub(1)?;
            key = (key << 21) | c;
        }
        let last = coordinate(D - 1);
        let (lo, hi) = (last.saturating_sub(1), last + 1);
        Some(((key << 21) | lo, (key << 21) | hi))
    })
}

impl<const D: usize> Solver<D> {
    /// Room for the scratch of [`Self::repair_lists`] (a query finds at most about as
    /// many as a particle may have candidates), taken with the lists (a search, or a
    /// checkpoint's lists) rather than in some later step.
    pub(super) fn reserve_repair(&mut self) {
        let limit = self.candidate_limit();
        if self.moved.capacity() < FAST_MOST {
            self.moved.reserve(FAST_MOST);
        }
        if self.mover_cells.capacity() < FAST_MOST {
            self.mover_cells.reserve(FAST_MOST);
        }
        // A chunk's pairs stop one past MISSING_MOST.
        let chunks = FAST_MOST.div_ceil(REPAIR_CHUNK);
        if self.repair_scratch.len() < chunks {
            self.repair_scratch.resize_with(chunks, || RepairScratch {
                nearby: Vec::with_capacity(limit),
                pairs: Vec::with_capacity(MISSING_MOST + 1),
                failed: false,
            });
        }
        for part in &mut self.repair_scratch {
            if part.nearby.capacity() < limit {
                part.nearby.reserve(limit);
            }
        }
        if self.missing.capacity() < MISSING_MOST {
            self.missing.reserve(MISSING_MOST);
        }
    }

    /// The most particles that may have moved past half the skin for
    /// [`Self::repair_lists`] to mend the lists rather than give up.
    pub(super) fn fast_limit(n: usize) -> usize {
        (n / FAST_FRACTION).min(FAST_MOST)
    }

    /// Makes the lists hold every pair within h when some particles have moved more
    /// than half the skin since the build (a squared displacement above `allowed`, or
    /// not finite): the moved ones. Returns `false`, and changes nothing, when there
    /// are too many of them (or of the pairs they bring within h) to mend the lists
    /// this way; the caller then searches. With no moved particle it returns `true` at
    /// once.
    ///
    /// A pair of two particles that did not move that far is in the lists (Verlet's
    /// criterion). A particle `j` within h of a moved one `f` now is in `f`'s list if
    /// the pair was found; such a `j` that did not move far was within `h + skin / 2`
    /// (less than the lists' radius) of `f`'s current position when the grid was
    /// built, so a query of the grid around that position finds it; the moved ones
    /// find each other in cells of their current positions ([`mover_cell`]). The
    /// moved particles are taken in chunks on the threads, each chunk collecting its
    /// pairs; every pair within h missing from the lists is then added to both
    /// particles' lists ([`NeighbourLists::insert`](crate::lists::NeighbourLists::insert)), in ascending order of the pairs,
    /// so the result depends on the positions alone.
    ///
    /// Whether it gives up depends on `built` and the predicted positions alone, not
    /// on what earlier repairs added: it counts the pairs within h that are not within
    /// the lists' radius at `built` (those a build on `built` lacks, by its own
    /// distance test), whether or not an earlier repair added them. So the lists a
    /// checkpoint rebuilds from `built` decide as the saved ones would, and end up
    /// with the same pairs within h in the same ascending order: the same sums.
    ///
    /// In a large fluid the criterion fails in most iterations for one or two
    /// particles, and in a splash for particles that move a fraction of h within a
    /// step and bring a few pairs within h each time: without the repair, each of
    /// those failures would cost a whole search.
    ///
    /// `counted`: whether [`Self::drift`] has just run at these positions; it counts,
    /// per chunk, the particles past half the skin, and the repair takes its movers
    /// from that count (otherwise it runs `drift` first), so that the checks between
    /// the iterations do not count them a second time, in a pass of their own over
    /// every particle.
    pub(super) fn repair_lists(&mut self, counted: bool) -> bool {
        if !counted {
            self.drift(false);
        }
        let n = self.len();
        let allowed = self.half_skin2();
        let (now, built) = (refs(&self.predicted), refs(&self.built));
        // Offsets and displacements are minimum images on the periodic axes (the
        // lists' own test); `offset` is the plain difference on the others.
        let periodic = *self.lists.periodic();
        let displaced = |i: usize| {
            let d: [f32; D] = core::array::from_fn(|a| periodic.image(a, now[a][i] - built[a][i]));
            !(pbf_kernels::norm2(d) <= allowed)
        };
        // Counted per chunk of `MIN_CHUNK` particles by `drift`.
        let fast: usize = self.drift.iter().map(|d| d.movers as usize).sum();
        if fast == 0 {
            return true;
        }
        if fast > Self::fast_limit(n) {
            return false;
        }
        self.moved.clear();
        for (c, d) in self.drift.iter().enumerate() {
            if d.movers > 0 {
                self.moved
                    .extend(chunk(c, n).filter(|&f| displaced(f)).map(|f| f as u32));
            }
        }
        // The grid's cells and the movers' cells are those of the positions, not of
        // their images: a mover near a periodic face (within twice the lists' radius,
        // where a pair across the face may be) makes the repair give up. Farther in,
        // its neighbours within h and their positions of the build lie on its side of
        // every face.
        if periodic.any() {
            let near = 2.0 * self.list_radius();
            let (lo, hi) = (self.domain.lo(), self.domain.hi());
            let near_face = |f: u32| {
                (0..D).any(|a| {
                    let p = now[a][f as usize];
                    periodic.is_periodic(a) && !(p - lo[a] >= near && hi[a] - p >= near)
                })
            };
            if self.moved.iter().any(|&f| near_face(f)) {
                return false;
            }
        }
        let (h2, r2) = (self.kernel.h2(), self.list_radius().powi(2));
        // A pair within h now that a build on `built` did not find.
        let unbuilt = |f: usize, j: u32| {
            let j = j as usize;
            let d: [f32; D] = core::array::from_fn(|a| periodic.image(a, now[a][f] - now[a][j]));
            let e: [f32; D] =
                core::array::from_fn(|a| periodic.image(a, built[a][f] - built[a][j]));
            j != f
                && pbf_kernels::within(pbf_kernels::norm2(d), h2)
                && !pbf_kernels::within(pbf_kernels::norm2(e), r2)
        };
        // The moved ones by the cells of their current positions, cells a little wider
        // than h: a moved particle within h of another is in one of the 3^D cells
        // around it. (Comparing every pair of them would cost the square of their
        // count, with a thousand or more of them in a splash.)
        let cell = f64::from(self.kernel.h()) * MOVER_CELL;
        let cells = &mut self.mover_cells;
        cells.clear();
        cells.extend(self.moved.iter().enumerate().map(|(k, &f)| {
            let p: [f32; D] = core::array::from_fn(|a| now[a][f as usize]);
            (mover_cell(p, cell), k as u32)
        }));
        cells.sort_unstable();
        // The moved ones in chunks on the threads, each chunk's pairs in its scratch.
        // Reserved with the lists (`reserve_repair`), which a repair needs.
        let chunks = self.moved.len().div_ceil(REPAIR_CHUNK);
        let scratch = &mut self.repair_scratch[..chunks];
        let (grid, moved, cells) = (&self.grid, &self.moved, &self.mover_cells);
        crate::parallel::for_each_block(scratch, 1, &|c, part| {
            let RepairScratch {
                nearby,
                pairs,
                failed,
            } = &mut part[0];
            pairs.clear();
            *failed = false;
            let first = c * REPAIR_CHUNK;
            for (k, &f) in moved.iter().enumerate().skip(first).take(REPAIR_CHUNK) {
                let p: [f32; D] = core::array::from_fn(|a| now[a][f as usize]);
                // A moved particle that is not finite has no place in the grid: the
                // chunk fails, and the repair gives up.
                let mut ranges = [pbf_grid::CellRange::default(); 27];
                let Ok(count) = grid.ranges_around(p, &mut ranges) else {
                    *failed = true;
                    return;
                };
                // The particles within h of `p` now. An unmoved one lies within
                // `h + skin / 2` of `p` by the positions of the build, inside the
                // ranges around `p` of the build's grid (cells at least that wide).
                nearby.clear();
                crate::lists::near(now, p, h2, &ranges[..count], nearby);
                // More than MISSING_MOST pairs make the repair give up: no need to
                // find more.
                let unmoved = nearby.iter().filter(|&&j| !displaced(j as usize));
                for &j in unmoved.filter(|&&j| unbuilt(f as usize, j)) {
                    if pairs.len() > MISSING_MOST {
                        return;
                    }
                    pairs.push((f.min(j), f.max(j)));
                }
                // Each pair of two moved particles once: from the first of them (the
                // moved ones ascend). The runs ascend: each search starts where the
                // last one ended, and a run's few moved ones are walked, not searched
                // for (two binary searches for each of the nine runs in 3D would cost
                // more than the walk).
                let mut from = 0;
                for (lo, hi) in columns_around::<D>(mover_cell(p, cell)) {
                    from += cells[from..].partition_point(|c| c.0 < lo);
                    for &(_, m) in cells[from..].iter().take_while(|c| c.0 <= hi) {
                        let j = moved[m as usize];
                        if m as usize > k && unbuilt(f as usize, j) {
                            if pairs.len() > MISSING_MOST {
                                return;
                            }
                            pairs.push((f.min(j), f.max(j)));
                        }
                    }
                }
            }
        });
        let found: usize = self.repair_scratch[..chunks]
            .iter()
            .map(|s| s.pairs.len())
            .sum();
        if found > MISSING_MOST || self.repair_scratch[..chunks].iter().any(|s| s.failed) {
            return false;
        }
        let pairs = &mut self.missing;
        pairs.clear();
        for part in &self.repair_scratch[..chunks] {
            pairs.extend_from_slice(&part.pairs);
        }
        pairs.sort_unstable();
        for &(i, j) in pairs.iter() {
            // The lists are symmetric (the build's distance test gives the same bits
            // either way round): an earlier repair added the pair to both or neither.
            if !self.lists.contains(i as usize, j) {
                debug_assert!(!self.lists.contains(j as usize, i));
                self.lists.insert(i as usize, j);
                self.lists.insert(j as usize, i);
            }
        }
        true
    }
}
