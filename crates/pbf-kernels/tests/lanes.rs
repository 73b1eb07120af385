//! Every `_lanes` function is bit-identical to its scalar reference, lane by lane.
//!
//! The bound is exact: the lanes use only correctly rounded IEEE-754 operations
//! (`+ - * /`, `sqrt`, comparisons and selects) in the order of the scalar code, with no
//! fused multiply-add and no approximate reciprocal, so each lane must give the same
//! bits as the scalar function of that lane's inputs (`to_bits()` equality, so `+0.0`
//! and `-0.0` differ). The one allowance: when both results are NaN the payloads are
//! not compared, since neither IEEE-754 nor Rust specifies them.
//!
//! One test body runs on every backend of [`LaneKind`]: the scalar lane (`f32`), the
//! portable `f32x8`, and on x86-64 the AVX and AVX-512 registers; a backend this CPU
//! does not run is reported as skipped, by name, in the test output.
//!
//! Each case draws a kernel radius `h` in `1e-4..=1e4` (log-uniform, both ends
//! included), a tensile correction, a uniform scalar argument, and sixteen independent
//! inputs per lane argument (a backend takes as many as it has lanes), mixing ordinary values with the edge cases: `r = 0`,
//! `r = h` exactly, `r = h (1 +/- 1e-6)`, `r2` one ulp either side of `h^2`, subnormal
//! offsets and squared distances, NaN and infinity. `lanes_bit_identical!` then checks
//! the term in 2D and in 3D. (`Kernel::spiky` has no lane version: the solver uses only
//! its gradient; `tests/kernel_maths.rs` checks the gradient against it.)

use pbf_kernels::{
    Bounded, Kernel, Lane, LaneKind, MAX_WIDTH, TensileCorrection, WallTables, WithLane, f32x8,
};
use pbf_kernels::{norm2, norm2_lanes};
use proptest::array::{uniform, uniform16};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::fmt::Debug;

/// Inputs drawn per lane argument: as many as the widest backend's lanes.
const W: usize = MAX_WIDTH;

/// A per-lane value and its form on lanes `L`.
trait Lanes: Copy + Debug {
    type Wide<L: Lane>;
    /// The first `L::WIDTH` values into lanes: lane `l` holds `lanes[l]`.
    fn pack<L: Lane>(lanes: &[Self; W]) -> Self::Wide<L>;
    /// The inverse of `pack`: the `L::WIDTH` lanes' values.
    fn unpack<L: Lane>(wide: Self::Wide<L>) -> Vec<Self>;
    /// The `f32` components, in order.
    fn components(&self) -> Vec<f32>;
}

impl Lanes for f32 {
    type Wide<L: Lane> = L;
    fn pack<L: Lane>(lanes: &[Self; W]) -> L {
        L::from_slice(lanes)
    }
    fn unpack<L: Lane>(wide: L) -> Vec<Self> {
        let mut out = vec![0.0; L::WIDTH];
        wide.store(&mut out);
        out
    }
    fn components(&self) -> Vec<f32> {
        vec![*self]
    }
}

impl<const N: usize> Lanes for [f32; N] {
    type Wide<L: Lane> = [L; N];
    fn pack<L: Lane>(lanes: &[Self; W]) -> [L; N] {
        std::array::from_fn(|axis| L::from_slice(&lanes.map(|v| v[axis])))
    }
    fn unpack<L: Lane>(wide: [L; N]) -> Vec<Self> {
        let axes = wide.map(f32::unpack::<L>);
        (0..L::WIDTH)
            .map(|lane| std::array::from_fn(|axis| axes[axis][lane]))
            .collect()
    }
    fn components(&self) -> Vec<f32> {
        self.to_vec()
    }
}

/// Tuples of lane arguments, packed argument by argument.
macro_rules! tuple_lanes {
    ($($t:ident $i:tt),+) => {
        impl<$($t: Lanes),+> Lanes for ($($t,)+) {
            type Wide<L: Lane> = ($($t::Wide<L>,)+);
            fn pack<L: Lane>(lanes: &[Self; W]) -> Self::Wide<L> {
                ($($t::pack::<L>(&lanes.map(|v| v.$i)),)+)
            }
            fn unpack<L: Lane>(wide: Self::Wide<L>) -> Vec<Self> {
                let unpacked = ($($t::unpack::<L>(wide.$i),)+);
                (0..L::WIDTH).map(|lane| ($(unpacked.$i[lane],)+)).collect()
            }
            fn components(&self) -> Vec<f32> {
                let mut out = Vec::new();
                $(out.extend(self.$i.components());)+
                out
            }
        }
    };
}
tuple_lanes!(A 0);
tuple_lanes!(A 0, B 1);
tuple_lanes!(A 0, B 1, C 2);
tuple_lanes!(A 0, B 1, C 2, E 3);
tuple_lanes!(A 0, B 1, C 2, E 3, F 4);

