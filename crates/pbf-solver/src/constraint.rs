//! The density constraint (Macklin & Müller 2013, eqs. 1-14): the lambda pass and the
//! position-delta pass of each solver iteration.

use crate::boundary::Boundary;
use crate::collide::{Collider, Domain, confine_block};
use crate::lanes::lanes;
use crate::lists::{GROUP, Neighbourhood, for_each_group, for_each_pass_chunk};
use pbf_kernels::Lane;
use pbf_kernels::{Kernel, TensileCorrection};

/// The Jacobi relaxation `omega` of the constraint passes: `min(1, (4/3) / a_max)`,
/// where `a_max` is the largest factor by which one undamped Jacobi pass over-corrects
/// a density wave in the rest lattice.
///
/// Why: each pass solves every particle's constraint on its own and applies all of
/// them at once, so neighbouring corrections add up. Linearised about the rest lattice
/// a pass multiplies a density wave of wave vector q by `1 - omega a(q)`, with
/// `a(q) = |sum_j g_j e^(i q.x_j)|^2 / (sum_j |g_j|^2 + eps)` and `g_j = (m / rho0)
/// gradW(x_j)` over the lattice neighbours. Since the velocity is the total
/// displacement over the step (`v = (p - x) / dt`), the correction of a step carries
/// into the next prediction: a wave that one step multiplies by `f` grows from step
/// to step when `f < -1/3` (the roots of `z^2 - 2 f z + f = 0`). Unrelaxed,
/// `a_max = 2.64` in 3D and `2.02` in 2D (h = 2 s), so with one iteration per step
/// (`f = 1 - a`) the fluid blows up even without gravity, at any time step, and at large
/// time steps the same waves keep a settled fluid boiling. With every factor
/// `1 - omega a` in `[-1/3, 1]`, the product over any number of iterations is too:
/// stable for every iteration count. The price: long waves (`a` small), such as the
/// hydrostatic compression, converge `omega` times as fast per iteration.
pub(crate) fn jacobi_relaxation<const D: usize>(
    params: &crate::Params<D>,
    kernel: &Kernel<D>,
) -> f32 {
    // In units of the spacing, so that every scale computes from the same numbers:
    // computed at the scene's own scale, the 2D value at s = 0.0005 differed from the
    // one at s = 0.05 by an ulp, which a chaotic flow grows into visible differences.
    // Positions are then the lattice offsets k, the particle volume m / rho0 is 1 and
    // eps = cfm_rel / (h / s)^2.
    debug_assert_eq!(kernel.h(), params.kernel_radius(), "the solver's kernel");
    let ratio = params.kernel_radius() / params.spacing();
    let (a_max, _) = lattice_overshoot::<D>(ratio, 1.0, params.cfm_rel());
    // Rounded down to a multiple of 2^-12, so that a ratio h / s that rounds
    // differently at two scales still gives the same value.
    ((4.0 / 3.0 / a_max).min(1.0) * 4096.0).floor() as f32 / 4096.0
}

/// The density, in units of the rest density, above which
/// [`Relaxation::Auto`](crate::Relaxation::Auto) scales a particle's relaxation by
/// `COMPRESSION_KNEE rho0 / rho_i`.
///
/// Why: the overshoot `a_max` of [`jacobi_relaxation`] grows with the density of the
/// lattice (more neighbours add up), by less than the density itself
/// ([`lattice_overshoot`]: 1.6 times at 2.2 times the rest density, 2.4 times at 3.4).
/// Unscaled, a fluid squeezed far above rest (a deep pool at a large time step and few
/// iterations) has factors `1 - omega a` below -1: its passes diverge and it boils.
/// Scaled beyond the knee, every uniformly compressed lattice keeps its factors in
/// `[-0.42, 1]`. Below the knee nothing changes, so a fluid within 10% of rest (every
/// run at a reasonable time step) converges exactly as before; there the overshoot
/// grows by under 5% (factors down to -0.4 instead of -1/3), which the product over
/// two or more iterations of a step absorbs.
pub(crate) const COMPRESSION_KNEE: f32 = 1.1;

/// The largest over-correction factor `a_max` of one undamped Jacobi pass over a
/// lattice of spacing 1 (see [`jacobi_relaxation`]), for a kernel radius of `ratio`
/// spacings, particles of volume `m / rho0 = volume` and the CFM term `cfm_rel`, and
/// the lattice's density over the rest density, `volume sum_j W(x_j)` (itself
/// included). A lattice compressed below the rest spacing has `ratio` above the rest
/// `h / s` and `volume = (ratio / (h / s))^D`.
pub(crate) fn lattice_overshoot<const D: usize>(
    ratio: f32,
    volume: f64,
    cfm_rel: f32,
) -> (f64, f64) {
    let kernel = &Kernel::<D>::new(ratio).expect("h / s is finite and positive");
    let s = 1.0f64;
    let reach = ratio.ceil() as i32;
    let scale = volume;
    let mut density = 0.0f64;
    // Half the neighbours (g is odd: the sum over all is 2i sum_half g sin(q.x)).
    let side = (2 * reach + 1) as usize;
    let mut half: Vec<([i32; D], [f64; D])> = Vec::new();
    let mut sum_sq = 0.0f64;
    for flat in 0..side.pow(D as u32) {
        let mut rest = flat;
        let k: [i32; D] = core::array::from_fn(|_| {
            let k = (rest % side) as i32 - reach;
            rest /= side;
            k
        });
        let x: [f32; D] = core::array::from_fn(|a| (f64::from(k[a]) * s) as f32);
        density += scale * f64::from(kernel.poly6(pbf_kernels::norm2(x)));
        let g = kernel.spiky_gradient(x).map(|c| scale * f64::from(c));
        sum_sq += g.iter().map(|c| c * c).sum::<f64>();
        if k.iter().find(|c| **c != 0).is_some_and(|c| *c > 0) {
            half.push((k, g));
        }
    }
    let denominator = sum_sq + f64::from(cfm_rel) / f64::from(ratio).powi(2);
    // Wave vectors q s in [0, pi]^D on a grid (the spectrum is symmetric in each axis).
    const STEPS: usize = 24;
    // exp(i q_a k) for every axis a and offset k in -reach..=reach: sin(q.k) is the
    // imaginary part of their product over the axes, a few multiplications where a
    // `sin` call a neighbour made `Solver::new` take 0.67 s at h = 8 s in 3D.
    let mut phases = vec![[(0.0f64, 0.0f64); D]; side];
    let mut a_max = 0.0f64;
    for flat in 0..(STEPS + 1).pow(D as u32) {
        let mut rest = flat;
        let q: [f64; D] = core::array::from_fn(|_| {
            let k = rest % (STEPS + 1);
            rest /= STEPS + 1;
            core::f64::consts::PI * k as f64 / STEPS as f64
        });
        for (k, row) in phases.iter_mut().enumerate() {
            let k = (k as i32 - reach) as f64;
            for a in 0..D {
                let (sin, cos) = (q[a] * k).sin_cos();
                row[a] = (cos, sin);
            }
        }
        let mut sum = [0.0f64; D];
        for (k, g) in &half {
            let (mut re, mut im) = (1.0f64, 0.0f64);
            for a in 0..D {
                let (c, s) = phases[(k[a] + reach) as usize][a];
                (re, im) = (re * c - im * s, re * s + im * c);
            }
            // im = sin(q.k)
            for a in 0..D {
                sum[a] += g[a] * im;
            }
        }
        let a = 4.0 * sum.iter().map(|c| c * c).sum::<f64>() / denominator;
        a_max = a_max.max(a);
    }
    (a_max, density)
}

