//! A pass's view of the lists: the particles' packed quads, the groups of lanes, and
//! the walk over a group's slots that hands every lane its neighbours in list order.

use super::*;

/// The columns of a group as a pass reads them, from one of its lanes on: slot `s`
/// of that lane and the next ones from entry `s * GROUP`.
#[derive(Debug, Clone, Copy)]
pub enum Columns<'a> {
    /// Indices.
    Wide(&'a [u32]),
    /// Offsets from the base (the second field).
    Narrow(&'a [u16], u32),
}

/// One slot of a group as a pass gets it ([`Neighbourhood::for_each_slot`]): each
/// lane's neighbour, by which the pass gathers per-particle arrays. A narrow group's
/// neighbours gather from the array's part from their base on, by their 16-bit
/// offsets (no index is formed). The entries were checked against the lists'
/// particles once for the group ([`Bounded`]): a gather compares only the array's
/// length.
#[derive(Clone, Copy)]
pub struct Slot<'a, L> {
    /// The slot's entries from the first lane on.
    entries: Entries<'a>,
    lanes: core::marker::PhantomData<L>,
}

/// A slot's entries, every neighbour checked to be a particle of the lists.
#[derive(Clone, Copy)]
pub(super) enum Entries<'a> {
    /// Indices below the lists' particles.
    Wide(Bounded<'a, u32>),
    /// Offsets from the base (the second field), below the particles past the base.
    Narrow(Bounded<'a, u16>, u32),
}

impl<'a, L: Lane> Slot<'a, L> {
    #[inline(always)]
    pub(super) fn new(entries: Entries<'a>) -> Self {
        Self {
            entries,
            lanes: core::marker::PhantomData,
        }
    }

    /// The neighbours' indices, one a lane (0 past the lanes).
    pub fn indices(&self) -> [u32; GROUP] {
        core::array::from_fn(|l| match self.entries {
            _ if l >= L::WIDTH => 0,
            Entries::Wide(c) => c.indices()[l],
            Entries::Narrow(c, base) => base + u32::from(c.indices()[l]),
        })
    }

    /// `quads[j]` for each lane's neighbour `j` ([`Lane::gather4`]), one value of
    /// four floats a particle: another per-particle array than the pass's own quads
    /// (packed with [`pack`] or [`pack_vectors`]).
    ///
    /// # Panics
    /// When `quads` has fewer values than the lists have particles.
    #[inline(always)]
    pub fn gather4(&self, quads: &[[f32; 4]]) -> [L; 4] {
        match self.entries {
            Entries::Wide(c) => L::gather4_in(quads, c),
            Entries::Narrow(c, base) => L::gather4_in(&quads[base as usize..], c),
        }
    }
}

impl Columns<'_> {
    /// The first lane's entry of slot `s`.
    pub(super) fn entry(self, s: usize) -> u32 {
        self.lane(s, 0)
    }

    /// Lane `l` (from the first lane) of slot `s`.
    pub(super) fn lane(self, s: usize, l: usize) -> u32 {
        match self {
            Columns::Wide(c) => c[s * GROUP + l],
            Columns::Narrow(c, base) => base + u32::from(c[s * GROUP + l]),
        }
    }
}

/// The particles of one pass: their lists, and their sorted positions packed four
/// floats a particle with one more per-particle value (see [`pack`]).
pub struct Neighbourhood<'a, const D: usize> {
    /// The lists of the pass's particles.
    pub lists: &'a NeighbourLists,
    /// `[p_x, p_y, (p_z,) extra, ...]` of every particle: what the passes gather, for
    /// the neighbours and for the lanes' own particles alike (the position arrays
    /// would add twelve bytes a particle to a pass's working set).
    pub quads: &'a [[f32; 4]],
}

/// Packs `positions` into the first `D` floats of every quad and `extra` into the
/// next (`quads[i][D]`), the layout [`Neighbourhood::for_each_slot`] gathers: one
/// sixteen-byte load per neighbour, transposed into lanes, instead of `D + 1` gathered
/// loads. Resizes `quads` to the particle count (keeping its capacity).
pub fn pack<const D: usize>(quads: &mut Vec<[f32; 4]>, positions: [&[f32]; D], extra: &[f32]) {
    assert!(
        extra.len() == positions[0].len(),
        "pack: the extra value of every particle"
    );
    pack_with(quads, positions, Some(extra), |e| e);
}