fn same_bits(expected: f32, got: f32) -> bool {
    expected.to_bits() == got.to_bits() || (expected.is_nan() && got.is_nan())
}

/// Runs `lanes` on the inputs packed into lanes `L` and `scalar` on each input alone,
/// and requires the same bits in every lane and every component.
fn check_lanes<L: Lane, I: Lanes, O: Lanes>(
    inputs: &[I; W],
    scalar: impl Fn(I) -> O,
    lanes: impl Fn(I::Wide<L>) -> O::Wide<L>,
) -> Result<(), TestCaseError> {
    let got = O::unpack::<L>(L::run(|| lanes(I::pack::<L>(inputs))));
    prop_assert_eq!(got.len(), L::WIDTH);
    for (lane, (input, got)) in inputs.iter().zip(got).enumerate() {
        let expected = scalar(*input).components();
        let got = got.components();
        let same = expected.iter().zip(&got).all(|(e, g)| same_bits(*e, *g));
        prop_assert!(
            same,
            "{} lanes, lane {lane}, inputs {input:?}: scalar {expected:?} (bits {:08x?}), lanes {got:?} (bits {:08x?})",
            L::WIDTH,
            expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        );
    }
    Ok(())
}

/// What a case shares across its lanes.
#[derive(Debug, Clone)]
struct Setup<const D: usize> {
    kernel: Kernel<D>,
    tensile: TensileCorrection,
    /// The walls' tables of `kernel`.
    tables: std::sync::Arc<WallTables>,
    /// The scalar (splatted) argument of a term: mass, `m / rho0`.
    uniform: f32,
}

/// `h` log-uniform in `1e-4..=1e4`, the documented range, with both ends and 1.
fn radius() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => (-4.0f64..=4.0).prop_map(|e| 10f64.powf(e) as f32),
        1 => Just(1e-4f32),
        1 => Just(1e4f32),
        1 => Just(1.0f32),
    ]
}

/// Any finite value, weighted towards ordinary magnitudes, with the special ones.
fn value() -> BoxedStrategy<f32> {
    use proptest::num::f32::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    prop_oneof![
        4 => -1e3f32..1e3,
        2 => POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO,
        1 => prop::sample::select(vec![
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::MAX,
            f32::MIN,
        ]),
    ]
    .boxed()
}

fn setup<const D: usize>() -> impl Strategy<Value = Setup<D>> {
    let k = prop_oneof![Just(0.0f32), Just(0.1), 0.0f32..2.0];
    let dq_rel = prop_oneof![Just(0.2f32), 0.01f32..0.99];
    // The paper's form, or the form that vanishes beyond a distance `r0` (as a
    // fraction of h; the solver's is the rest spacing, h / 2).
    let r0_rel = prop_oneof![
        Just(None),
        Just(Some(0.5f32)),
        (0.01f32..=1.0).prop_map(Some)
    ];
    (radius(), k, 1u32..=16, dq_rel, value(), r0_rel).prop_filter_map(
        "parameters the constructors accept",
        |(h, k, n, dq_rel, uniform, r0_rel)| {
            let kernel = Kernel::<D>::new(h).ok()?;
            let mut tensile = TensileCorrection::new(&kernel, k, n, dq_rel).ok()?;
            if let Some(r0_rel) = r0_rel {
                tensile = tensile.vanishing_beyond(&kernel, r0_rel * h).ok()?;
            }
            Some(Setup {
                kernel,
                tensile,
                tables: std::sync::Arc::new(WallTables::new(&kernel)),
                uniform,
            })
        },
    )
}

