//! The box cavity clamp: a move inside a box container's cavity, whose faces are
//! planes along the axes, ends where a clamp puts it, without a sweep.

use super::block::bounding_box;
use super::bounds::Free;
use super::collider::{Collider, ColliderKind};

impl<const D: usize> Collider<D> {
    /// [`project_from`](Self::project_from) for a move that starts inside a box
    /// container's cavity, whose faces are planes along the axes: `p` with each
    /// coordinate clamped to `margin` inside the cavity, the point nearest `p` that
    /// keeps the margin from every face (frictionless sliding). The sweep's slides
    /// along the faces end there too, up to their roundings, wherever they end a
    /// margin off every face; in a corner the sweep's last push moves off the nearest
    /// face only and may leave the point within the margin of the other, and a move
    /// grazing a face at a small fraction of the margin may reach its step limit.
    /// `None` where the clamp is not the answer, for
    /// [`project_from_near`](Self::project_from_near) to take: any
    /// other collider, a `from` not strictly inside the cavity, a cavity narrower than
    /// two margins, a `p` that is not finite, and, for an open container, a move that
    /// reaches within a margin of the rim's height and needs a side wall (the rim's
    /// edge may be the nearest surface there).
    #[inline(always)]
    pub(super) fn clamp_in_cavity(
        &self,
        p: [f32; D],
        from: [f32; D],
        margin: f32,
    ) -> Option<[f32; D]> {
        // Only box containers have a box cavity (`Bounds::new`).
        let Free::Box { lo, hi } = self.bounds.free else {
            return None;
        };
        let mut end = p;
        let mut sideways = false;
        for k in 0..D {
            let (a, b) = (lo[k] + margin, hi[k] - margin);
            // (The comparisons are false for NaN.)
            if !(from[k] > lo[k] && from[k] < hi[k] && a <= b && p[k].is_finite()) {
                return None;
            }
            if k != 1 && !(a <= from[k] && from[k] <= b && a <= p[k] && p[k] <= b) {
                sideways = true;
            }
            end[k] = p[k].clamp(a, b);
        }
        if sideways && matches!(self.kind, ColliderKind::Container { open_top: true, .. }) {
            let rim = self.shape.top() - margin;
            if !(from[1] <= rim && p[1] <= rim) {
                return None;
            }
        }
        Some(end)
    }

