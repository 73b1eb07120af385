//! Indices checked once against a bound, so that the loads they index need no check
//! each.

use super::Index;

/// A run of indices (or offsets), every one below [`bound`](Self::bound): checked
/// once, when made, in one pass over the run. A gather through it
/// ([`Lane::gather_in`](super::Lane::gather_in),
/// [`Lane::gather4_in`](super::Lane::gather4_in)) only compares the length of the
/// array it reads with the bound: one comparison a gather, or one a loop where the
/// compiler hoists it, instead of one a lane.
///
/// # Example
/// ```
/// use pbf_kernels::Bounded;
///
/// let list = [3u32, 0, 7];
/// let checked = Bounded::new(&list, 8).expect("every index below 8");
/// assert_eq!(checked.indices(), &list);
/// assert_eq!(checked.suffix(1).indices(), &[0, 7]);
/// assert!(Bounded::new(&list, 7).is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Bounded<'a, I> {
    indices: &'a [I],
    bound: usize,
}

impl<'a, I: Index> Bounded<'a, I> {
    /// The run, when every index is below `bound`; `None` otherwise.
    #[inline(always)]
    pub fn new(indices: &'a [I], bound: usize) -> Option<Self> {
        all_below(indices, bound).then_some(Self { indices, bound })
    }

    /// The indices.
    #[inline(always)]
    pub fn indices(&self) -> &'a [I] {
        self.indices
    }

    /// Every index is below it.
    #[inline(always)]
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// The run from entry `start` on, under the same bound.
    ///
    /// # Panics
    /// When `start` is past the run's end.
    #[inline(always)]
    pub fn suffix(self, start: usize) -> Self {
        Self {
            indices: &self.indices[start..],
            bound: self.bound,
        }
    }
}

/// Whether every index is below `bound`: at once when the type holds no index as
/// large (a `u16` offset into more than 65,536 values), otherwise by the largest
/// index, found in 32 bits with no early exit, so that it compiles to vector maxima
/// over the run (an index is at most 32 bits wide).
#[inline(always)]
fn all_below<I: Index>(indices: &[I], bound: usize) -> bool {
    if I::MAX < bound {
        return true;
    }
    let bound = bound as u32;
    let largest = indices.iter().fold(0u32, |m, &i| m.max(i.at() as u32));
    indices.is_empty() || largest < bound
}
