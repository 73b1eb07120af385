//! Boundary density: walls act as rest fluid.
//!
//! A particle closer than `h` to a wall lacks the neighbours the wall hides, so with
//! clamping alone its density is too low, its constraint cannot see the wall, and the
//! corrections that should push it off the wall escape along it (particles squeezed
//! into an edge shoot along it). Treating every surface locally as a plane with rest
//! fluid behind it fixes both: the wall adds `rho0 Phi(d)` to the density of a
//! particle at distance `d` (`Phi` is the share of the poly6 kernel behind the plane,
//! 1/2 at `d = 0`) and `-A(d) n` to the constraint gradient (`A` is the plane integral
//! of the spiky kernel, the derivative of its share behind the plane), where `n` is
//! the surface normal into the fluid. The wall does not move; its share of the
//! correction, `lambda_i (-A(d) n)`, moves the particle off it.
//!
//! Near an edge of the domain's box, or the inner edge of a container, where two faces
//! meet at a right angle, each face within `h` adds its share and the quadrant behind
//! both is taken out once ([`CornerTables`]): `Phi(d1) + Phi(d2) - Psi(d1, d2)`, the
//! gradient to match. Elsewhere a collider is its nearest surface.

use crate::collide::{Collider, Domain};
use pbf_kernels::{CornerTables, WallTables};

/// The walls a pass sees: the domain's faces and the colliders' surfaces.
pub(crate) struct Boundary<'a, const D: usize> {
    pub(crate) domain: &'a Domain<D>,
    pub(crate) colliders: &'a [Collider<D>],
    pub(crate) tables: &'a WallTables,
    /// The kernel behind two faces at once, for the domain's edges and containers'
    /// inner edges (`None` when there are none: a domain with walls on one axis at
    /// most, or the unbounded one of the position deltas, and no box or cylinder
    /// container).
    pub(crate) corners: Option<&'a CornerTables>,
}

