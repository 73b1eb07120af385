//! Physical viscosity: a kinematic viscosity `nu` in m^2/s, applied implicitly.
//!
//! A step adds `nu` times the SPH Laplacian of the velocity (Monaghan 2005, Morris
//! et al. 1997: [`Kernel::viscosity_term`]) by backward Euler,
//! `(I - dt nu L + dt W) v' = v`, so that any `nu` and any time step are stable: an
//! explicit step would need `dt < h^2 / (8 nu)`. The system is symmetric and
//! positive definite (every neighbour weighs with the rest volume, and the pair
//! terms are antisymmetric, which conserves momentum), and conjugate gradients solve
//! it matrix-free, each product one pass over the neighbour lists
//! ([`pass::apply`]). The dot products are sums in `f64` over fixed chunks
//! ([`deterministic_sum`]): the same bits on any thread count and backend.
//!
//! `L` is calibrated on the rest lattice ([`lattice::laplacian_calibration`]). `W`
//! is the share of the no-slip walls ([`lattice::WallShare`]): the fluid mirrored
//! beyond them, moving so that the velocity at the wall is the wall's (at rest).

mod lattice;
mod pass;

use crate::Domain;
use crate::Wall;
use crate::lists::{Neighbourhood, pack_vectors};
use crate::parallel::{deterministic_sum, for_each_chunk, stretches};
use lattice::WallShare;
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
    /// The no-slip walls' share per unit of `nu`, when the domain has one.
    wall: Option<WallShare>,
    residual: [Vec<f32>; D],
    direction: [Vec<f32>; D],
    product: [Vec<f32>; D],
    walls: [Vec<f32>; D],
    packed: Vec<[f32; 4]>,
    partials: Vec<f64>,
}

fn empty<const D: usize>() -> [Vec<f32>; D] {
    core::array::from_fn(|_| Vec::new())
}

fn refs<const D: usize>(v: &[Vec<f32>; D]) -> [&[f32]; D] {
    core::array::from_fn(|a| v[a].as_slice())
}

fn muts<const D: usize>(v: &mut [Vec<f32>; D]) -> [&mut [f32]; D] {
    let mut it = v.iter_mut();
    core::array::from_fn(|_| it.next().expect("D arrays").as_mut_slice())
}

impl<const D: usize> Viscosity<D> {
    /// The viscosity `nu` (m^2/s) of particles of rest volume `volume` on the
    /// lattice of spacing `s`, in `domain`.
    pub(crate) fn new(
        kernel: &Kernel<D>,
        nu: f32,
        s: f32,
        volume: f32,
        domain: &Domain<D>,
    ) -> Self {
        let calibration = lattice::laplacian_calibration(kernel, s, volume);
        let wall = (nu > 0.0 && domain.has_no_slip())
            .then(|| WallShare::new(kernel, s, volume, calibration));
        Self {
            nu: (f64::from(nu) * calibration) as f32,
            nu_user: nu,
            volume,
            wall,
            residual: empty(),
            direction: empty(),
            product: empty(),
            walls: empty(),
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
        domain: &Domain<D>,
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
        let with_walls = self.wall_shares(nb, domain);
        let mut v = v;
        let system = System {
            kernel,
            nu: self.nu,
            volume: self.volume,
            dt,
            walls: with_walls.then(|| refs(&self.walls)),
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

    /// Every particle's share of the no-slip walls along each axis, `nu W_i`, into
    /// `walls`. Returns whether there is a no-slip wall.
    fn wall_shares(&mut self, nb: &Neighbourhood<'_, D>, domain: &Domain<D>) -> bool {
        let Some(share) = &self.wall else {
            return false;
        };
        let n = nb.len();
        for w in &mut self.walls {
            w.resize(n, 0.0);
        }
        let (lo, hi, faces) = (domain.lo(), domain.hi(), domain.walls());
        let (quads, nu) = (nb.quads, self.nu_user);
        for_each_chunk(muts(&mut self.walls), &|start, w: [&mut [f32]; D]| {
            for k in 0..w[0].len() {
                let p = quads[start + k];
                let mut total = [0.0f32; D];
                for axis in 0..D {
                    for (side, d) in [(0, p[axis] - lo[axis]), (1, hi[axis] - p[axis])] {
                        if faces[axis][side] != Wall::NoSlip {
                            continue;
                        }
                        let (normal, tangent) = share.at(d);
                        for (b, t) in total.iter_mut().enumerate() {
                            *t += if b == axis { normal } else { tangent };
                        }
                    }
                }
                for a in 0..D {
                    w[a][k] = nu * total[a];
                }
            }
        });
        true
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
