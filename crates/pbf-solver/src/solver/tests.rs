//! Tests of the neighbour search, the skins and the list repair, on solvers whose
//! lists are built on chosen positions.

use super::repair::{
    FAST_FRACTION, FAST_MOST, MISSING_MOST, MOVER_CELL, REPAIR_CHUNK, columns_around, mover_cell,
};
use super::skin::{SKINS, WIDEST_SKIN, next_skin, skin_budget};
use super::{Solver, refs};
use crate::boundary::Boundary;
use crate::constraint::{Constraint, WallGradient};
use crate::lists::{Neighbourhood, pack};
use crate::{Domain, Params};
use pbf_kernels::{norm2, within};
use proptest::prelude::*;

/// A solver (h = 0.2, list radius 0.22) whose lists are built on `points`, with
/// `predicted` where the lists were built.
fn built(points: &[[f32; 3]]) -> Solver<3> {
    built_with(points, WIDEST_SKIN)
}

/// [`built`] with lists of `skin` (list radius `0.2 (1 + skin)`).
fn built_with(points: &[[f32; 3]], skin: f32) -> Solver<3> {
    let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
    let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
    s.add_particles(points, None).unwrap();
    s.predicted = s.positions.clone();
    s.search(skin).unwrap();
    s
}

/// Moves the particle now at `at` by `by`.
fn shift(s: &mut Solver<3>, at: [f32; 3], by: [f32; 3]) {
    let p = &mut s.predicted;
    let i = (0..p[0].len())
        .find(|&i| (0..3).all(|a| (p[a][i] - at[a]).abs() < 1e-6))
        .expect("a particle there");
    for a in 0..3 {
        p[a][i] += by[a];
    }
}

/// The solver's repair, counting the moved particles first.
fn repair(s: &mut Solver<3>) -> bool {
    s.repair_lists(false)
}

/// Every particle's list.
fn all_lists(s: &Solver<3>) -> Vec<Vec<u32>> {
    (0..s.len()).map(|i| s.lists.of(i)).collect()
}

/// The densities of a lambda pass over the lists and the predicted positions, by
/// particle id.
fn densities_by_id(s: &Solver<3>) -> Vec<(u64, f32)> {
    let n = s.len();
    let constraint = Constraint::new(
        &s.params,
        &s.kernel,
        &s.tensile,
        s.relaxation,
        Boundary {
            domain: &s.domain,
            colliders: &s.colliders,
            tables: &s.walls,
            corners: super::corner_tables(&s.domain, &s.colliders, &s.corners, &s.kernel),
        },
    );
    let mut quads = Vec::new();
    pack(&mut quads, refs(&s.predicted), &vec![0.0; n]);
    let nb = Neighbourhood {
        lists: &s.lists,
        quads: &quads,
    };
    let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
    let mut wall = WallGradient::<3>::new(n);
    constraint.lambda_pass::<f32>(&nb, &mut density, &mut lambda, &mut wall);
    let mut out: Vec<(u64, f32)> = s.ids.iter().copied().zip(density).collect();
    out.sort_by_key(|e| e.0);
    out
}

/// Repairs the lists and checks that they then hold every pair within h, and give
/// the densities of a new search to rounding.
fn repaired(s: &mut Solver<3>) {
    assert!(repair(s), "repaired");
    assert!(complete(s), "every pair within h after the repair");
    let mut searched = s.clone();
    searched.search(WIDEST_SKIN).unwrap();
    for (a, b) in densities_by_id(s).iter().zip(&densities_by_id(&searched)) {
        assert_eq!(a.0, b.0);
        assert!(
            (a.1 - b.1).abs() <= 1e-5 * b.1,
            "particle {}: {a:?} {b:?}",
            a.0
        );
    }
}

/// The pairs within h of the predicted positions that are missing from either
/// particle's list.
fn missing_pairs(s: &Solver<3>) -> usize {
    let (p, h2, n) = (&s.predicted, s.kernel.h2(), s.len());
    (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            let d: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
            within(norm2(d), h2)
                && !(s.lists.contains(i, j as u32) && s.lists.contains(j, i as u32))
        })
        .count()
}

/// Whether the lists hold every pair within h of the predicted positions.
fn complete(s: &Solver<3>) -> bool {
    missing_pairs(s) == 0
}

