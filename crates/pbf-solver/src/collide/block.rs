//! Blocks of moves: a block of particles confined at once, with one test of its
//! bounding box against each collider.

use super::collider::Collider;
use super::domain::Domain;

/// The bounding box of the points of `sets`, or `None` when a coordinate is not
/// finite.
///
/// Branch-free: plain comparisons (no NaN handling of `f32::min`, which a NaN makes
/// `None` anyway), and `x * 0`, which is 0 for a finite `x` and NaN otherwise, summed
/// for the finiteness, so that the compiler keeps it in vector registers: it runs for
/// every block of moves ([`confine_block`]), where `f32::min`, `f32::max` and
/// `is_finite` cost a visible share of the step.
#[inline(always)]
pub(crate) fn bounding_box<const D: usize>(sets: &[&[[f32; D]]]) -> Option<([f32; D], [f32; D])> {
    // Four points at a time, coordinate by coordinate of the flat slice, so that the
    // compiler keeps `4 D` independent minima in vector registers (one per point and
    // axis) instead of a chain of shuffles; then each axis's four.
    const MOST: usize = 16;
    let period = 4 * D;
    debug_assert!(period <= MOST);
    let (mut lo, mut hi, mut finite) = (
        [f32::INFINITY; MOST],
        [f32::NEG_INFINITY; MOST],
        [0.0f32; MOST],
    );
    let mut add = |j: usize, x: f32| {
        lo[j] = if x < lo[j] { x } else { lo[j] };
        hi[j] = if x > hi[j] { x } else { hi[j] };
        finite[j] += x * 0.0;
    };
    for points in sets {
        let mut chunks = points.as_flattened().chunks_exact(period);
        for chunk in &mut chunks {
            for (j, &x) in chunk.iter().enumerate() {
                add(j, x);
            }
        }
        // Fewer than four points: each coordinate at its axis's place.
        for (j, &x) in chunks.remainder().iter().enumerate() {
            add(j, x);
        }
    }
    let finite = finite.iter().all(|&f| f == 0.0);
    let fold = |v: &[f32; MOST], pick: fn(f32, f32) -> f32| -> [f32; D] {
        core::array::from_fn(|k| (k..period).step_by(D).map(|j| v[j]).fold(v[k], pick))
    };
    let lower = fold(&lo, |a, b| if b < a { b } else { a });
    let upper = fold(&hi, |a, b| if b > a { b } else { a });
    finite.then_some((lower, upper))
}

/// Runs `f(first, width)` over `0..len` in blocks of [`GROUP`](crate::lists::GROUP)
/// (`width` of them, fewer in the last): the blocks of [`confine_block`].
#[inline(always)]
pub(crate) fn for_each_block(len: usize, mut f: impl FnMut(usize, usize)) {
    let block = crate::lists::GROUP;
    let mut first = 0;
    while first < len {
        f(first, block.min(len - first));
        first += block;
    }
}