/// An offset `p_i - p_j` for a kernel of radius `h`: inside or outside the support,
/// zero, exactly `h` along an axis, `h (1 +/- 1e-6)` along an axis or a random
/// direction, subnormal components, and components so small that `r2` is subnormal
/// or underflows.
fn offset<const D: usize>(h: f32) -> BoxedStrategy<[f32; D]> {
    let scales = vec![1.0f32, 1.0 - 1e-6, 1.0 + 1e-6];
    let along_axis = (0..D, any::<bool>(), prop::sample::select(scales.clone())).prop_map(
        move |(axis, negative, scale)| {
            let mut x = [0.0; D];
            x[axis] = if negative { -h * scale } else { h * scale };
            x
        },
    );
    let on_sphere = (uniform::<_, D>(-1.0f64..1.0), prop::sample::select(scales)).prop_filter_map(
        "a direction",
        move |(u, scale)| {
            let length = u.iter().map(|c| c * c).sum::<f64>().sqrt();
            (length > 1e-3)
                .then(|| u.map(|c| (c / length * f64::from(h) * f64::from(scale)) as f32))
        },
    );
    let subnormal = uniform::<_, D>(
        proptest::num::f32::SUBNORMAL
            | proptest::num::f32::ZERO
            | proptest::num::f32::POSITIVE
            | proptest::num::f32::NEGATIVE,
    );
    prop_oneof![
        6 => uniform::<_, D>(-1.5 * h..1.5 * h),
        1 => Just([0.0; D]),
        2 => along_axis,
        2 => on_sphere,
        1 => subnormal,
        1 => uniform::<_, D>(-1e-18f32..1e-18),
    ]
    .boxed()
}

/// A squared distance: of an offset, or one of `0`, `-0`, `h^2` and its neighbours,
/// the smallest normal and a subnormal, NaN and infinity.
fn squared_distance<const D: usize>(h: f32) -> BoxedStrategy<f32> {
    let h2 = h * h;
    let edges = vec![
        0.0,
        -0.0,
        h2,
        f32::from_bits(h2.to_bits() - 1),
        f32::from_bits(h2.to_bits() + 1),
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::NAN,
        f32::INFINITY,
    ];
    prop_oneof![
        4 => offset::<D>(h).prop_map(norm2),
        1 => prop::sample::select(edges),
    ]
    .boxed()
}

/// A poly6 value `W(r)` of this kernel, or any value.
fn poly6_value<const D: usize>(kernel: Kernel<D>) -> BoxedStrategy<f32> {
    prop_oneof![
        squared_distance::<D>(kernel.h()).prop_map(move |r2| kernel.poly6(r2)),
        value(),
    ]
    .boxed()
}

/// A spiky gradient factor of this kernel, or any value.
fn gradient_factor<const D: usize>(kernel: Kernel<D>) -> BoxedStrategy<f32> {
    prop_oneof![
        squared_distance::<D>(kernel.h()).prop_map(move |r2| kernel.spiky_gradient_factor(r2)),
        value(),
    ]
    .boxed()
}

/// An `s_corr` value of this setup, or any value.
fn s_corr_value<const D: usize>(setup: Setup<D>) -> BoxedStrategy<f32> {
    prop_oneof![
        squared_distance::<D>(setup.kernel.h())
            .prop_map(move |r2| setup.tensile.s_corr(&setup.kernel, r2)),
        value(),
    ]
    .boxed()
}

/// A spiky gradient of this kernel, or any vector.
fn gradient<const D: usize>(kernel: Kernel<D>) -> BoxedStrategy<[f32; D]> {
    prop_oneof![
        offset::<D>(kernel.h()).prop_map(move |x| kernel.spiky_gradient(x)),
        vector::<D>(),
    ]
    .boxed()
}

fn vector<const D: usize>() -> BoxedStrategy<[f32; D]> {
    uniform::<_, D>(value()).boxed()
}

/// A point of the box `0..=4h` on every axis for walls of radius `h`: anywhere, on a
/// face, within h of one or exactly h from it (and one ulp either side), or NaN.
fn face_point<const D: usize>(h: f32) -> BoxedStrategy<[f32; D]> {
    let near = |h: f32| {
        prop_oneof![
            4 => (0.0f32..=4.0).prop_map(move |t| t * h),
            2 => (0.0f32..1.0).prop_map(move |t| t * h),
            2 => (3.0f32..=4.0).prop_map(move |t| t * h),
            1 => prop::sample::select(vec![
                0.0,
                h,
                4.0 * h,
                3.0 * h,
                f32::from_bits(h.to_bits() - 1),
                f32::from_bits(h.to_bits() + 1),
                -0.0,
                f32::NAN,
            ]),
        ]
    };
    uniform(near(h)).boxed()
}

