//! The skins of the neighbour lists, how far the particles moved since the lists were
//! built, and the skin the next search takes.

use super::Solver;
use super::refs;
use super::repair::{FAST_FRACTION, FAST_MOST};
use crate::parallel::{per_chunk, stretches};

/// The skins the neighbour lists may have, relative to h, narrowest first. The lists
/// hold the pairs within `h (1 + skin)` of each other at the positions they were built
/// from. Before every constraint iteration the solver checks Verlet's criterion: while
/// no particle has moved more than half the skin since the lists were built, every
/// pair within h is in them (each of the two moved less than `skin h / 2`). When a few
/// particles have moved further, it checks their pairs directly and adds the missing
/// ones (`Solver::repair_lists`); when many have moved that far, or they bring many
/// pairs within h, it searches again. So no pair within h is ever missed, whatever the
/// time step or the skin.
///
/// A wider skin means more pairs in every pass (a quarter more entries at 0.1 h than at
/// 0.04 h) and fewer searches and mends. Each search takes the narrowest skin of these
/// past whose half at most [`skin_budget`] particles moved by the end of the last step
/// (counted against the lists the last step used, so over several steps when it kept
/// them), and the widest after a step that had to search again inside its iterations or
/// whose lists a 0.1 h skin could have kept (see [`next_skin`] and
/// `Solver::keeps_lists`). A narrow skin pays while the flow is slow, with fewer list
/// entries a particle; in a splash many particles outrun it within a step, and the
/// step would search twice.
pub(crate) const SKINS: [f32; 5] = [0.04, 0.05, 0.06, 0.08, 0.1];

/// The widest of [`SKINS`]: the skin of a solver's first search.
pub(crate) const WIDEST_SKIN: f32 = SKINS[SKINS.len() - 1];

/// The most particles, of `n`, that may have moved past half a skin by the end of a
/// step for the next search to take that skin (see [`SKINS`]): a quarter of what
/// `Solver::repair_lists` mends before it searches instead (so the next step may move
/// up to four times as many), and no more than one in 256 (at most 512). Each moved
/// particle costs a query of its pairs at every check that finds it moved, while a
/// narrower skin saves list entries in every pass; at one particle in 256 the two
/// are about even in a large dam break, and larger budgets take narrower skins more
/// often without a faster step.
pub(crate) fn skin_budget(n: usize) -> usize {
    (n / 256).min((n / FAST_FRACTION).min(FAST_MOST) / 4)
}

/// The skin of the next neighbour search (see [`SKINS`]) for `n` particles of which
/// `past[k]` had moved more than half of `SKINS[k]` by the end of the last step (since
/// the lists it used were built): the narrowest that at most [`skin_budget`] passed.
pub(super) fn next_skin(past: &[u32; SKINS.len()], n: usize) -> f32 {
    let budget = skin_budget(n);
    SKINS
        .iter()
        .zip(past)
        .find(|&(_, &count)| count as usize <= budget)
        .map_or(WIDEST_SKIN, |(&skin, _)| skin)
}

/// How far the particles of a chunk moved since the lists were built.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Drift {
    /// The bits of the largest squared displacement, which order as the values do (a
    /// NaN's above +inf's).
    pub(super) most: u32,
    /// How many moved more than half of each of [`SKINS`] (or by a non-finite
    /// distance); zeros unless counted.
    pub(super) past: [u32; SKINS.len()],
    /// How many moved more than half the lists' skin (or by a non-finite distance):
    /// the particles [`Solver::repair_lists`] mends.
    pub(super) movers: u32,
}

impl<const D: usize> Solver<D> {
    /// The squared displacement Verlet's criterion allows: the lists hold every pair
    /// within h as long as no particle has moved more than half the skin since they
    /// were built.
    pub(super) fn half_skin2(&self) -> f32 {
        self.half_skin2_of(self.skin)
    }

    /// [`Self::half_skin2`] for lists of `skin`: half the difference between their
    /// radius and h, squared (so that `h + 2 half` does not exceed the radius).
    fn half_skin2_of(&self, skin: f32) -> f32 {
        (0.5 * (self.radius_of(skin) - self.kernel.h())).powi(2)
    }