/// Moves particle `pair.0` and the first one between `band` of it towards each
/// other, by `reach` times `pair.1` and `pair.2`, then each of `moves` by its
/// offset. `false`, moving nothing, when no particle lies in the band.
fn approach(
    s: &mut Solver<3>,
    pair: (prop::sample::Index, f32, f32),
    reach: f32,
    band: core::ops::Range<f32>,
    moves: Vec<(prop::sample::Index, [f32; 3])>,
) -> bool {
    let (n, p) = (s.len(), &s.predicted);
    let i = pair.0.index(n);
    let apart = |j: usize| -> [f32; 3] { core::array::from_fn(|a| p[a][j] - p[a][i]) };
    let Some(j) = (0..n).find(|&j| band.contains(&norm2(apart(j)).sqrt())) else {
        return false;
    };
    let d = apart(j);
    let unit = d.map(|c| c / norm2(d).sqrt());
    for a in 0..3 {
        s.predicted[a][i] += reach * pair.1 * unit[a];
        s.predicted[a][j] -= reach * pair.2 * unit[a];
    }
    for (k, by) in moves {
        let k = k.index(n);
        for a in 0..3 {
            s.predicted[a][k] += by[a];
        }
    }
    true
}

/// Whether few enough particles moved more than half the skin, and few enough
/// pairs within h are missing from the lists, for the lists to be mended.
fn mendable(s: &Solver<3>) -> bool {
    let allowed = s.half_skin2();
    let (p, b, n) = (&s.predicted, &s.built, s.len());
    let moved = (0..n)
        .filter(|&k| norm2::<3>(core::array::from_fn(|a| p[a][k] - b[a][k])) > allowed)
        .count();
    moved <= n / FAST_FRACTION && missing_pairs(s) <= MISSING_MOST
}

fn lattice() -> Vec<[f32; 3]> {
    cube(8)
}

/// `side^3` points 0.1 apart from the origin.
fn cube(side: usize) -> Vec<[f32; 3]> {
    let mut points = Vec::new();
    for i in 0..side {
        for j in 0..side {
            for k in 0..side {
                points.push([i as f32 * 0.1, j as f32 * 0.1, k as f32 * 0.1]);
            }
        }
    }
    points
}

