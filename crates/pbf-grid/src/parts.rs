//! Disjoint mutable parts of a slice, so that parallel writers need neither `unsafe`
//! nor atomics: each task gets the `&mut` sub-slice it alone writes.

/// Makes `v`'s capacity at least `total` (not `len + total`, as `Vec::reserve` would):
/// buffers are reserved for the most a rebuild with this many points can need, so that
/// rebuilding with as many points never allocates.
pub(crate) fn reserve_total<T>(v: &mut Vec<T>, total: usize) {
    if v.capacity() < total {
        v.reserve(total - v.len());
    }
}

/// At most this many parts (the parts live in a fixed array, so splitting never
/// allocates).
pub(crate) const MAX_PARTS: usize = 64;

/// Splits `data` at the given ascending boundaries: part `p` is
/// `data[bounds[p] - bounds[0] .. bounds[p + 1] - bounds[0]]`. `bounds` has at most
/// `MAX_PARTS + 1` entries and its last minus first entry is `data.len()`.
pub(crate) fn split_at_bounds<'a, T>(
    data: &'a mut [T],
    bounds: &[usize],
) -> [&'a mut [T]; MAX_PARTS] {
    assert!(
        !bounds.is_empty() && bounds.len() <= MAX_PARTS + 1,
        "too many parts"
    );
    let mut parts: [&'a mut [T]; MAX_PARTS] = std::array::from_fn(|_| Default::default());
    let mut rest = data;
    for (p, w) in bounds.windows(2).enumerate() {
        let (part, tail) = rest.split_at_mut(w[1] - w[0]);
        parts[p] = part;
        rest = tail;
    }
    debug_assert!(rest.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_the_bounds() {
        let mut v: Vec<u32> = (0..10).collect();
        let parts = split_at_bounds(&mut v, &[3, 5, 5, 13]);
        assert_eq!(parts[0], &[0, 1]);
        assert!(parts[1].is_empty());
        assert_eq!(parts[2], &[2, 3, 4, 5, 6, 7, 8, 9]);
        assert!(parts[3].is_empty());
    }
}