    /// [`project_from`](Self::project_from) for every move of a block at once, where
    /// [`clamp_in_cavity`](Self::clamp_in_cavity) takes each of them: every start and
    /// every target finite, every start strictly inside a box container's cavity of
    /// at least two margins and, for an open container, no start or target above a
    /// margin below the rim. Then each target is clamped to the cavity shrunk by the
    /// margin, coordinate by coordinate (the bits `project_from` gives each move: a
    /// move whose way the bounds show clear ends inside that box, where the clamp
    /// leaves it), and the call returns `true`; otherwise it changes nothing and
    /// returns `false`. The particles along a tank's floor and walls, whose blocks the
    /// bounds cannot show clear, take this instead of a test and a branch a move.
    #[inline(always)]
    pub(super) fn clamp_block_in_cavity(
        &self,
        from: &[[f32; D]],
        to: &mut [[f32; D]],
        margin: f32,
    ) -> bool {
        let Free::Box { lo, hi } = self.bounds.free else {
            return false;
        };
        // `None` for a coordinate that is not finite.
        let (Some((from_lo, from_hi)), Some((_, to_hi))) =
            (bounding_box(&[from]), bounding_box(&[&*to]))
        else {
            return false;
        };
        let a: [f32; D] = core::array::from_fn(|k| lo[k] + margin);
        let b: [f32; D] = core::array::from_fn(|k| hi[k] - margin);
        if !(0..D).all(|k| from_lo[k] > lo[k] && from_hi[k] < hi[k] && a[k] <= b[k]) {
            return false;
        }
        if let ColliderKind::Container { open_top: true, .. } = self.kind {
            let rim = self.shape.top() - margin;
            if !(from_hi[1] <= rim && to_hi[1] <= rim) {
                return false;
            }
        }
        for p in to.iter_mut() {
            for k in 0..D {
                p[k] = p[k].clamp(a[k], b[k]);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collide::{Domain, Shape, confine_block};
    use crate::lists::GROUP;

    /// Blocks of `from` in a box container's cavity (half extents `[1.0, 0.8, 0.9]`,
    /// walls 0.1, centred on the origin) around the point at fractions `at` of the
    /// cavity's extent (0 and 1 are its faces), and targets up to `reach` away: each
    /// block confined at once and each move alone give the same bits; the blocks the
    /// block clamp should take, it takes.
    fn box_cavity_block<const D: usize>(
        open_top: bool,
        at: &[f32],
        offsets: &[f32],
        width: usize,
        reach: f32,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let (wall, margin) = (0.1f32, 0.025f32);
        let half: [f32; D] = core::array::from_fn(|k| [1.0, 0.8, 0.9][k]);
        let c = Collider::new(
            Shape::Box {
                center: [0.0; D],
                half_extents: half,
            },
            ColliderKind::Container {
                wall_thickness: wall,
                open_top,
            },
        )
        .unwrap();
        // The cavity, to the rim when open.
        let inner: [f32; D] = half.map(|h| h - 0.5 * wall);
        let from: Vec<[f32; D]> = (0..width)
            .map(|l| {
                core::array::from_fn(|k| {
                    let (lo, hi) = (-inner[k] + 0.5 * margin, inner[k] - 0.5 * margin);
                    let centre = lo + at[k] * (hi - lo);
                    (centre + 0.05 * offsets[2 * D * l + k]).clamp(lo, hi)
                })
            })
            .collect();
        let targets: Vec<[f32; D]> = (0..width)
            .map(|l| core::array::from_fn(|k| from[l][k] + reach * offsets[2 * D * l + D + k]))
            .collect();
        let domain = Domain::new([-1.5; D], [1.5; D]).unwrap();
        let mut block = targets.clone();
        confine_block(&[c], &domain, &from, &mut block, margin);
        for l in 0..width {
            let mut one = targets[l];
            c.project_from(&mut one, from[l], margin);
            domain.clamp(&mut one, margin);
            proptest::prop_assert_eq!(
                one.map(f32::to_bits),
                block[l].map(f32::to_bits),
                "from {:?} to {:?}",
                from[l],
                targets[l]
            );
        }
        let rim = half[1] - margin;
        let below_rim = from.iter().chain(&targets).all(|p| p[1] <= rim);
        if !open_top || below_rim {
            let mut clamped = targets.clone();
            proptest::prop_assert!(c.clamp_block_in_cavity(&from, &mut clamped, margin));
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// Blocks of moves from inside a box container's cavity, along its floor, walls
        /// and corners and through them, open or closed, in 2D and 3D: the block clamp
        /// gives each move the bits `project_from` gives it alone.
        #[test]
        fn a_block_in_a_box_cavity_ends_as_its_moves_do_one_by_one(
            open_top in proptest::bool::ANY,
            at in proptest::collection::vec(
                proptest::prop_oneof![proptest::strategy::Just(0.0f32), proptest::strategy::Just(1.0f32), 0.0f32..1.0],
                3,
            ),
            offsets in proptest::collection::vec(-1.0f32..1.0, 6 * GROUP),
            width in 1usize..=GROUP,
            reach in 0.0f32..0.2,
        ) {
            box_cavity_block::<3>(open_top, &at, &offsets, width, reach)?;
            box_cavity_block::<2>(open_top, &at, &offsets, width, reach)?;
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// A move from inside a box container's cavity ends, by the clamp, as
        /// `project_from` promises: a margin off the solid (a margin inside the
        /// cavity, which is convex, so the way from `from` is clear), at the point of
        /// that region nearest the target (frictionless sliding), and where the sweep
        /// and its slides end it (to rounding) whenever the sweep ends a margin off
        /// every face too (its last push moves off the nearest face only, so in a
        /// corner it may stop within the margin of the other). In 2D and 3D, open or
        /// closed, along and through the floor, the side walls and the corners, and
        /// near an open box's rim, where the clamp leaves the moves that need a side
        /// wall to the sweep. From at least half a margin off the faces (as the
        /// solver's particles are: the projections leave them a margin off), over at
        /// most twenty margins (the sweep's step limit is not reached).
        #[test]
        fn a_move_in_a_box_cavity_ends_where_the_sweep_ends_it(
            half in proptest::collection::vec(0.2f32..2.0, 3),
            centre in proptest::collection::vec(-5.0f32..5.0, 3),
            wall in 0.02f32..0.5,
            open_top in proptest::bool::ANY,
            margin in 0.005f32..0.05,
            u in proptest::collection::vec(0.0f32..1.0, 3),
            step in proptest::collection::vec(-20.0f32..20.0, 3),
        ) {
            let scale = centre.iter().chain(&half).fold(1.0f32, |m, x| m.max(x.abs()));
            let tol = 1e-5 * scale;
            let check = |c: &dyn Fn(&[f32]) -> f32, cavity: &[(f32, f32)], fast: Option<Vec<f32>>, swept: Vec<f32>, to: &[f32]| -> Result<bool, proptest::test_runner::TestCaseError> {
                let Some(fast) = fast else { return Ok(false) };
                proptest::prop_assert!(c(&fast) >= margin - tol, "{fast:?} within the margin");
                for k in 0..fast.len() {
                    // The nearest point of the box a margin inside the cavity.
                    let nearest = to[k].clamp(cavity[k].0 + margin, cavity[k].1 - margin);
                    proptest::prop_assert!((fast[k] - nearest).abs() <= tol, "{fast:?}, nearest {nearest}");
                }
                if c(&swept) >= margin - tol {
                    for k in 0..fast.len() {
                        proptest::prop_assert!(
                            (fast[k] - swept[k]).abs() <= tol,
                            "to {to:?}: clamp {fast:?}, sweep {swept:?}"
                        );
                    }
                }
                Ok(true)
            };
            let kind = ColliderKind::Container { wall_thickness: wall, open_top };
            // The cavity is `centre - half + wall / 2 .. centre + half - wall / 2`.
            let inner = |k: usize| half[k] - 0.5 * wall;
            proptest::prop_assume!((0..3).all(|k| inner(k) > 1.5 * margin));
            let cavity: Vec<(f32, f32)> = (0..3)
                .map(|k| {
                    let top = if open_top && k == 1 { f32::INFINITY } else { centre[k] + inner(k) };
                    (centre[k] - inner(k), top)
                })
                .collect();
            // From anywhere at least half a margin inside, heading up to 20 margins.
            let from: Vec<f32> = (0..3)
                .map(|k| centre[k] - inner(k) + 0.5 * margin + u[k] * (2.0 * inner(k) - margin))
                .collect();
            let to: Vec<f32> = (0..3).map(|k| from[k] + margin * step[k]).collect();
            let c3 = Collider::new(
                Shape::Box { center: [centre[0], centre[1], centre[2]], half_extents: [half[0], half[1], half[2]] },
                kind,
            ).unwrap();
            let (f3, t3) = ([from[0], from[1], from[2]], [to[0], to[1], to[2]]);
            let mut swept = t3;
            c3.project_from_near(&mut swept, f3, margin);
            let fast = c3.clamp_in_cavity(t3, f3, margin).map(|e| e.to_vec());
            let d3 = |p: &[f32]| c3.distance([p[0], p[1], p[2]]);
            let used3 = check(&d3, &cavity, fast, swept.to_vec(), &to)?;
            // Closed, and open away from the rim, the clamp always takes the move.
            let rim = centre[1] + half[1] - margin;
            proptest::prop_assert!(used3 || (open_top && from[1].max(to[1]) > rim));
            let c2 = Collider::new(
                Shape::Box { center: [centre[0], centre[1]], half_extents: [half[0], half[1]] },
                kind,
            ).unwrap();
            let (f2, t2) = ([from[0], from[1]], [to[0], to[1]]);
            let mut swept = t2;
            c2.project_from_near(&mut swept, f2, margin);
            let fast = c2.clamp_in_cavity(t2, f2, margin).map(|e| e.to_vec());
            let d2 = |p: &[f32]| c2.distance([p[0], p[1]]);
            check(&d2, &cavity[..2], fast, swept.to_vec(), &to[..2])?;
        }
    }

    /// The clamp takes no move it cannot: one from outside the cavity or on its face,
    /// through a solid box, a sphere's cavity, a target that is not finite, or a
    /// cavity narrower than two margins.
    #[test]
    fn the_cavity_clamp_leaves_the_other_moves_to_the_sweep() {
        let tank = |wall| {
            Collider::new(
                Shape::Box {
                    center: [0.0; 3],
                    half_extents: [1.0; 3],
                },
                ColliderKind::Container {
                    wall_thickness: wall,
                    open_top: false,
                },
            )
            .unwrap()
        };
        let m = 0.05;
        let t = tank(0.1);
        assert_eq!(
            t.clamp_in_cavity([0.0, -2.0, 0.0], [0.0; 3], m),
            Some([0.0, -0.95 + m, 0.0])
        );
        assert_eq!(
            t.clamp_in_cavity([0.0; 3], [0.0, -1.2, 0.0], m),
            None,
            "from the wall"
        );
        assert_eq!(
            t.clamp_in_cavity([0.0; 3], [0.0, -0.95, 0.0], m),
            None,
            "from the face"
        );
        assert_eq!(
            t.clamp_in_cavity([0.0; 3], [0.0, 2.0, 0.0], m),
            None,
            "from outside"
        );
        assert_eq!(t.clamp_in_cavity([f32::NAN, 0.0, 0.0], [0.0; 3], m), None);
        assert_eq!(
            t.clamp_in_cavity([0.0, f32::INFINITY, 0.0], [0.0; 3], m),
            None
        );
        assert_eq!(
            tank(1.9).clamp_in_cavity([0.0; 3], [0.01; 3], 0.06),
            None,
            "too narrow"
        );
        let solid = Collider::new(
            Shape::Box {
                center: [0.0; 3],
                half_extents: [1.0; 3],
            },
            ColliderKind::Solid,
        )
        .unwrap();
        assert_eq!(solid.clamp_in_cavity([0.0; 3], [2.0; 3], m), None);
        let bowl = Collider::new(
            Shape::Sphere {
                center: [0.0; 3],
                radius: 1.0,
            },
            ColliderKind::Container {
                wall_thickness: 0.1,
                open_top: false,
            },
        )
        .unwrap();
        assert_eq!(bowl.clamp_in_cavity([0.0, -2.0, 0.0], [0.0; 3], m), None);
        // Open: sideways near the rim is the sweep's; straight down is the clamp's.
        let open = Collider::new(
            Shape::Box {
                center: [0.0; 3],
                half_extents: [1.0; 3],
            },
            ColliderKind::Container {
                wall_thickness: 0.1,
                open_top: true,
            },
        )
        .unwrap();
        assert_eq!(
            open.clamp_in_cavity([2.0, 0.98, 0.0], [0.9, 0.98, 0.0], m),
            None
        );
        assert_eq!(
            open.clamp_in_cavity([2.0, 0.5, 0.0], [0.9, 0.5, 0.0], m),
            Some([0.95 - m, 0.5, 0.0])
        );
        assert_eq!(
            open.clamp_in_cavity([0.0, 0.5, 0.0], [0.0, 3.0, 0.0], m),
            Some([0.0, 0.5, 0.0])
        );
    }
}
