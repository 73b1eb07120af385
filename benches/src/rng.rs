//! A small deterministic random generator for the benches' point sets and scenes,
//! so that they need no `rand` dependency and every run times the same input.

/// SplitMix64: each call adds a fixed odd constant to the state and mixes it.
///
/// ```
/// let mut a = pbf_benches::rng::SplitMix64(7);
/// let mut b = pbf_benches::rng::SplitMix64(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let x = a.signed();
/// assert!((-1.0..1.0).contains(&x));
/// ```
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`, from the top 24 bits.
    pub fn signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}
