//! The mathematics of the scalar references, which the lanes are held to in
//! `tests/lanes.rs`: support, sign, monotonicity, normalisation, the gradient as the
//! derivative of the spiky kernel, its symmetry and finiteness, the tensile correction
//! and the orientation of the curl.

use pbf_kernels::{Kernel, TensileCorrection, norm2, within};
use proptest::array::uniform;
use proptest::prelude::*;
use std::f64::consts::PI;

/// `h` log-uniform in `1e-4..=1e4`, the range the documentation promises.
fn radius() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => (-4.0f64..=4.0).prop_map(|e| 10f64.powf(e) as f32),
        1 => Just(1e-4f32),
        1 => Just(1e4f32),
    ]
}

/// Any `h` the constructor accepts, from far outside the documented range inwards.
fn accepted_kernel<const D: usize>() -> impl Strategy<Value = Kernel<D>> {
    (-6.0f64..=6.0).prop_filter_map("radii the constructor accepts", |e| {
        Kernel::<D>::new(10f64.powf(e) as f32).ok()
    })
}

fn kernel<const D: usize>(h: f32) -> Kernel<D> {
    Kernel::<D>::new(h).expect("h in the documented range")
}

/// The radii at which the deterministic checks run.
const RADII: [f32; 5] = [1e-4, 3.7e-2, 1.0, 2.9e2, 1e4];

/// `x / |x| * r` in `f64`, rounded once; `None` for a near-zero direction.
fn scaled_direction<const D: usize>(u: [f64; D], r: f64) -> Option<[f32; D]> {
    let length = u.iter().map(|c| c * c).sum::<f64>().sqrt();
    (length > 1e-3).then(|| u.map(|c| (c / length * r) as f32))
}

// ---------------------------------------------------------------------------------
// Support

/// Every term is exactly zero when `r2 >= h^2` (and for NaN), including `r = h` along
/// an axis, where `norm2` gives exactly `h2`.
fn zero_outside<const D: usize>(h: f32, excess: f32) -> Result<(), TestCaseError> {
    let k = kernel::<D>(h);
    let tensile = TensileCorrection::new(&k, 0.1, 4, 0.2).unwrap();
    let mut axis = [0.0f32; D];
    axis[D - 1] = -h;
    prop_assert_eq!(norm2(axis), k.h2());
    for r2 in [k.h2(), k.h2() * (1.0 + excess), f32::INFINITY, f32::NAN] {
        prop_assert!(!within(r2, k.h2()));
        prop_assert_eq!(k.poly6(r2), 0.0);
        prop_assert_eq!(k.spiky(r2), 0.0);
        prop_assert_eq!(k.spiky_gradient_factor(r2), 0.0);
        prop_assert_eq!(k.density_term(1.0, r2), 0.0);
        prop_assert_eq!(tensile.s_corr(&k, r2), 0.0);
    }
    prop_assert_eq!(k.spiky_gradient(axis), [0.0; D]);
    let mut outside = [0.0f32; D];
    outside[0] = h * (1.0 + excess);
    prop_assert_eq!(k.spiky_gradient(outside), [0.0; D]);
    Ok(())
}

proptest! {
    #[test]
    fn zero_outside_the_support_2d(h in radius(), excess in 0.0f32..100.0) {
        zero_outside::<2>(h, excess)?;
    }

    #[test]
    fn zero_outside_the_support_3d(h in radius(), excess in 0.0f32..100.0) {
        zero_outside::<3>(h, excess)?;
    }
}

/// One ulp inside `h^2` the kernels may be tiny but not negative, and `r = 0` gives
/// the peak `c h^6` of poly6 and a zero gradient.
fn edges_of_the_support<const D: usize>(h: f32) {
    let k = kernel::<D>(h);
    let below = f32::from_bits(k.h2().to_bits() - 1);
    assert!(within(below, k.h2()));
    assert!(k.poly6(below) >= 0.0, "h = {h}");
    assert!(k.spiky(below) >= 0.0, "h = {h}");
    assert!(k.spiky_gradient_factor(below) <= 0.0, "h = {h}");
    let peak = f64::from(k.poly6_coefficient()) * f64::from(k.h2()).powi(3);
    let relative = (f64::from(k.poly6(0.0)) - peak).abs() / peak;
    assert!(
        relative < 1e-6,
        "poly6(0) = {} vs c h^6 = {peak}",
        k.poly6(0.0)
    );
    assert_eq!(k.spiky_gradient_factor(0.0), 0.0);
    assert_eq!(k.spiky_gradient([0.0; D]), [0.0; D]);
}

