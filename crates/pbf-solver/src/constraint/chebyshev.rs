//! Chebyshev semi-iteration over the Jacobi passes: the weights of a step's
//! iterations and the step a delta pass takes with them.

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

    /// The share of iteration `m`'s Jacobi displacement `delta_m = J(y_m) - y_m` in
    /// the whole displacement `y_k - y_0` of a step of `k` iterations, confinement
    /// aside. From the step, `d_{i+1} = y_{i+1} - y_i = w_{i+1} g delta_i + (w_{i+1} -
    /// 1) d_i` with `d_0 = 0` (`y_{-1}` is `y_0`), so `delta_m` enters `d_{m+1}` with
    /// `g w_{m+1}` and every later `d_{j+1}` with that times `prod_{l=m+1..j} (w_{l+1}
    /// - 1)`: the share is `g w_{m+1} sum_{j=m..k-1} prod_{l=m+1..j} (w_{l+1} - 1)`.
    /// `O(k)` operations, no allocation.
    pub(crate) fn share(&self, m: u32, k: u32) -> f64 {
        let mut weight = 1.0f64;
        let (mut share, mut product) = (0.0f64, 0.0f64);
        for i in 0..k {
            weight = self.weight(i, weight);
            if i == m {
                product = self.gamma * weight;
            } else if i > m {
                product *= weight - 1.0;
            }
            if i >= m {
                share += product;
            }
        }
        share
    }
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
    pub(super) fn apply(&self, jacobi: [f32; D], now: [f32; D], i: usize) -> [f32; D] {
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

    /// `share` gives the displacement of the step's recursion: with scalar Jacobi
    /// displacements `delta_i` of arbitrary sizes (no linear model needed), `y_k - y_0`
    /// is `sum_m share(m, k) delta_m`.
    #[test]
    fn the_shares_sum_the_steps_displacement() {
        for k in 1..=12u32 {
            let c = Chebyshev::new(k);
            let delta = |i: u32| 0.3 + 0.7 * f64::from(i * i % 5) - 0.2 * f64::from(i);
            let (mut before, mut now, mut w) = (0.0f64, 0.0f64, 1.0);
            for i in 0..k {
                w = c.weight(i, w);
                let jacobi = now + delta(i);
                let next = w * (c.gamma() * jacobi + (1.0 - c.gamma()) * now - before) + before;
                (before, now) = (now, next);
            }
            let by_shares: f64 = (0..k).map(|m| c.share(m, k) * delta(m)).sum();
            assert!(
                (by_shares - now).abs() <= 1e-12 * now.abs().max(1.0),
                "k {k}: {by_shares} against {now}"
            );
            // A single iteration's share is g, and a share of an iteration past the
            // step is 0.
            assert_eq!(Chebyshev::new(1).share(0, 1), Chebyshev::new(1).gamma());
            assert_eq!(c.share(k, k), 0.0);
        }
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
}