/// The box of [`face_point`].
fn face_box<const D: usize>(h: f32) -> ([f32; D], [f32; D]) {
    ([0.0; D], [4.0 * h; D])
}

/// `lanes_bit_identical!(name: |setup| (argument: type = strategy, ...) => scalar, lanes);`
/// checks, in 2D (`name::d2`) and 3D (`name::d3`) and on every backend this CPU runs,
/// that `lanes` applied to the drawn inputs packed into lanes equals `scalar` applied
/// to each lane's inputs, bit for bit. `D` names the dimension inside the types,
/// strategies and expressions.
macro_rules! lanes_bit_identical {
    ($name:ident: |$s:ident| ($($arg:ident: $ty:ty = $strategy:expr),+) => $scalar:expr, $lanes:expr) => {
        mod $name {
            use super::*;
            lanes_bit_identical!(@dim d2, 2, |$s| ($($arg: $ty = $strategy),+) => $scalar, $lanes);
            lanes_bit_identical!(@dim d3, 3, |$s| ($($arg: $ty = $strategy),+) => $scalar, $lanes);
        }
    };
    (@dim $dim:ident, $d:literal, |$s:ident| ($($arg:ident: $ty:ty = $strategy:expr),+) => $scalar:expr, $lanes:expr) => {
        mod $dim {
            use super::*;
            const D: usize = $d;

            /// One case on the lanes the dispatcher hands over.
            struct Case {
                setup: Setup<D>,
                inputs: [($($ty,)+); W],
            }

            impl WithLane for Case {
                type Output = Result<(), TestCaseError>;
                fn run<L: Lane>(self) -> Self::Output {
                    #[allow(unused_variables)]
                    let $s = &self.setup;
                    check_lanes::<L, ($($ty,)+), _>(
                        &self.inputs,
                        |($($arg,)+)| $scalar,
                        |($($arg,)+)| $lanes,
                    )
                }
            }

            proptest! {
                #[test]
                fn lanes_bit_identical(
                    (setup, inputs) in setup::<D>().prop_flat_map(|$s| (Just($s.clone()), uniform16(($($strategy,)+))))
                ) {
                    for kind in LaneKind::ALL {
                        match kind.dispatch(Case { setup: setup.clone(), inputs }) {
                            Ok(checked) => checked?,
                            Err(_) => kind.report_skipped(),
                        }
                    }
                }
            }
        }
    };
}

#[rustfmt::skip]
mod terms {
    use super::*;