#[test]
fn a_search_takes_the_narrowest_skin_few_particles_moved_half_of() {
    // One particle in 256, and at most 512 (a quarter of what a repair mends).
    assert_eq!(skin_budget(100), 0);
    assert_eq!(skin_budget(10_648), 41);
    assert_eq!(skin_budget(97_336), 380);
    assert_eq!(skin_budget(1_000_000), 512);
    let n = 97_336;
    assert_eq!(next_skin(&[0; 5], n), 0.04);
    assert_eq!(next_skin(&[380, 0, 0, 0, 0], n), 0.04);
    assert_eq!(next_skin(&[381, 0, 0, 0, 0], n), 0.05);
    // A large dam break while its block collapses.
    assert_eq!(next_skin(&[400, 100, 30, 5, 0], n), 0.05);
    // And in its splash.
    assert_eq!(next_skin(&[4773, 3591, 2544, 1046, 330], n), 0.1);
    assert_eq!(next_skin(&[9000, 9000, 9000, 9000, 9000], n), 0.1);
    assert_eq!(next_skin(&[1, 0, 0, 0, 0], 100), 0.05);
    assert_eq!(next_skin(&[0; 5], 0), 0.04);
    assert!(SKINS.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(WIDEST_SKIN, 0.1);
}

#[test]
fn a_step_counts_how_far_its_particles_moved_for_the_next_search() {
    let mut s = built_with(&lattice(), 0.04);
    assert_eq!(s.list_radius(), 0.2 * 1.04);
    let d = s.drift(true);
    assert_eq!((d.most, d.past), (0, [0; 5]));
    // Half the skins in h = 0.2: 0.004, 0.005, 0.006, 0.008 and 0.01.
    shift(&mut s, [0.0; 3], [0.0045, 0.0, 0.0]);
    shift(&mut s, [0.1, 0.0, 0.0], [0.0, 0.007, 0.0]);
    shift(&mut s, [0.2, 0.0, 0.0], [0.0, 0.0, -0.02]);
    let d = s.drift(true);
    assert_eq!(d.past, [3, 2, 2, 1, 1]);
    assert_eq!(f32::from_bits(d.most), 0.02f32 * 0.02);
    // The checks between the iterations need the largest displacement only.
    let d = s.drift(false);
    assert_eq!((f32::from_bits(d.most), d.past), (0.02f32 * 0.02, [0; 5]));
    s.predicted[1][5] = f32::NAN;
    let d = s.drift(true);
    assert!(f32::from_bits(d.most).is_nan());
    assert_eq!(d.past, [4, 3, 3, 2, 2]);
}

#[test]
fn the_flow_outruns_the_skins_when_last_steps_lists_fail_at_the_widest() {
    // 512 particles: the repair mends at most 16 moved ones.
    assert_eq!(Solver::<3>::fast_limit(512), 16);
    let moved = |count: usize, steps: u64| {
        let mut s = built_with(&lattice(), 0.04);
        s.step = steps;
        // Past half the widest skin (0.01 in h = 0.2).
        for x in s.predicted[0].iter_mut().take(count) {
            *x += 0.011;
        }
        s.keeps_lists()
    };
    // The lists of the last step (built after 0 steps, now 1).
    assert_eq!(moved(0, 1), (true, false));
    assert_eq!(moved(16, 1), (true, false), "16 are mended");
    assert_eq!(moved(17, 1), (false, true));
    assert_eq!(moved(512, 1), (false, true));
    // Older lists: the particles may have moved over several steps.
    assert_eq!(moved(512, 2), (false, false));
    // No lists to keep.
    let mut s = built_with(&lattice(), 0.04);
    s.reusable = false;
    assert_eq!(s.keeps_lists(), (false, true));
}

#[test]
fn a_search_keeps_every_density_with_its_particle() {
    let mut s = built(&lattice());
    let tag = |id: u64| 1000.0 + id as f32;
    for i in 0..s.len() {
        s.density[i] = tag(s.ids[i]);
    }
    // Mirrored in x: another Morton order.
    for x in s.predicted[0].iter_mut() {
        *x = 1.0 - *x;
    }
    s.search(WIDEST_SKIN).unwrap();
    assert!(!s.grid.permutation_is_identity());
    for i in 0..s.len() {
        assert_eq!(s.density[i], tag(s.ids[i]), "particle {i}");
    }
}

#[test]
fn lists_need_nothing_when_a_particle_moves_off_into_empty_space() {
    let mut s = built(&lattice());
    let before = all_lists(&s);
    assert!(repair(&mut s), "nothing moved");
    // 0.07 h: more than half the skin (0.01), less than the skin.
    shift(&mut s, [0.0; 3], [-0.014, 0.0, 0.0]);
    assert!(complete(&s));
    assert!(repair(&mut s));
    // Half h more: five times the skin, still alone.
    shift(&mut s, [-0.014, 0.0, 0.0], [-0.1, 0.0, 0.0]);
    assert!(complete(&s));
    assert!(repair(&mut s));
    assert_eq!(all_lists(&s), before, "nothing added");
}

#[test]
fn lists_get_the_pair_of_two_particles_that_close_a_gap_past_the_skin() {
    let mut s = built(&lattice());
    let pairs = s.lists.pairs();
    // sqrt(5) x 0.1 = 0.2236 apart: beyond the list radius, so not in the lists.
    let (a, b) = ([0.2, 0.2, 0.2], [0.3, 0.4, 0.2]);
    let unit = [0.1 / 0.2236, 0.2 / 0.2236, 0.0];
    // Each moves 0.08 h towards the other: 0.1916 apart, within h = 0.2.
    shift(&mut s, a, unit.map(|u| 0.016 * u));
    shift(&mut s, b, unit.map(|u| -0.016 * u));
    assert!(!complete(&s));
    repaired(&mut s);
    assert_eq!(s.lists.pairs(), pairs + 2, "one pair, in both lists");
    // Again: nothing more to add.
    repaired(&mut s);
    assert_eq!(s.lists.pairs(), pairs + 2);
    // One of them alone, 0.15 h (past the skin) towards the other: 0.1936 apart.
    let mut s = built(&lattice());
    shift(&mut s, a, unit.map(|u| 0.03 * u));
    assert!(!complete(&s));
    repaired(&mut s);
    assert_eq!(s.lists.pairs(), pairs + 2);
}

#[test]
fn lists_get_the_pair_of_two_far_movers_that_meet() {
    // Two particles 0.5 apart, away from a lattice, move 0.2 each towards the
    // other: neither was near the other's current position when the grid was
    // built, so only comparing the moved particles with each other finds them.
    let mut points = lattice();
    points.extend([[-1.0, 0.0, 0.0], [-1.5, 0.0, 0.0]]);
    let mut s = built(&points);
    shift(&mut s, [-1.0, 0.0, 0.0], [-0.2, 0.0, 0.0]);
    shift(&mut s, [-1.5, 0.0, 0.0], [0.2, 0.0, 0.0]);
    assert!(!complete(&s));
    repaired(&mut s);
}

#[test]
fn a_particle_moving_through_the_fluid_gets_its_new_neighbours() {
    // Half h through the lattice's middle: about a dozen new pairs.
    let mut s = built(&lattice());
    let pairs = s.lists.pairs();
    shift(&mut s, [0.4, 0.4, 0.4], [0.1, 0.0, 0.0]);
    assert!(!complete(&s));
    repaired(&mut s);
    assert!(s.lists.pairs() > pairs + 10);
}

#[test]
fn restored_lists_come_with_the_repairs_scratch() {
    // A checkpoint's lists are built by the restore, not by a search: the repair's
    // scratch comes with them (a step after the restore neither panics on it nor
    // allocates it), and the restored run continues with the same bits.
    let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
    let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
    let mut points = cube(12);
    points.push([0.61, 0.62, 0.6]);
    s.add_particles(&points, None).unwrap();
    s.step().unwrap();
    let mut r = Solver::<3>::from_checkpoint(&s.checkpoint().unwrap()).unwrap();
    assert!(r.reusable, "the checkpoint's lists");
    assert!(r.repair_scratch.len() >= FAST_MOST.div_ceil(REPAIR_CHUNK));
    assert!(r.mover_cells.capacity() >= FAST_MOST);
    for _ in 0..3 {
        let (a, b) = (s.step().unwrap(), r.step().unwrap());
        assert_eq!(a.searches, b.searches);
    }
    let bits = |x: &Solver<3>| {
        x.positions
            .iter()
            .flatten()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&s), bits(&r));
}

