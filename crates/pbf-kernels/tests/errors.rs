//! The constructors reject every bad parameter with the documented variant, naming the
//! field and carrying the rejected value, and accept the whole documented range.

use pbf_kernels::{Kernel, KernelError, TensileCorrection};
use proptest::prelude::*;

/// `KernelError::InvalidRadius` for `h <= 0`, NaN and infinities, in 2D and 3D.
fn rejects_invalid_radius<const D: usize>() {
    for h in [
        0.0,
        -0.0,
        -1.0,
        -1e-30,
        f32::MIN,
        f32::NEG_INFINITY,
        f32::INFINITY,
    ] {
        match Kernel::<D>::new(h) {
            Err(KernelError::InvalidRadius { value }) => {
                assert_eq!(value.to_bits(), h.to_bits(), "{D}D, h = {h}")
            }
            other => panic!("{D}D, h = {h}: {other:?}"),
        }
    }
    match Kernel::<D>::new(f32::NAN) {
        Err(KernelError::InvalidRadius { value }) => assert!(value.is_nan()),
        other => panic!("{D}D, h = NaN: {other:?}"),
    }
    let message = Kernel::<D>::new(-2.0).unwrap_err().to_string();
    assert!(
        message.contains("kernel radius h") && message.contains("-2"),
        "{message}"
    );
}

#[test]
fn kernel_rejects_nonpositive_and_nonfinite_radii() {
    rejects_invalid_radius::<2>();
    rejects_invalid_radius::<3>();
}

/// `KernelError::RadiusOutOfRange` when a constant overflows or underflows `f32`:
/// `315 / (64 pi h^9)` overflows for `h = 1e-6` and underflows for `h = 1e6`.
fn rejects_radius_out_of_range<const D: usize>() {
    for h in [
        1e-6,
        1e-10,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        1e6,
        1e20,
        f32::MAX,
    ] {
        assert_eq!(
            Kernel::<D>::new(h),
            Err(KernelError::RadiusOutOfRange { value: h }),
            "{D}D, h = {h}"
        );
    }
    let message = Kernel::<D>::new(1e-6).unwrap_err().to_string();
    assert!(message.contains("h = 0.000001"), "{message}");
}

#[test]
fn kernel_rejects_radii_whose_constants_do_not_fit() {
    rejects_radius_out_of_range::<2>();
    rejects_radius_out_of_range::<3>();
}

#[test]
fn kernel_rejects_other_dimensions() {
    assert_eq!(
        Kernel::<1>::new(1.0),
        Err(KernelError::UnsupportedDimension { dim: 1 })
    );
    assert_eq!(
        Kernel::<4>::new(1.0),
        Err(KernelError::UnsupportedDimension { dim: 4 })
    );
    assert!(
        Kernel::<0>::new(1.0)
            .unwrap_err()
            .to_string()
            .contains("dimension 0")
    );
}

/// Accepted radii have positive normal constants with the documented signs.
fn accepts<const D: usize>(h: f32) -> Result<(), TestCaseError> {
    let kernel = Kernel::<D>::new(h);
    prop_assert!(kernel.is_ok(), "{}D, h = {}: {:?}", D, h, kernel);
    let kernel = kernel.unwrap();
    prop_assert_eq!(kernel.h(), h);
    prop_assert_eq!(kernel.h2(), h * h);
    prop_assert!(kernel.poly6_coefficient().is_normal() && kernel.poly6_coefficient() > 0.0);
    let gradient = kernel.spiky_gradient_coefficient();
    prop_assert!(gradient.is_normal() && gradient < 0.0);
    prop_assert!(kernel.poly6(0.0).is_normal());
    // The default tensile correction exists at every documented radius.
    prop_assert!(TensileCorrection::new(&kernel, 0.1, 4, 0.2).is_ok());
    Ok(())
}

proptest! {
    #[test]
    fn kernel_accepts_the_documented_range(e in -4.0f64..=4.0) {
        let h = 10f64.powf(e) as f32;
        accepts::<2>(h)?;
        accepts::<3>(h)?;
    }
}