/// The most a wave of the rest lattice that one relaxed Jacobi pass damps or flips
/// (factor `1 - omega a` in `[-1/3, beta]`) is left of after the step's iterations
/// under [`Chebyshev`] weights.
pub(crate) const CHEBYSHEV_BOUND: f64 = 0.1;

/// The weights of Chebyshev semi-iteration (Golub & Varga 1961) over `k` relaxed
/// Jacobi passes whose factors lie in `[alpha, 1)`, `alpha = -1/3`
/// ([`Relaxation::Auto`](crate::Relaxation::Auto)): with `y_k` the iterate and
/// `J(y_k)` the Jacobi result, `y_{k+1} = w_{k+1} (gamma J(y_k) + (1 - gamma) y_k -
/// y_{k-1}) + y_{k-1}`. The interval `[alpha, beta]` is the largest for which the
/// degree-`k` Chebyshev polynomial stays within [`CHEBYSHEV_BOUND`] of zero: waves in
/// it end within a tenth of their size, waves above `beta` (the long ones) shrink
/// faster than under Jacobi (about `k / 2` times as fast for `k >= 3`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chebyshev {
    gamma: f64,
    sigma: f64,
}

impl Chebyshev {
    /// The weights for `iterations` passes per step.
    pub(crate) fn new(iterations: u32) -> Self {
        let alpha = -1.0f64 / 3.0;
        let k = f64::from(iterations.max(1));
        // T_k(x1) = 1 / bound, x1 = (2 - alpha - beta) / (beta - alpha).
        let x1 = ((1.0 / CHEBYSHEV_BOUND).acosh() / k).cosh();
        let beta = (2.0 - alpha + x1 * alpha) / (x1 + 1.0);
        Self {
            gamma: 2.0 / (2.0 - alpha - beta),
            sigma: (beta - alpha) / (2.0 - alpha - beta),
        }
    }

    /// The extrapolation `gamma` of every Jacobi result.
    pub(crate) fn gamma(&self) -> f64 {
        self.gamma
    }

    /// The weight `w_{k+1}` of iteration `k` (from 0), given `w_k` (ignored for the
    /// first two).
    pub(crate) fn weight(&self, k: u32, last: f64) -> f64 {
        let s2 = self.sigma * self.sigma;
        match k {
            0 => 1.0,
            1 => 1.0 / (1.0 - 0.5 * s2),
            _ => 1.0 / (1.0 - 0.25 * s2 * last),
        }
    }
}

/// The walls' share of the constraint gradients as a lambda pass leaves it for the
/// delta pass at the same positions: written only for the groups a wall may reach
/// ([`Constraint::near_walls`]), which `near` marks (1) for every particle of such a
/// group, so that the delta pass does not test the group's bounds again.
#[derive(Debug, Clone)]
pub(crate) struct WallGradient<const D: usize> {
    /// The gradient's components, of the marked particles.
    pub(crate) gradient: [Vec<f32>; D],
    /// 1 for a particle of a group a wall may reach, else 0.
    pub(crate) near: Vec<u8>,
}

impl<const D: usize> WallGradient<D> {
    /// Room for `n` particles (none written).
    pub(crate) fn new(n: usize) -> Self {
        Self {
            gradient: core::array::from_fn(|_| vec![0.0; n]),
            near: vec![0; n],
        }
    }

    /// `n` particles; the values are those of the next lambda pass.
    pub(crate) fn resize(&mut self, n: usize) {
        for g in &mut self.gradient {
            g.resize(n, 0.0);
        }
        self.near.resize(n, 0);
    }
}

/// The constants of the constraint passes.
pub(crate) struct Constraint<'a, const D: usize> {
    pub(crate) kernel: &'a Kernel<D>,
    pub(crate) tensile: &'a TensileCorrection,
    pub(crate) mass: f32,
    pub(crate) rest_density: f32,
    pub(crate) epsilon: f32,
    pub(crate) unilateral: bool,
    /// The Jacobi relaxation `omega` that scales every lambda (the parameters'
    /// [`Relaxation`](crate::Relaxation); `Auto` is [`jacobi_relaxation`]).
    pub(crate) relaxation: f32,
    /// Whether the relaxation shrinks where the fluid is compressed: under
    /// [`Relaxation::Auto`](crate::Relaxation::Auto) a particle of density
    /// `rho_i > k rho0` ([`COMPRESSION_KNEE`] `k`) uses `omega k rho0 / rho_i`.
    pub(crate) compression_scaled: bool,
    /// The walls, which add density and constraint gradient near them.
    pub(crate) boundary: Boundary<'a, D>,
}

impl<'a, const D: usize> Constraint<'a, D> {
    /// The constants of the passes for `params`, with these walls.
    pub(crate) fn new(
        params: &crate::Params<D>,
        kernel: &'a Kernel<D>,
        tensile: &'a TensileCorrection,
        relaxation: f32,
        boundary: Boundary<'a, D>,
    ) -> Self {
        Self {
            kernel,
            tensile,
            mass: params.mass(),
            rest_density: params.rest_density(),
            epsilon: params.cfm_epsilon(),
            unilateral: params.unilateral(),
            relaxation,
            compression_scaled: params.relaxation() == crate::Relaxation::Auto,
            boundary,
        }
    }

    /// The densities of a group's lanes whose neighbours within h add up `w_sum` of
    /// poly6 (themselves not included) and whose walls' share is `wall_share` (from
    /// [`Self::walls_lanes`]): `m (W(0) + w_sum) + rho0 Phi(walls)`. The lambda pass
    /// and the XSPH pass ([`crate::viscosity::xsph_and_curl`]) both end with it, so
    /// that the same sums give the same bits.
    #[inline(always)]
    pub(crate) fn densities_of<L: Lane>(&self, w_sum: L, wall_share: L) -> L {
        let self_weight = self.kernel.poly6(0.0);
        L::splat(self.mass) * (L::splat(self_weight) + w_sum)
            + L::splat(self.rest_density) * wall_share
    }