#[test]
fn a_step_mends_the_lists_around_a_squeezed_particle() {
    // A 12^3 lattice at the rest spacing with one more particle squeezed in near a
    // lattice point: the constraint pushes it and its neighbours apart by more than
    // half the skin within the step's iterations, bringing pairs within h that were
    // beyond the lists' radius at the search, and the step mends the lists instead
    // of searching again.
    let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
    let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
    let mut points = Vec::new();
    for i in 0..12 {
        for j in 0..12 {
            for k in 0..12 {
                points.push([i as f32 * 0.1, j as f32 * 0.1, k as f32 * 0.1]);
            }
        }
    }
    points.push([0.61, 0.62, 0.6]);
    s.add_particles(&points, None).unwrap();
    let d = s.step().unwrap();
    assert_eq!(d.searches, 1, "no search after the first");
    let (p, b) = (&s.positions, &s.built);
    let (h2, r2) = (s.kernel.h2(), s.list_radius().powi(2));
    let apart = |x: &[Vec<f32>; 3], i: usize, j: usize| {
        norm2::<3>(core::array::from_fn(|a| x[a][i] - x[a][j]))
    };
    let n = s.len();
    let mended = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| within(apart(p, i, j), h2) && !within(apart(b, i, j), r2))
        .count();
    assert!(mended > 0, "pairs brought within h during the iterations");
    // The step's final neighbour counts and densities (the XSPH pass's, over the
    // lists) are those of all pairs (no walls within h).
    let mass = s.params.mass();
    for i in 0..n {
        let others = (0..n).filter(|&j| j != i);
        let count = others
            .clone()
            .filter(|&j| within(apart(p, i, j), h2))
            .count();
        assert_eq!(s.count[i], 1.0 + count as f32, "particle {i}");
        let w: f32 = others.map(|j| s.kernel.poly6(apart(p, i, j))).sum();
        let rho = mass * (s.kernel.poly6(0.0) + w);
        assert!(
            (s.density[i] - rho).abs() <= 1e-5 * rho,
            "particle {i}: {} {rho}",
            s.density[i]
        );
    }
}