#[test]
fn kernel_accepts_the_ends_of_the_documented_range() {
    for h in [1e-4, 1e4] {
        accepts::<2>(h).unwrap();
        accepts::<3>(h).unwrap();
    }
}

/// The variant, field and value of a tensile-correction error.
fn tensile_error(result: Result<TensileCorrection, KernelError>) -> (&'static str, f64) {
    match result {
        Err(KernelError::InvalidTensileParameter {
            field,
            value,
            reason,
        }) => {
            assert!(!reason.is_empty());
            (field, value)
        }
        other => panic!("expected InvalidTensileParameter, got {other:?}"),
    }
}

#[test]
fn tensile_correction_rejects_each_bad_field_by_name() {
    let kernel = Kernel::<3>::new(0.1).unwrap();
    for k in [-0.1, -f32::MIN_POSITIVE, f32::INFINITY, f32::NEG_INFINITY] {
        let (field, value) = tensile_error(TensileCorrection::new(&kernel, k, 4, 0.2));
        assert_eq!((field, value), ("k", f64::from(k)));
    }
    let (field, value) = tensile_error(TensileCorrection::new(&kernel, f32::NAN, 4, 0.2));
    assert!(field == "k" && value.is_nan());

    for n in [0, 17, u32::MAX] {
        let (field, value) = tensile_error(TensileCorrection::new(&kernel, 0.1, n, 0.2));
        assert_eq!((field, value), ("n", f64::from(n)));
    }

    for dq_rel in [0.0, -0.0, -0.2, 1.0, 1.5, f32::INFINITY, f32::NEG_INFINITY] {
        let (field, value) = tensile_error(TensileCorrection::new(&kernel, 0.1, 4, dq_rel));
        assert_eq!((field, value), ("dq_rel", f64::from(dq_rel)));
    }
    let (field, value) = tensile_error(TensileCorrection::new(&kernel, 0.1, 4, f32::NAN));
    assert!(field == "dq_rel" && value.is_nan());

    let message = TensileCorrection::new(&kernel, 0.1, 0, 0.2)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("`n`") && message.contains("1..=16"),
        "{message}"
    );
}

/// The term is largest at `r = 0`, `-k (W(0) / W(|dq|))^n`: where that overflows,
/// the constructor refuses (`dq_rel` for the power, `k` for the product).
#[test]
fn tensile_correction_rejects_parameters_that_overflow_at_r_zero() {
    let kernel = Kernel::<3>::new(1.0).unwrap();
    // (1 - 0.95^2)^-3 = 1.2e3, to the 16th: 1.5e49.
    let (field, value) = tensile_error(TensileCorrection::new(&kernel, 0.1, 16, 0.95));
    assert_eq!((field, value), ("dq_rel", f64::from(0.95f32)));
    // Also with k = 0, where -0 * inf would be NaN.
    let (field, _) = tensile_error(TensileCorrection::new(&kernel, 0.0, 16, 0.95));
    assert_eq!(field, "dq_rel");
    // The same dq_rel with a small n is fine.
    assert!(TensileCorrection::new(&kernel, 0.1, 4, 0.95).is_ok());
    // (1 - 0.2^2)^-12 = 1.6: a k near f32::MAX overflows.
    let (field, value) = tensile_error(TensileCorrection::new(&kernel, f32::MAX, 4, 0.2));
    assert_eq!((field, value), ("k", f64::from(f32::MAX)));
    assert!(TensileCorrection::new(&kernel, 1e30, 4, 0.2).is_ok());
}

#[test]
fn tensile_correction_accepts_the_ranges() {
    let kernel = Kernel::<2>::new(1.0).unwrap();
    for (k, n, dq_rel) in [(0.0, 1, 0.2), (0.1, 4, 0.1), (0.1, 4, 0.3), (5.0, 16, 0.5)] {
        let correction = TensileCorrection::new(&kernel, k, n, dq_rel).unwrap();
        assert_eq!((correction.k(), correction.n()), (k, n));
        let dq = dq_rel * kernel.h();
        assert_eq!(correction.w_dq(), kernel.poly6(dq * dq));
    }
}