    lanes_bit_identical!(norm2: |s| (x: [f32; D] = offset::<D>(s.kernel.h())) => norm2(x), norm2_lanes(x));
    lanes_bit_identical!(norm2_of_any: |s| (x: [f32; D] = vector::<D>()) => norm2(x), norm2_lanes(x));
    lanes_bit_identical!(poly6: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.poly6(r2), s.kernel.poly6_lanes(r2));
    lanes_bit_identical!(spiky_gradient_factor: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.spiky_gradient_factor(r2), s.kernel.spiky_gradient_factor_lanes(r2));
    lanes_bit_identical!(spiky_gradient_factor_and_slope: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.spiky_gradient_factor_and_slope(r2), s.kernel.spiky_gradient_factor_and_slope_lanes(r2));
    lanes_bit_identical!(spiky_gradient: |s| (x: [f32; D] = offset::<D>(s.kernel.h())) => s.kernel.spiky_gradient(x), s.kernel.spiky_gradient_lanes(x));
    lanes_bit_identical!(s_corr: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.tensile.s_corr(&s.kernel, r2), s.tensile.s_corr_lanes(&s.kernel, r2));
    lanes_bit_identical!(s_corr_from_poly6: |s| (w: f32 = poly6_value(s.kernel)) => s.tensile.s_corr_from_poly6(w), s.tensile.s_corr_from_poly6_lanes(w));
    lanes_bit_identical!(density_term: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.density_term(s.uniform, r2), s.kernel.density_term_lanes(s.uniform, r2));
    lanes_bit_identical!(constraint_gradient: |s| (factor: f32 = gradient_factor(s.kernel), x: [f32; D] = offset::<D>(s.kernel.h())) => s.kernel.constraint_gradient(s.uniform, factor, x), s.kernel.constraint_gradient_lanes(s.uniform, factor, x));
    lanes_bit_identical!(position_delta_term: |s| (lambda_sum: f32 = value(), s_corr: f32 = s_corr_value(s.clone()), factor: f32 = gradient_factor(s.kernel), x: [f32; D] = offset::<D>(s.kernel.h())) => s.kernel.position_delta_term(s.uniform, lambda_sum, s_corr, factor, x), s.kernel.position_delta_term_lanes(s.uniform, lambda_sum, s_corr, factor, x));
    lanes_bit_identical!(xsph_term: |s| (volume: f32 = value(), dv: [f32; D] = vector::<D>(), w: f32 = poly6_value(s.kernel)) => s.kernel.xsph_term(volume, dv, w), s.kernel.xsph_term_lanes(volume, dv, w));
    lanes_bit_identical!(vorticity_term: |s| (volume: f32 = value(), dv: [f32; D] = vector::<D>(), grad: [f32; D] = gradient(s.kernel)) => s.kernel.vorticity_term(volume, dv, grad), s.kernel.vorticity_term_lanes(volume, dv, grad));
    lanes_bit_identical!(lane_poly6: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.poly6(r2), L::poly6(&s.kernel, r2));
    lanes_bit_identical!(lane_gradient_factor_and_slope: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => s.kernel.spiky_gradient_factor_and_slope(r2), L::gradient_factor_and_slope(&s.kernel, r2));
    lanes_bit_identical!(lane_s_corr: |s| (w: f32 = poly6_value(s.kernel)) => s.tensile.s_corr_from_poly6(w), L::s_corr(&s.tensile, w));
    lanes_bit_identical!(lane_position_delta: |s| (lambda_sum: f32 = value(), s_corr: f32 = s_corr_value(s.clone()), factor: f32 = gradient_factor(s.kernel), x: [f32; D] = offset::<D>(s.kernel.h())) => s.kernel.position_delta_term(s.uniform, lambda_sum, s_corr, factor, x), L::position_delta(&s.kernel, s.uniform, lambda_sum, s_corr, factor, x));
    lanes_bit_identical!(lane_xsph: |s| (volume: f32 = value(), dv: [f32; D] = vector::<D>(), w: f32 = poly6_value(s.kernel)) => s.kernel.xsph_term(volume, dv, w), L::xsph(&s.kernel, volume, dv, w));
    lanes_bit_identical!(lane_curl: |s| (volume: f32 = value(), dv: [f32; D] = vector::<D>(), grad: [f32; D] = gradient(s.kernel)) => s.kernel.vorticity_term(volume, dv, grad), L::curl(&s.kernel, volume, dv, grad));
    lanes_bit_identical!(lane_norm2: |s| (x: [f32; D] = vector::<D>()) => norm2(x), L::norm2(x));
    lanes_bit_identical!(lane_faces: |s| (p: [f32; D] = face_point::<D>(s.kernel.h())) => { let (lo, hi) = face_box::<D>(s.kernel.h()); s.tables.faces(lo, hi, p) }, { let (lo, hi) = face_box::<D>(s.kernel.h()); L::faces(&s.tables, lo, hi, p) });
    lanes_bit_identical!(lane_indicator: |s| (r2: f32 = squared_distance::<D>(s.kernel.h())) => if pbf_kernels::within(r2, s.kernel.h() * s.kernel.h()) { 1.0 } else { 0.0 }, L::indicator(r2, s.kernel.h() * s.kernel.h()));
    lanes_bit_identical!(lane_square_root: |s| (x: f32 = value()) => x.sqrt(), L::square_root(x));
    lanes_bit_identical!(lane_max_zero: |s| (x: f32 = value()) => if x > 0.0 { x } else { 0.0 }, x.max_zero());
    lanes_bit_identical!(lane_select_gt: |s| (x: f32 = value(), y: f32 = value(), yes: f32 = value(), no: f32 = value()) => if x > y { yes } else { no }, x.select_gt(y, yes, no));
    lanes_bit_identical!(viscosity_term: |s| (volume: f32 = value(), dv: [f32; D] = vector::<D>(), x: [f32; D] = offset::<D>(s.kernel.h()), factor: f32 = gradient_factor(s.kernel)) => s.kernel.viscosity_term(s.uniform, volume, dv, norm2(x), factor), s.kernel.viscosity_term_lanes(s.uniform, volume, dv, norm2_lanes(x), factor));
    lanes_bit_identical!(vorticity_gradient_term: |s| (volume: f32 = value(), d_magnitude: f32 = value(), grad: [f32; D] = gradient(s.kernel)) => s.kernel.vorticity_gradient_term(volume, d_magnitude, grad), s.kernel.vorticity_gradient_term_lanes(volume, d_magnitude, grad));
}