/// As [`pack`], with every particle's volume ([`volume`]) as the extra value: the
/// weight of a neighbour in the XSPH and curl pass, divided once per
/// particle rather than once per pair (the same bits either way).
pub fn pack_volumes<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    positions: [&[f32]; D],
    density: &[f32],
    mass: f32,
) {
    assert!(
        density.len() == positions[0].len(),
        "pack: the density of every particle"
    );
    pack_with(quads, positions, Some(density), |rho| volume(mass, rho));
}

/// A particle's volume `m / rho`, 0 where the density is not positive (a particle no
/// pass has seen yet).
pub fn volume(mass: f32, density: f32) -> f32 {
    if density > 0.0 {
        mass * (1.0 / density)
    } else {
        0.0
    }
}

/// Packs the `D` components of a vector field into the first `D` floats of every quad
/// (the rest 0), for passes that gather a neighbour's vector as one sixteen-byte load
/// ([`Lane::gather4`]) instead of `D` scalar gathers. Resizes `quads` to the particle
/// count (keeping its capacity).
pub fn pack_vectors<const D: usize>(quads: &mut Vec<[f32; 4]>, field: [&[f32]; D]) {
    pack_with(quads, field, None, |e| e);
}

/// `quads[i] = [field[0][i], .., field[D - 1][i], map(extra[i]), 0, ..]`, with 0 for
/// `map(extra[i])` when there is no `extra` (whose length the callers check).
pub(super) fn pack_with<const D: usize>(
    quads: &mut Vec<[f32; 4]>,
    field: [&[f32]; D],
    extra: Option<&[f32]>,
    map: impl Fn(f32) -> f32 + Sync,
) {
    const { assert!(D < 4, "a quad holds D components and one more value") };
    let n = field[0].len();
    assert!(
        field.iter().all(|f| f.len() == n),
        "pack: every component of every particle"
    );
    quads.resize(n, [0.0; 4]);
    for_each_chunk_of([quads.as_mut_slice()], 1024, 64, &|start, [q]| {
        let range = start..start + q.len();
        let from = stretches(field, range.clone());
        let extra = extra.map(|e| &e[range]);
        for (k, q) in q.iter_mut().enumerate() {
            let mut quad = [0.0; 4];
            for a in 0..D {
                quad[a] = from[a][k];
            }
            quad[D] = extra.map_or(0.0, |e| map(e[k]));
            *q = quad;
        }
    });
}

/// Replaces the extra value of every quad (`quads[i][D] = extra[i]`).
pub fn repack_extra<const D: usize>(quads: &mut [[f32; 4]], extra: &[f32]) {
    assert!(
        extra.len() == quads.len(),
        "repack: the extra value of every particle"
    );
    for_each_chunk_of([quads], 1024, 64, &|start, [q]| {
        let extra = &extra[start..start + q.len()];
        for (q, &e) in q.iter_mut().zip(extra) {
            q[D] = e;
        }
    });
}