    /// The walls' density share and constraint gradient of the lanes of a group whose
    /// own quads are `own` ([`Neighbourhood::own`]), by [`Lane::walls`]: zeros when
    /// `near_walls` is false (every particle of the group clear of the walls, by
    /// [`Constraint::near_walls`]), where the walls add nothing.
    #[inline(always)]
    pub(crate) fn walls_lanes<L: Lane>(&self, own: [L; 4], near_walls: bool) -> (L, [L; D]) {
        if !near_walls {
            return (L::splat(0.0), [L::splat(0.0); D]);
        }
        self.boundary.lanes::<L>(core::array::from_fn(|a| own[a]))
    }

    /// The densities and lambdas of a group's lanes from their sums: `rho`
    /// ([`Self::densities_of`]) and `lambda = -omega C / (|gradC_i|^2 + sum_j
    /// |gradC_j|^2 + epsilon)`, `C = rho / rho0 - 1` (at least 0 when unilateral), with
    /// the operations of the particle-by-particle loop it replaced (the same bits) on
    /// every lane at once: one division of each kind for sixteen particles, where a
    /// particle-by-particle loop takes two scalar divisions a particle.
    #[inline(always)]
    fn lambdas_of<L: Lane>(
        &self,
        w_sum: L,
        grad_sum: [L; D],
        grad_sq: L,
        share: L,
        walls: [L; D],
    ) -> (L, L) {
        let scale = self.mass / self.rest_density;
        let rho = self.densities_of(w_sum, share);
        let mut c = rho / L::splat(self.rest_density) - L::splat(1.0);
        if self.unilateral {
            c = c.max_zero();
        }
        let grad_i: [L; D] = core::array::from_fn(|a| L::splat(scale) * grad_sum[a] + walls[a]);
        let denominator =
            L::norm2(grad_i) + L::splat(scale * scale) * grad_sq + L::splat(self.epsilon);
        // Compressed, the overshoot grows: scaled down (see `compression_scaled`).
        let knee = COMPRESSION_KNEE * self.rest_density;
        let relaxation = L::splat(self.relaxation);
        let omega = if self.compression_scaled {
            rho.select_gt(
                L::splat(knee),
                relaxation * (L::splat(knee) / rho),
                relaxation,
            )
        } else {
            relaxation
        };
        (rho, -omega * c / denominator)
    }

    /// [`Self::near_walls`] of the group whose own quads are `own`
    /// ([`Neighbourhood::own`]): the same answer. The domain's faces are tested on
    /// the lanes, in registers ([`Lane::clear_of_faces`]); only a group clear of
    /// them, in a domain with colliders, takes its bounding box for theirs, so that a
    /// domain without colliders never pays for the bounding box.
    #[inline(always)]
    pub(crate) fn near_walls_of<L: Lane>(
        &self,
        own: [L; 4],
        width: usize,
        quads: &[[f32; 4]],
        members: &[u32],
    ) -> bool {
        let (domain, h) = (self.boundary.domain, self.boundary.tables.h());
        let p = core::array::from_fn(|a| own[a]);
        if !L::clear_of_faces(p, width, domain.lo(), domain.hi(), h) {
            return true;
        }
        !self.boundary.colliders.is_empty() && self.near_walls(quads, members)
    }

    /// Whether a wall may add to the density of a particle of the group `members`
    /// (whose positions are the quads'): one test of their bounding box.
    #[inline]
    pub(crate) fn near_walls(&self, quads: &[[f32; 4]], members: &[u32]) -> bool {
        // Whole quads, four lanes at a time (the fourth, not a coordinate, is left
        // out at the end); `q * 0` is 0 for a finite coordinate and NaN otherwise.
        // This is `collide::bounding_box` written for the quads' layout, so that the
        // positions need not be taken out of the quads first (which costs about three
        // times as much as this loop).
        let (mut lo, mut hi, mut finite) =
            ([f32::INFINITY; 4], [f32::NEG_INFINITY; 4], [0.0f32; 4]);
        for &i in members {
            let q = &quads[i as usize];
            for c in 0..4 {
                lo[c] = if q[c] < lo[c] { q[c] } else { lo[c] };
                hi[c] = if q[c] > hi[c] { q[c] } else { hi[c] };
                finite[c] += q[c] * 0.0;
            }
        }
        let bounds = (0..D).all(|a| finite[a] == 0.0).then(|| {
            (
                core::array::from_fn(|a| lo[a]),
                core::array::from_fn(|a| hi[a]),
            )
        });
        !self.boundary.clear_box(bounds)
    }