/// The packing helpers themselves: a lane mix-up would make every check above vacuous.
#[test]
fn packing_puts_input_l_in_lane_l() {
    let inputs: [([f32; 3], f32); W] =
        std::array::from_fn(|l| ([l as f32, 10.0 + l as f32, 20.0 + l as f32], -(l as f32)));
    let (x, w) = <([f32; 3], f32)>::pack::<f32x8>(&inputs);
    assert_eq!(x[1].to_array()[5], 15.0);
    assert_eq!(w.to_array()[7], -7.0);
    assert_eq!(<([f32; 3], f32)>::unpack::<f32x8>((x, w)), inputs[..8]);
    assert_eq!(
        <([f32; 3], f32)>::unpack::<f32>(<([f32; 3], f32)>::pack::<f32>(&inputs)),
        inputs[..1]
    );
    // A lanes function that swaps two lanes is caught.
    let swapped = check_lanes::<f32x8, _, _>(
        &inputs.map(|(_, w)| w),
        |w: f32| w,
        |w: f32x8| {
            let mut a = w.to_array();
            a.swap(2, 3);
            f32x8::from(a)
        },
    );
    assert!(swapped.is_err());
    // So is a sign of zero.
    assert!(check_lanes::<f32x8, _, _>(&[0.0f32; W], |w: f32| w, |w: f32x8| -w).is_err());
}

/// Every backend of the dispatcher runs here or is reported as skipped; the scalar
/// and portable ones run everywhere.
#[test]
fn the_dispatcher_runs_every_available_backend() {
    struct Width;
    impl WithLane for Width {
        type Output = usize;
        fn run<L: Lane>(self) -> usize {
            L::WIDTH
        }
    }
    for kind in LaneKind::ALL {
        match kind.dispatch(Width) {
            Ok(width) => assert_eq!(width, kind.width(), "{}", kind.name()),
            Err(e) => {
                assert!(!kind.is_available(), "{}: {e}", kind.name());
                kind.report_skipped();
            }
        }
    }
    assert!(LaneKind::Scalar.is_available() && LaneKind::Portable.is_available());
    assert!(LaneKind::widest().is_available());
}

/// A padding lane of the lists (`r2 = +inf`, gradient factor 0) adds exactly 0
/// through the viscosity term on every backend, whatever the velocity difference:
/// the pair term must not turn the padding into NaN.
#[test]
fn the_viscosity_term_of_a_padding_lane_is_zero() {
    struct Padding;
    impl WithLane for Padding {
        type Output = Vec<f32>;
        fn run<L: Lane>(self) -> Vec<f32> {
            let k = Kernel::<3>::new(0.1).unwrap();
            let r2 = L::splat(f32::INFINITY);
            let factor = L::gradient_factor(&k, r2);
            let dv = [L::splat(3.0), L::splat(-1.0), L::splat(0.5)];
            let t = k.viscosity_term_lanes(1e-3, L::splat(1e-6), dv, r2, factor);
            let mut out = vec![1.0; 3 * L::WIDTH];
            for (a, c) in t.into_iter().enumerate() {
                c.store(&mut out[a * L::WIDTH..(a + 1) * L::WIDTH]);
            }
            out
        }
    }
    let k = Kernel::<3>::new(0.1).unwrap();
    let factor = k.spiky_gradient_factor(f32::INFINITY);
    let scalar = k.viscosity_term(1e-3, 1e-6, [3.0, -1.0, 0.5], f32::INFINITY, factor);
    assert_eq!(scalar, [0.0; 3]);
    for kind in LaneKind::ALL {
        match kind.dispatch(Padding) {
            Ok(terms) => assert!(
                terms.iter().all(|t| *t == 0.0),
                "{}: {terms:?}",
                kind.name()
            ),
            Err(_) => kind.report_skipped(),
        }
    }
}