#[test]
fn edges_of_the_support_in_the_documented_range() {
    for h in RADII {
        edges_of_the_support::<2>(h);
        edges_of_the_support::<3>(h);
    }
}

// ---------------------------------------------------------------------------------
// Sign and monotonicity

fn nonnegative_nonincreasing<const D: usize>(h: f32, a: f32, b: f32) -> Result<(), TestCaseError> {
    let k = kernel::<D>(h);
    let (near, far) = if a <= b { (a, b) } else { (b, a) };
    let (near, far) = (near * k.h2(), far * k.h2());
    prop_assert!(k.poly6(far) >= 0.0 && k.spiky(far) >= 0.0);
    prop_assert!(
        k.poly6(near) >= k.poly6(far),
        "poly6({near}) < poly6({far})"
    );
    prop_assert!(
        k.spiky(near) >= k.spiky(far),
        "spiky({near}) < spiky({far})"
    );
    // The gradient points from p_i towards p_j: against the offset.
    prop_assert!(k.spiky_gradient_factor(near) <= 0.0);
    Ok(())
}

proptest! {
    #[test]
    fn kernels_nonnegative_and_nonincreasing_2d(h in radius(), a in 0.0f32..1.5, b in 0.0f32..1.5) {
        nonnegative_nonincreasing::<2>(h, a, b)?;
    }

    #[test]
    fn kernels_nonnegative_and_nonincreasing_3d(h in radius(), a in 0.0f32..1.5, b in 0.0f32..1.5) {
        nonnegative_nonincreasing::<3>(h, a, b)?;
    }
}

/// Rounding is where monotonicity could break: walk every `f32` from 0 up and every
/// `f32` up to `h^2`, 4096 of each, and require non-increasing, non-negative values.
fn monotone_at_the_ends<const D: usize>(h: f32) {
    let k = kernel::<D>(h);
    let top = k.h2().to_bits();
    let ends = [(0u32, 4096u32), (top - 4096, top + 16)];
    for (from, to) in ends {
        let mut previous = (f32::INFINITY, f32::INFINITY);
        for bits in from..to {
            let r2 = f32::from_bits(bits);
            let current = (k.poly6(r2), k.spiky(r2));
            assert!(current.0 >= 0.0 && current.1 >= 0.0, "h = {h}, r2 = {r2}");
            assert!(
                current.0 <= previous.0 && current.1 <= previous.1,
                "h = {h}, r2 = {r2}: {current:?} after {previous:?}"
            );
            previous = current;
        }
    }
}

#[test]
fn kernels_monotone_bit_by_bit_near_zero_and_near_h() {
    for h in RADII {
        monotone_at_the_ends::<2>(h);
        monotone_at_the_ends::<3>(h);
    }
}

// ---------------------------------------------------------------------------------
// Normalisation: the integral of W over its support is 1.

/// Midpoint rule over `r` in `[0, h]` with `f64` accumulation of
/// `W(r) 4 pi r^2 dr` (3D) or `W(r) 2 pi r dr` (2D).
fn radial_integral<const D: usize>(h: f32, w: impl Fn(f32) -> f32) -> f64 {
    let steps = 20_000;
    let dr = f64::from(h) / f64::from(steps);
    (0..steps)
        .map(|i| {
            let r = (f64::from(i) + 0.5) * dr;
            let shell = if D == 3 {
                4.0 * PI * r * r
            } else {
                2.0 * PI * r
            };
            f64::from(w((r * r) as f32)) * shell * dr
        })
        .sum()
}

/// Midpoint rule on a Cartesian grid over `[-h, h]^D` with `cells` cells per axis: the
/// offsets go through `norm2` as the solver's do.
fn grid_integral<const D: usize>(h: f32, cells: u32, w: impl Fn(f32) -> f32) -> f64 {
    let dx = 2.0 * f64::from(h) / f64::from(cells);
    let centre = |i: u32| (-f64::from(h) + (f64::from(i) + 0.5) * dx) as f32;
    let mut sum = 0.0f64;
    let total = cells.pow(D as u32);
    for index in 0..total {
        let mut rest = index;
        let x: [f32; D] = std::array::from_fn(|_| {
            let i = rest % cells;
            rest /= cells;
            centre(i)
        });
        sum += f64::from(w(norm2(x)));
    }
    sum * dx.powi(D as i32)
}