    /// For every particle: the density `rho_i = m sum_j W_ij + rho0 Phi(walls)` (j = i
    /// included, as `W(0)`; see [`crate::boundary`] for the walls' share), the
    /// multiplier `lambda_i = -omega C_i / (sum_k |grad_k C_i|^2 + eps)` (`omega`: the
    /// resolved [`Relaxation`](crate::Relaxation), by default [`jacobi_relaxation`],
    /// under `Auto` times `k rho0 / rho_i` where `rho_i > k rho0`, `k` the
    /// [`COMPRESSION_KNEE`]) with
    /// `C_i = rho_i / rho0 - 1` (clamped at 0 when unilateral), and the walls' share
    /// of the constraint gradient (`walls`, which the delta pass at the same positions
    /// reads instead of computing it again). That is written only for the groups a
    /// wall may reach ([`Self::near_walls`]), which `walls.near` marks for the delta
    /// pass; elsewhere it is 0, and the delta pass does not read it. At 1M particles,
    /// where the gradient's three arrays stream from memory, that made the constraint
    /// phase 1-4% faster on one thread (alternating runs), with the same bits. The
    /// neighbour counts of the step's diagnostics come from the XSPH pass, at the
    /// final positions.
    pub(crate) fn lambda_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        density: &mut [f32],
        lambda: &mut [f32],
        walls: &mut WallGradient<D>,
    ) {
        let kernel = self.kernel;
        let mut gradient = walls.gradient.iter_mut();
        let wall_gradient: [&mut [f32]; D] =
            core::array::from_fn(|_| gradient.next().expect("D").as_mut_slice());
        let outputs = (
            ([density, lambda], wall_gradient),
            [walls.near.as_mut_slice()],
        );
        for_each_pass_chunk(outputs, &|start,
                                       (
            ([density, lambda], mut wall_gradient),
            [near],
        )| {
            for_each_group::<L>(
                start,
                density.len(),
                #[inline(always)]
                |first, width| {
                    let zero = L::splat(0.0);
                    let (mut w_sum, mut grad_sq) = (zero, zero);
                    let mut grad_sum = [zero; D];
                    let own = nb.own::<L>(first);
                    nb.for_each_slot_ahead::<L>(
                        first,
                        own,
                        #[inline(always)]
                        |_, x, r2, _| {
                            w_sum += L::poly6(kernel, r2);
                            // |gradW|^2 is the slope's square: two operations where
                            // |factor x|^2 took six.
                            let (factor, slope) = L::gradient_factor_and_slope(kernel, r2);
                            for a in 0..D {
                                grad_sum[a] += factor * x[a];
                            }
                            grad_sq += slope * slope;
                        },
                    );
                    let members = &nb.lists.members(first)[..width];
                    let near_walls = self.near_walls_of(own, width, nb.quads, members);
                    debug_assert_eq!(near_walls, self.near_walls(nb.quads, members));
                    let (share, walls) = self.walls_lanes::<L>(own, near_walls);
                    let (rho, lambda_lanes) =
                        self.lambdas_of::<L>(w_sum, grad_sum, grad_sq, share, walls);
                    let (rho, lambda_lanes) = (lanes(rho, width), lanes(lambda_lanes, width));
                    let walls = if near_walls {
                        walls.map(|g| lanes(g, width))
                    } else {
                        [[0.0; GROUP]; D]
                    };
                    for (l, &i) in members.iter().enumerate() {
                        let k = i as usize - start;
                        density[k] = rho[l];
                        // Only where a wall may add (elsewhere it is 0): the delta pass
                        // reads it there alone, as `near` tells it.
                        near[k] = u8::from(near_walls);
                        if near_walls {
                            for a in 0..D {
                                wall_gradient[a][k] = walls[a][l];
                            }
                        }
                        lambda[k] = lambda_lanes[l];
                    }
                },
            );
        });
    }

    /// `nb.quads` must carry `lambda` as their extra value ([`crate::lists::pack`]),
    /// and `walls` be the lambda pass's at the same positions (the gradient read for
    /// the groups it marks near walls alone, as the lambda pass writes it).
    ///
    /// For every particle: `p_next = p + dp` with
    /// `dp_i = (m / rho0) sum_j (lambda_i + lambda_j + s_corr_ij) gradW_ij + lambda_i
    /// gradC_walls`, then kept
    /// out of the colliders on the side the particle was on (`Collider::project_from`)
    /// and clamped into the domain.
    ///
    /// With a [`ChebyshevStep`], `p_next` then takes its step, kept out of the solids
    /// and in the domain from `p`'s side the same way: the pass writes the step's
    /// result, with the bits a separate pass over `p_next` would give, without reading
    /// and writing the positions once more.
    #[allow(clippy::too_many_arguments, unsafe_code)]
    pub(crate) fn delta_pass<L: Lane>(
        &self,
        nb: &Neighbourhood<'_, D>,
        lambda: &[f32],
        walls: &WallGradient<D>,
        next: [&mut [f32]; D],
        colliders: &[Collider<D>],
        domain: &Domain<D>,
        margin: f32,
        chebyshev: Option<ChebyshevStep<'_, D>>,
    ) {
        let kernel = self.kernel;
        let scale = self.mass / self.rest_density;
        assert_eq!(lambda.len(), nb.len(), "a lambda for every particle");
        assert_eq!(walls.near.len(), nb.len(), "a wall mark for every particle");
        let wall_gradient = &walls.gradient;
        for_each_pass_chunk(next, &|start, next| {
            for_each_group::<L>(
                start,
                next[0].len(),
                #[inline(always)]
                |first, width| {
                    let all = nb.lists.members(first);
                    let members = &all[..width];
                    // The quads carry lambda (the caller's contract): the group's own
                    // quads give its lanes' lambda with their positions, in one
                    // transpose instead of sixteen more loads.
                    let own = nb.own::<L>(first);
                    let lambda_i = own[D];
                    debug_assert!(members.iter().all(
                        |&i| nb.quads[i as usize][D].to_bits() == lambda[i as usize].to_bits()
                    ));
                    let mut dp = [L::splat(0.0); D];
                    nb.for_each_slot_ahead::<L>(
                        first,
                        own,
                        #[inline(always)]
                        |_, x, r2, lambda_j| {
                            let w = L::poly6(kernel, r2);
                            let s_corr = L::s_corr(self.tensile, w);
                            let factor = L::gradient_factor(kernel, r2);
                            let lambda_sum = lambda_i + lambda_j;
                            let term =
                                L::position_delta(kernel, 1.0, lambda_sum, s_corr, factor, x);
                            for a in 0..D {
                                dp[a] += term[a];
                            }
                        },
                    );
                    // The lambda pass's test of the group at these positions.
                    let near_walls = walls.near[members[0] as usize] != 0;
                    debug_assert_eq!(near_walls, self.near_walls(nb.quads, members));
                    let zero = L::splat(0.0);
                    let wall: [L; D] = if near_walls {
                        // SAFETY: the members are particles of the lists, below
                        // `nb.len()`, the length of every component of the gradient
                        // (`WallGradient` has a value for every particle).
                        core::array::from_fn(|a| unsafe { L::gather(&wall_gradient[a], all) })
                    } else {
                        [zero; D]
                    };
                    let moved: [L; D] = core::array::from_fn(|a| {
                        own[a] + L::splat(scale) * dp[a] + lambda_i * wall[a]
                    });
                    let to = confine_lanes(
                        moved,
                        own,
                        members,
                        (colliders, domain, margin),
                        chebyshev.as_ref(),
                    );
                    for (l, &i) in members.iter().enumerate() {
                        for a in 0..D {
                            next[a][i as usize - start] = to[a][l];
                        }
                    }
                },
            );
        });
    }
}