/// Where a block of moves ends: `to[l]`, moving from `from[l]`, kept out of every
/// collider ([`Collider::project_from`], collider by collider, each particle meeting
/// them in the order of the slice) and then clamped into the domain, as each move
/// alone would be. Particles that move in groups, as the passes' lanes do, are mostly
/// all clear of a collider at once: one test of the block's bounding box shows it.
#[inline]
pub(crate) fn confine_block<const D: usize>(
    colliders: &[Collider<D>],
    domain: &Domain<D>,
    from: &[[f32; D]],
    to: &mut [[f32; D]],
    margin: f32,
) {
    let mut bounds = bounding_box(&[from, &*to]);
    for c in colliders {
        let all_clear = bounds.is_some_and(|(lo, hi)| c.bounds.clear_box(lo, hi, margin));
        if !all_clear && !c.clamp_block_in_cavity(from, to, margin) {
            for (p, &x) in to.iter_mut().zip(from) {
                c.project_from(p, x, margin);
            }
        }
        if !all_clear {
            // The next collider meets the moves as this one left them.
            bounds = bounding_box(&[from, &*to]);
        }
    }
    // A block inside the shrunk domain is left as it is by the clamp.
    if !bounds.is_some_and(|(lo, hi)| domain.holds_box(lo, hi, margin)) {
        for p in to.iter_mut() {
            domain.clamp(p, margin);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{ColliderKind, Shape};
    use crate::lists::GROUP;

    /// The box of `sets` point by point with `f32::min`, `f32::max` and `is_finite`.
    fn box_one_by_one<const D: usize>(sets: &[&[[f32; D]]]) -> Option<([f32; D], [f32; D])> {
        let mut b = Some(([f32::INFINITY; D], [f32::NEG_INFINITY; D]));
        for p in sets.iter().flat_map(|s| s.iter()) {
            if p.iter().any(|x| !x.is_finite()) {
                b = None;
            }
            if let Some((lo, hi)) = &mut b {
                for k in 0..D {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
        }
        b
    }

    proptest::proptest! {
        /// The four-at-a-time box is the box point by point, in 2D and 3D, for any
        /// count of points in either set (remainders included), and `None` when a
        /// coordinate is infinite or NaN.
        #[test]
        fn bounding_box_is_the_box_of_every_point(
            xs in proptest::collection::vec(-1e3f32..1e3, 0..60),
            split in 0usize..20,
            bad in proptest::option::of((0usize..60, 0usize..3)),
        ) {
            let mut xs = xs;
            if let Some((at, which)) = bad && at < xs.len() {
                xs[at] = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN][which];
            }
            let p3: Vec<[f32; 3]> = xs.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
            let cut = split.min(p3.len());
            let (a, b) = p3.split_at(cut);
            proptest::prop_assert_eq!(bounding_box(&[a, b]), box_one_by_one(&[a, b]));
            let p2: Vec<[f32; 2]> = xs.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
            let cut = split.min(p2.len());
            let (a, b) = p2.split_at(cut);
            proptest::prop_assert_eq!(bounding_box(&[a, b]), box_one_by_one(&[a, b]));
            proptest::prop_assert_eq!(bounding_box::<3>(&[]), Some(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3])));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// A block of moves ends where each move, confined alone, ends: bit for bit,
        /// whether its bounding box is clear or not, with two colliders in turn.
        #[test]
        fn a_block_projects_as_its_moves_do_one_by_one(
            centre in proptest::collection::vec(-1.0f32..1.0, 3),
            spread in 0.001f32..0.5,
            offsets in proptest::collection::vec(-1.0f32..1.0, 6 * GROUP),
            width in 1usize..=GROUP,
        ) {
            let colliders = [
                Collider::new(
                    Shape::Box { center: [0.0; 3], half_extents: [0.8, 0.6, 0.7] },
                    ColliderKind::Container { wall_thickness: 0.1, open_top: true },
                )
                .unwrap(),
                Collider::new(
                    Shape::Sphere { center: [0.3, -0.2, 0.1], radius: 0.25 },
                    ColliderKind::Solid,
                )
                .unwrap(),
            ];
            let point = |o: usize| -> [f32; 3] {
                core::array::from_fn(|a| centre[a] + spread * offsets[o + a])
            };
            // Start outside the solids, as the solver's positions are.
            let from: Vec<[f32; 3]> = (0..width)
                .map(|l| point(6 * l))
                .filter(|&x| colliders.iter().all(|c| c.distance(x) > 0.0))
                .collect();
            let targets: Vec<[f32; 3]> = (0..from.len()).map(|l| point(6 * l + 3)).collect();
            let domain = Domain::new([-1.2; 3], [1.2; 3]).unwrap();
            let mut block = targets.clone();
            confine_block(&colliders, &domain, &from, &mut block, 0.025);
            for l in 0..from.len() {
                let mut one = targets[l];
                for c in &colliders {
                    c.project_from(&mut one, from[l], 0.025);
                }
                domain.clamp(&mut one, 0.025);
                proptest::prop_assert_eq!(one.map(f32::to_bits), block[l].map(f32::to_bits));
            }
        }
    }
}