impl<const D: usize> Neighbourhood<'_, D> {
    /// The values of the group's own particles (lane `l` particle
    /// `members(first)[l]`, padding lanes their group's last), from `values`, one a
    /// particle of the lists.
    ///
    /// # Panics
    /// When `values` has fewer values than the lists have particles.
    #[inline(always)]
    pub fn gather_own<L: Lane>(&self, values: &[f32], first: usize) -> L {
        assert!(
            values.len() >= self.lists.len(),
            "gather_own: a value for every particle of the lists"
        );
        L::gather(values, self.lists.members(first))
    }

    /// The particles: every index [`Self::for_each_slot`] hands out is below it.
    pub fn len(&self) -> usize {
        self.quads.len()
    }

    /// Whether the pass has no particles.
    pub fn is_empty(&self) -> bool {
        self.quads.is_empty()
    }

    /// Calls `f(neighbours, x, r2, extra)` for every slot of the group of `L::WIDTH`
    /// lanes from lane `first` (a multiple of the width), one particle a lane: lane
    /// `l` is particle `members(first)[l]` ([`NeighbourLists::members`]: the lanes
    /// are not the particles' order), and of call `k` the `k`-th entry of its list,
    /// with the offset `x = p_i - p_j` at the current positions (its minimum image on
    /// the lists' periodic axes, [`NeighbourLists::set_periodic`]), its squared length
    /// and the neighbour's extra value of the quads (`quads[j][D]`). Lanes past the
    /// end of their list carry `x = 0` (their own index is the padding) and
    /// `r2 = +inf`, outside every support; lanes past the particles (whose padding is
    /// the block's last particle) carry `r2 = +inf` too, and their sums are dropped.
    /// Every lane walks its list in order, so a sum over the calls adds each
    /// particle's terms in list order, at every width: the sixteen and eight lanes
    /// give the bits of one (`f32`). Gather other per-particle values by the
    /// neighbours as quads ([`Slot::gather4`]), and the lanes' own by the members
    /// ([`Lane::gather`]).
    ///
    /// Each slot's quads are loaded before the call for the slot ahead of it
    /// ([`Self::for_each_slot_ahead`]).
    ///
    /// # Panics
    /// When the quads and the lists are not of the same particles (a bug in the
    /// caller).
    #[inline(always)]
    pub fn for_each_slot<L: Lane>(&self, first: usize, f: impl FnMut(&Slot<'_, L>, [L; D], L, L)) {
        self.for_each_slot_ahead(first, self.own(first), f);
    }

    /// The quads of the group's own particles (lane `l` particle
    /// `members(first)[l]`), as [`Self::for_each_slot_from`] takes them.
    ///
    /// # Panics
    /// When the quads and the lists are not of the same particles (a bug in the
    /// caller).
    #[inline(always)]
    pub fn own<L: Lane>(&self, first: usize) -> [L; 4] {
        assert_eq!(self.quads.len(), self.lists.len(), "quads and lists");
        L::gather4(self.quads, self.lists.members(first))
    }

    /// [`Self::for_each_slot_ahead`] without loading ahead: each slot's quads are
    /// loaded in its own turn. For the XSPH pass, which gathers the neighbours'
    /// velocities as well in every call: loading ahead too would hold more registers
    /// than the pass has, and slow its phase.
    #[inline(always)]
    pub fn for_each_slot_from<L: Lane>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        self.walk_group::<L, false>(first, own, f);
    }

    /// [`Self::for_each_slot`] with the group's own quads already gathered
    /// ([`Self::own`]), for a pass that reads them itself too.
    ///
    /// Each slot's quads (the loads and their transpose into registers) are loaded
    /// before `f` runs for the slot ahead of it, so that they come early in the
    /// instruction stream: the kernels' square root and division of one slot then
    /// wait beside the next slot's loads instead of before them. The operations are
    /// the same (the same bits); only their order in the instruction stream changes.
    /// One slot ahead is enough: two slots ahead gain nothing more measurable.
    #[inline(always)]
    pub fn for_each_slot_ahead<L: Lane>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        self.walk_group::<L, true>(first, own, f);
    }

    /// The group's walk: with `AHEAD`, see [`Self::for_each_slot_ahead`].
    #[inline(always)]
    pub(super) fn walk_group<L: Lane, const AHEAD: bool>(
        &self,
        first: usize,
        own: [L; 4],
        f: impl FnMut(&Slot<'_, L>, [L; D], L, L),
    ) {
        assert_eq!(self.quads.len(), self.lists.len(), "quads and lists");
        let xi: [L; D] = core::array::from_fn(|a| own[a]);
        self.lists.prefetch_next(first, L::WIDTH, self.quads);
        let (columns, slots, counts) = self.lists.group(first, L::WIDTH);
        // Narrower lanes stop at their own longest list.
        let slots = if L::WIDTH == GROUP {
            slots
        } else {
            counts.iter().copied().max().unwrap_or(0) as usize
        };
        let count = L::counts(counts);
        // One loop a kind of group, each with its kind of slot known: the compiler
        // drops the other kind's code from both. The group's entries are checked
        // once (a pass over them, as lanes), not a lane per gather.
        let n = self.lists.len();
        // Lists of periodic axes walk with minimum-image offsets: a loop of its own,
        // so that the others' loop is the one without them.
        let periodic = self.lists.periodic.any();
        match columns {
            Columns::Wide(c) => {
                let c = checked(c, n, slots, L::WIDTH);
                let slot = |k: usize| Slot::new(Entries::Wide(c.suffix(k * GROUP)));
                if periodic {
                    self.walk_slots::<L, AHEAD, true>(xi, slots, count, slot, f);
                } else {
                    self.walk_slots::<L, AHEAD, false>(xi, slots, count, slot, f);
                }
            }
            Columns::Narrow(c, base) => {
                let past_base = n
                    .checked_sub(base as usize)
                    .expect("a base inside the lists");
                let c = checked(c, past_base, slots, L::WIDTH);
                let slot = |k: usize| Slot::new(Entries::Narrow(c.suffix(k * GROUP), base));
                if periodic {
                    self.walk_slots::<L, AHEAD, true>(xi, slots, count, slot, f);
                } else {
                    self.walk_slots::<L, AHEAD, false>(xi, slots, count, slot, f);
                }
            }
        }
    }

    /// The loop of [`Self::for_each_slot`] over `slots` slots; with `PERIODIC`, each
    /// offset is the minimum image on the lists' periodic axes
    /// ([`Periodic::image_lanes`](crate::Periodic::image_lanes)).
    #[inline(always)]
    pub(super) fn walk_slots<'c, L: Lane, const AHEAD: bool, const PERIODIC: bool>(
        &self,
        xi: [L; D],
        slots: usize,
        count: L,
        slot_at: impl Fn(usize) -> Slot<'c, L>,
        mut f: impl FnMut(&Slot<'c, L>, [L; D], L, L),
    ) {
        // The slot's index as lanes (see `Lane::mask_counts`): exact, a list is far
        // shorter than 2^24 entries.
        let mut slot = L::splat(0.0);
        let load = |k: usize| slot_at(k).gather4(self.quads);
        // With `AHEAD`, slot `k`'s quads, loaded before the call for slot `k - 1`.
        let mut ahead = if AHEAD && slots > 0 {
            load(0)
        } else {
            [L::splat(0.0); 4]
        };
        for k in 0..slots {
            let neighbours = slot_at(k);
            let q = if AHEAD { ahead } else { load(k) };
            let mut x: [L; D] = core::array::from_fn(|a| xi[a] - q[a]);
            if PERIODIC {
                let periodic = &self.lists.periodic;
                x = core::array::from_fn(|a| periodic.image_lanes(a, x[a]));
            }
            let r2 = L::mask_counts(L::norm2(x), count, slot);
            slot += L::splat(1.0);
            if AHEAD && k + 1 < slots {
                ahead = load(k + 1);
            }
            f(&neighbours, x, r2, q[D]);
        }
    }
}