/// The delta pass's closing of a group: the lanes' moved positions `moved`, kept out
/// of the colliders from their positions before (`own`, which are outside every
/// solid) and in the domain, as [`confine_block`] keeps them, then given the
/// Chebyshev step when there is one and confined again; lane `l` is particle
/// `members[l]`.
///
/// Without colliders or a Chebyshev step, a group whose moves all lie in the shrunk
/// box is left as it is by the clamp; that is tested on the lanes, exactly: the
/// clamp's bounds are `p >= lo + margin` and `p <= hi - margin`, and `p - b >= 0`
/// holds exactly when `p >= b` (a NaN fails, and its group takes the clamp). Only the
/// other groups are taken apart particle by particle. A test holds the result to
/// `confine_block`'s for every width.
#[inline(always)]
fn confine_lanes<L: Lane, const D: usize>(
    moved: [L; D],
    own: [L; 4],
    members: &[u32],
    (colliders, domain, margin): (&[Collider<D>], &Domain<D>, f32),
    chebyshev: Option<&ChebyshevStep<'_, D>>,
) -> [[f32; GROUP]; D] {
    let width = members.len();
    let mut to: [[f32; GROUP]; D] = moved.map(|m| lanes(m, width));
    if colliders.is_empty() && chebyshev.is_none() {
        // The clamp's bounds, with its operations.
        let (lo, hi) = (domain.lo(), domain.hi());
        let lo: [f32; D] = core::array::from_fn(|a| lo[a] + margin);
        let hi: [f32; D] = core::array::from_fn(|a| hi[a] - margin);
        if L::clear_of_faces(moved, width, lo, hi, 0.0) {
            return to;
        }
    }
    let mut from = [[0.0f32; D]; GROUP];
    let mut points = [[0.0f32; D]; GROUP];
    let own = own.map(|o| lanes(o, width));
    for l in 0..width {
        from[l] = core::array::from_fn(|a| own[a][l]);
        points[l] = core::array::from_fn(|a| to[a][l]);
    }
    // From the current position, which is outside every solid: a correction never
    // carries a particle through a wall.
    let confine = |points: &mut [[f32; D]; GROUP]| {
        confine_block(
            colliders,
            domain,
            &from[..width],
            &mut points[..width],
            margin,
        );
    };
    confine(&mut points);
    if let Some(step) = chebyshev {
        for (l, &i) in members.iter().enumerate() {
            points[l] = step.apply(points[l], from[l], i as usize);
        }
        confine(&mut points);
    }
    for (l, p) in points[..width].iter().enumerate() {
        for a in 0..D {
            to[a][l] = p[a];
        }
    }
    to
}

/// A Chebyshev step taken in the delta pass's epilogue (see [`Chebyshev`]):
/// `y_{k+1} = w (g J(y_k) + (1 - g) y_k - y_{k-1}) + y_{k-1}`, `J(y_k)` the pass's
/// confined result, `y_k` the positions it started from.
#[derive(Clone, Copy)]
pub(crate) struct ChebyshevStep<'a, const D: usize> {
    /// The step's weight `w`.
    pub(crate) weight: f32,
    /// The damping `g` ([`Chebyshev::gamma`]).
    pub(crate) gamma: f32,
    /// `y_{k-1}` of every particle (`y_k` itself in the first iteration).
    pub(crate) before: [&'a [f32]; D],
}

