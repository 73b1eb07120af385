//! Physical viscosity: a kinematic viscosity `nu` in m^2/s, applied implicitly.
//!
//! A step adds `nu` times the SPH Laplacian of the velocity (the component-wise
//! form of Morris et al. 1997: [`Kernel::viscosity_term`]) by backward Euler,
//! `(I - dt nu L + dt W) v' = v`, so that any `nu` and any time step are stable: an
//! explicit step would need `dt < h^2 / (8 nu)`. The system is symmetric and
//! positive definite (every neighbour weighs with the rest volume, and the pair
//! terms are antisymmetric, which conserves momentum; the component-wise form does
//! not conserve angular momentum exactly on a disordered set), and conjugate
//! gradients solve it matrix-free, each product one pass over the neighbour lists
//! ([`pass::apply`]). The dot products are sums in `f64` over fixed chunks
//! ([`deterministic_sum`]): the same bits on any thread count and backend.
//!
//! `L` is calibrated on the rest lattice ([`lattice::laplacian_calibration`]). `W`
//! is the share of the no-slip walls ([`lattice::WallShare`]): the fluid mirrored
//! beyond them, moving so that the velocity at the wall is the wall's (at rest).

mod lattice;
mod pass;

use crate::lists::{Neighbourhood, pack_vectors};
use crate::parallel::{deterministic_sum, for_each_chunk, stretches};
use crate::solver::{empty, muts, refs};
use crate::{Collider, Domain, Wall};
use lattice::WallShare;
pub(crate) use lattice::for_each_lattice_point;
use pass::System;
use pbf_kernels::{Kernel, Lane};

/// The conjugate gradients stop when the residual's norm is at most this fraction of
/// the right-hand side's.
pub(crate) const TOLERANCE: f64 = 1e-5;

/// The most conjugate-gradient iterations of a step: the solve then keeps its last
/// iterate (a lower viscosity than asked, never an unstable one), and the step's
/// diagnostics report the count.
pub(crate) const MAX_ITERATIONS: u32 = 100;

/// The viscosity's constants and the conjugate gradients' work arrays, kept between
/// steps so that a step allocates nothing.
#[derive(Debug, Clone)]
pub(crate) struct Viscosity<const D: usize> {
    /// The user's `nu` times the lattice calibration of the Laplacian.
    nu: f32,
    /// The user's `nu`.
    nu_user: f32,
    /// The rest volume `m / rho0`.
    volume: f32,
    /// The no-slip walls' share per unit of `nu` (`None` without a viscosity).
    wall: Option<WallShare>,
    residual: [Vec<f32>; D],
    direction: [Vec<f32>; D],
    product: [Vec<f32>; D],
    /// Every particle's `nu W_i`.
    walls: Vec<f32>,
    packed: Vec<[f32; 4]>,
    partials: Vec<f64>,
}

impl<const D: usize> Viscosity<D> {
    /// The viscosity `nu` (m^2/s) of particles of rest volume `volume` on the
    /// lattice of spacing `s`.
    pub(crate) fn new(kernel: &Kernel<D>, nu: f32, s: f32, volume: f32) -> Self {
        let calibration = lattice::laplacian_calibration(kernel, s, volume);
        let wall = (nu > 0.0).then(|| WallShare::new(kernel, s, volume, calibration));
        Self {
            nu: (f64::from(nu) * calibration) as f32,
            nu_user: nu,
            volume,
            wall,
            residual: empty(),
            direction: empty(),
            product: empty(),
            walls: Vec::new(),
            packed: Vec::new(),
            partials: Vec::new(),
        }
    }

    /// Whether the viscosity is on (`nu > 0`).
    pub(crate) fn is_on(&self) -> bool {
        self.nu_user > 0.0
    }