/// The stated bound is 0.5%; both quadratures land within 1e-6 of 1 at every radius here.
const NORMALISATION_TOLERANCE: f64 = 5e-3;

fn normalised<const D: usize>(h: f32) {
    let k = kernel::<D>(h);
    let cells = if D == 3 { 80 } else { 800 };
    let kernels: [(&str, &dyn Fn(f32) -> f32); 2] =
        [("poly6", &|r2| k.poly6(r2)), ("spiky", &|r2| k.spiky(r2))];
    for (name, w) in kernels {
        let radial = radial_integral::<D>(h, w);
        let grid = grid_integral::<D>(h, cells, w);
        for (method, integral) in [("radial", radial), ("grid", grid)] {
            assert!(
                (integral - 1.0).abs() < NORMALISATION_TOLERANCE,
                "{D}D {name}, h = {h}: {method} integral {integral}"
            );
        }
    }
}

#[test]
fn kernels_integrate_to_one_2d() {
    for h in RADII {
        normalised::<2>(h);
    }
}

#[test]
fn kernels_integrate_to_one_3d() {
    for h in RADII {
        normalised::<3>(h);
    }
}

// ---------------------------------------------------------------------------------
// The spiky gradient is dW_spiky/dr x/r.

/// Central difference with step `delta = 1e-3 h` of `spiky`, away from `r = 0` (where
/// the gradient is discontinuous) and `r = h`: `r/h` in `[0.05, 0.95]`.
///
/// Tolerance 1e-3 relative to `|gradW|`. Truncation error is `delta^2 / (3 (h - r)^2)`
/// relative, at most 1.3e-4; `f32` rounding of `W` and of `r2` contributes about
/// `1e-7 (h - r) / delta + 1e-7 r / delta`, at most 2e-4.
const GRADIENT_TOLERANCE: f64 = 1e-3;

fn gradient_is_derivative<const D: usize>(
    h: f32,
    u: [f64; D],
    t: f64,
) -> Result<(), TestCaseError> {
    let k = kernel::<D>(h);
    let Some(x) = scaled_direction(u, t * f64::from(h)) else {
        return Ok(());
    };
    let r = x.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt();
    let delta = 1e-3 * f64::from(h);
    let spiky_at = |r: f64| f64::from(k.spiky((r * r) as f32));
    let derivative = (spiky_at(r + delta) - spiky_at(r - delta)) / (2.0 * delta);
    let expected = x.map(|c| derivative * f64::from(c) / r);
    let got = k.spiky_gradient(x);
    let error = got
        .iter()
        .zip(&expected)
        .map(|(g, e)| (f64::from(*g) - e).powi(2))
        .sum::<f64>()
        .sqrt();
    let magnitude = expected.iter().map(|e| e * e).sum::<f64>().sqrt();
    prop_assert!(
        error <= GRADIENT_TOLERANCE * magnitude,
        "h = {h}, x = {x:?}: gradient {got:?}, finite difference {expected:?}"
    );
    Ok(())
}

proptest! {
    #[test]
    fn spiky_gradient_is_the_derivative_of_spiky_2d(
        h in radius(), u in uniform::<_, 2>(-1.0f64..1.0), t in 0.05f64..0.95
    ) {
        gradient_is_derivative::<2>(h, u, t)?;
    }

    #[test]
    fn spiky_gradient_is_the_derivative_of_spiky_3d(
        h in radius(), u in uniform::<_, 3>(-1.0f64..1.0), t in 0.05f64..0.95
    ) {
        gradient_is_derivative::<3>(h, u, t)?;
    }
}

// ---------------------------------------------------------------------------------
// Symmetry and finiteness of the gradient

/// An offset of any size relative to `h`, down to subnormal components.
fn offset<const D: usize>() -> impl Strategy<Value = [f32; D]> {
    use proptest::num::f32::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        uniform::<_, D>(-1.5f32..1.5),
        uniform::<_, D>(-1e-18f32..1e-18),
        uniform::<_, D>(POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO),
    ]
}