impl<const D: usize> ChebyshevStep<'_, D> {
    /// The step of particle `i` from `now` (`y_k`), whose pass gave `jacobi`.
    #[inline(always)]
    fn apply(&self, jacobi: [f32; D], now: [f32; D], i: usize) -> [f32; D] {
        let (w, g) = (self.weight, self.gamma);
        core::array::from_fn(|a| {
            let before = self.before[a][i];
            let y = g * jacobi[a] + (1.0 - g) * now[a];
            w * (y - before) + before
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Params;

    /// What `k` Chebyshev-weighted passes leave of a wave that one pass multiplies by
    /// `lambda`.
    fn chebyshev_factor(k: u32, lambda: f64) -> f64 {
        let c = Chebyshev::new(k);
        let (mut before, mut now, mut w) = (1.0, 1.0, 1.0);
        for i in 0..k {
            w = c.weight(i, w);
            let jacobi = lambda * now;
            let next = w * (c.gamma() * jacobi + (1.0 - c.gamma()) * now - before) + before;
            (before, now) = (now, next);
        }
        now
    }

    #[test]
    fn chebyshev_weights_bound_every_wave_and_speed_up_the_long_ones() {
        for k in 1..=16u32 {
            let mut largest = 0.0f64;
            for i in 0..=4000 {
                let lambda = -1.0 / 3.0 + (4.0 / 3.0) * f64::from(i) / 4000.0;
                let p = chebyshev_factor(k, lambda);
                // Never flipped beyond the bound: stable from step to step.
                assert!(p >= -CHEBYSHEV_BOUND - 1e-9, "k {k}, lambda {lambda}: {p}");
                assert!(p <= 1.0 + 1e-9, "k {k}, lambda {lambda}: {p}");
                if lambda < 0.3 && k >= 3 {
                    largest = largest.max(p.abs());
                }
            }
            if k >= 3 {
                assert!(largest <= CHEBYSHEV_BOUND + 1e-9, "k {k}: {largest}");
            }
            // Long waves: 1 - P against Jacobi's 1 - lambda^k.
            let gain = (1.0 - chebyshev_factor(k, 0.99)) / (1.0 - 0.99f64.powi(k as i32));
            let expected = match k {
                1 => (0.8, 0.85),
                2 => (1.1, 1.25),
                4 => (2.0, 2.1),
                8 => (3.7, 3.85),
                _ => (0.0, f64::INFINITY),
            };
            assert!(
                (expected.0..expected.1).contains(&gain),
                "k {k}: long-wave gain {gain}"
            );
        }
    }

    /// A lattice of `side^3` particles from 0.03 at `spacing`, each coordinate moved by
    /// a call of `jitter`, in Morton order with its lists, in the box `[0, hi]^3`, for
    /// the passes at rest spacing 0.05 (h = 0.1).
    struct Lattice {
        params: Params<3>,
        kernel: Kernel<3>,
        tensile: TensileCorrection,
        tables: pbf_kernels::WallTables,
        domain: Domain<3>,
        p: [Vec<f32>; 3],
        lists: crate::lists::NeighbourLists,
    }

    impl Lattice {
        fn new(side: usize, spacing: f32, hi: f32, mut jitter: impl FnMut() -> f32) -> Self {
            let params = Params::<3>::builder(0.05).build().unwrap();
            let h = params.kernel_radius();
            let kernel = Kernel::<3>::new(h).unwrap();
            let tensile = TensileCorrection::new(&kernel, 0.1, 4, 0.2).unwrap();
            let tables = pbf_kernels::WallTables::new(&kernel);
            let domain = Domain::new([0.0; 3], [hi; 3]).unwrap();
            let mut p: [Vec<f32>; 3] = Default::default();
            for flat in 0..side * side * side {
                let idx = [flat % side, (flat / side) % side, flat / (side * side)];
                for a in 0..3 {
                    p[a].push(0.03 + spacing * idx[a] as f32 + jitter());
                }
            }
            let mut grid = pbf_grid::Grid::<3>::new();
            grid.rebuild([&p[0], &p[1], &p[2]], h).unwrap();
            let mut scratch = Vec::new();
            for a in p.iter_mut() {
                grid.reorder(a, &mut scratch).unwrap();
            }
            let mut lists = crate::lists::NeighbourLists::default();
            lists.build(&grid, [&p[0], &p[1], &p[2]], h * h, 0).unwrap();
            Lattice {
                params,
                kernel,
                tensile,
                tables,
                domain,
                p,
                lists,
            }
        }

        fn at(&self) -> [&[f32]; 3] {
            [&self.p[0], &self.p[1], &self.p[2]]
        }

        /// The passes with the box's walls, relaxation 0.5.
        fn constraint(&self) -> Constraint<'_, 3> {
            let boundary = Boundary {
                domain: &self.domain,
                colliders: &[],
                tables: &self.tables,
            };
            Constraint::new(&self.params, &self.kernel, &self.tensile, 0.5, boundary)
        }

        /// The lambda pass at the lattice's positions, the walls' gradient arrays
        /// filled with `fill` before: the quads it read, the densities, the lambdas
        /// and the gradients.
        fn lambda_pass<L: Lane>(
            &self,
            fill: f32,
        ) -> (Vec<[f32; 4]>, Vec<f32>, Vec<f32>, WallGradient<3>) {
            let n = self.p[0].len();
            let mut quads = Vec::new();
            crate::lists::pack(&mut quads, self.at(), &vec![0.0; n]);
            let nb = Neighbourhood {
                lists: &self.lists,
                quads: &quads,
            };
            let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
            let mut wall = WallGradient::<3>::new(n);
            for g in &mut wall.gradient {
                g.fill(fill);
            }
            self.constraint()
                .lambda_pass::<L>(&nb, &mut density, &mut lambda, &mut wall);
            (quads, density, lambda, wall)
        }
    }

    /// The XSPH pass gives the lambda pass's densities at the same positions, bit for
    /// bit (the solver's last pass of a step computes them), and the number of
    /// particles within h of each (itself included).
    fn xsph_densities_match<L: Lane>() {
        use crate::lists::pack_volumes;
        // A jittered lattice touching the walls, so that their share counts too.
        let mut state = 12345u64;
        let lattice = Lattice::new(10, 0.05, 0.6, || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.02
        });
        let (constraint, params, lists) = (lattice.constraint(), &lattice.params, &lattice.lists);
        let (at, h) = (lattice.at(), params.kernel_radius());
        let n = at[0].len();
        let (mut quads, density, lambda, wall) = lattice.lambda_pass::<L>(0.0);
        // XSPH weighs by other volumes (here half the true ones) and velocities: the
        // densities come from the kernel sums alone.
        let halved: Vec<f32> = density.iter().map(|d| 2.0 * d).collect();
        pack_volumes(&mut quads, at, &halved, params.mass());
        let nb = Neighbourhood {
            lists,
            quads: &quads,
        };
        let velocity: [Vec<f32>; 3] =
            core::array::from_fn(|a| (0..n).map(|i| (i * (a + 2) % 7) as f32).collect());
        let mut next: [Vec<f32>; 3] = core::array::from_fn(|_| vec![0.0; n]);
        let (mut xsph_density, mut xsph_count) = (vec![0.0; n], vec![0.0; n]);
        let [n0, n1, n2] = &mut next;
        crate::viscosity::xsph_and_curl::<L, 3>(
            &nb,
            &constraint,
            0.5,
            [&velocity[0], &velocity[1], &velocity[2]],
            &mut Vec::new(),
            [n0, n1, n2],
            [&mut xsph_density, &mut xsph_count],
            None,
        );
        // Inside the box of the walls: particles within h of a face see its share.
        assert!(wall.gradient.iter().flatten().any(|&g| g != 0.0));
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&xsph_density), bits(&density));
        let within = |i: usize| {
            (0..n)
                .filter(|&j| {
                    let d: [f32; 3] = core::array::from_fn(|a| at[a][i] - at[a][j]);
                    pbf_kernels::within(pbf_kernels::norm2(d), h * h)
                })
                .count() as f32
        };
        let count: Vec<f32> = (0..n).map(within).collect();
        assert_eq!(bits(&xsph_count), bits(&count));
        assert!(
            count.iter().any(|&c| c > 20.0),
            "a particle with its neighbours"
        );
        assert!(
            lambda.iter().any(|&l| l != 0.0),
            "the scene has no compressed particle"
        );
        assert!(density.iter().all(|&d| d > 0.0));
        assert!(next[0] != velocity[0], "XSPH changed no velocity");
    }

    #[test]
    fn the_xsph_pass_gives_the_lambda_passes_densities() {
        pbf_kernels::for_each_lane!(|L| {
            xsph_densities_match::<L>();
        });
    }

    /// The lambda pass writes a particle's wall gradient only in groups a wall may
    /// reach, and the delta pass reads it only there: with the gradients' arrays
    /// filled with NaN beforehand, a lattice whose one corner touches the walls and
    /// whose other groups are far from them gives the positions of arrays filled
    /// with zeros, bit for bit.
    fn wall_gradients_are_read_where_written<L: Lane>() {
        use crate::lists::repack_extra;
        // 12^3 particles, slightly compressed, from 0.03 to 0.47 in a box 2 wide: the
        // groups of the corner at the origin are within h of three walls, the rest
        // are not.
        let lattice = Lattice::new(12, 0.04, 2.0, || 0.0);
        let (constraint, lists, domain) = (lattice.constraint(), &lattice.lists, &lattice.domain);
        let n = lattice.p[0].len();
        let iteration = |fill: f32| {
            let (mut quads, _, lambda, wall) = lattice.lambda_pass::<L>(fill);
            repack_extra::<3>(&mut quads, &lambda);
            let nb = Neighbourhood {
                lists,
                quads: &quads,
            };
            let mut next: [Vec<f32>; 3] = core::array::from_fn(|_| vec![0.0; n]);
            let [n0, n1, n2] = &mut next;
            constraint.delta_pass::<L>(&nb, &lambda, &wall, [n0, n1, n2], &[], domain, 0.0, None);
            (next, wall, lambda)
        };
        let (zeros, written, lambda) = iteration(0.0);
        let (nans, unwritten, _) = iteration(f32::NAN);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for a in 0..3 {
            assert_eq!(bits(&nans[a]), bits(&zeros[a]), "axis {a}");
        }
        // Both kinds of group are there: walls that add, and groups left alone.
        assert!(
            written.gradient.iter().flatten().any(|&g| g != 0.0),
            "no wall adds"
        );
        assert!(
            unwritten.gradient[0].iter().any(|g| g.is_nan()),
            "every group near a wall"
        );
        // The marks are the groups' own tests, and the gradient is written where marked.
        assert_eq!(written.near, unwritten.near);
        for (i, &near) in unwritten.near.iter().enumerate() {
            assert_eq!(
                near == 1,
                !unwritten.gradient[0][i].is_nan(),
                "particle {i}"
            );
        }
        assert!(lambda.iter().any(|&l| l != 0.0), "nothing compressed");
    }

    #[test]
    fn wall_gradients_are_read_only_where_the_lambda_pass_wrote_them() {
        pbf_kernels::for_each_lane!(|L| {
            wall_gradients_are_read_where_written::<L>();
        });
    }

    /// Uniformly compressed lattices, up to 3.4 times the rest density in 3D (2.25 in
    /// 2D): unscaled, the rest relaxation over-corrects the densest by more than the
    /// size of the wave (factors below -1: diverging passes); scaled beyond the knee
    /// (what the lambda pass does under `Auto`), every factor stays within
    /// `[-0.42, 1]`, and within the rest bound `[-1/3, 1]` from 1.5 times the rest
    /// density on.
    fn compression_scaling_keeps_the_bound<const D: usize>() {
        let params = Params::<D>::builder(0.05).build().unwrap();
        let kernel = Kernel::<D>::new(params.kernel_radius()).unwrap();
        let omega = f64::from(jacobi_relaxation(&params, &kernel));
        let rest = params.kernel_radius() / params.spacing();
        let knee = f64::from(COMPRESSION_KNEE);
        let mut unscaled_worst = 0.0f64;
        for step in 0..=10 {
            let f = 1.0 + 0.05 * f64::from(step);
            let (a_max, density) =
                lattice_overshoot::<D>(rest * f as f32, f.powi(D as i32), params.cfm_rel());
            let scaled = omega * (knee / density).min(1.0);
            let bound = if density >= 1.5 { 4.0 / 3.0 } else { 1.42 };
            assert!(
                scaled * a_max <= bound + 1e-3,
                "{D}D, {f}x closer: density {density}, omega a_max {}",
                scaled * a_max
            );
            unscaled_worst = unscaled_worst.max(omega * a_max);
        }
        assert!(
            unscaled_worst > 2.0,
            "{D}D: unscaled, omega a_max reaches only {unscaled_worst}"
        );
    }

    #[test]
    fn compression_scaled_relaxation_keeps_compressed_lattices_within_the_bound() {
        compression_scaling_keeps_the_bound::<3>();
        compression_scaling_keeps_the_bound::<2>();
    }

    /// `lattice_overshoot`'s `a_max` as its definition gives it: a `sin` for every
    /// wave vector and neighbour, summed over all of them (not half).
    fn overshoot_by_sin<const D: usize>(ratio: f32, cfm_rel: f32) -> f64 {
        let kernel = Kernel::<D>::new(ratio).unwrap();
        let reach = ratio.ceil() as i32;
        let side = 2 * reach + 1;
        let offsets: Vec<[i32; D]> = (0..side.pow(D as u32))
            .map(|flat| core::array::from_fn(|a| flat / side.pow(a as u32) % side - reach))
            .collect();
        let gradient = |k: &[i32; D]| kernel.spiky_gradient(k.map(|c| c as f32)).map(f64::from);
        let sum_sq: f64 = offsets
            .iter()
            .map(|k| gradient(k).iter().map(|c| c * c).sum::<f64>())
            .sum();
        let denominator = sum_sq + f64::from(cfm_rel) / f64::from(ratio).powi(2);
        let steps = 24;
        (0..(steps + 1usize).pow(D as u32))
            .map(|flat| {
                let q: [f64; D] = core::array::from_fn(|a| {
                    core::f64::consts::PI * (flat / (steps + 1).pow(a as u32) % (steps + 1)) as f64
                        / steps as f64
                });
                let mut sum = [0.0f64; D];
                for k in &offsets {
                    let phase: f64 = (0..D).map(|a| q[a] * f64::from(k[a])).sum();
                    let g = gradient(k);
                    for a in 0..D {
                        sum[a] += g[a] * phase.sin();
                    }
                }
                sum.iter().map(|c| c * c).sum::<f64>() / denominator
            })
            .fold(0.0, f64::max)
    }

    fn overshoot_is_its_definition<const D: usize>() {
        // What `jacobi_relaxation` keeps of it: the relaxation in steps of 2^-12.
        let relaxation = |a: f64| ((4.0 / 3.0 / a).min(1.0) * 4096.0).floor();
        for ratio in [1.0f32, 1.5, 2.0, 2.5, 3.0] {
            for cfm in [0.0f32, 0.01, 0.1, 1.0] {
                let (fast, _) = lattice_overshoot::<D>(ratio, 1.0, cfm);
                let direct = overshoot_by_sin::<D>(ratio, cfm);
                assert!(
                    (fast - direct).abs() <= 1e-12 * direct,
                    "{D}D, h / s = {ratio}, cfm {cfm}: {fast} against {direct}"
                );
                assert_eq!(relaxation(fast), relaxation(direct), "{D}D, {ratio}, {cfm}");
            }
        }
    }

    #[test]
    fn the_overshoot_by_phase_products_is_its_definition() {
        overshoot_is_its_definition::<2>();
        overshoot_is_its_definition::<3>();
    }

    #[test]
    fn the_relaxation_bounds_the_rest_lattice_overshoot_by_four_thirds() {
        // a_max = 2.64 in 3D and 2.02 in 2D at h = 2 s with the default CFM.
        let three = Params::<3>::builder(0.05).build().unwrap();
        let w3 = jacobi_relaxation(&three, &Kernel::<3>::new(three.kernel_radius()).unwrap());
        assert!((w3 - 4.0 / 3.0 / 2.64).abs() < 0.01, "3D {w3}");
        let two = Params::<2>::builder(0.05).build().unwrap();
        let w2 = jacobi_relaxation(&two, &Kernel::<2>::new(two.kernel_radius()).unwrap());
        assert!((w2 - 4.0 / 3.0 / 2.02).abs() < 0.01, "2D {w2}");
        // Scale-free: bit for bit the same at every spacing (an ulp apart, a chaotic
        // flow would drift apart at different scales).
        for s in [0.0005f32, 5.0, 2.0, 1e-3, 1e3] {
            let p3 = Params::<3>::builder(s).build().unwrap();
            let p2 = Params::<2>::builder(s).build().unwrap();
            let k3 = Kernel::<3>::new(p3.kernel_radius()).unwrap();
            let k2 = Kernel::<2>::new(p2.kernel_radius()).unwrap();
            assert_eq!(
                jacobi_relaxation(&p3, &k3).to_bits(),
                w3.to_bits(),
                "3D, s = {s}"
            );
            assert_eq!(
                jacobi_relaxation(&p2, &k2).to_bits(),
                w2.to_bits(),
                "2D, s = {s}"
            );
        }
    }

    /// Lanes from the first values of `values` (as many as the width holds).
    #[allow(unsafe_code)]
    fn lanes_of<L: Lane>(values: &[f32; GROUP]) -> L {
        let indices: [u32; GROUP] = core::array::from_fn(|l| l as u32);
        // SAFETY: every index is below `GROUP`, the length of `values`.
        unsafe { L::gather(values, &indices) }
    }

    /// `max_zero` and `select_gt` at every width: `maxss(x, 0)`'s results, +0 for
    /// NaN and either zero, as the scalar loop's `c.max(0.0)` gave on x86-64.
    fn selections<L: Lane>() {
        let x: [f32; GROUP] = [
            -0.0,
            0.0,
            f32::NAN,
            -1.5,
            2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1e-45,
            -1e-45,
            3.0,
            -3.0,
            f32::MAX,
            f32::MIN,
            0.5,
        ];
        for start in (0..GROUP).step_by(L::WIDTH) {
            let mut shifted = [0.0f32; GROUP];
            shifted[..GROUP - start].copy_from_slice(&x[start..]);
            let v: L = lanes_of(&shifted);
            let got = lanes(v.max_zero(), L::WIDTH);
            let picked = lanes(v.select_gt(L::splat(0.5), L::splat(1.0), v), L::WIDTH);
            for l in 0..L::WIDTH {
                let want = if shifted[l] > 0.0 { shifted[l] } else { 0.0 };
                assert_eq!(got[l].to_bits(), want.to_bits(), "max_zero({})", shifted[l]);
                #[cfg(target_arch = "x86_64")]
                {
                    // SAFETY: SSE is part of every x86-64 CPU.
                    #[allow(unsafe_code)]
                    let maxss = unsafe {
                        use core::arch::x86_64::{_mm_cvtss_f32, _mm_max_ss, _mm_set_ss};
                        _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(shifted[l]), _mm_set_ss(0.0)))
                    };
                    assert_eq!(got[l].to_bits(), maxss.to_bits(), "maxss({})", shifted[l]);
                }
                let want = if shifted[l] > 0.5 { 1.0 } else { shifted[l] };
                assert_eq!(
                    picked[l].to_bits(),
                    want.to_bits(),
                    "select_gt({})",
                    shifted[l]
                );
            }
        }
    }

    #[test]
    fn lanes_select_as_one_particle_at_a_time() {
        pbf_kernels::for_each_lane!(|L| {
            L::run(selections::<L>);
        });
    }

    /// The domain of `confine_lanes`' test: bounds whose sums with the margin round.
    const LO: f32 = 0.3;
    const HI: f32 = 1.7;

    /// A coordinate for `confine_lanes`' test: inside the domain, exactly on or just
    /// past a bound of the domain shrunk by `margin`, far out, or not finite.
    fn coordinate(kind: u8, t: f32, margin: f32) -> f32 {
        let (lo, hi) = (LO + margin, HI - margin);
        match kind % 9 {
            0..=2 => lo + t * (hi - lo),
            3 => lo,
            4 => hi,
            5 => f32::from_bits(lo.to_bits() - 1),
            6 => f32::from_bits(hi.to_bits() + 1),
            7 => -2.0 + 5.0 * t,
            _ => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][(t * 2.99) as usize],
        }
    }

    /// `confine_lanes` gives `confine_block`'s positions (and the Chebyshev step's
    /// between two of them) bit for bit, at `L`'s width.
    fn confines_as_the_block<L: Lane>(
        moved: &[[f32; GROUP]; 3],
        own: &[[f32; GROUP]; 3],
        width: usize,
        collider: bool,
        chebyshev: bool,
    ) {
        let width = width.clamp(1, L::WIDTH);
        let margin = 0.01;
        let domain = Domain::new([LO; 3], [HI; 3]).unwrap();
        let colliders = if collider {
            vec![
                Collider::new(
                    crate::Shape::Sphere {
                        center: [1.0; 3],
                        radius: 0.3,
                    },
                    crate::ColliderKind::Solid,
                )
                .unwrap(),
            ]
        } else {
            Vec::new()
        };
        let before: [Vec<f32>; 3] =
            core::array::from_fn(|a| own[a].iter().map(|c| c * 0.99 + 0.01).collect());
        let step = chebyshev.then(|| ChebyshevStep {
            weight: 1.3,
            gamma: 0.9,
            before: [&before[0][..], &before[1][..], &before[2][..]],
        });
        let members: Vec<u32> = (0..width as u32).collect();
        let moved_lanes: [L; 3] = core::array::from_fn(|a| lanes_of(&moved[a]));
        let own_lanes: [L; 4] = core::array::from_fn(|a| {
            if a < 3 {
                lanes_of(&own[a])
            } else {
                L::splat(0.0)
            }
        });
        let got = confine_lanes(
            moved_lanes,
            own_lanes,
            &members,
            (&colliders, &domain, margin),
            step.as_ref(),
        );
        let from: Vec<[f32; 3]> = (0..width)
            .map(|l| core::array::from_fn(|a| own[a][l]))
            .collect();
        let mut want: Vec<[f32; 3]> = (0..width)
            .map(|l| core::array::from_fn(|a| moved[a][l]))
            .collect();
        confine_block(&colliders, &domain, &from, &mut want, margin);
        if let Some(step) = &step {
            for l in 0..width {
                want[l] = step.apply(want[l], from[l], l);
            }
            confine_block(&colliders, &domain, &from, &mut want, margin);
        }
        for l in 0..width {
            for a in 0..3 {
                assert_eq!(
                    got[a][l].to_bits(),
                    want[l][a].to_bits(),
                    "lane {l} axis {a}: {} against {}",
                    got[a][l],
                    want[l][a]
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn lanes_confine_a_group_as_the_block_does(
            kinds in proptest::collection::vec(0u8..9, 3 * GROUP),
            all_inside in proptest::bool::ANY,
            ts in proptest::collection::vec(0.0f32..1.0, 3 * GROUP),
            inside in proptest::collection::vec(0.35f32..0.6, 3 * GROUP),
            width in 1usize..=GROUP,
            collider in proptest::bool::ANY,
            chebyshev in proptest::bool::ANY,
        ) {
            let margin = 0.01;
            // Half the cases with every move inside the shrunk domain or on its
            // bounds, which take the test on the lanes.
            let kind = |k: usize| if all_inside { kinds[k] % 5 } else { kinds[k] };
            let moved: [[f32; GROUP]; 3] = core::array::from_fn(|a| {
                core::array::from_fn(|l| coordinate(kind(a * GROUP + l), ts[a * GROUP + l], margin))
            });
            // The positions before: inside the domain and outside the sphere.
            let own: [[f32; GROUP]; 3] =
                core::array::from_fn(|a| core::array::from_fn(|l| inside[a * GROUP + l]));
            pbf_kernels::for_each_lane! {
                let moved: &'a [[f32; GROUP]; 3] = &moved;
                let own: &'a [[f32; GROUP]; 3] = &own;
                let width: usize = width;
                let collider: bool = collider;
                let chebyshev: bool = chebyshev;
                |L| {
                    L::run(|| confines_as_the_block::<L>(moved, own, width, collider, chebyshev));
                }
            }
        }
    }
}