#[test]
fn lists_are_not_repaired_around_a_particle_that_is_not_finite() {
    // Its grid query fails: the repair gives up, and the step searches (and
    // reports the divergence).
    let mut s = built(&lattice());
    shift(&mut s, [0.3, 0.3, 0.3], [0.0, 0.02, 0.0]);
    s.predicted[0][100] = f32::NAN;
    let before = all_lists(&s);
    assert!(!repair(&mut s));
    assert_eq!(all_lists(&s), before, "unchanged");
}

#[test]
fn lists_are_not_repaired_for_many_moved_particles() {
    // More than one particle in FAST_FRACTION over half the skin: a search.
    let mut s = built(&lattice());
    let bottom: Vec<[f32; 3]> = lattice().into_iter().filter(|p| p[2] == 0.0).collect();
    assert!(bottom.len() > s.len() / FAST_FRACTION);
    for p in bottom {
        shift(&mut s, p, [0.0, 0.0, -0.012]);
    }
    let before = all_lists(&s);
    assert!(!repair(&mut s));
    assert_eq!(all_lists(&s), before, "unchanged");
}

#[test]
fn many_moved_particles_are_mended_with_each_other() {
    // A 24^3 lattice (up to 432 moved particles are mended): the 216 particles of
    // a block, several of the repair's chunks of them, each jump 0.011-0.016 on
    // every axis, past half the skin (0.01). Pairs of them 0.2236 apart (outside
    // the lists' radius, 0.22) come within h.
    let points = cube(24);
    let mut s = built(&points);
    let block: Vec<[f32; 3]> = points
        .iter()
        .copied()
        .filter(|p| p.iter().all(|&c| (0.75..1.35).contains(&c)))
        .collect();
    assert!(block.len() > 2 * REPAIR_CHUNK && block.len() <= s.len() / FAST_FRACTION);
    let mut state = 7u64;
    let mut jitter = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (state >> 40) as f32 / (1u64 << 24) as f32;
        if u < 0.5 {
            -0.011 - 0.01 * u
        } else {
            0.011 + 0.01 * (u - 0.5)
        }
    };
    for p in &block {
        let by = [jitter(), jitter(), jitter()];
        shift(&mut s, *p, by);
    }
    // Missing pairs of two moved particles, and with unmoved ones.
    let moved = |i: usize| {
        let d: [f32; 3] = core::array::from_fn(|a| s.predicted[a][i] - s.built[a][i]);
        norm2(d) > s.half_skin2()
    };
    let (p, h2, n) = (&s.predicted, s.kernel.h2(), s.len());
    let missing: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            let d: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
            within(norm2(d), h2) && !s.lists.contains(i, j as u32)
        })
        .collect();
    let both = missing
        .iter()
        .filter(|&&(i, j)| moved(i) && moved(j))
        .count();
    assert!(
        both > 0 && missing.len() <= MISSING_MOST,
        "{both} of {}",
        missing.len()
    );
    assert!(mendable(&s));
    repaired(&mut s);
}

#[test]
fn the_moved_particles_cells_hold_every_pair_within_h() {
    // Two points within h lie in neighbouring cells (the runs of cells around one
    // hold the other), also across the origin, far out and between clamped cells.
    let h = 0.2f32;
    let cell = f64::from(h) * MOVER_CELL;
    let mut state = 3u64;
    let mut unit = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    for scale in [1.0f32, 1e3, 3e5, 1e9] {
        for _ in 0..2000 {
            let p: [f32; 3] = core::array::from_fn(|_| (unit() - 0.5) * scale);
            let q: [f32; 3] = core::array::from_fn(|a| p[a] + (unit() - 0.5) * 2.0 * h);
            let d: [f32; 3] = core::array::from_fn(|a| p[a] - q[a]);
            if !within(norm2(d), h * h) {
                continue;
            }
            let key = mover_cell(q, cell);
            let found = columns_around::<3>(mover_cell(p, cell))
                .filter(|&(lo, hi)| (lo..=hi).contains(&key))
                .count();
            assert_eq!(found, 1, "{p:?} {q:?}");
            // The runs ascend, apart.
            let runs: Vec<(u64, u64)> = columns_around::<3>(mover_cell(p, cell)).collect();
            assert!(runs.iter().all(|&(lo, hi)| lo < hi), "{p:?}");
            assert!(runs.windows(2).all(|w| w[0].1 < w[1].0), "{p:?}");
            let runs: Vec<(u64, u64)> =
                columns_around::<2>(mover_cell([p[0], p[1]], cell)).collect();
            assert!(runs.windows(2).all(|w| w[0].1 < w[1].0), "{p:?}");
            let (p2, q2) = ([p[0], p[1]], [q[0], q[1]]);
            let key = mover_cell(q2, cell);
            assert!(
                columns_around::<2>(mover_cell(p2, cell)).any(|(lo, hi)| (lo..=hi).contains(&key)),
                "{p2:?} {q2:?}"
            );
        }
    }
}