/// `gradW(-x) = -gradW(x)` bit for bit, and the gradient is finite with
/// `|gradW| <= |c| h^2`, its limit at `r -> 0`, for every finite offset (here scaled by
/// `h`) and every radius the constructor accepts.
fn gradient_odd_and_bounded<const D: usize>(
    k: Kernel<D>,
    x: [f32; D],
) -> Result<(), TestCaseError> {
    let x = x.map(|c| c * k.h());
    if !x.iter().all(|c| c.is_finite()) {
        return Ok(());
    }
    let g = k.spiky_gradient(x);
    let g_neg = k.spiky_gradient(x.map(|c| -c));
    prop_assert_eq!(
        g_neg.map(f32::to_bits),
        g.map(|c| (-c).to_bits()),
        "x = {:?}",
        x
    );
    prop_assert!(
        g.iter().all(|c| c.is_finite()),
        "h = {}, x = {:?}: {:?}",
        k.h(),
        x,
        g
    );
    let bound = f64::from(k.spiky_gradient_coefficient()).abs() * f64::from(k.h()).powi(2);
    let magnitude = g.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt();
    prop_assert!(
        magnitude <= bound * (1.0 + 1e-5),
        "h = {}, x = {:?}: |gradW| = {magnitude} > {bound}",
        k.h(),
        x
    );
    Ok(())
}

proptest! {
    #[test]
    fn spiky_gradient_odd_finite_and_bounded_2d(k in accepted_kernel::<2>(), x in offset::<2>()) {
        gradient_odd_and_bounded(k, x)?;
    }

    #[test]
    fn spiky_gradient_odd_finite_and_bounded_3d(k in accepted_kernel::<3>(), x in offset::<3>()) {
        gradient_odd_and_bounded(k, x)?;
    }
}

/// Particles closer than about 1e-19 (`r2` subnormal) count as coincident: zero
/// gradient. Before that rule, `h = 1e-4` in 3D gave `(h - r)^2 / r = inf` here and the
/// gradient `[-inf, NaN, NaN]`.
#[test]
fn spiky_gradient_of_nearly_coincident_particles_is_zero() {
    let k = kernel::<3>(1e-4);
    let x = [3e-23, 0.0, 0.0];
    assert!(norm2(x) > 0.0 && !norm2(x).is_normal());
    assert_eq!(k.spiky_gradient(x), [0.0; 3]);
    let k2 = kernel::<2>(1e-4);
    assert_eq!(k2.spiky_gradient([0.0, -3e-23]), [0.0; 2]);
    // From the smallest normal r2 on, the gradient is the full one.
    let r = f32::MIN_POSITIVE.sqrt();
    let g = k.spiky_gradient([r, 0.0, 0.0]);
    let limit = f64::from(k.spiky_gradient_coefficient()) * f64::from(k.h()).powi(2);
    assert!(
        (f64::from(g[0]) / limit - 1.0).abs() < 1e-5,
        "{g:?} vs {limit}"
    );
}

/// With unit scale the pair terms built on the gradient reproduce it exactly; the
/// slope beside the factor is the gradient's length.
fn pair_terms_carry_the_gradient<const D: usize>(h: f32, x: [f32; D]) -> Result<(), TestCaseError> {
    let k = kernel::<D>(h);
    let x = x.map(|c| c * h);
    let factor = k.spiky_gradient_factor(norm2(x));
    let g = k.spiky_gradient(x).map(f32::to_bits);
    prop_assert_eq!(k.constraint_gradient(1.0, factor, x).map(f32::to_bits), g);
    prop_assert_eq!(
        k.position_delta_term(1.0, 1.0, 0.0, factor, x)
            .map(f32::to_bits),
        g
    );
    prop_assert_eq!(
        k.vorticity_gradient_term(1.0, 1.0, k.spiky_gradient(x))
            .map(f32::to_bits),
        g
    );
    // The factor beside the slope is the factor; the slope's square is |gradW|^2 (to
    // the rounding of the components), and both vanish where the gradient does.
    let (with_slope, slope) = k.spiky_gradient_factor_and_slope(norm2(x));
    prop_assert_eq!(with_slope.to_bits(), factor.to_bits());
    let length2 = f64::from(norm2(k.spiky_gradient(x)));
    let slope2 = f64::from(slope) * f64::from(slope);
    prop_assert!(
        (length2 - slope2).abs() <= 1e-5 * slope2 + 1e-30,
        "|gradW|^2 = {length2}, slope^2 = {slope2}"
    );
    prop_assert!(slope <= 0.0);
    prop_assert!(factor == 0.0 || slope != 0.0);
    if norm2(x) >= k.h2() {
        prop_assert_eq!(slope, 0.0);
    }
    Ok(())
}