impl<const D: usize> Boundary<'_, D> {
    /// Whether every point of the box `lo..=hi` is at least h from every face of the
    /// domain and, by their bounds, from every collider: then the walls add nothing
    /// anywhere in it ([`density_and_gradient`](Self::density_and_gradient) returns
    /// zeros), which one test shows for a whole group of particles. `None` (a
    /// coordinate that is not finite) is not clear.
    #[inline]
    pub(crate) fn clear_box(&self, bounds: Option<([f32; D], [f32; D])>) -> bool {
        let Some((lo, hi)) = bounds else {
            return false;
        };
        let h = self.tables.h();
        // Subtraction is monotonic, so the box's corners bound every point's distances
        // as `density_and_gradient` computes them.
        let (d_lo, d_hi) = (self.domain.walls_lo(), self.domain.walls_hi());
        (0..D).all(|a| !(lo[a] - d_lo[a] < h) && !(d_hi[a] - hi[a] < h))
            && self.colliders.iter().all(|c| c.clear_of_box(lo, hi, h))
    }

    /// The walls' density share `sum Phi(d)` (to be multiplied by `rho0`) and their
    /// constraint gradient `sum -A(d) n` at `p`: the scalar reference of
    /// [`Boundary::lanes`].
    #[cfg(test)]
    pub(crate) fn density_and_gradient(&self, p: [f32; D]) -> (f32, [f32; D]) {
        let (lo, hi) = (self.domain.walls_lo(), self.domain.walls_hi());
        // Most particles are at least h from every face: no face adds anything (the
        // same bits as adding their zeros: the sums stay +0, and a gradient that is
        // not -0 stays itself when a zero of either sign is taken from it).
        let h = self.tables.h();
        // So are most particles from every collider, which their bounds show without
        // evaluating the distance (below).
        if (0..D).all(|a| !(p[a] - lo[a] < h) && !(hi[a] - p[a] < h))
            && self.colliders.iter().all(|c| c.clear_of(p, h))
        {
            return (0.0, [0.0; D]);
        }
        let (mut phi, mut grad) = self.tables.faces(lo, hi, p);
        self.add_domain_edges(p, &mut phi, &mut grad);
        self.add_colliders(p, &mut phi, &mut grad);
        (phi, grad)
    }

    /// Takes the quadrant behind two perpendicular faces of the domain out of the sums
    /// of [`WallTables::faces`] at `p`, which has added both faces' shares: for every
    /// pair of faces on different axes within h of `p`, `Psi(d1, d2)` from the
    /// share and `B n` back into the gradient, as [`add_faces`](Self::add_faces)
    /// does for a cavity. At a vertex of the domain the octant behind all three faces
    /// is taken out once too often, as there. Nothing without corner tables.
    #[inline]
    pub(crate) fn add_domain_edges(&self, p: [f32; D], phi: &mut f32, grad: &mut [f32; D]) {
        let Some(corners) = self.corners else {
            return;
        };
        let h = self.tables.h();
        let (lo, hi) = (self.domain.walls_lo(), self.domain.walls_hi());
        // The faces within h, `(distance, normal)`, lower face first.
        let mut near = [(0.0f32, [0.0f32; D]); 6];
        let mut count = 0;
        for a in 0..D {
            for (d, sign) in [(p[a] - lo[a], 1.0f32), (hi[a] - p[a], -1.0)] {
                if d < h && count < near.len() {
                    near[count].0 = d;
                    near[count].1[a] = sign;
                    count += 1;
                }
            }
        }
        Self::take_out_quadrants(corners, &near[..count], phi, grad);
    }

    /// Adds the colliders' shares at `p` to the sums of
    /// [`density_and_gradient`](Self::density_and_gradient), which has added the
    /// domain's faces: the colliders within h, in order; each its nearest surface, or
    /// near a container's inner edge the faces of its cavity.
    #[inline]
    pub(crate) fn add_colliders(&self, p: [f32; D], phi: &mut f32, grad: &mut [f32; D]) {
        let h = self.tables.h();
        for c in self.colliders.iter().filter(|c| !c.clear_of(p, h)) {
            if let Some((corners, faces)) = self.corners.zip(c.cavity_faces(p, h)) {
                self.add_faces(corners, faces.as_slice(), phi, grad);
            } else {
                let (d, n) = c.distance_and_normal(p);
                self.add_wall(d, n, phi, grad);
            }
        }
    }

    /// Adds the shares of the faces of a cavity, `(distance, normal)`: each face's,
    /// less the quadrant behind each pair that meets at a right angle (faces along
    /// one axis face each other, and nothing lies behind both). Where three faces
    /// meet, the octant behind all three is taken out once too often: a share of
    /// about an eighth of the kernel at the vertex itself, falling to nothing within
    /// `h` of it.
    fn add_faces(
        &self,
        corners: &CornerTables,
        faces: &[(f32, [f32; D])],
        phi: &mut f32,
        grad: &mut [f32; D],
    ) {
        for &(d, n) in faces {
            self.add_wall(d, n, phi, grad);
        }
        Self::take_out_quadrants(corners, faces, phi, grad);
    }

    /// Takes the quadrant behind each pair of `faces` that meet at a right angle out
    /// of the sums: `Psi(d1, d2)` from the share, `B(d1, d2) n1 + B(d2, d1) n2` back
    /// into the gradient. Faces along one axis face each other, and nothing lies
    /// behind both.
    fn take_out_quadrants(
        corners: &CornerTables,
        faces: &[(f32, [f32; D])],
        phi: &mut f32,
        grad: &mut [f32; D],
    ) {
        for (i, &(d1, n1)) in faces.iter().enumerate() {
            for &(d2, n2) in &faces[i + 1..] {
                let facing: f32 = (0..D).map(|a| n1[a] * n2[a]).sum();
                if facing.abs() > 0.5 {
                    continue;
                }
                let (behind_both, beyond_1, beyond_2) = corners.at(d1, d2);
                *phi -= behind_both;
                for a in 0..D {
                    grad[a] += beyond_1 * n1[a] + beyond_2 * n2[a];
                }
            }
        }
    }

    /// Adds the share of a wall at distance `d` with normal `n` (into the fluid):
    /// `Phi(d)` to `phi`, `-A(d) n` to `grad`.
    #[inline(always)]
    fn add_wall(&self, d: f32, n: [f32; D], phi: &mut f32, grad: &mut [f32; D]) {
        let (share, slope) = self.tables.at(d);
        *phi += share;
        for a in 0..D {
            grad[a] -= slope * n[a];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pbf_kernels::Kernel;

    /// Far from every face the walls add nothing (+0, as adding each face's zeros
    /// gives); within h of a face they add its share, with or without colliders.
    #[test]
    fn walls_add_only_within_h_of_a_face() {
        use crate::collide::{ColliderKind, Shape};
        let h = 0.1f32;
        let tables = WallTables::new(&Kernel::<3>::new(h).unwrap());
        let corners = CornerTables::new(&Kernel::<3>::new(h).unwrap());
        let domain = Domain::new([0.0; 3], [1.0; 3]).unwrap();
        let far_sphere = Shape::Sphere {
            center: [5.0, 5.0, 5.0],
            radius: 0.1,
        };
        let colliders = [Collider::new(far_sphere, ColliderKind::Solid).unwrap()];
        for colliders in [&[][..], &colliders[..]] {
            let walls = Boundary {
                domain: &domain,
                colliders,
                tables: &tables,
                corners: Some(&corners),
            };
            let (phi, grad) = walls.density_and_gradient([0.5, 0.5, 0.5]);
            assert_eq!(phi.to_bits(), 0.0f32.to_bits());
            assert!(grad.iter().all(|g| g.to_bits() == 0.0f32.to_bits()));
            // Within h of the top face: its share, and a gradient along z only.
            let z = 1.0 - 0.5 * h;
            let (phi, grad) = walls.density_and_gradient([0.5, 0.5, z]);
            assert!(phi > 0.01 && phi == tables.at(1.0 - z).0, "phi {phi}");
            assert!(
                grad[2] > 0.0 && grad[0] == 0.0 && grad[1] == 0.0,
                "{grad:?}"
            );
        }
    }

    /// Near the inner edge of a glass (an open cylinder container) a point gets both
    /// faces' shares less the quadrant behind both, which varies smoothly as the
    /// nearest face changes from the wall to the floor; away from the edge, the
    /// nearest face's share alone.
    #[test]
    fn the_inner_edge_of_a_glass_counts_each_face_and_the_quadrant_once() {
        use crate::collide::{ColliderKind, Shape};
        let h = 0.1f32;
        let kernel = Kernel::<3>::new(h).unwrap();
        let (tables, corners) = (WallTables::new(&kernel), CornerTables::new(&kernel));
        let domain = Domain::new([0.0; 3], [2.0; 3]).unwrap();
        // Inner radius 0.5 around x = z = 1, inner floor at y = 0.2, rim at 1.5.
        let glass = Collider::new(
            Shape::Cylinder {
                base: [1.0, 0.1, 1.0],
                radius: 0.6,
                height: 1.4,
            },
            ColliderKind::Container {
                wall_thickness: 0.2,
                open_top: true,
            },
        )
        .unwrap();
        let colliders = [glass];
        let walls = Boundary {
            domain: &domain,
            colliders: &colliders,
            tables: &tables,
            corners: Some(&corners),
        };
        // A point `side` from the wall (along +x) and `up` above the floor.
        let at = |side: f32, up: f32| walls.density_and_gradient([1.5 - side, 0.2 + up, 1.0]);
        let (d1, d2) = (0.03, 0.05);
        let (phi, grad) = at(d1, d2);
        let ((s1, a1), (s2, a2)) = (tables.at(d1), tables.at(d2));
        let (both, b12, b21) = corners.at(d1, d2);
        assert!((phi - (s1 + s2 - both)).abs() < 1e-5, "{phi}");
        assert!((grad[0] - (a1 - b12)).abs() < 1e-3 * a1, "{grad:?}");
        assert!((grad[1] - (-(a2 - b21))).abs() < 1e-3 * a2, "{grad:?}");
        assert!(grad[2].abs() < 1e-3 * a1, "{grad:?}");
        // Across the diagonal, where the nearest face changes: neither the share nor
        // the gradient jumps (the nearest face alone turns the gradient from one
        // normal to the other there, a jump of about `sqrt(2) A(d)`).
        let jump = core::f32::consts::SQRT_2 * tables.at(0.04).1;
        let (mut last, mut last_grad) = at(0.02, 0.06);
        for k in 1..=40 {
            let t = k as f32 / 40.0;
            let (share, grad) = at(0.02 + 0.04 * t, 0.06 - 0.04 * t);
            assert!((share - last).abs() < 0.01, "step {k}: {last} -> {share}");
            let turn = (0..3)
                .map(|a| (grad[a] - last_grad[a]).powi(2))
                .sum::<f32>()
                .sqrt();
            assert!(turn < 0.25 * jump, "step {k}: {last_grad:?} -> {grad:?}");
            (last, last_grad) = (share, grad);
        }
        // Beyond h of the floor the wall alone.
        let (phi, _) = at(d1, 1.5 * h);
        assert!((phi - s1).abs() < 1e-4, "{phi} {s1}");
    }

    /// Along an edge of the domain's box a point gets both faces' shares less the
    /// quadrant behind both, as it does along the same edge of a box container's
    /// cavity; at a vertex, the three edges' quadrants.
    #[test]
    fn the_domains_edges_count_the_quadrant_once_as_a_containers_do() {
        use crate::collide::{ColliderKind, Shape};
        let h = 0.1f32;
        let kernel = Kernel::<3>::new(h).unwrap();
        let (tables, corners) = (WallTables::new(&kernel), CornerTables::new(&kernel));
        let domain = Domain::new([0.0; 3], [1.0; 3]).unwrap();
        let walls = Boundary {
            domain: &domain,
            colliders: &[],
            tables: &tables,
            corners: Some(&corners),
        };
        // The same cavity, `0..1` on every axis, as a closed box container in a far
        // larger domain.
        let t = 0.2;
        let container = [Collider::new(
            Shape::Box {
                center: [0.5; 3],
                half_extents: [0.5 + 0.5 * t; 3],
            },
            ColliderKind::Container {
                wall_thickness: t,
                open_top: false,
            },
        )
        .unwrap()];
        let wide = Domain::new([-2.0; 3], [3.0; 3]).unwrap();
        let cavity = Boundary {
            domain: &wide,
            colliders: &container,
            tables: &tables,
            corners: Some(&corners),
        };
        for p in [
            [0.03, 0.05, 0.5],
            [0.5, 0.97, 0.02],
            [0.96, 0.5, 0.99],
            [0.2, 0.05, 0.5],
        ] {
            let ((phi, grad), (expected, expected_grad)) = (
                walls.density_and_gradient(p),
                cavity.density_and_gradient(p),
            );
            assert!((phi - expected).abs() < 1e-5, "{p:?}: {phi} {expected}");
            for a in 0..3 {
                assert!(
                    (grad[a] - expected_grad[a]).abs() < 1e-4 * tables.at(0.0).1,
                    "{p:?}: {grad:?} {expected_grad:?}"
                );
            }
        }
        // By the formula along an edge: lower x and lower y faces.
        let (d1, d2) = (0.03, 0.05);
        let (phi, grad) = walls.density_and_gradient([d1, d2, 0.5]);
        let ((s1, a1), (s2, a2)) = (tables.at(d1), tables.at(d2));
        let (both, b12, b21) = corners.at(d1, d2);
        assert_eq!(phi, s1 + s2 - both);
        assert_eq!(grad, [-a1 + b12, -a2 + b21, 0.0]);
        // At a vertex: three faces, three quadrants.
        let (phi, _) = walls.density_and_gradient([d1, d2, d1]);
        let three = 2.0 * s1 + s2 - 2.0 * both - corners.at(d1, d1).0;
        assert!((phi - three).abs() < 1e-6, "{phi} {three}");
    }

    /// A box the walls call clear gets zeros from them at every point, the same bits
    /// as the early return; one within h of a face or of a collider is not clear.
    #[test]
    fn a_clear_box_gets_nothing_from_the_walls() {
        use crate::collide::{ColliderKind, Shape};
        let h = 0.1f32;
        let tables = WallTables::new(&Kernel::<3>::new(h).unwrap());
        let corners = CornerTables::new(&Kernel::<3>::new(h).unwrap());
        let domain = Domain::new([0.0; 3], [2.0; 3]).unwrap();
        let ball = Collider::new(
            Shape::Sphere {
                center: [1.5, 1.5, 1.5],
                radius: 0.2,
            },
            ColliderKind::Solid,
        )
        .unwrap();
        let colliders = [ball];
        let walls = Boundary {
            domain: &domain,
            colliders: &colliders,
            tables: &tables,
            corners: Some(&corners),
        };
        let clear = ([0.5, 0.5, 0.5], [1.0, 1.1, 0.9]);
        assert!(walls.clear_box(Some(clear)));
        for k in 0..27 {
            let t = |i: usize| ((k / 3usize.pow(i as u32)) % 3) as f32 / 2.0;
            let p: [f32; 3] =
                core::array::from_fn(|a| clear.0[a] + t(a) * (clear.1[a] - clear.0[a]));
            let (phi, grad) = walls.density_and_gradient(p);
            assert_eq!(phi.to_bits(), 0.0f32.to_bits());
            assert!(grad.iter().all(|g| g.to_bits() == 0.0f32.to_bits()));
        }
        // Within h of the floor, of the top, of the ball; a NaN; no box at all.
        assert!(!walls.clear_box(Some(([0.5, 0.05, 0.5], [1.0, 1.0, 1.0]))));
        assert!(!walls.clear_box(Some(([0.5, 0.5, 0.5], [1.0, 1.95, 1.0]))));
        assert!(!walls.clear_box(Some(([0.5, 0.5, 0.5], [1.25, 1.25, 1.25]))));
        assert!(!walls.clear_box(None));
    }

    /// Every width's [`Boundary::lanes`] against the scalar
    /// walls, lane by lane and bit for bit: points on, near and far from the faces
    /// (the table's ends included), and colliders within h of some.
    fn lanes_walls_match<L: pbf_kernels::Lane>(points: &[[f32; 3]], colliders: &[Collider<3>]) {
        let h = 0.1f32;
        let tables = WallTables::new(&Kernel::<3>::new(h).unwrap());
        let corners = CornerTables::new(&Kernel::<3>::new(h).unwrap());
        let domain = Domain::new([0.0; 3], [1.0; 3]).unwrap();
        let walls = Boundary {
            domain: &domain,
            colliders,
            tables: &tables,
            corners: Some(&corners),
        };
        for chunk in points.chunks_exact(L::WIDTH) {
            // The lanes made and read inside `L::run`, as the passes do.
            let (share, grad) = L::run(|| {
                let p: [L; 3] = core::array::from_fn(|a| {
                    let column: Vec<f32> = chunk.iter().map(|q| q[a]).collect();
                    L::from_slice(&column)
                });
                let (share, grad) = walls.lanes(p);
                (
                    crate::lanes::lanes(share, L::WIDTH),
                    grad.map(|g| crate::lanes::lanes(g, L::WIDTH)),
                )
            });
            for (l, q) in chunk.iter().enumerate() {
                let (phi, g) = walls.density_and_gradient(*q);
                assert_eq!(share[l].to_bits(), phi.to_bits(), "{q:?}");
                for a in 0..3 {
                    assert_eq!(grad[a][l].to_bits(), g[a].to_bits(), "{q:?} axis {a}");
                }
            }
        }
    }

    /// A coordinate of the unit box with h = 0.1: anywhere, or on, near or exactly h
    /// from a face.
    fn coordinate() -> impl proptest::strategy::Strategy<Value = f32> {
        use proptest::prelude::*;
        prop_oneof![
            0.0f32..1.0,
            0.0f32..0.1,
            0.9f32..1.0,
            Just(0.0f32),
            Just(1.0f32),
            Just(0.1f32),
            Just(0.9f32),
            Just(0.099_999_99f32),
            Just(1e-30f32),
        ]
    }

    proptest::proptest! {
        #[test]
        fn every_width_gives_the_scalar_walls(
            points in proptest::collection::vec(
                proptest::array::uniform3(coordinate()), 48),
            with_colliders: bool,
        ) {
            use crate::collide::{ColliderKind, Shape};
            let colliders = [
                Collider::new(
                    Shape::Sphere { center: [0.5, 0.5, 0.2], radius: 0.15 },
                    ColliderKind::Solid,
                )
                .unwrap(),
                Collider::new(
                    Shape::Box { center: [0.5, 0.5, 0.5], half_extents: [0.45, 0.45, 0.45] },
                    ColliderKind::Container { wall_thickness: 0.02, open_top: true },
                )
                .unwrap(),
            ];
            let colliders = if with_colliders { &colliders[..] } else { &[][..] };
            pbf_kernels::for_each_lane! {
                let points: &'a [[f32; 3]] = &points;
                let colliders: &'a [Collider<3>] = colliders;
                |L| {
                    lanes_walls_match::<L>(points, colliders);
                }
            }
        }
    }
}