    /// Replaces `v` by the solution of `(I - dt nu L + dt W) v' = v` over the lists
    /// of `nb` (whose quads hold the positions), by conjugate gradients from `v`
    /// itself. Returns the iterations run.
    pub(crate) fn solve<L: Lane>(
        &mut self,
        nb: &Neighbourhood<'_, D>,
        kernel: &Kernel<D>,
        dt: f32,
        walls: (&Domain<D>, &[Collider<D>]),
        v: [&mut [f32]; D],
    ) -> u32 {
        let n = nb.len();
        if !self.is_on() || n == 0 {
            return 0;
        }
        for a in 0..D {
            for array in [&mut self.residual, &mut self.direction, &mut self.product] {
                array[a].resize(n, 0.0);
            }
        }
        let with_walls = self.wall_shares(nb, walls);
        let mut v = v;
        if with_walls && walls.0.has_moving_wall() {
            self.drive(nb, walls.0, dt, reborrow_mut(&mut v));
        }
        let system = System {
            kernel,
            nu: self.nu,
            volume: self.volume,
            dt,
            walls: with_walls.then_some(self.walls.as_slice()),
        };
        let partials = &mut self.partials;
        let dot = |partials: &mut Vec<f64>, x: [&[f32]; D], y: [&[f32]; D]| {
            deterministic_sum(n, partials, &|i| {
                (0..D)
                    .map(|a| f64::from(x[a][i]) * f64::from(y[a][i]))
                    .sum()
            })
        };
        let right = dot(partials, reborrow(&v), reborrow(&v));
        if right == 0.0 {
            return 0;
        }
        // Without no-slip walls the exact solution keeps every component's sum (the
        // momentum): the constant field is an eigenvector of the system with
        // eigenvalue 1. The iterate's sums are put back to the start's at the end.
        let sums: [f64; D] = core::array::from_fn(|a| {
            let va: &[f32] = v[a];
            deterministic_sum(n, partials, &|i| f64::from(va[i]))
        });
        // r = b - S v, with b = v: the start is the velocity itself.
        pack_vectors(&mut self.packed, reborrow(&v));
        pass::apply::<L, D>(
            nb,
            &system,
            reborrow(&v),
            &self.packed,
            muts(&mut self.product),
        );
        combine(
            muts(&mut self.residual),
            reborrow(&v),
            refs(&self.product),
            -1.0,
        );
        copy(muts(&mut self.direction), refs(&self.residual));
        let mut rr = dot(partials, refs(&self.residual), refs(&self.residual));
        let mut iterations = 0;
        while rr > TOLERANCE * TOLERANCE * right && iterations < MAX_ITERATIONS {
            pack_vectors(&mut self.packed, refs(&self.direction));
            let direction = refs(&self.direction);
            pass::apply::<L, D>(
                nb,
                &system,
                direction,
                &self.packed,
                muts(&mut self.product),
            );
            let pq = dot(partials, refs(&self.direction), refs(&self.product));
            if !(pq > 0.0) {
                break;
            }
            let alpha = rr / pq;
            add_scaled(reborrow_mut(&mut v), refs(&self.direction), alpha as f32);
            add_scaled(muts(&mut self.residual), refs(&self.product), -alpha as f32);
            let next = dot(partials, refs(&self.residual), refs(&self.residual));
            let beta = next / rr;
            combine_into(muts(&mut self.direction), refs(&self.residual), beta as f32);
            rr = next;
            iterations += 1;
        }
        if !with_walls {
            for (a, va) in v.iter_mut().enumerate() {
                let now = deterministic_sum(n, partials, &|i| f64::from(va[i]));
                let shift = ((sums[a] - now) / n as f64) as f32;
                shift_all(va, shift);
            }
        }
        iterations
    }

    /// Every particle's share of the no-slip walls, `nu W_i`, into `walls`: each
    /// face and collider within h adds `T(d)` at the distance `d` along its normal.
    /// Returns whether there is a no-slip wall.
    fn wall_shares(
        &mut self,
        nb: &Neighbourhood<'_, D>,
        (domain, colliders): (&Domain<D>, &[Collider<D>]),
    ) -> bool {
        let no_slip = colliders.iter().any(|c| c.wall() == Wall::NoSlip);
        let Some(share) = self
            .wall
            .as_ref()
            .filter(|_| no_slip || domain.has_no_slip())
        else {
            return false;
        };
        self.walls.resize(nb.len(), 0.0);
        let (lo, hi, faces) = (domain.lo(), domain.hi(), domain.walls());
        let periodic = domain.periodic();
        let (quads, nu, h) = (nb.quads, self.nu_user, share.h());
        for_each_chunk(
            [self.walls.as_mut_slice()],
            &|start, [w]: [&mut [f32]; 1]| {
                for (k, w) in w.iter_mut().enumerate() {
                    let q = quads[start + k];
                    let p: [f32; D] = core::array::from_fn(|a| q[a]);
                    let mut total = 0.0f32;
                    for axis in (0..D).filter(|&a| !periodic[a]) {
                        for (side, d) in [(0, p[axis] - lo[axis]), (1, hi[axis] - p[axis])] {
                            if faces[axis][side] == Wall::NoSlip {
                                total += share.at(d);
                            }
                        }
                    }
                    for c in colliders.iter().filter(|c| c.wall() == Wall::NoSlip) {
                        if !c.clear_of(p, h) {
                            total += share.at(c.distance(p));
                        }
                    }
                    *w = nu * total;
                }
            },
        );
        true
    }