proptest! {
    #[test]
    fn pair_terms_carry_the_gradient_2d(h in radius(), x in uniform::<_, 2>(-1.2f32..1.2)) {
        pair_terms_carry_the_gradient::<2>(h, x)?;
    }

    #[test]
    fn pair_terms_carry_the_gradient_3d(h in radius(), x in uniform::<_, 3>(-1.2f32..1.2)) {
        pair_terms_carry_the_gradient::<3>(h, x)?;
    }
}

// ---------------------------------------------------------------------------------
// Tensile correction

/// Parameters the constructor accepts, over the whole allowed ranges.
fn tensile<const D: usize>() -> impl Strategy<Value = (Kernel<D>, TensileCorrection)> {
    let k = prop_oneof![Just(0.0f32), 0.0f32..1.0, proptest::num::f32::POSITIVE];
    let dq_rel = prop_oneof![
        0.1f32..0.3,
        proptest::num::f32::POSITIVE.prop_map(|v| v.fract())
    ];
    (radius(), k, 1u32..=16, dq_rel).prop_filter_map("accepted parameters", |(h, k, n, dq_rel)| {
        let kernel = Kernel::<D>::new(h).ok()?;
        Some((kernel, TensileCorrection::new(&kernel, k, n, dq_rel).ok()?))
    })
}

/// `s_corr(|dq|) = -k` to the rounding of the ratio ([`at_dq_tolerance`]);
/// `s_corr <= 0`, finite and non-decreasing in `r` everywhere; zero from `r = h` on;
/// `s_corr_from_poly6(W)` is `s_corr` bit for bit.
fn s_corr_properties<const D: usize>(
    kernel: Kernel<D>,
    tensile: TensileCorrection,
    dq_rel: f32,
    a: f32,
    b: f32,
) -> Result<(), TestCaseError> {
    let dq = dq_rel * kernel.h();
    if let Ok(at_dq) = TensileCorrection::new(&kernel, tensile.k(), tensile.n(), dq_rel) {
        let at = at_dq.s_corr(&kernel, dq * dq);
        prop_assert!(
            (at + tensile.k()).abs() <= at_dq_tolerance(&tensile),
            "s_corr(|dq|) = {at}, k = {}",
            tensile.k()
        );
    }
    let (near, far) = if a <= b { (a, b) } else { (b, a) };
    let (near, far) = (near * kernel.h2(), far * kernel.h2());
    let (s_near, s_far) = (tensile.s_corr(&kernel, near), tensile.s_corr(&kernel, far));
    prop_assert!(
        s_near.is_finite() && s_near <= 0.0,
        "s_corr({near}) = {s_near}"
    );
    prop_assert!(s_far.is_finite() && s_far <= 0.0, "s_corr({far}) = {s_far}");
    prop_assert!(
        s_near <= s_far,
        "s_corr({near}) = {s_near} > s_corr({far}) = {s_far}"
    );
    let at_zero = tensile.s_corr(&kernel, 0.0);
    prop_assert!(at_zero.is_finite() && at_zero <= s_near);
    for r2 in [kernel.h2(), kernel.h2() * 2.0, f32::INFINITY] {
        prop_assert_eq!(tensile.s_corr(&kernel, r2), 0.0);
    }
    for r2 in [near, far, 0.0] {
        prop_assert_eq!(
            tensile.s_corr_from_poly6(kernel.poly6(r2)).to_bits(),
            tensile.s_corr(&kernel, r2).to_bits()
        );
    }
    Ok(())
}

/// How far `s_corr(|dq|)` may be from `-k`: the ratio `W(|dq|) * (1 / W(|dq|))` is 1
/// to two roundings, its `n`-th power to about `2 n` of them, and the power's
/// squarings and the factor `k` add a few more.
fn at_dq_tolerance(tensile: &TensileCorrection) -> f32 {
    (tensile.n() as f32 + 3.0) * f32::EPSILON * tensile.k()
}

proptest! {
    #[test]
    fn s_corr_properties_2d(
        (kernel, tensile) in tensile::<2>(), dq_rel in 0.01f32..0.99, a in 0.0f32..1.2, b in 0.0f32..1.2
    ) {
        s_corr_properties(kernel, tensile, dq_rel, a, b)?;
    }

    #[test]
    fn s_corr_properties_3d(
        (kernel, tensile) in tensile::<3>(), dq_rel in 0.01f32..0.99, a in 0.0f32..1.2, b in 0.0f32..1.2
    ) {
        s_corr_properties(kernel, tensile, dq_rel, a, b)?;
    }
}