/// The safe gathers, on every backend: the values of the scalar path's indexing, by
/// indices and by `u16` offsets, and a panic (never a read) for an index past the
/// values, whichever lane holds it.
#[test]
fn gathers_read_the_indexed_values_and_refuse_an_index_past_them() {
    struct Gathers;
    impl WithLane for Gathers {
        type Output = ();
        fn run<L: Lane>(self) {
            let values: Vec<f32> = (0..40).map(|i| i as f32 * 0.5 - 3.0).collect();
            let quads: Vec<[f32; 4]> = (0..40)
                .map(|i| {
                    [
                        i as f32,
                        -(i as f32),
                        0.25 * i as f32,
                        1.0 / (1.0 + i as f32),
                    ]
                })
                .collect();
            let indices: [u32; 16] = std::array::from_fn(|l| (7 * l as u32 + 3) % 40);
            let offsets: [u16; 16] = indices.map(|i| i as u16);
            let mut lanes = [0.0f32; MAX_WIDTH];
            L::run(|| L::gather(&values, &indices)).store(&mut lanes[..L::WIDTH]);
            for l in 0..L::WIDTH {
                assert_eq!(lanes[l], values[indices[l] as usize], "gather, lane {l}");
            }
            let by_index = L::run(|| L::gather4(&quads, &indices));
            let by_offset = L::run(|| L::gather4(&quads, &offsets));
            for c in 0..4 {
                for (got, what) in [(by_index[c], "indices"), (by_offset[c], "offsets")] {
                    got.store(&mut lanes[..L::WIDTH]);
                    for l in 0..L::WIDTH {
                        let expected = quads[indices[l] as usize][c];
                        assert_eq!(lanes[l], expected, "gather4 by {what}, lane {l}");
                    }
                }
            }
            let checked = Bounded::new(&indices[..], 40).expect("all below 40");
            let suffix = checked.suffix(16 - L::WIDTH);
            L::run(|| L::gather_in(&values, suffix)).store(&mut lanes[..L::WIDTH]);
            assert_eq!(lanes[0], values[indices[16 - L::WIDTH] as usize]);
            // An index past the values in the last lane, then in the first.
            for lane in [L::WIDTH - 1, 0] {
                let mut bad = indices;
                bad[lane] = 40;
                let read = std::panic::catch_unwind(|| L::run(|| L::gather(&values, &bad)));
                assert!(read.is_err(), "gather past the values in lane {lane}");
                let read = std::panic::catch_unwind(|| L::run(|| L::gather4(&quads, &bad)));
                assert!(read.is_err(), "gather4 past the quads in lane {lane}");
            }
            // Checked indices against a shorter array than their bound.
            let short =
                std::panic::catch_unwind(|| L::run(|| L::gather_in(&values[..39], checked)));
            assert!(short.is_err(), "gather_in from fewer values than the bound");
        }
    }
    for kind in LaneKind::ALL {
        match kind.dispatch(Gathers) {
            Ok(()) => {}
            Err(_) => kind.report_skipped(),
        }
    }
}

/// A run of indices is checked whole: one index at or past the bound anywhere in it
/// refuses the run, and `u16` offsets into more than 65,536 values need no scan.
#[test]
fn bounded_refuses_any_index_at_or_past_the_bound() {
    let run: Vec<u32> = (0..100).map(|i| (i * 37) % 1000).collect();
    assert!(Bounded::new(&run, 1000).is_some());
    for at in [0, 15, 16, 57, 99] {
        let mut bad = run.clone();
        bad[at] = 1000;
        assert!(Bounded::new(&bad, 1000).is_none(), "index at {at}");
        bad[at] = u32::MAX;
        assert!(Bounded::new(&bad, 1000).is_none(), "u32::MAX at {at}");
    }
    assert!(Bounded::<u32>::new(&[], 0).is_some(), "an empty run");
    assert!(Bounded::new(&[0u32], 0).is_none(), "nothing is below 0");
    assert!(Bounded::new(&[u16::MAX], 65_536).is_some());
    assert!(Bounded::new(&[u16::MAX], 65_535).is_none());
    assert!(Bounded::new(&[u32::MAX], usize::MAX).is_some());
}