    /// Adds the moving faces' drive to the right-hand side `v`: a face of velocity
    /// `u_w` pulls with `dt nu T(d) u_w`, so that the solve's
    /// `(I - dt nu L + dt W) v' = v + dt nu sum T(d) u_w` drags the fluid next to
    /// the face towards `u_w`.
    fn drive(&self, nb: &Neighbourhood<'_, D>, domain: &Domain<D>, dt: f32, v: [&mut [f32]; D]) {
        let Some(share) = self.wall.as_ref() else {
            return;
        };
        let (lo, hi, periodic) = (domain.lo(), domain.hi(), domain.periodic());
        let (quads, scale) = (nb.quads, dt * self.nu_user);
        for_each_chunk(v, &|start, v: [&mut [f32]; D]| {
            for k in 0..v[0].len() {
                let q = quads[start + k];
                for axis in (0..D).filter(|&a| !periodic[a]) {
                    for (side, d) in [(0, q[axis] - lo[axis]), (1, hi[axis] - q[axis])] {
                        let u = domain.wall_velocity(axis, side);
                        if u.iter().all(|&c| c == 0.0) {
                            continue;
                        }
                        let pull = scale * share.at(d);
                        for a in 0..D {
                            v[a][k] += pull * u[a];
                        }
                    }
                }
            }
        });
    }
}

fn reborrow<'a, const D: usize>(v: &'a [&mut [f32]; D]) -> [&'a [f32]; D] {
    core::array::from_fn(|a| &*v[a])
}

fn reborrow_mut<'a, const D: usize>(v: &'a mut [&mut [f32]; D]) -> [&'a mut [f32]; D] {
    let mut it = v.iter_mut();
    core::array::from_fn(|_| &mut **it.next().expect("D arrays"))
}

/// `out = x + c y`, element by element.
fn combine<const D: usize>(out: [&mut [f32]; D], x: [&[f32]; D], y: [&[f32]; D], c: f32) {
    for_each_chunk(out, &|start, out: [&mut [f32]; D]| {
        let range = start..start + out[0].len();
        let (x, y) = (stretches(x, range.clone()), stretches(y, range));
        for a in 0..D {
            for ((o, &x), &y) in out[a].iter_mut().zip(x[a]).zip(y[a]) {
                *o = x + c * y;
            }
        }
    });
}

/// `out += c` for every element.
fn shift_all(out: &mut [f32], c: f32) {
    for_each_chunk([out], &|_, [out]: [&mut [f32]; 1]| {
        for o in out.iter_mut() {
            *o += c;
        }
    });
}

/// `out = x`.
fn copy<const D: usize>(out: [&mut [f32]; D], x: [&[f32]; D]) {
    for (o, x) in out.into_iter().zip(x) {
        o.copy_from_slice(x);
    }
}

/// `out += c y`.
fn add_scaled<const D: usize>(out: [&mut [f32]; D], y: [&[f32]; D], c: f32) {
    for_each_chunk(out, &|start, out: [&mut [f32]; D]| {
        let y = stretches(y, start..start + out[0].len());
        for a in 0..D {
            for (o, &y) in out[a].iter_mut().zip(y[a]) {
                *o += c * y;
            }
        }
    });
}

/// `out = x + c out` (the new search direction from the residual `x`).
fn combine_into<const D: usize>(out: [&mut [f32]; D], x: [&[f32]; D], c: f32) {
    for_each_chunk(out, &|start, out: [&mut [f32]; D]| {
        let x = stretches(x, start..start + out[0].len());
        for a in 0..D {
            for (o, &x) in out[a].iter_mut().zip(x[a]) {
                *o = x + c * *o;
            }
        }
    });
}

#[cfg(test)]
mod tests;