#[test]
fn s_corr_defaults_at_dq() {
    for h in RADII {
        let kernel = kernel::<3>(h);
        let tensile = TensileCorrection::new(&kernel, 0.1, 4, 0.2).unwrap();
        let dq = 0.2 * h;
        let at = tensile.s_corr(&kernel, dq * dq);
        assert!((at + 0.1).abs() <= at_dq_tolerance(&tensile), "{at}");
        assert_eq!(tensile.w_dq(), kernel.poly6(dq * dq));
        // Closer than |dq| the correction is stronger, farther weaker.
        assert!(tensile.s_corr(&kernel, 0.0) < -0.1);
        assert!(tensile.s_corr(&kernel, 0.09 * h * h) > -0.1);
    }
}

/// The form that vanishes beyond `r0`: zero at and beyond `r0` (exactly, so a lattice
/// at that spacing feels nothing), the paper's term less its value at `r0` inside, so
/// never positive and non-decreasing in `r`; `r0` outside `(0, h]` is an error.
fn vanishing_properties<const D: usize>(
    kernel: Kernel<D>,
    tensile: TensileCorrection,
    r0_rel: f32,
    a: f32,
) -> Result<(), TestCaseError> {
    let h = kernel.h();
    let r0 = r0_rel * h;
    let shifted = tensile.vanishing_beyond(&kernel, r0).unwrap();
    let offset = tensile.s_corr(&kernel, r0 * r0);
    prop_assert_eq!(shifted.s_corr(&kernel, r0 * r0), 0.0);
    let r2 = a * kernel.h2();
    let (paper, value) = (tensile.s_corr(&kernel, r2), shifted.s_corr(&kernel, r2));
    prop_assert!(value.is_finite() && value <= 0.0, "s_corr({r2}) = {value}");
    if r2 >= r0 * r0 {
        prop_assert_eq!(value, 0.0, "beyond r0 at r2 {}", r2);
    } else {
        // -k (p - p0) against -k p - (-k p0): the same to a few roundings of k p.
        let tolerance = 8.0 * f32::EPSILON * paper.abs().max(tensile.k());
        prop_assert!(
            (value - (paper - offset)).abs() <= tolerance,
            "{} against {}",
            value,
            paper - offset
        );
    }
    let near = shifted.s_corr(&kernel, 0.25 * r2);
    prop_assert!(near <= value, "{near} > {value}");
    for bad in [0.0, -h, 1.5 * h, f32::NAN, f32::INFINITY] {
        prop_assert!(
            tensile.vanishing_beyond(&kernel, bad).is_err(),
            "r0 {}",
            bad
        );
    }
    Ok(())
}

proptest! {
    #[test]
    fn vanishing_s_corr_properties_2d(
        (kernel, tensile) in tensile::<2>(), r0_rel in 0.01f32..=1.0, a in 0.0f32..1.2
    ) {
        vanishing_properties(kernel, tensile, r0_rel, a)?;
    }

    #[test]
    fn vanishing_s_corr_properties_3d(
        (kernel, tensile) in tensile::<3>(), r0_rel in 0.01f32..=1.0, a in 0.0f32..1.2
    ) {
        vanishing_properties(kernel, tensile, r0_rel, a)?;
    }
}

// ---------------------------------------------------------------------------------
// Curl: orientation and antisymmetry of the cross product

#[test]
fn vorticity_term_is_grad_cross_dv() {
    let k = kernel::<3>(1.0);
    let e = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    // e_x x e_y = e_z, cyclically; the gradient is the left factor.
    for i in 0..3 {
        let (a, b, c) = (e[i], e[(i + 1) % 3], e[(i + 2) % 3]);
        assert_eq!(k.vorticity_term(1.0, b, a), c);
        assert_eq!(k.vorticity_term(1.0, a, b), c.map(|v: f32| -v));
        assert_eq!(k.vorticity_term(2.5, b, a), c.map(|v| 2.5 * v));
    }
    let k2 = kernel::<2>(1.0);
    assert_eq!(
        k2.vorticity_term(1.0, [0.0, 1.0], [1.0, 0.0]),
        [0.0, 0.0, 1.0]
    );
    assert_eq!(
        k2.vorticity_term(1.0, [1.0, 0.0], [0.0, 1.0]),
        [0.0, 0.0, -1.0]
    );
}

