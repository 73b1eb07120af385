//! A cache hint for passes that stream their data.

/// Asks the CPU to bring the cache line of `value` into its caches (x86-64; nothing
/// elsewhere): a hint, which changes no result.
///
/// ```
/// let data = vec![1.0f32; 1024];
/// pbf_kernels::prefetch(&data[512]);
/// assert_eq!(data[512], 1.0);
/// ```
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of every x86-64 CPU; the address is that of a live
    // reference, and a prefetch reads nothing into the program and never faults.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
