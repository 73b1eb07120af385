//! Small vector arithmetic on `[f32; D]` shared by the collision queries.

#[inline]
pub(super) fn dot<const D: usize>(a: [f32; D], b: [f32; D]) -> f32 {
    (0..D).map(|k| a[k] * b[k]).sum()
}
#[inline]
pub(super) fn norm<const D: usize>(a: [f32; D]) -> f32 {
    dot(a, a).sqrt()
}
#[inline]
pub(super) fn sub<const D: usize>(a: [f32; D], b: [f32; D]) -> [f32; D] {
    core::array::from_fn(|k| a[k] - b[k])
}
/// `d / r`, or +y where the direction is undefined (at the centre).
#[inline]
pub(super) fn unit_or_up<const D: usize>(d: [f32; D], r: f32) -> [f32; D] {
    if r > 0.0 {
        d.map(|c| c / r)
    } else {
        let mut up = [0.0; D];
        up[1 % D] = 1.0;
        up
    }
}