/// The entries of a group's `slots` slots of `width` lanes (slot `s` from entry
/// `s * GROUP`), checked to be below `bound`.
///
/// # Panics
/// When an entry is not (the lists' invariant broken: a bug).
#[inline(always)]
fn checked<I: Index>(columns: &[I], bound: usize, slots: usize, width: usize) -> Bounded<'_, I> {
    let used = if slots == 0 {
        0
    } else {
        (slots - 1) * GROUP + width
    };
    Bounded::new(&columns[..used], bound).expect("every neighbour a particle of the lists")
}

/// [`for_each_chunk`](crate::parallel::for_each_chunk) for the neighbour passes:
/// chunks of whole list blocks, so that the particles of a chunk's lanes
/// ([`NeighbourLists::members`]) are the chunk's own.
pub fn for_each_pass_chunk<O: crate::parallel::Outputs, F>(outputs: O, f: &F)
where
    F: Fn(usize, O) + Sync,
{
    crate::parallel::for_each_chunk_of(outputs, crate::parallel::MIN_CHUNK.max(BLOCK), BLOCK, f);
}

/// Runs `f(first, width)` for every group of `L::WIDTH` lanes of the chunk of `len`
/// lanes from `start` (a multiple of the width): `first` the group's first lane (its
/// particles are [`NeighbourLists::members`]), `width` how many of its lanes are
/// particles (`L::WIDTH` but in the last).
///
/// The groups run inside [`Lane::run`], compiled for the instructions of the width:
/// `f`, and the closures it passes on ([`Neighbourhood::for_each_slot`]'s), must be
/// `#[inline(always)]` closures (see [`Lane::run`]).
#[inline(always)]
pub fn for_each_group<L: Lane>(start: usize, len: usize, mut f: impl FnMut(usize, usize)) {
    debug_assert_eq!(start % L::WIDTH, 0, "a chunk starts a group");
    L::run(
        #[inline(always)]
        || {
            let mut k = 0;
            while k < len {
                f(start + k, L::WIDTH.min(len - k));
                k += L::WIDTH;
            }
        },
    )
}