#[test]
fn lists_are_not_repaired_for_many_missing_pairs() {
    // A 24^3 lattice: up to 432 moved particles may be checked. 204 of them, a
    // slab, move 0.6 h into the fluid, which brings more than MISSING_MOST pairs.
    let points = cube(24);
    let mut s = built(&points);
    let movers: Vec<[f32; 3]> = points
        .iter()
        .copied()
        .filter(|p| p[2] == 1.0 && p[0] >= 0.35 && p[0] <= 2.0 && p[1] >= 0.35 && p[1] <= 1.5)
        .collect();
    assert!(
        (150..=s.len() / FAST_FRACTION).contains(&movers.len()),
        "{}",
        movers.len()
    );
    for p in movers {
        shift(&mut s, p, [0.05, 0.05, 0.1]);
    }
    let missing = missing_pairs(&s);
    assert!(missing > MISSING_MOST, "{missing}");
    let before = all_lists(&s);
    assert!(!repair(&mut s));
    assert_eq!(all_lists(&s), before, "unchanged");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whenever the repair succeeds, the lists hold every pair within h; when it
    /// gives up, they are as they were, for lists of every skin. Two particles just
    /// beyond the list radius (`0.2 (1 + skin)`) of each other move towards each
    /// other, each by up to three times the skin (`0.2 skin`), and a few others
    /// anywhere; at least 256 particles, so that up to eight may move past half the
    /// skin.
    #[test]
    fn repaired_lists_hold_every_pair_within_h(
        skin in prop::sample::select(SKINS.to_vec()),
        points in prop::collection::vec(prop::array::uniform3(-0.3f32..0.3), 256..500),
        pair in (any::<prop::sample::Index>(), 0.2f32..3.0, 0.2f32..3.0),
        moves in prop::collection::vec(
            (any::<prop::sample::Index>(), prop::array::uniform3(-0.03f32..0.03)),
            0..3,
        ),
    ) {
        let mut s = built_with(&points, skin);
        let radius = s.list_radius();
        prop_assume!(approach(&mut s, pair, 0.2 * skin, radius..radius + 0.02, moves));
        // The repair gives up only for too many moved particles or missing pairs.
        let expected = mendable(&s);
        let before = all_lists(&s);
        prop_assert_eq!(repair(&mut s), expected);
        if expected {
            prop_assert!(complete(&s));
        } else {
            prop_assert_eq!(all_lists(&s), before);
        }
    }

    /// A step keeps the lists exactly when the particles that moved more than
    /// half the skin since they were built are few and bring few pairs within h,
    /// and kept lists hold every pair within h. Two particles just beyond the list
    /// radius of each other move towards each other by up to 2.5 times half the
    /// skin (0.01) each, and a few others anywhere by up to about half the skin.
    #[test]
    fn kept_lists_hold_every_pair_within_h(
        points in prop::collection::vec(prop::array::uniform3(-0.3f32..0.3), 64..400),
        pair in (any::<prop::sample::Index>(), 0.0f32..2.5, 0.0f32..2.5),
        moves in prop::collection::vec(
            (any::<prop::sample::Index>(), prop::array::uniform3(-0.007f32..0.007)),
            0..4,
        ),
    ) {
        let mut s = built(&points);
        prop_assert!(s.keeps_lists().0, "nothing has moved");
        prop_assume!(approach(&mut s, pair, 0.01, 0.22..0.23, moves));
        let expected = mendable(&s);
        prop_assert_eq!(s.keeps_lists().0, expected);
        if expected {
            prop_assert!(complete(&s));
        }
    }
}
