//! The Jacobi relaxation of the constraint passes, from the spectrum of one pass over
//! the rest lattice, and its scaling where the fluid is compressed.

use pbf_kernels::Kernel;

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
    // computed at the scene's own scale, the value may differ by an ulp from one scale
    // to another, which a chaotic flow grows into visible differences.
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
    // `sin` call a neighbour would make `Solver::new` slow at large `h / s` in 3D.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Params;

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
}