proptest! {
    /// With unit volume, swapping the factors negates the curl bit for bit; the curl is
    /// perpendicular to both factors; the 2D curl is the 3D one of the vectors in the plane.
    #[test]
    fn vorticity_term_antisymmetric_and_perpendicular(
        a in uniform::<_, 3>(-10.0f32..10.0), b in uniform::<_, 3>(-10.0f32..10.0), volume in 0.0f32..4.0
    ) {
        let k = kernel::<3>(1.0);
        let ab = k.vorticity_term(1.0, a, b);
        let ba = k.vorticity_term(1.0, b, a);
        prop_assert_eq!(ab.map(f32::to_bits), ba.map(|c| (-c).to_bits()));
        let c = k.vorticity_term(volume, b, a).map(f64::from);
        let dot = |u: [f32; 3]| u.iter().zip(&c).map(|(u, c)| f64::from(*u) * c).sum::<f64>();
        let length = |u: [f32; 3]| norm2(u).sqrt() as f64;
        // Each product is within 2^-24 relative, the differences cancel at most that.
        let bound = 1e-5 * length(a) * length(b) * f64::from(volume) * (length(a) + length(b));
        prop_assert!(dot(a).abs() <= bound && dot(b).abs() <= bound, "{:?}", c);

        let k2 = kernel::<2>(1.0);
        let planar = k2.vorticity_term(volume, [b[0], b[1]], [a[0], a[1]]);
        let spatial = k.vorticity_term(volume, [b[0], b[1], 0.0], [a[0], a[1], 0.0]);
        prop_assert_eq!(planar[2].to_bits(), spatial[2].to_bits());
        prop_assert!(planar[0] == 0.0 && planar[1] == 0.0 && spatial[0] == 0.0 && spatial[1] == 0.0);
    }
}

/// The viscosity pair terms summed over a lattice approximate `nu` times the Laplacian
/// of the velocity: exactly zero for a linear shear `v = (y, 0, 0)` (by the lattice's
/// symmetry), and for `v = (y^2, 0, 0)` a sum along x alone that approaches `2 nu` as
/// the kernel spans more spacings (the SPH Laplacian converges with its neighbours):
/// the relative error at h = 4 spacings is below that at h = 2.
#[test]
fn viscosity_terms_sum_to_the_laplacian_on_a_lattice() {
    let (h, nu) = (0.1f32, 1e-3f32);
    let k = Kernel::<3>::new(h).unwrap();
    let sum = |spacings: i32, field: &dyn Fn([f32; 3]) -> f32| {
        let s = h / spacings as f32;
        let volume = s * s * s;
        let mut a = [0.0f32; 3];
        for i in -spacings..=spacings {
            for j in -spacings..=spacings {
                for l in -spacings..=spacings {
                    if (i, j, l) == (0, 0, 0) {
                        continue;
                    }
                    let xj = [i as f32 * s, j as f32 * s, l as f32 * s];
                    let x = xj.map(|c| -c);
                    let r2 = norm2(x);
                    if !within(r2, k.h2()) {
                        continue;
                    }
                    let dv = [field([0.0; 3]) - field(xj), 0.0, 0.0];
                    let t = k.viscosity_term(nu, volume, dv, r2, k.spiky_gradient_factor(r2));
                    for c in 0..3 {
                        a[c] += t[c];
                    }
                }
            }
        }
        a
    };
    let expected = 2.0 * nu;
    let mut errors = Vec::new();
    for spacings in [2, 3, 4] {
        let shear = sum(spacings, &|p| p[1]);
        assert!(
            shear.iter().all(|c| c.abs() < 1e-6),
            "linear shear at h = {spacings} s: {shear:?}"
        );
        let parabola = sum(spacings, &|p| p[1] * p[1]);
        assert!(
            parabola[0] > 0.0 && parabola[1].abs() < 1e-6 && parabola[2].abs() < 1e-6,
            "parabola at h = {spacings} s: {parabola:?}"
        );
        errors.push((parabola[0] - expected).abs() / expected);
    }
    eprintln!("relative error of the Laplacian at h = 2, 3, 4 spacings: {errors:?}");
    assert!(errors[2] < errors[0], "no convergence: {errors:?}");
}
