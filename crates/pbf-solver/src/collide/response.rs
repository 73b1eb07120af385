//! Contact response: the friction and restitution a surface applies to a velocity
//! in contact, how much of it a particle at a given distance gets, and the check of
//! the coefficients.

use super::vector::{dot, norm};
use crate::CoreError;

pub(super) fn check_response(
    index: usize,
    friction: f32,
    restitution: f32,
) -> Result<(), CoreError> {
    if !(friction.is_finite() && friction >= 0.0) {
        return Err(CoreError::InvalidCollider {
            index,
            field: "friction",
            value: friction.into(),
            reason: "must be >= 0 and finite",
        });
    }
    if !(restitution.is_finite() && (0.0..=1.0).contains(&restitution)) {
        return Err(CoreError::InvalidCollider {
            index,
            field: "restitution",
            value: restitution.into(),
            reason: "must be in [0, 1]",
        });
    }
    Ok(())
}

/// How much of the contact response a particle at distance `d` from a surface gets:
/// all of it at `rest` (where the projections leave a particle in contact, one margin
/// off the surface) or closer, none at `reach` or farther, linearly in between. A
/// step at the threshold would make the velocity jump with the last rounding of `d`:
/// two runs a rounding apart (the same scene at another scale) would part by the
/// normal speed times a step at once.
#[inline]
pub(crate) fn contact_weight(d: f32, rest: f32, reach: f32) -> f32 {
    if d <= rest {
        1.0
    } else if d >= reach {
        0.0
    } else {
        (reach - d) / (reach - rest)
    }
}

/// Applies restitution and friction to a velocity in contact with a surface of
/// outward normal `n`, in the share `weight` ([`contact_weight`]): `v + weight
/// (response(v) - v)`.
#[inline]
pub(crate) fn respond<const D: usize>(
    v: &mut [f32; D],
    n: [f32; D],
    friction: f32,
    restitution: f32,
    weight: f32,
) {
    let vn = dot(*v, n);
    if vn >= 0.0 || weight <= 0.0 {
        return;
    }
    let before = *v;
    let mut vt: [f32; D] = core::array::from_fn(|k| v[k] - vn * n[k]);
    let vt_len = norm(vt);
    if vt_len > 0.0 {
        let keep = (1.0 - friction * (1.0 + restitution) * (-vn) / vt_len).max(0.0);
        vt = vt.map(|c| c * keep);
    }
    for k in 0..D {
        let after = vt[k] - restitution * vn * n[k];
        v[k] = if weight >= 1.0 {
            after
        } else {
            before[k] + weight * (after - before[k])
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_applies_restitution_and_friction() {
        let n = [0.0, 1.0];
        let mut v = [1.0, -2.0];
        respond(&mut v, n, 0.0, 0.5, 1.0);
        assert_eq!(v, [1.0, 1.0]);
        let mut v = [1.0, -2.0];
        respond(&mut v, n, 0.1, 0.0, 1.0);
        assert!((v[0] - 0.8).abs() < 1e-6 && v[1] == 0.0);
        let mut v = [1.0, -2.0];
        respond(&mut v, n, 10.0, 0.0, 1.0);
        assert_eq!(v, [0.0, 0.0]);
        let mut v = [1.0, 2.0];
        respond(&mut v, n, 10.0, 1.0, 1.0);
        assert_eq!(v, [1.0, 2.0]); // leaving the surface: untouched
        // A share of the response: halfway between the velocity and the full response.
        let mut v = [1.0, -2.0];
        respond(&mut v, n, 0.0, 0.5, 0.5);
        assert_eq!(v, [1.0, -0.5]);
        let mut v = [1.0, -2.0];
        respond(&mut v, n, 10.0, 0.0, 0.0);
        assert_eq!(v, [1.0, -2.0]);
    }

    #[test]
    fn the_contact_response_fades_out_continuously() {
        let (rest, reach) = (0.025f32, 0.026f32);
        assert_eq!(contact_weight(0.0, rest, reach), 1.0);
        assert_eq!(contact_weight(rest, rest, reach), 1.0);
        assert_eq!(contact_weight(reach, rest, reach), 0.0);
        assert_eq!(contact_weight(1.0, rest, reach), 0.0);
        assert!((contact_weight(0.0255, rest, reach) - 0.5).abs() < 1e-3);
        // No jump anywhere: neighbouring distances get neighbouring weights.
        let mut d = rest - 1e-4;
        let mut last = contact_weight(d, rest, reach);
        while d < reach + 1e-4 {
            d += 1e-6;
            let w = contact_weight(d, rest, reach);
            assert!((w - last).abs() < 2e-3 && w <= last, "d {d}: {last} -> {w}");
            last = w;
        }
    }
}