    /// How far the particles have moved from the positions the lists were built from:
    /// the largest squared displacement, how many moved past half the lists' skin (also
    /// per chunk of [`MIN_CHUNK`](crate::parallel::MIN_CHUNK), for [`Self::repair_lists`]) and, when `count`, how
    /// many past half of each of [`SKINS`] (zeros otherwise).
    pub(super) fn drift(&mut self, count: bool) -> Drift {
        let halves: [f32; SKINS.len()] = core::array::from_fn(|k| self.half_skin2_of(SKINS[k]));
        let half = self.half_skin2();
        let (now, built) = (refs(&self.predicted), refs(&self.built));
        // Minimum images on the periodic axes: a particle that crossed a periodic face
        // since the build moved by its short way round. Chosen once, outside the
        // loops: without periodic axes the loops are the plain ones.
        let periodic = *self.lists.periodic();
        if periodic.any() {
            let image = |a: usize, x: f32| periodic.image(a, x);
            per_chunk(self.len(), &mut self.drift, &|chunk| {
                chunk_drift(now, built, chunk, (half, halves), count, image)
            });
        } else {
            per_chunk(self.len(), &mut self.drift, &|chunk| {
                chunk_drift(now, built, chunk, (half, halves), count, |_, x| x)
            });
        }
        self.drift.iter().fold(Drift::default(), |mut all, chunk| {
            all.most = all.most.max(chunk.most);
            all.movers += chunk.movers;
            for (all, chunk) in all.past.iter_mut().zip(chunk.past) {
                *all += chunk;
            }
            all
        })
    }

    /// The skin the next search takes, once the step's iterations are done:
    /// `searches_inside` searches ran between them, `outrun` is [`Self::keeps_lists`]'
    /// answer at the start of the step and `past` the counts of the step's last check
    /// (see [`SKINS`]), if it made one.
    pub(super) fn choose_next_skin(
        &mut self,
        searches_inside: u32,
        outrun: bool,
        past: Option<[u32; SKINS.len()]>,
    ) {
        let n = self.len();
        self.next_skin = if searches_inside > 0 || !outrun {
            // The lists built inside the iterations saw only part of the step's
            // motion; or lists of the widest skin may outlive the step.
            WIDEST_SKIN
        } else {
            // Adaptive iterations that stopped on their target did not check again:
            // the positions are those of their last check (or of the search).
            let past = past.unwrap_or_else(|| self.drift(true).past);
            next_skin(&past, n)
        };
    }
}

/// The [`Drift`] of the particles `chunk`: their squared displacements from `built`
/// to `now`, each axis' difference through `image` (the minimum image on periodic
/// axes, the difference itself otherwise).
#[inline(always)]
fn chunk_drift<const D: usize>(
    now: [&[f32]; D],
    built: [&[f32]; D],
    chunk: core::ops::Range<usize>,
    (half, halves): (f32, [f32; SKINS.len()]),
    count: bool,
    image: impl Fn(usize, f32) -> f32,
) -> Drift {
    let (now, built) = (
        stretches(now, chunk.clone()),
        stretches(built, chunk.clone()),
    );
    let moved = |k: usize| {
        let d: [f32; D] = core::array::from_fn(|a| image(a, now[a][k] - built[a][k]));
        pbf_kernels::norm2(d)
    };
    let mut drift = Drift::default();
    if !count {
        // Branch-free: the checks between the iterations need only these.
        for moved in (0..chunk.len()).map(moved) {
            drift.most = drift.most.max(moved.to_bits());
            drift.movers += u32::from(!(moved <= half));
        }
        return drift;
    }
    for k in 0..chunk.len() {
        let moved = moved(k);
        drift.most = drift.most.max(moved.to_bits());
        drift.movers += u32::from(!(moved <= half));
        for (past, half) in drift.past.iter_mut().zip(halves) {
            *past += u32::from(!(moved <= half));
        }
    }
    drift
}
