//! Helpers shared by the scenario tests.
#![allow(dead_code)]

use pbf_solver::{Solver, StepDiagnostics};

/// Steps `n` times and returns the last diagnostics.
pub fn run<const D: usize>(s: &mut Solver<D>, n: usize) -> StepDiagnostics {
    let mut last = *s.last_diagnostics();
    for _ in 0..n {
        last = s.step().expect("step");
    }
    last
}

/// Positions keyed by id: `out[id] = position`.
pub fn by_id<const D: usize>(s: &Solver<D>) -> Vec<[f32; D]> {
    let mut out = vec![[f32::NAN; D]; s.len()];
    let p = s.positions();
    for (i, &id) in s.ids().iter().enumerate() {
        out[id as usize] = core::array::from_fn(|a| p[a][i]);
    }
    out
}

/// Asserts that every particle is inside the domain and outside every solid part.
pub fn assert_contained<const D: usize>(s: &Solver<D>) {
    let p = s.positions();
    for i in 0..s.len() {
        let q: [f32; D] = core::array::from_fn(|a| p[a][i]);
        assert!(
            q.iter().all(|c| c.is_finite()),
            "particle {i} is not finite: {q:?}"
        );
        assert!(
            s.domain().contains(q),
            "particle {i} left the domain: {q:?}"
        );
        for (k, c) in s.colliders().iter().enumerate() {
            assert!(
                c.distance(q) >= 0.0,
                "particle {i} is inside collider {k}: {q:?} (distance {})",
                c.distance(q)
            );
        }
    }
}

/// A deterministic source of numbers uniform in `[-1, 1)` (a 64-bit linear
/// congruential generator, its top 24 bits), for jittered lattices and random
/// velocities.
pub fn uniform(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

/// The first particle whose density is off by more than 1e-4 of the brute-force sum
/// over every pair within h, each pair's offset taken axis by axis through `offset`
/// (the identity, or the minimum image of a periodic box), with both densities.
pub fn density_off(s: &Solver<3>, offset: impl Fn(f32) -> f32) -> Option<(usize, f64, f64)> {
    let (h2, mass, p) = (s.kernel().h2(), s.params().mass(), s.positions());
    (0..s.len()).find_map(|i| {
        let mut sum = 0.0f64;
        for j in 0..s.len() {
            let x: [f32; 3] = core::array::from_fn(|a| offset(p[a][i] - p[a][j]));
            let r2 = pbf_kernels::norm2(x);
            if pbf_kernels::within(r2, h2) {
                sum += f64::from(s.kernel().poly6(r2));
            }
        }
        let expected = f64::from(mass) * sum;
        let got = f64::from(s.densities()[i]);
        ((got - expected).abs() > 1e-4 * expected).then_some((i, got, expected))
    })
}
