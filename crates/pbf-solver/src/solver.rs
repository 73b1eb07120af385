//! The [`Solver`]: particles, boundaries and the step (Macklin & Müller 2013,
//! Algorithm 1).

use crate::boundary::Boundary;
use crate::collide::{
    Collider, Domain, bounding_box, confine_block, contact_weight, for_each_block, respond,
};
use crate::constraint::{Chebyshev, ChebyshevStep, Constraint, WallGradient, jacobi_relaxation};
use crate::diagnostics::{PhaseTimes, StepDiagnostics};
use crate::emitter::Emitter;
use crate::lists::{
    GROUP, NeighbourLists, Neighbourhood, Overfull, max_candidates, pack, pack_volumes,
    repack_extra, room_per_particle,
};
use crate::parallel::{
    MIN_CHUNK, chunk, deterministic_sum, for_each_chunk, per_chunk, pick_max, stretches,
};
use crate::{
    Acceleration, Backend, CoreError, Iterations, Params, Relaxation, viscosity, vorticity,
};
use core::ops::Range;
use pbf_grid::Grid;
use pbf_kernels::{Kernel, TensileCorrection, WallTables};
use pbf_kernels::{Lane, WithLane};
use std::time::Instant;

/// The most particles a solver holds: indices of the neighbour search are `u32`.
pub const MAX_PARTICLES: usize = (u32::MAX - 1024) as usize;

fn empty<const D: usize, T>() -> [Vec<T>; D] {
    core::array::from_fn(|_| Vec::new())
}

fn refs<const D: usize>(v: &[Vec<f32>; D]) -> [&[f32]; D] {
    core::array::from_fn(|a| v[a].as_slice())
}

fn muts<const D: usize>(v: &mut [Vec<f32>; D]) -> [&mut [f32]; D] {
    let mut it = v.iter_mut();
    core::array::from_fn(|_| it.next().expect("D arrays").as_mut_slice())
}

/// The denominator of lambda, `sum_k |grad_k C_i|^2 + eps`, for a particle inside a
/// lattice at the rest spacing (where `grad_i C_i` vanishes by symmetry).
pub(crate) fn rest_lattice_denominator<const D: usize>(
    params: &Params<D>,
    kernel: &Kernel<D>,
) -> f64 {
    let s = params.spacing();
    let reach = (kernel.h() / s).ceil() as i32;
    let scale = f64::from(params.mass() / params.rest_density());
    let mut sum = 0.0f64;
    let side = (2 * reach + 1) as usize;
    for flat in 0..side.pow(D as u32) {
        let mut rest = flat;
        let x: [f32; D] = core::array::from_fn(|_| {
            let k = (rest % side) as i32 - reach;
            rest /= side;
            k as f32 * s
        });
        let g = kernel.spiky_gradient(x);
        sum += g
            .iter()
            .map(|c| (scale * f64::from(*c)).powi(2))
            .sum::<f64>();
    }
    sum + f64::from(params.cfm_epsilon())
}

/// The skins the neighbour lists may have, relative to h, narrowest first. The lists
/// hold the pairs within `h (1 + skin)` of each other at the positions they were built
/// from. Before every constraint iteration the solver checks Verlet's criterion: while
/// no particle has moved more than half the skin since the lists were built, every
/// pair within h is in them (each of the two moved less than `skin h / 2`). When a few
/// particles have moved further, it checks their pairs directly and adds the missing
/// ones (`Solver::repair_lists`); when many have moved that far, or they bring many
/// pairs within h, it searches again. So no pair within h is ever missed, whatever the
/// time step or the skin.
///
/// A wider skin means more pairs in every pass (a quarter more entries at 0.1 h than at
/// 0.04 h) and fewer searches and mends. Each search takes the narrowest skin of these
/// past whose half at most [`skin_budget`] particles moved by the end of the last step
/// (counted against the lists the last step used, so over several steps when it kept
/// them), and the widest after a step that had to search again inside its iterations or
/// whose lists a 0.1 h skin could have kept (see [`next_skin`] and
/// `Solver::keeps_lists`). Measured on the 97k dam break while the block collapses,
/// 0.04 h cut the list entries from 43.4 to 36.5 a particle and the step by 6-12%, but
/// in the splash more than 1024 particles moved 0.02 h within a step, and the step
/// searched twice.
pub(crate) const SKINS: [f32; 5] = [0.04, 0.05, 0.06, 0.08, 0.1];

/// The widest of [`SKINS`]: the skin of a solver's first search.
pub(crate) const WIDEST_SKIN: f32 = SKINS[SKINS.len() - 1];

/// The most particles, of `n`, that may have moved past half a skin by the end of a
/// step for the next search to take that skin (see [`SKINS`]): a quarter of what
/// `Solver::repair_lists` mends before it searches instead (so the next step may move
/// up to four times as many), and no more than one in 256 (at most 512). Each moved
/// particle costs about 2 µs of a thread at every check that finds it moved, while a
/// skin 0.02 h narrower saves about 5% of the passes; at one particle in 256 the two
/// are about even on the 97k dam break. (With the repair on two threads, budgets of
/// one in 128 and one in 64 took narrower skins more often, 36.6 and 36.1 list entries
/// a particle instead of 37.3, but the steps were no faster within the noise.)
pub(crate) fn skin_budget(n: usize) -> usize {
    (n / 256).min((n / FAST_FRACTION).min(FAST_MOST) / 4)
}

/// The most particles, as a fraction `1 / FAST_FRACTION` of all and at most
/// [`FAST_MOST`], whose pairs `Solver::repair_lists` checks one by one before it
/// searches again instead: a check costs about ten times a particle's share of a
/// search. With the adaptive skin, more than 1024 particles of the 97k dam break's
/// splash may pass half the skin within a step, and mending up to 2048 (a few ms of a
/// thread) costs less than the second search it spares.
const FAST_FRACTION: usize = 32;

/// See [`FAST_FRACTION`]: each moved particle's check queries the grid and the cells
/// of the other moved ones.
const FAST_MOST: usize = 2048;

/// The most pairs `Solver::repair_lists` adds to the lists before it searches again
/// instead: an added pair that needs a new slot in its group moves the rest of its
/// list block (up to about 50 KB in 3D), so 256 pairs (512 entries) may cost as much
/// as a search at 100k particles. The 97k dam break added 0.86 pairs a check on
/// average, at most 38.
const MISSING_MOST: usize = 256;

/// Moved particles a task of [`Solver::repair_lists`] takes.
const REPAIR_CHUNK: usize = 64;

/// The scratch of one chunk of [`Solver::repair_lists`]: the particles around a point,
/// and the missing pairs the chunk's moved particles found.
#[derive(Debug, Clone, Default)]
struct RepairScratch {
    nearby: Vec<u32>,
    pairs: Vec<(u32, u32)>,
    /// Whether a moved particle of the chunk had no place in the grid (not finite).
    failed: bool,
}

/// The width of [`Solver::repair_lists`]' cells of the moved particles, in h: a little
/// more than h, so that two particles the lists' distance test puts within h (in
/// `f32`) lie in neighbouring cells by the cells' `f64` arithmetic.
const MOVER_CELL: f64 = 1.001;

/// The cell of `p` among cells `cell` wide, as a key whose order is the lexicographic
/// order of the cell coordinates (whole cells from the origin, each clamped to
/// `-2^20..=2^20 - 2` and stored in 21 bits, so that the cell above always has a
/// coordinate: far-out points share the outermost cells, which only adds candidates; a
/// NaN coordinate takes cell 0, and its particle makes the repair give up).
fn mover_cell<const D: usize>(p: [f32; D], cell: f64) -> u64 {
    const FAR: f64 = (1u32 << 20) as f64;
    (0..D).fold(0, |key, a| {
        let c = (f64::from(p[a]) / cell).floor().clamp(-FAR, FAR - 2.0) + FAR;
        (key << 21) | c as u64
    })
}

/// The `3^(D-1)` runs of cells around the cell `centre` (a [`mover_cell`] key): for
/// each offset of the first `D - 1` axes, the keys of the cells from the last axis'
/// `-1` to its `+1`, first and last; no run twice, and none of a coordinate below 0
/// (which holds no point). The runs ascend (the first axis' offset changes slowest),
/// so a search for each in a sorted list may start where the last one ended.
fn columns_around<const D: usize>(centre: u64) -> impl Iterator<Item = (u64, u64)> {
    const MASK: u64 = (1 << 21) - 1;
    let coordinate = move |a: usize| (centre >> (21 * (D - 1 - a))) & MASK;
    (0..3usize.pow(D as u32 - 1)).filter_map(move |code| {
        let mut key = 0;
        for a in 0..D - 1 {
            // Axis `a`'s offset is digit `D - 2 - a` of the code in base 3.
            let digit = code / 3usize.pow((D - 2 - a) as u32) % 3;
            // No cell below 0 (the coordinates are at most MASK - 1, so the one above
            // always exists): each run once.
            let c = (coordinate(a) + digit as u64).checked_sub(1)?;
            key = (key << 21) | c;
        }
        let last = coordinate(D - 1);
        let (lo, hi) = (last.saturating_sub(1), last + 1);
        Some(((key << 21) | lo, (key << 21) | hi))
    })
}

/// The skin of the next neighbour search (see [`SKINS`]) for `n` particles of which
/// `past[k]` had moved more than half of `SKINS[k]` by the end of the last step (since
/// the lists it used were built): the narrowest that at most [`skin_budget`] passed.
fn next_skin(past: &[u32; SKINS.len()], n: usize) -> f32 {
    let budget = skin_budget(n);
    SKINS
        .iter()
        .zip(past)
        .find(|&(_, &count)| count as usize <= budget)
        .map_or(WIDEST_SKIN, |(&skin, _)| skin)
}

/// How far the particles of a chunk moved since the lists were built.
#[derive(Debug, Clone, Copy, Default)]
struct Drift {
    /// The bits of the largest squared displacement, which order as the values do (a
    /// NaN's above +inf's).
    most: u32,
    /// How many moved more than half of each of [`SKINS`] (or by a non-finite
    /// distance); zeros unless counted.
    past: [u32; SKINS.len()],
    /// How many moved more than half the lists' skin (or by a non-finite distance):
    /// the particles [`Solver::repair_lists`] mends.
    movers: u32,
}

/// A view of the solver's evolving state (see `Solver::dynamic_state`).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) struct DynamicState<'a, const D: usize> {
    pub positions: [&'a [f32]; D],
    pub velocities: [&'a [f32]; D],
    pub force: [&'a [f32]; D],
    pub density: &'a [f32],
    pub ids: &'a [u64],
    pub next_id: u64,
    pub step: u64,
    pub time: f64,
    pub emitters: &'a [Emitter<D>],
    pub grid_origin: Option<(f32, [f64; D])>,
    /// The positions the lists were built from, when the next step may keep them.
    pub built: Option<[&'a [f32]; D]>,
    /// The skin of the last search and of the next one, relative to h.
    pub skins: (f32, f32),
    /// The steps completed when the search that built the lists ran.
    pub built_step: u64,
}

/// Checked state to put into a solver (see `Solver::restore_dynamic`).
#[cfg_attr(not(feature = "serde"), allow(dead_code))]
pub(crate) struct RestoredState<const D: usize> {
    pub positions: [Vec<f32>; D],
    pub velocities: [Vec<f32>; D],
    pub force: [Vec<f32>; D],
    pub density: Vec<f32>,
    pub ids: Vec<u64>,
    pub next_id: u64,
    pub step: u64,
    pub time: f64,
    pub grid: Grid<D>,
    /// Checked for length and finiteness.
    pub built: Option<[Vec<f32>; D]>,
    /// The skin of the last search and of the next one, relative to h: two of
    /// [`SKINS`] (checked).
    pub skins: (f32, f32),
    /// The steps completed when the search that built the lists ran: at most `step`
    /// (checked).
    pub built_step: u64,
}

/// A Position Based Fluids solver in `D` dimensions (2 or 3).
///
/// Particles are stored as structure of arrays and kept in Morton order of the grid
/// cells: the order (and so the index of a particle) changes with every neighbour
/// search, while its [id](Self::ids) stays. A step searches unless the last step's
/// neighbour lists still hold every pair within h (see
/// [`StepDiagnostics::searches`](crate::StepDiagnostics::searches)), as in a fluid at
/// rest. Each step runs the passes of Macklin & Müller (2013): predict,
/// collide, neighbour search, `iterations` Jacobi passes of the density constraint
/// (lambda with CFM relaxation, position deltas with the tensile term `s_corr`, then
/// collisions), velocity update, vorticity confinement and XSPH viscosity. The same
/// input gives bit-identical output for any number of threads.
///
/// ```
/// use pbf_solver::{Domain, Params, Solver};
/// let params = Params::<3>::builder(0.05).build()?;
/// let domain = Domain::new([0.0; 3], [1.0, 1.0, 1.0])?;
/// let mut solver = Solver::new(params, domain)?;
/// solver.add_block([0.0; 3], [0.3, 0.3, 0.3], [0.0; 3])?;
/// let stats = solver.step()?;
/// assert_eq!(stats.particles, 216);
/// assert!(solver.positions()[1].iter().all(|y| *y >= 0.0));
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Solver<const D: usize> {
    params: Params<D>,
    kernel: Kernel<D>,
    tensile: TensileCorrection,
    /// The Jacobi relaxation of the constraint passes: the parameters' [`Relaxation`],
    /// `Auto` resolved (`constraint::jacobi_relaxation`).
    relaxation: f32,
    walls: WallTables,
    domain: Domain<D>,
    colliders: Vec<Collider<D>>,
    emitters: Vec<Emitter<D>>,
    grid: Grid<D>,
    /// Every particle's neighbours within h, found once per step.
    lists: NeighbourLists,
    /// The predicted positions the lists were built from.
    built: [Vec<f32>; D],
    /// The skin of the grid and the lists, relative to h: that of the last search.
    skin: f32,
    /// The skin the next search takes (see [`SKINS`]).
    next_skin: f32,
    /// The steps completed when the search that built the lists ran (0 for lists of
    /// the first step).
    built_step: u64,
    /// Whether the grid and the lists are those a search builds on `built` for the
    /// particles in their current order, with at most pairs added by
    /// [`Self::repair_lists`] (no particle added or removed since): the next step may
    /// then keep them (see [`Self::keeps_lists`]).
    reusable: bool,
    positions: [Vec<f32>; D],
    velocities: [Vec<f32>; D],
    ids: Vec<u64>,
    next_id: u64,
    /// The vorticity confinement acceleration of the last step, applied in the next.
    force: [Vec<f32>; D],
    density: Vec<f32>,
    // Work arrays, kept between steps so a step allocates nothing.
    predicted: [Vec<f32>; D],
    next: [Vec<f32>; D],
    /// The iterate before `predicted` (Chebyshev acceleration); empty outside the
    /// constraint iterations.
    previous: [Vec<f32>; D],
    lambda: Vec<f32>,
    count: Vec<f32>,
    /// The walls' share of every particle's constraint gradient and the marks of the
    /// groups near walls, from the lambda pass for the delta pass.
    wall_gradient: WallGradient<D>,
    omega: [Vec<f32>; 4],
    scratch: Vec<f32>,
    scratch_ids: Vec<u64>,
    partials: Vec<f64>,
    /// Scratch of the step's statistics, one [`Tally`] per chunk of particles.
    tallies: Vec<Tally>,
    /// Scratch of [`Self::drift`] (the checks at the start of a step and between the
    /// constraint iterations): how far the particles of each chunk moved since the
    /// lists were built.
    drift: Vec<Drift>,
    /// Scratch of [`Self::repair_lists`]: the particles that moved more than half the
    /// skin and the pairs missing from the lists.
    moved: Vec<u32>,
    missing: Vec<(u32, u32)>,
    /// Scratch of [`Self::repair_lists`]: the moved particles by the cells of their
    /// current positions ([`mover_cell`]), each with its place in `moved`.
    mover_cells: Vec<(u64, u32)>,
    /// Scratch of [`Self::repair_lists`]: one for each [`REPAIR_CHUNK`] moved
    /// particles.
    repair_scratch: Vec<RepairScratch>,
    /// The predicted positions and one more value per particle, packed for the passes'
    /// gathers ([`crate::lists::pack`]).
    quads: Vec<[f32; 4]>,
    /// The velocities packed the same way for the XSPH pass.
    velocity_quads: Vec<[f32; 4]>,
    /// The coarse density correction's grid and work arrays.
    coarse: Box<crate::coarse::CoarseGrid<D>>,
    emitted: Vec<([f32; D], [f32; D])>,
    step: u64,
    time: f64,
    last: StepDiagnostics,
}

impl<const D: usize> Solver<D> {
    /// An empty solver in `domain`.
    ///
    /// # Errors
    /// [`CoreError::Kernel`] when the kernel radius is outside the range the kernel
    /// constants support, and [`CoreError::InvalidCollider`] when the domain spans more
    /// cells of size h than the neighbour search can index (2^21 per axis in 3D).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<2>::builder(0.01).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// assert!(s.is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn new(params: Params<D>, domain: Domain<D>) -> Result<Self, CoreError> {
        let kernel = Kernel::<D>::new(params.kernel_radius())?;
        let (k, n, dq) = params.s_corr();
        // s_corr is added to lambda_i + lambda_j, which has units of length^2: express
        // it in lambda's own unit, 1 / (the lambda denominator of a rest-lattice particle).
        let unit = 1.0 / rest_lattice_denominator(&params, &kernel);
        // It vanishes at the rest spacing: only pairs closer than that are pushed apart.
        let tensile = TensileCorrection::new(&kernel, k * unit as f32, n, dq)?
            .vanishing_beyond(&kernel, params.spacing())?;
        let max_cells = if D == 3 {
            f64::from(pbf_grid::morton::MAX_COORD3)
        } else {
            f64::from(u32::MAX)
        };
        for a in 0..D {
            let cells =
                (f64::from(domain.hi()[a]) - f64::from(domain.lo()[a])) / f64::from(kernel.h());
            if cells >= max_cells {
                return Err(CoreError::InvalidCollider {
                    index: usize::MAX,
                    field: "domain.hi",
                    value: domain.hi()[a].into(),
                    reason: "the domain spans more kernel radii than the neighbour search can index",
                });
            }
        }
        let walls = WallTables::new(&kernel);
        let relaxation = match params.relaxation() {
            Relaxation::Auto => jacobi_relaxation(&params, &kernel),
            Relaxation::Fixed(w) => w,
        };
        let mut solver = Self {
            params,
            kernel,
            tensile,
            relaxation,
            walls,
            domain,
            colliders: Vec::new(),
            emitters: Vec::new(),
            grid: Grid::new(),
            lists: NeighbourLists::default(),
            built: empty(),
            skin: WIDEST_SKIN,
            next_skin: WIDEST_SKIN,
            built_step: 0,
            reusable: false,
            positions: empty(),
            velocities: empty(),
            ids: Vec::new(),
            next_id: 0,
            force: empty(),
            density: Vec::new(),
            predicted: empty(),
            next: empty(),
            previous: empty(),
            lambda: Vec::new(),
            count: Vec::new(),
            wall_gradient: WallGradient::new(0),
            omega: empty(),
            scratch: Vec::new(),
            scratch_ids: Vec::new(),
            partials: Vec::new(),
            tallies: Vec::new(),
            drift: Vec::new(),
            moved: Vec::new(),
            missing: Vec::new(),
            mover_cells: Vec::new(),
            repair_scratch: Vec::new(),
            quads: Vec::new(),
            velocity_quads: Vec::new(),
            coarse: Box::default(),
            emitted: Vec::new(),
            step: 0,
            time: 0.0,
            last: StepDiagnostics::default(),
        };
        let limit = solver.candidate_limit();
        solver.lists.set_max_candidates(limit);
        Ok(solver)
    }

    /// The state beyond parameters and boundaries, for checkpoints (`checkpoint/`).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn dynamic_state(&self) -> DynamicState<'_, D> {
        DynamicState {
            positions: refs(&self.positions),
            velocities: refs(&self.velocities),
            force: refs(&self.force),
            density: &self.density,
            ids: &self.ids,
            next_id: self.next_id,
            step: self.step,
            time: self.time,
            emitters: &self.emitters,
            grid_origin: self.grid.cell_origin(),
            built: (self.reusable && self.params.keep_lists()).then(|| refs(&self.built)),
            skins: (self.skin, self.next_skin),
            built_step: self.built_step,
        }
    }

    /// Replaces the particles, counters and grid origin by checked ones from a
    /// checkpoint (`checkpoint/load.rs` validates them first; `grid` is empty). With the
    /// positions the saved solver's lists were built from, it builds those lists again:
    /// the particles are in the grid's order of those positions, so the grid keeps
    /// their order, and the next step keeps or replaces the lists as the saved solver's
    /// would have.
    ///
    /// # Errors
    /// [`CoreError::Checkpoint`] (`lists_built`) when the particles are not in the
    /// grid's order of those positions; the errors of a search otherwise.
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    pub(crate) fn restore_dynamic(&mut self, state: RestoredState<D>) -> Result<(), CoreError> {
        self.positions = state.positions;
        self.velocities = state.velocities;
        self.force = state.force;
        self.density = state.density;
        self.ids = state.ids;
        self.next_id = state.next_id;
        self.step = state.step;
        self.time = state.time;
        self.grid = state.grid;
        (self.skin, self.next_skin) = state.skins;
        self.built_step = state.built_step;
        self.reusable = false;
        let Some(built) = state.built else {
            return Ok(());
        };
        let radius = self.list_radius();
        self.grid.rebuild(refs(&built), radius)?;
        if !self.grid.permutation_is_identity() {
            return Err(crate::checkpoint::CheckpointError::Inconsistent {
                field: "lists_built",
                reason: "the particles are not in the grid's order of these positions".into(),
            }
            .into());
        }
        let room = self.room();
        self.lists
            .build(&self.grid, refs(&built), radius * radius, room)
            .map_err(|e| self.collapsed(e, self.step, self.ids[e.index]))?;
        self.built = built;
        self.reusable = true;
        self.reserve_repair();
        Ok(())
    }

    /// Adds a static collider.
    ///
    /// # Errors
    /// [`CoreError::InvalidCollider`] with the index the collider would have had.
    ///
    /// ```
    /// use pbf_solver::{Collider, ColliderKind, Domain, Params, Shape, Solver};
    /// let mut s = Solver::new(Params::<3>::builder(0.05).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// s.add_collider(Collider::new(Shape::Sphere { center: [0.5; 3], radius: 0.2 }, ColliderKind::Solid)?)?;
    /// assert_eq!(s.colliders().len(), 1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_collider(&mut self, collider: Collider<D>) -> Result<(), CoreError> {
        collider.validate(self.colliders.len())?;
        self.colliders.push(collider);
        Ok(())
    }

    /// Adds an emitter. Its nozzle (every point of the emitted layer) must lie inside
    /// the domain.
    ///
    /// # Errors
    /// [`CoreError::InvalidEmitter`] when (`radius`) its layer would hold more than
    /// [`MAX_LAYER_PARTICLES`](crate::MAX_LAYER_PARTICLES) points (checked from the
    /// radius, before the layer is allocated), when (`origin`) the nozzle leaves the
    /// domain, or (`speed`)
    /// when one step would emit more than
    /// [`MAX_LAYERS_PER_STEP`](crate::MAX_LAYERS_PER_STEP) layers or more
    /// particles than [`MAX_PARTICLES`].
    ///
    /// ```
    /// use pbf_solver::{Domain, Emitter, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_emitter(Emitter::new([0.5, 0.8], [0.0, -1.0], 1.0, 0.1, 0.0, 1.0)?)?;
    /// s.step()?;
    /// assert_eq!(s.len(), 5);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_emitter(&mut self, mut emitter: Emitter<D>) -> Result<(), CoreError> {
        // Bound the layer before building it: a huge nozzle would exhaust memory, even
        // one that fits a wide enough domain (found by the `checkpoint_load` fuzz
        // target; `tests/errors.rs::an_emitter_layer_too_large_for_memory_is_rejected`).
        emitter.check_layer(self.params.spacing())?;
        emitter.prepare(self.params.spacing());
        emitter.check_rate(self.params.time_step(), self.params.spacing())?;
        for offset in &emitter.layer {
            let p: [f32; D] = core::array::from_fn(|k| emitter.origin[k] + offset[k]);
            if !self.domain.contains(p) {
                return Err(CoreError::InvalidEmitter {
                    field: "origin",
                    value: f64::from(p[0]),
                    reason: "the nozzle must lie inside the domain",
                });
            }
        }
        self.emitters.push(emitter);
        Ok(())
    }

    /// Adds particles with the given velocities (`None`: at rest) and returns the
    /// range of ids they received. Nothing is added when an error is returned.
    ///
    /// # Errors
    /// [`CoreError::LengthMismatch`], [`CoreError::NonFiniteParticle`],
    /// [`CoreError::OutsideDomain`] and [`CoreError::TooManyParticles`].
    ///
    /// ```
    /// use pbf_solver::{CoreError, Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// let ids = s.add_particles(&[[0.5, 0.5], [0.55, 0.5]], None)?;
    /// assert_eq!(ids, 0..2);
    /// let err = s.add_particles(&[[f32::NAN, 0.0]], None).unwrap_err();
    /// assert!(matches!(err, CoreError::NonFiniteParticle { index: 0, axis: 0, .. }));
    /// assert_eq!(s.len(), 2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_particles(
        &mut self,
        positions: &[[f32; D]],
        velocities: Option<&[[f32; D]]>,
    ) -> Result<Range<u64>, CoreError> {
        if let Some(v) = velocities
            && v.len() != positions.len()
        {
            return Err(CoreError::LengthMismatch {
                field: "velocities",
                expected: positions.len(),
                found: v.len(),
            });
        }
        let total = self.len() + positions.len();
        if total > MAX_PARTICLES {
            return Err(CoreError::TooManyParticles {
                count: total,
                max: MAX_PARTICLES,
            });
        }
        for (index, p) in positions.iter().enumerate() {
            if let Some(axis) = p.iter().position(|c| !c.is_finite()) {
                return Err(CoreError::NonFiniteParticle {
                    index,
                    field: "position",
                    axis,
                    value: p[axis],
                });
            }
            if !self.domain.contains(*p) {
                return Err(CoreError::OutsideDomain {
                    index,
                    position: p.to_vec(),
                    lo: self.domain.lo().to_vec(),
                    hi: self.domain.hi().to_vec(),
                });
            }
            if let Some(v) = velocities
                && let Some(axis) = v[index].iter().position(|c| !c.is_finite())
            {
                return Err(CoreError::NonFiniteParticle {
                    index,
                    field: "velocity",
                    axis,
                    value: v[index][axis],
                });
            }
        }
        self.append(
            positions
                .iter()
                .enumerate()
                .map(|(i, p)| (*p, velocities.map_or([0.0; D], |v| v[i]))),
        );
        let first = self.next_id - positions.len() as u64;
        Ok(first..self.next_id)
    }

    fn append(&mut self, particles: impl Iterator<Item = ([f32; D], [f32; D])>) {
        for (p, v) in particles {
            self.reusable = false;
            for a in 0..D {
                self.positions[a].push(p[a]);
                self.velocities[a].push(v[a]);
                self.force[a].push(0.0);
            }
            self.density.push(self.params.rest_density());
            self.ids.push(self.next_id);
            self.next_id += 1;
        }
    }

    /// Fills the box `lo..hi` with particles on a lattice at the rest spacing (the
    /// first layer half a spacing inside `lo`), all with `velocity`.
    ///
    /// # Errors
    /// As [`add_particles`](Self::add_particles); also [`CoreError::InvalidParameter`]
    /// (`block`) when the box is not finite or holds no lattice point.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// assert_eq!(s.len(), 15);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn add_block(
        &mut self,
        lo: [f32; D],
        hi: [f32; D],
        velocity: [f32; D],
    ) -> Result<Range<u64>, CoreError> {
        let s = self.params.spacing();
        let mut counts = [0usize; D];
        for a in 0..D {
            let extent = f64::from(hi[a]) - f64::from(lo[a]);
            if !(extent.is_finite() && extent >= f64::from(s)) {
                return Err(CoreError::InvalidParameter {
                    field: "block",
                    value: extent,
                    reason: "every side must be finite and at least one spacing long",
                });
            }
            counts[a] = (extent / f64::from(s) + 1e-4).floor() as usize;
        }
        // A huge block overflows the product: saturate, it is rejected either way.
        let total = counts
            .iter()
            .try_fold(1usize, |acc, &c| acc.checked_mul(c))
            .unwrap_or(usize::MAX);
        if self.len().saturating_add(total) > MAX_PARTICLES {
            return Err(CoreError::TooManyParticles {
                count: self.len().saturating_add(total),
                max: MAX_PARTICLES,
            });
        }
        let mut points = Vec::with_capacity(total);
        for flat in 0..total {
            let mut rest = flat;
            let p = core::array::from_fn(|a| {
                let k = rest % counts[a];
                rest /= counts[a];
                lo[a] + (k as f32 + 0.5) * s
            });
            points.push(p);
        }
        let velocities = vec![velocity; total];
        self.add_particles(&points, Some(&velocities))
    }

    /// Removes the particles whose id is in `ids` and returns how many were removed
    /// (ids not present are not counted).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// assert_eq!(s.remove_particles(&[0, 3, 99]), 2);
    /// assert_eq!(s.len(), 13);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn remove_particles(&mut self, ids: &[u64]) -> usize {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        self.retain_particles(|id, _, _| sorted.binary_search(&id).is_err())
    }

    /// Keeps the particles for which `keep(id, position, velocity)` is true and
    /// returns how many were removed. The survivors keep their order.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.5, 0.3], [0.0; 2])?;
    /// let removed = s.retain_particles(|_, p, _| p[0] < 0.2);
    /// assert_eq!((removed, s.len()), (9, 6));
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn retain_particles(
        &mut self,
        mut keep: impl FnMut(u64, [f32; D], [f32; D]) -> bool,
    ) -> usize {
        let n = self.len();
        let mut w = 0;
        for r in 0..n {
            let p = core::array::from_fn(|a| self.positions[a][r]);
            let v = core::array::from_fn(|a| self.velocities[a][r]);
            if keep(self.ids[r], p, v) {
                for a in 0..D {
                    self.positions[a][w] = self.positions[a][r];
                    self.velocities[a][w] = self.velocities[a][r];
                    self.force[a][w] = self.force[a][r];
                }
                self.density[w] = self.density[r];
                self.ids[w] = self.ids[r];
                w += 1;
            }
        }
        for a in 0..D {
            self.positions[a].truncate(w);
            self.velocities[a].truncate(w);
            self.force[a].truncate(w);
        }
        self.density.truncate(w);
        self.ids.truncate(w);
        if w < n {
            self.reusable = false;
        }
        n - w
    }

    /// Advances the simulation by one time step and returns its statistics.
    ///
    /// # Errors
    /// [`CoreError::Diverged`] when a velocity became NaN or infinite (the state is
    /// the one the step produced); [`CoreError::Collapsed`] when the particles around
    /// one reached sixteen times the rest density (a diverging run; the step stops
    /// before its neighbour lists take the memory); [`CoreError::Grid`] when the
    /// particles span more cells than the neighbour search can index.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0, 0.0], [0.4, 0.4], [0.0; 2])?;
    /// for _ in 0..10 {
    ///     s.step()?;
    /// }
    /// assert_eq!(s.steps(), 10);
    /// assert!(s.last_diagnostics().max_density_error < 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn step(&mut self) -> Result<StepDiagnostics, CoreError> {
        /// The step on the lanes the dispatcher picks.
        struct Step<'a, const D: usize>(&'a mut Solver<D>);
        impl<const D: usize> WithLane for Step<'_, D> {
            type Output = Result<StepDiagnostics, CoreError>;
            fn run<L: Lane>(self) -> Self::Output {
                self.0.step_with::<L>()
            }
        }
        let kind = self.params.backend().lane_kind();
        kind.dispatch(Step(self))
            .unwrap_or_else(|e| unreachable!("{e}: a backend runs only available lanes"))
    }

    fn step_with<L: Lane>(&mut self) -> Result<StepDiagnostics, CoreError> {
        let start = Instant::now();
        let dt = self.params.time_step();
        let margin = 0.5 * self.params.spacing();
        self.emit();
        let n = self.len();
        for buffer in [&mut self.predicted, &mut self.next] {
            for a in buffer.iter_mut() {
                a.resize(n, 0.0);
            }
        }
        for b in [&mut self.lambda, &mut self.count] {
            b.resize(n, 0.0);
        }
        self.wall_gradient.resize(n);
        for b in self.omega.iter_mut() {
            b.resize(n, 0.0);
        }
        // Room for the per-chunk sums of the adaptive iterations and the lists' check,
        // which may first run many steps later.
        let chunks = n.div_ceil(MIN_CHUNK);
        self.partials
            .reserve(chunks.saturating_sub(self.partials.len()));
        self.drift.reserve(chunks.saturating_sub(self.drift.len()));

        // 1-2. Forces, prediction, collisions.
        {
            let gravity = self.params.gravity();
            let (positions, force) = (refs(&self.positions), refs(&self.force));
            let (colliders, domain) = (&self.colliders, &self.domain);
            for_each_chunk(
                (muts(&mut self.velocities), muts(&mut self.predicted)),
                &|start, (v, p)| {
                    let range = start..start + v[0].len();
                    let positions = stretches(positions, range.clone());
                    let force = stretches(force, range);
                    for_each_block(v[0].len(), |block, width| {
                        let mut from = [[0.0f32; D]; GROUP];
                        let mut to = [[0.0f32; D]; GROUP];
                        for l in 0..width {
                            let k = block + l;
                            for a in 0..D {
                                v[a][k] += dt * (gravity[a] + force[a][k]);
                                from[l][a] = positions[a][k];
                                to[l][a] = positions[a][k] + dt * v[a][k];
                            }
                        }
                        confine_block(colliders, domain, &from[..width], &mut to[..width], margin);
                        for (l, q) in to[..width].iter().enumerate() {
                            for a in 0..D {
                                p[a][block + l] = q[a];
                            }
                        }
                    });
                },
            );
        }
        let predicted_at = Instant::now();

        // 3. Neighbour search on the predicted positions; reorder every array.
        let (mut searches, mut searches_inside) = (0, 0);
        let (kept, outrun) = self.keeps_lists();
        if !kept {
            self.search(self.next_skin).map_err(|e| match e {
                // Finite but huge velocities can overflow the prediction: that is
                // divergence, not bad input (found by the `checkpoint_load` fuzz
                // target).
                CoreError::Grid(pbf_grid::GridError::NonFinitePosition { index, .. }) => {
                    CoreError::Diverged {
                        step: self.step + 1,
                        id: self.ids[index],
                    }
                }
                e => e,
            })?;
            searches = 1;
        }
        let searched_at = Instant::now();

        // 5. Constraint iterations.
        let (min_iterations, max_iterations, target) = match self.params.iterations() {
            Iterations::Fixed(k) => (k, k, None),
            Iterations::Adaptive {
                max_density_error_percent,
                min,
                max,
            } => (min, max, Some(f64::from(max_density_error_percent) / 100.0)),
        };
        let mut iterations = 0;
        let rest_density = self.params.rest_density();
        // How far the particles had moved since the lists were built, at the last check.
        let mut past = None;
        // The builder allows Chebyshev only with a fixed count.
        let chebyshev = (self.params.acceleration() == Acceleration::Chebyshev)
            .then(|| Chebyshev::new(max_iterations));
        let mut weight = 1.0f64;
        // The coarse correction: one grid solve that moves every predicted position
        // (see `crate::coarse`); Verlet's criterion is checked before the first pass.
        let mut corrected = false;
        if self.params.coarse_correction() && n > 0 {
            let scene = crate::coarse::Scene {
                h: self.kernel.h(),
                spacing: self.params.spacing(),
                margin,
                domain: &self.domain,
                colliders: &self.colliders,
            };
            self.coarse.correct(&scene, muts(&mut self.predicted));
            corrected = true;
        }
        let coarse_at = Instant::now();
        loop {
            if iterations > 0 || corrected {
                // The last check of the step also counts the particles past half of
                // each skin, for the next search.
                let last = iterations >= max_iterations;
                let drift = self.drift(last);
                if last {
                    past = Some(drift.past);
                }
                let moved = f32::from_bits(drift.most);
                // A non-finite displacement means the iterations diverged: no search
                // (the grid would reject the positions); the step reports it below.
                if moved.is_finite() && drift.movers > 0 && !self.repair_lists(true) {
                    // The skin taken at the start of the step was too narrow for it.
                    self.search(WIDEST_SKIN)?;
                    searches_inside += 1;
                }
            }
            if iterations >= max_iterations {
                // The lists hold the final positions: the XSPH pass below computes
                // their densities.
                break;
            }
            let constraint = Constraint::new(
                &self.params,
                &self.kernel,
                &self.tensile,
                self.relaxation,
                Boundary {
                    domain: &self.domain,
                    colliders: &self.colliders,
                    tables: &self.walls,
                },
            );
            // The lambda pass reads the positions of the quads; the delta pass also the
            // neighbours' lambda.
            pack(&mut self.quads, refs(&self.predicted), &self.lambda);
            let nb = Neighbourhood {
                lists: &self.lists,
                quads: &self.quads,
            };
            constraint.lambda_pass::<L>(
                &nb,
                &mut self.density,
                &mut self.lambda,
                &mut self.wall_gradient,
            );
            if let Some(target) = target
                && iterations >= min_iterations
            {
                let density = &self.density;
                let error = deterministic_sum(n, &mut self.partials, &|i| {
                    f64::from((density[i] / rest_density - 1.0).max(0.0))
                }) / n as f64;
                if error <= target {
                    break;
                }
            }
            repack_extra::<D>(&mut self.quads, &self.lambda);
            let nb = Neighbourhood {
                lists: &self.lists,
                quads: &self.quads,
            };
            // y_{k+1} = w (g J(y_k) + (1 - g) y_k - y_{k-1}) + y_{k-1}, kept out of the
            // solids from y_k's side and inside the domain, like a pass: in the delta
            // pass's epilogue.
            let step = chebyshev.map(|chebyshev| {
                weight = chebyshev.weight(iterations, weight);
                ChebyshevStep {
                    weight: weight as f32,
                    gamma: chebyshev.gamma() as f32,
                    // y_{-1} is y_0 itself.
                    before: if iterations == 0 {
                        refs(&self.predicted)
                    } else {
                        refs(&self.previous)
                    },
                }
            });
            constraint.delta_pass::<L>(
                &nb,
                &self.lambda,
                &self.wall_gradient,
                muts(&mut self.next),
                &self.colliders,
                &self.domain,
                margin,
                step,
            );
            if chebyshev.is_some() {
                if iterations == 0 {
                    // Room for y_0 after the swaps below.
                    for a in self.previous.iter_mut() {
                        a.resize(n, 0.0);
                    }
                }
                // previous <- predicted <- next.
                core::mem::swap(&mut self.previous, &mut self.predicted);
            }
            core::mem::swap(&mut self.predicted, &mut self.next);
            iterations += 1;
        }
        for a in self.previous.iter_mut() {
            a.clear();
        }
        searches += searches_inside;
        self.next_skin = if searches_inside > 0 || !outrun {
            // The lists built inside the iterations saw only part of the step's
            // motion; or lists of the widest skin may outlive the step.
            WIDEST_SKIN
        } else {
            // Adaptive iterations that stopped on their target did not check again:
            // the positions are those of their last check (or of the search).
            let past = past.unwrap_or_else(|| self.drift(true).past);
            next_skin(&past, n)
        };
        let constrained_at = Instant::now();

        // 6. Velocities, contact response, vorticity, XSPH.
        {
            let inv_dt = 1.0 / dt;
            let (positions, predicted) = (refs(&self.positions), refs(&self.predicted));
            let (colliders, domain) = (&self.colliders, &self.domain);
            let contact = margin + 0.01 * self.kernel.h();
            let (wall_friction, wall_restitution) = domain.response();
            for_each_chunk(muts(&mut self.velocities), &|start, v| {
                let range = start..start + v[0].len();
                let positions = stretches(positions, range.clone());
                let predicted = stretches(predicted, range);
                for_each_block(v[0].len(), |block, width| {
                    let mut p = [[0.0f32; D]; GROUP];
                    let mut vel = [[0.0f32; D]; GROUP];
                    for l in 0..width {
                        let k = block + l;
                        p[l] = core::array::from_fn(|a| predicted[a][k]);
                        vel[l] = core::array::from_fn(|a| (p[l][a] - positions[a][k]) * inv_dt);
                    }
                    let (p, vel) = (&p[..width], &mut vel[..width]);
                    // Collider by collider, each particle meeting them in order; a block
                    // clear of one by its bounding box skips it (a domain without
                    // colliders takes no box).
                    let bounds = if colliders.is_empty() {
                        None
                    } else {
                        bounding_box(&[p])
                    };
                    for c in colliders {
                        if bounds.is_some_and(|(lo, hi)| c.clear_of_box(lo, hi, contact)) {
                            continue;
                        }
                        for (p, vel) in p.iter().zip(vel.iter_mut()) {
                            if c.clear_of(*p, contact) {
                                continue;
                            }
                            let (d, normal) = c.distance_and_normal(*p);
                            if d < contact {
                                let (friction, restitution) = c.response();
                                let w = contact_weight(d, margin, contact);
                                respond(vel, normal, friction, restitution, w);
                            }
                        }
                    }
                    for (l, (p, vel)) in p.iter().zip(vel.iter_mut()).enumerate() {
                        domain.contacts(*p, contact, |normal, d| {
                            let w = contact_weight(d, margin, contact);
                            respond(vel, normal, wall_friction, wall_restitution, w)
                        });
                        for a in 0..D {
                            v[a][block + l] = vel[a];
                        }
                    }
                });
            });
        }
        let vorticity_on = self.params.vorticity_rel() > 0.0;
        {
            // XSPH and the curl weigh the neighbours by the volumes of the last lambda
            // pass (one position delta earlier, or at these positions when the adaptive
            // iterations stopped on their target; `search` keeps them with their
            // particles); the pass computes the densities at the final positions, which
            // the step's diagnostics report.
            pack_volumes(
                &mut self.quads,
                refs(&self.predicted),
                &self.density,
                self.params.mass(),
            );
            let nb = Neighbourhood {
                lists: &self.lists,
                quads: &self.quads,
            };
            let constraint = Constraint::new(
                &self.params,
                &self.kernel,
                &self.tensile,
                self.relaxation,
                Boundary {
                    domain: &self.domain,
                    colliders: &self.colliders,
                    tables: &self.walls,
                },
            );
            let mut omega = self.omega.iter_mut();
            let omega: [&mut [f32]; 4] =
                core::array::from_fn(|_| omega.next().expect("4").as_mut_slice());
            viscosity::xsph_and_curl::<L, D>(
                &nb,
                &constraint,
                self.params.xsph_per_step(),
                refs(&self.velocities),
                &mut self.velocity_quads,
                muts(&mut self.next),
                [&mut self.density, &mut self.count],
                vorticity_on.then_some(omega),
            );
            core::mem::swap(&mut self.velocities, &mut self.next);
            if vorticity_on {
                repack_extra::<D>(&mut self.quads, &self.omega[3]);
                let nb = Neighbourhood {
                    lists: &self.lists,
                    quads: &self.quads,
                };
                vorticity::confinement::<L, D>(
                    &nb,
                    &self.kernel,
                    self.params.vorticity_epsilon(),
                    refs(&self.omega),
                    muts(&mut self.force),
                );
            }
        }
        // 7. x = p*.
        core::mem::swap(&mut self.positions, &mut self.predicted);

        // Statistics: one sweep of the particles, by the chunks of `deterministic_sum`.
        let (velocities, density, count) = (refs(&self.velocities), &self.density, &self.count);
        let speed2 = |i: usize| {
            let v: [f32; D] = core::array::from_fn(|a| velocities[a][i]);
            f64::from(pbf_kernels::norm2(v))
        };
        let error = |i: usize| f64::from((density[i] / rest_density - 1.0).max(0.0));
        let neighbours = |i: usize| f64::from(count[i] - 1.0);
        per_chunk(n, &mut self.tallies, &|chunk| {
            let mut t = Tally::default();
            for i in chunk {
                t.add(speed2(i), error(i), neighbours(i));
            }
            t
        });
        let total = |part: fn(&Tally) -> f64| self.tallies.iter().map(part).sum::<f64>();
        let most = |part: fn(&Tally) -> f64| {
            self.tallies
                .iter()
                .map(part)
                .fold(f64::NEG_INFINITY, pick_max)
        };
        let max_speed2 = most(|t| t.speed2.1);
        self.step += 1;
        self.time += f64::from(dt);
        if !max_speed2.is_finite() && n > 0 {
            let index = (0..n).find(|&i| !speed2(i).is_finite()).unwrap_or(0);
            return Err(CoreError::Diverged {
                step: self.step,
                id: self.ids[index],
            });
        }
        let mass = f64::from(self.params.mass());
        let kinetic_energy = 0.5 * mass * total(|t| t.speed2.0);
        let average_error = total(|t| t.error.0) / n.max(1) as f64;
        let max_error = most(|t| t.error.1).max(0.0);
        let neighbours_sum = total(|t| t.neighbours.0);
        let max_neighbours = most(|t| t.neighbours.1).max(0.0);
        let min_neighbours = -most(|t| -t.fewest_neighbours).min(0.0);
        let velocity_at = Instant::now();
        self.last = StepDiagnostics {
            step: self.step,
            particles: n,
            iterations,
            average_density_error: average_error as f32,
            max_density_error: max_error as f32,
            max_speed: max_speed2.max(0.0).sqrt() as f32,
            kinetic_energy,
            min_neighbours: if n == 0 { 0 } else { min_neighbours as u32 },
            average_neighbours: (neighbours_sum / n.max(1) as f64) as f32,
            max_neighbours: max_neighbours as u32,
            list_pairs: self.lists.pairs(),
            list_skin: self.skin,
            searches,
            times: PhaseTimes {
                predict: predicted_at - start,
                neighbour_search: searched_at - predicted_at,
                coarse: coarse_at - searched_at,
                constraints: constrained_at - coarse_at,
                velocity: velocity_at - constrained_at,
            },
        };
        Ok(self.last)
    }

    fn emit(&mut self) {
        if self.emitters.is_empty() {
            return;
        }
        let (time, dt, spacing) = (
            self.time as f32,
            self.params.time_step(),
            self.params.spacing(),
        );
        let mut emitted = core::mem::take(&mut self.emitted);
        emitted.clear();
        for e in &mut self.emitters {
            e.emit(time, dt, spacing, &mut emitted);
        }
        let room = MAX_PARTICLES.saturating_sub(self.len());
        emitted.truncate(room);
        let domain = self.domain;
        self.append(emitted.iter().filter(|(p, _)| domain.contains(*p)).copied());
        self.emitted = emitted;
    }

    /// Number of particles.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.len(), 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether there are no particles.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!(s.is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Positions, one slice per axis (structure of arrays), in the solver's current
    /// order. For a GPU upload, `bytemuck::cast_slice::<f32, u8>(solver.positions()[0])`
    /// gives the bytes without a copy; [`positions_interleaved`](Self::positions_interleaved)
    /// gives `[x, y, z]` records.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// assert_eq!(s.positions()[1], &[0.5]);
    /// let bytes: &[u8] = bytemuck::cast_slice(s.positions()[0]);
    /// assert_eq!(bytes.len(), 4);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn positions(&self) -> [&[f32]; D] {
        refs(&self.positions)
    }

    /// Velocities, one slice per axis, in the order of [`positions`](Self::positions).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], Some(&[[1.0, 2.0]]))?;
    /// assert_eq!(s.velocities()[0], &[1.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn velocities(&self) -> [&[f32]; D] {
        refs(&self.velocities)
    }

    /// Densities at the end of the last step, at its final positions (computed by its
    /// XSPH pass; the rest density for particles that have not been stepped yet).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// assert_eq!(s.densities(), &[1000.0]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn densities(&self) -> &[f32] {
        &self.density
    }

    /// Stable ids, in the order of [`positions`](Self::positions): a particle keeps its
    /// id through every reordering.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.9, 0.9], [0.1, 0.1]], None)?;
    /// s.step()?;
    /// let mut ids = s.ids().to_vec();
    /// ids.sort();
    /// assert_eq!(ids, [0, 1]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    /// Copies the positions as `[f32; D]` records into `out` (cleared first).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.25, 0.5]], None)?;
    /// let mut out = Vec::new();
    /// s.positions_interleaved(&mut out);
    /// assert_eq!(out, [[0.25, 0.5]]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn positions_interleaved(&self, out: &mut Vec<[f32; D]>) {
        out.clear();
        out.extend((0..self.len()).map(|i| core::array::from_fn(|a| self.positions[a][i])));
    }

    /// The parameters.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.params().spacing(), 0.1);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn params(&self) -> &Params<D> {
        &self.params
    }

    /// The domain.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.domain().hi(), [1.0; 3]);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn domain(&self) -> &Domain<D> {
        &self.domain
    }

    /// The colliders.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!(s.colliders().is_empty());
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn colliders(&self) -> &[Collider<D>] {
        &self.colliders
    }

    /// The emitters.
    ///
    /// ```
    /// use pbf_solver::{Domain, Emitter, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_emitter(Emitter::new([0.5, 0.8], [0.0, -1.0], 1.0, 0.1, 0.0, 1.0)?)?;
    /// assert_eq!(s.emitters()[0].speed(), 1.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn emitters(&self) -> &[Emitter<D>] {
        &self.emitters
    }

    /// Simulated time in seconds.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<3>::builder(0.1).time_step(0.5).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// s.step()?;
    /// assert_eq!(s.time(), 0.5);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Steps taken.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.steps(), 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// The statistics of the last step.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.last_diagnostics().step, 0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn last_diagnostics(&self) -> &StepDiagnostics {
        &self.last
    }

    /// The neighbour search: bins the predicted positions in the grid with cells of
    /// `h (1 + skin)`, reorders every per-particle array that carries over into the
    /// grid's Morton order, builds the lists of the pairs within that radius and keeps
    /// the positions they were built from.
    fn search(&mut self, skin: f32) -> Result<(), CoreError> {
        self.reusable = false;
        self.skin = skin;
        self.built_step = self.step;
        let radius = self.list_radius();
        let room = self.room();
        self.grid.rebuild(refs(&self.predicted), radius)?;
        if !self.grid.permutation_is_identity() {
            for set in [
                &mut self.positions,
                &mut self.velocities,
                &mut self.predicted,
            ] {
                for a in set.iter_mut() {
                    self.grid.reorder(a, &mut self.scratch)?;
                }
            }
            if self.previous[0].len() == self.ids.len() {
                for a in self.previous.iter_mut() {
                    self.grid.reorder(a, &mut self.scratch)?;
                }
            }
            // The last lambda pass's densities: the XSPH pass weighs by them when the
            // check before it searched again.
            self.grid.reorder(&mut self.density, &mut self.scratch)?;
            self.grid.reorder(&mut self.ids, &mut self.scratch_ids)?;
        }
        self.lists
            .build(&self.grid, refs(&self.predicted), radius * radius, room)
            .map_err(|e| self.collapsed(e, self.steps() + 1, self.ids[e.index]))?;
        // On the threads: one thread's copy was 0.8% of the 97k dam break's step.
        for a in self.built.iter_mut() {
            a.resize(self.predicted[0].len(), 0.0);
        }
        let predicted = refs(&self.predicted);
        for_each_chunk(muts(&mut self.built), &|start, built| {
            for (a, b) in built.into_iter().enumerate() {
                b.copy_from_slice(&predicted[a][start..start + b.len()]);
            }
        });
        self.reusable = true;
        self.reserve_repair();
        Ok(())
    }

    /// Room for the scratch of [`Self::repair_lists`] (a query finds at most about as
    /// many as a particle may have candidates), taken with the lists (a search, or a
    /// checkpoint's lists) rather than in some later step.
    fn reserve_repair(&mut self) {
        let limit = self.candidate_limit();
        if self.moved.capacity() < FAST_MOST {
            self.moved.reserve(FAST_MOST);
        }
        if self.mover_cells.capacity() < FAST_MOST {
            self.mover_cells.reserve(FAST_MOST);
        }
        // A chunk's pairs stop one past MISSING_MOST.
        let chunks = FAST_MOST.div_ceil(REPAIR_CHUNK);
        if self.repair_scratch.len() < chunks {
            self.repair_scratch.resize_with(chunks, || RepairScratch {
                nearby: Vec::with_capacity(limit),
                pairs: Vec::with_capacity(MISSING_MOST + 1),
                failed: false,
            });
        }
        for part in &mut self.repair_scratch {
            if part.nearby.capacity() < limit {
                part.nearby.reserve(limit);
            }
        }
        if self.missing.capacity() < MISSING_MOST {
            self.missing.reserve(MISSING_MOST);
        }
    }

    /// Whether the step may keep the last step's lists for its predicted positions
    /// instead of searching: they are [`reusable`](Self::reusable) and either no
    /// particle has moved more than half the skin since they were built (Verlet's
    /// criterion, as before every constraint iteration) or few enough have for
    /// [`Self::repair_lists`] to mend them. They then hold every pair within h, and
    /// the particles keep their order. A fluid at rest searches only when its drift
    /// adds up, or when more than a few particles move fast.
    ///
    /// Also returns whether the flow outruns every skin: the lists were built in the
    /// last step and more particles have moved past half the widest skin since than
    /// the repair mends, so lists of any skin would have been replaced. Only then may
    /// the next search take a narrower skin than the widest (see [`next_skin`]):
    /// otherwise the widest lets the lists outlive the step, as in a fluid at rest.
    fn keeps_lists(&mut self) -> (bool, bool) {
        if !self.params.keep_lists() || !self.reusable {
            return (false, true);
        }
        debug_assert_eq!(
            self.built[0].len(),
            self.len(),
            "reusable lists are of these particles"
        );
        let drift = self.drift(true);
        let limit = Self::fast_limit(self.len());
        let outrun =
            self.built_step + 1 == self.step && drift.past[SKINS.len() - 1] as usize > limit;
        // The repair takes its movers per chunk from this count.
        let kept = drift.movers as usize <= limit && self.repair_lists(true);
        (kept, outrun)
    }

    /// The most particles that may have moved past half the skin for
    /// [`Self::repair_lists`] to mend the lists rather than give up.
    fn fast_limit(n: usize) -> usize {
        (n / FAST_FRACTION).min(FAST_MOST)
    }

    /// The squared displacement Verlet's criterion allows: the lists hold every pair
    /// within h as long as no particle has moved more than half the skin since they
    /// were built.
    fn half_skin2(&self) -> f32 {
        self.half_skin2_of(self.skin)
    }

    /// [`Self::half_skin2`] for lists of `skin`: half the difference between their
    /// radius and h, squared (so that `h + 2 half` does not exceed the radius).
    fn half_skin2_of(&self, skin: f32) -> f32 {
        (0.5 * (self.radius_of(skin) - self.kernel.h())).powi(2)
    }

    /// Makes the lists hold every pair within h when some particles have moved more
    /// than half the skin since the build (a squared displacement above `allowed`, or
    /// not finite): the moved ones. Returns `false`, and changes nothing, when there
    /// are too many of them (or of the pairs they bring within h) to mend the lists
    /// this way; the caller then searches. With no moved particle it returns `true` at
    /// once.
    ///
    /// A pair of two particles that did not move that far is in the lists (Verlet's
    /// criterion). A particle `j` within h of a moved one `f` now is in `f`'s list if
    /// the pair was found; such a `j` that did not move far was within `h + skin / 2`
    /// (less than the lists' radius) of `f`'s current position when the grid was
    /// built, so a query of the grid around that position finds it; the moved ones
    /// find each other in cells of their current positions ([`mover_cell`]). The
    /// moved particles are taken in chunks on the threads, each chunk collecting its
    /// pairs; every pair within h missing from the lists is then added to both
    /// particles' lists ([`NeighbourLists::insert`]), in ascending order of the pairs,
    /// so the result depends on the positions alone.
    ///
    /// Whether it gives up depends on `built` and the predicted positions alone, not
    /// on what earlier repairs added: it counts the pairs within h that are not within
    /// the lists' radius at `built` (those a build on `built` lacks, by its own
    /// distance test), whether or not an earlier repair added them. So the lists a
    /// checkpoint rebuilds from `built` decide as the saved ones would, and end up
    /// with the same pairs within h in the same ascending order: the same sums.
    ///
    /// In the 97k dam break the criterion failed in 80% of the iterations for one or
    /// two particles out of 97k, and later in the splash for particles that move
    /// 0.1-0.3 h within a step and bring a few pairs within h each time; each of those
    /// failures cost a whole search.
    ///
    /// `counted`: whether [`Self::drift`] has just run at these positions; it counts,
    /// per chunk, the particles past half the skin, and the repair takes its movers
    /// from that count (otherwise it runs `drift` first). The checks between the
    /// iterations had counted them a second time, in a pass of their own over every
    /// particle: 0.15 ms a step on 1 thread in the 97k dam break's splash.
    fn repair_lists(&mut self, counted: bool) -> bool {
        if !counted {
            self.drift(false);
        }
        let n = self.len();
        let allowed = self.half_skin2();
        let (now, built) = (refs(&self.predicted), refs(&self.built));
        let displaced = |i: usize| {
            let d: [f32; D] = core::array::from_fn(|a| now[a][i] - built[a][i]);
            !(pbf_kernels::norm2(d) <= allowed)
        };
        // Counted per chunk of `MIN_CHUNK` particles by `drift`.
        let fast: usize = self.drift.iter().map(|d| d.movers as usize).sum();
        if fast == 0 {
            return true;
        }
        if fast > Self::fast_limit(n) {
            return false;
        }
        self.moved.clear();
        for (c, d) in self.drift.iter().enumerate() {
            if d.movers > 0 {
                self.moved
                    .extend(chunk(c, n).filter(|&f| displaced(f)).map(|f| f as u32));
            }
        }
        let (h2, r2) = (self.kernel.h2(), self.list_radius().powi(2));
        // A pair within h now that a build on `built` did not find.
        let unbuilt = |f: usize, j: u32| {
            let j = j as usize;
            let d: [f32; D] = core::array::from_fn(|a| now[a][f] - now[a][j]);
            let e: [f32; D] = core::array::from_fn(|a| built[a][f] - built[a][j]);
            j != f
                && pbf_kernels::within(pbf_kernels::norm2(d), h2)
                && !pbf_kernels::within(pbf_kernels::norm2(e), r2)
        };
        // The moved ones by the cells of their current positions, cells a little wider
        // than h: a moved particle within h of another is in one of the 3^D cells
        // around it. (Comparing every pair of them took about half of a repair's time
        // in the 97k dam break's splash, with 1,000-2,000 of them.)
        let cell = f64::from(self.kernel.h()) * MOVER_CELL;
        let cells = &mut self.mover_cells;
        cells.clear();
        cells.extend(self.moved.iter().enumerate().map(|(k, &f)| {
            let p: [f32; D] = core::array::from_fn(|a| now[a][f as usize]);
            (mover_cell(p, cell), k as u32)
        }));
        cells.sort_unstable();
        // The moved ones in chunks on the threads, each chunk's pairs in its scratch.
        // Reserved with the lists (`reserve_repair`), which a repair needs.
        let chunks = self.moved.len().div_ceil(REPAIR_CHUNK);
        let scratch = &mut self.repair_scratch[..chunks];
        let (grid, moved, cells) = (&self.grid, &self.moved, &self.mover_cells);
        crate::parallel::for_each_block(scratch, 1, &|c, part| {
            let RepairScratch {
                nearby,
                pairs,
                failed,
            } = &mut part[0];
            pairs.clear();
            *failed = false;
            let first = c * REPAIR_CHUNK;
            for (k, &f) in moved.iter().enumerate().skip(first).take(REPAIR_CHUNK) {
                let p: [f32; D] = core::array::from_fn(|a| now[a][f as usize]);
                // A moved particle that is not finite has no place in the grid: the
                // chunk fails, and the repair gives up.
                let mut ranges = [pbf_grid::CellRange::default(); 27];
                let Ok(count) = grid.ranges_around(p, &mut ranges) else {
                    *failed = true;
                    return;
                };
                // The particles within h of `p` now. An unmoved one lies within
                // `h + skin / 2` of `p` by the positions of the build, inside the
                // ranges around `p` of the build's grid (cells at least that wide).
                nearby.clear();
                crate::lists::near(now, p, h2, &ranges[..count], nearby);
                // More than MISSING_MOST pairs make the repair give up: no need to
                // find more.
                let unmoved = nearby.iter().filter(|&&j| !displaced(j as usize));
                for &j in unmoved.filter(|&&j| unbuilt(f as usize, j)) {
                    if pairs.len() > MISSING_MOST {
                        return;
                    }
                    pairs.push((f.min(j), f.max(j)));
                }
                // Each pair of two moved particles once: from the first of them (the
                // moved ones ascend). The runs ascend: each search starts where the
                // last one ended, and a run's few moved ones are walked, not searched
                // for (the two binary searches of each of the nine runs in 3D took a
                // third of a repair's query in the 97k dam break's splash).
                let mut from = 0;
                for (lo, hi) in columns_around::<D>(mover_cell(p, cell)) {
                    from += cells[from..].partition_point(|c| c.0 < lo);
                    for &(_, m) in cells[from..].iter().take_while(|c| c.0 <= hi) {
                        let j = moved[m as usize];
                        if m as usize > k && unbuilt(f as usize, j) {
                            if pairs.len() > MISSING_MOST {
                                return;
                            }
                            pairs.push((f.min(j), f.max(j)));
                        }
                    }
                }
            }
        });
        let found: usize = self.repair_scratch[..chunks]
            .iter()
            .map(|s| s.pairs.len())
            .sum();
        if found > MISSING_MOST || self.repair_scratch[..chunks].iter().any(|s| s.failed) {
            return false;
        }
        let pairs = &mut self.missing;
        pairs.clear();
        for part in &self.repair_scratch[..chunks] {
            pairs.extend_from_slice(&part.pairs);
        }
        pairs.sort_unstable();
        for &(i, j) in pairs.iter() {
            // The lists are symmetric (the build's distance test gives the same bits
            // either way round): an earlier repair added the pair to both or neither.
            if !self.lists.contains(i as usize, j) {
                debug_assert!(!self.lists.contains(j as usize, i));
                self.lists.insert(i as usize, j);
                self.lists.insert(j as usize, i);
            }
        }
        true
    }

    /// The error of a list build that found the fluid collapsed around particle `id`
    /// (`e.index` is a sorted index: the caller maps it to the particle's id).
    fn collapsed(&self, e: Overfull, step: u64, id: u64) -> CoreError {
        CoreError::Collapsed {
            step,
            id,
            candidates: e.candidates as u64,
            limit: self.candidate_limit() as u64,
        }
    }

    /// The most candidates a particle may have in a list build before the fluid
    /// counts as collapsed ([`max_candidates`] at the radius of the widest skin, the
    /// same whatever skin a search takes).
    fn candidate_limit(&self) -> usize {
        max_candidates::<D>(self.radius_of(WIDEST_SKIN), self.params.spacing())
    }

    /// The radius of the last neighbour search, its grid's cells and the lists:
    /// `h (1 + skin)`.
    pub(crate) fn list_radius(&self) -> f32 {
        self.radius_of(self.skin)
    }

    /// The entries a list gets room for in a build: as for the widest skin, so that
    /// what the lists allocate does not depend on the skins taken.
    fn room(&self) -> usize {
        room_per_particle::<D>(self.radius_of(WIDEST_SKIN), self.params.spacing())
    }

    /// The radius of a search with `skin` (relative to h): `h (1 + skin)`.
    pub(crate) fn radius_of(&self, skin: f32) -> f32 {
        self.kernel.h() * (1.0 + skin)
    }

    /// How far the particles have moved from the positions the lists were built from:
    /// the largest squared displacement, how many moved past half the lists' skin (also
    /// per chunk of [`MIN_CHUNK`], for [`Self::repair_lists`]) and, when `count`, how
    /// many past half of each of [`SKINS`] (zeros otherwise).
    fn drift(&mut self, count: bool) -> Drift {
        let halves: [f32; SKINS.len()] = core::array::from_fn(|k| self.half_skin2_of(SKINS[k]));
        let half = self.half_skin2();
        let (now, built) = (refs(&self.predicted), refs(&self.built));
        per_chunk(self.len(), &mut self.drift, &|chunk| {
            let (now, built) = (
                stretches(now, chunk.clone()),
                stretches(built, chunk.clone()),
            );
            let moved = |k: usize| {
                let d: [f32; D] = core::array::from_fn(|a| now[a][k] - built[a][k]);
                pbf_kernels::norm2(d)
            };
            let mut drift = Drift::default();
            if !count {
                // Branch-free: the checks between the iterations need only these.
                for moved in (0..chunk.len()).map(moved) {
                    drift.most = drift.most.max(moved.to_bits());
                    drift.movers += u32::from(!(moved <= half));
                }
                return drift;
            }
            for k in 0..chunk.len() {
                let moved = moved(k);
                drift.most = drift.most.max(moved.to_bits());
                drift.movers += u32::from(!(moved <= half));
                for (past, half) in drift.past.iter_mut().zip(halves) {
                    *past += u32::from(!(moved <= half));
                }
            }
            drift
        });
        self.drift.iter().fold(Drift::default(), |mut all, chunk| {
            all.most = all.most.max(chunk.most);
            all.movers += chunk.movers;
            for (all, chunk) in all.past.iter_mut().zip(chunk.past) {
                *all += chunk;
            }
            all
        })
    }

    /// The Jacobi relaxation `omega` the constraint passes scale every lambda by: the
    /// value of [`Relaxation::Fixed`], or what [`Relaxation::Auto`] resolves to for
    /// these parameters (`min(1, (4/3) / a_max)` from the rest lattice's spectrum;
    /// under `Auto` a particle compressed by more than 10% uses `omega 1.1 rho0 /
    /// rho_i`).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Relaxation, Solver};
    /// let auto = Solver::new(Params::<3>::builder(0.05).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert!((auto.relaxation() - 0.505).abs() < 0.01);
    /// let params = Params::<3>::builder(0.05).relaxation(Relaxation::Fixed(1.0)).build()?;
    /// let unrelaxed = Solver::new(params, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(unrelaxed.relaxation(), 1.0);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn relaxation(&self) -> f32 {
        self.relaxation
    }

    /// Switches the implementation of the neighbour passes from the next step on
    /// (for example to compare the widths in one run; `Lanes` and `Lanes8` give the
    /// same bits).
    ///
    /// ```
    /// use pbf_solver::{Backend, scenes};
    /// let mut s = scenes::dam_break_3d(1000)?;
    /// s.set_backend(Backend::Scalar);
    /// assert_eq!(s.params().backend(), Backend::Scalar);
    /// s.step()?;
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn set_backend(&mut self, backend: Backend) {
        self.params.backend = backend;
    }

    /// The kernel (radius and constants).
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let s = Solver::new(Params::<3>::builder(0.1).build()?, Domain::new([0.0; 3], [1.0; 3])?)?;
    /// assert_eq!(s.kernel().h(), 0.2);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn kernel(&self) -> &Kernel<D> {
        &self.kernel
    }

    /// One position-delta pass over the current positions without moving anything:
    /// the `dp_i` the next iteration would apply if positions were these (no
    /// collisions). Used to check momentum conservation; costs two neighbour passes.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.1).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_particles(&[[0.5, 0.5], [0.55, 0.5]], None)?;
    /// let dp = s.position_deltas()?;
    /// assert!((dp[0][0] + dp[1][0]).abs() < 1e-6);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn position_deltas(&mut self) -> Result<Vec<[f32; D]>, CoreError> {
        let n = self.len();
        let list_radius = self.list_radius();
        // The grid and the lists below are not the step's any more.
        self.reusable = false;
        self.grid.rebuild(refs(&self.positions), list_radius)?;
        let permutation = self.grid.permutation().to_vec();
        let mut sorted: [Vec<f32>; D] = empty();
        for a in 0..D {
            sorted[a] = permutation
                .iter()
                .map(|&i| self.positions[a][i as usize])
                .collect();
        }
        // An unbounded domain and no colliders: nothing but the constraint moves.
        let free = Domain::new([f32::MIN; D], [f32::MAX; D])?;
        let constraint = Constraint::new(
            &self.params,
            &self.kernel,
            &self.tensile,
            self.relaxation,
            Boundary {
                domain: &free,
                colliders: &[],
                tables: &self.walls,
            },
        );
        self.lists
            .build(
                &self.grid,
                refs(&sorted),
                list_radius * list_radius,
                self.room(),
            )
            .map_err(|e| {
                self.collapsed(e, self.steps(), self.ids[permutation[e.index] as usize])
            })?;
        // One constraint iteration: the lambda pass, then the delta pass with the
        // neighbours' lambda packed beside their positions.
        fn iteration<L: Lane, const D: usize>(
            constraint: &Constraint<'_, D>,
            lists: &NeighbourLists,
            sorted: [&[f32]; D],
            free: &Domain<D>,
        ) -> [Vec<f32>; D] {
            let n = sorted[0].len();
            let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
            let mut quads = Vec::new();
            pack(&mut quads, sorted, &lambda);
            let nb = Neighbourhood {
                lists,
                quads: &quads,
            };
            let mut wall = WallGradient::<D>::new(n);
            constraint.lambda_pass::<L>(&nb, &mut density, &mut lambda, &mut wall);
            repack_extra::<D>(&mut quads, &lambda);
            let nb = Neighbourhood {
                lists,
                quads: &quads,
            };
            let mut next: [Vec<f32>; D] = core::array::from_fn(|_| vec![0.0; n]);
            constraint.delta_pass::<L>(&nb, &lambda, &wall, muts(&mut next), &[], free, 0.0, None);
            next
        }
        /// One iteration on the lanes the dispatcher picks.
        struct Iteration<'a, const D: usize> {
            constraint: &'a Constraint<'a, D>,
            lists: &'a NeighbourLists,
            sorted: [&'a [f32]; D],
            free: &'a Domain<D>,
        }
        impl<const D: usize> WithLane for Iteration<'_, D> {
            type Output = [Vec<f32>; D];
            fn run<L: Lane>(self) -> Self::Output {
                iteration::<L, D>(self.constraint, self.lists, self.sorted, self.free)
            }
        }
        let pass = Iteration {
            constraint: &constraint,
            lists: &self.lists,
            sorted: refs(&sorted),
            free: &free,
        };
        let next = (self.params.backend().lane_kind().dispatch(pass))
            .unwrap_or_else(|e| unreachable!("{e}: a backend runs only available lanes"));
        let mut out = vec![[0.0; D]; n];
        for (k, &i) in permutation.iter().enumerate() {
            out[i as usize] = core::array::from_fn(|a| next[a][k] - sorted[a][k]);
        }
        Ok(out)
    }
}

/// The statistics of a chunk of particles at the end of a step: sum and maximum of
/// the squared speeds, of the density errors and of the neighbour counts, and the
/// fewest neighbours (each maximum NaN if a value is).
#[derive(Debug, Clone, Copy)]
struct Tally {
    speed2: (f64, f64),
    error: (f64, f64),
    neighbours: (f64, f64),
    fewest_neighbours: f64,
}

impl Default for Tally {
    /// No particle: sums 0, maxima -inf, the fewest +inf.
    fn default() -> Self {
        let none = (0.0, f64::NEG_INFINITY);
        Self {
            speed2: none,
            error: none,
            neighbours: none,
            fewest_neighbours: f64::INFINITY,
        }
    }
}

impl Tally {
    /// Adds one particle: sums in order, the maxima as [`pick_max`] folds them.
    #[inline(always)]
    fn add(&mut self, speed2: f64, error: f64, neighbours: f64) {
        for (part, v) in [
            (&mut self.speed2, speed2),
            (&mut self.error, error),
            (&mut self.neighbours, neighbours),
        ] {
            part.0 += v;
            part.1 = pick_max(part.1, v);
        }
        self.fewest_neighbours = -pick_max(-self.fewest_neighbours, -neighbours);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pbf_kernels::{norm2, within};
    use proptest::prelude::*;

    /// A chunk's tally holds the sums, maxima and the minimum of its values, a NaN
    /// makes a maximum NaN, and an empty chunk has none.
    #[test]
    fn a_tally_sums_and_bounds_its_particles() {
        let values = [(4.0, 0.0, 30.0), (1.0, 0.25, 12.0), (9.0, 0.5, 41.0)];
        let mut t = Tally::default();
        for &(s, e, k) in &values {
            t.add(s, e, k);
        }
        assert_eq!(t.speed2, (14.0, 9.0));
        assert_eq!(t.error, (0.75, 0.5));
        assert_eq!(t.neighbours, (83.0, 41.0));
        assert_eq!(t.fewest_neighbours, 12.0);
        t.add(f64::NAN, 0.0, 20.0);
        assert!(t.speed2.0.is_nan() && t.speed2.1.is_nan());
        assert_eq!(t.error.1, 0.5);
        let none = Tally::default();
        assert_eq!(none.speed2, (0.0, f64::NEG_INFINITY));
        assert_eq!(none.fewest_neighbours, f64::INFINITY);
    }

    /// `wide`'s `f32x8` gives the scalar path's bits through whole steps, as every
    /// public backend does (`every_backend_gives_the_bits_of_the_scalar_path`): the
    /// solver runs it only on CPUs without AVX, where that public test reaches it, so
    /// here it is stepped directly, in 3D and 2D.
    #[test]
    fn the_portable_eight_lanes_give_the_scalar_paths_bits() {
        fn same<const D: usize>(mut wide: Solver<D>, mut scalar: Solver<D>) {
            for step in 1..=80 {
                let (a, b) = (
                    wide.step_with::<pbf_kernels::f32x8>(),
                    scalar.step_with::<f32>(),
                );
                assert_eq!(a.unwrap().iterations, b.unwrap().iterations);
                for k in 0..D {
                    for (what, x, y) in [
                        ("position", &wide.positions[k], &scalar.positions[k]),
                        ("velocity", &wide.velocities[k], &scalar.velocities[k]),
                    ] {
                        let first = x
                            .iter()
                            .zip(y)
                            .position(|(p, q)| p.to_bits() != q.to_bits());
                        assert!(
                            first.is_none(),
                            "step {step}: {what} {k} of particle {first:?}"
                        );
                    }
                }
            }
        }
        let three = || crate::scenes::dam_break_3d(1500).unwrap();
        same(three(), three());
        let two = || crate::scenes::dam_break_2d(1500).unwrap();
        same(two(), two());
    }

    /// A solver (h = 0.2, list radius 0.22) whose lists are built on `points`, with
    /// `predicted` where the lists were built.
    fn built(points: &[[f32; 3]]) -> Solver<3> {
        built_with(points, WIDEST_SKIN)
    }

    /// [`built`] with lists of `skin` (list radius `0.2 (1 + skin)`).
    fn built_with(points: &[[f32; 3]], skin: f32) -> Solver<3> {
        let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
        let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
        s.add_particles(points, None).unwrap();
        s.predicted = s.positions.clone();
        s.search(skin).unwrap();
        s
    }

    /// Moves the particle now at `at` by `by`.
    fn shift(s: &mut Solver<3>, at: [f32; 3], by: [f32; 3]) {
        let p = &mut s.predicted;
        let i = (0..p[0].len())
            .find(|&i| (0..3).all(|a| (p[a][i] - at[a]).abs() < 1e-6))
            .expect("a particle there");
        for a in 0..3 {
            p[a][i] += by[a];
        }
    }

    /// The solver's repair, counting the moved particles first.
    fn repair(s: &mut Solver<3>) -> bool {
        s.repair_lists(false)
    }

    /// Every particle's list.
    fn all_lists(s: &Solver<3>) -> Vec<Vec<u32>> {
        (0..s.len()).map(|i| s.lists.of(i)).collect()
    }

    /// The densities of a lambda pass over the lists and the predicted positions, by
    /// particle id.
    fn densities_by_id(s: &Solver<3>) -> Vec<(u64, f32)> {
        let n = s.len();
        let constraint = Constraint::new(
            &s.params,
            &s.kernel,
            &s.tensile,
            s.relaxation,
            Boundary {
                domain: &s.domain,
                colliders: &s.colliders,
                tables: &s.walls,
            },
        );
        let mut quads = Vec::new();
        pack(&mut quads, refs(&s.predicted), &vec![0.0; n]);
        let nb = Neighbourhood {
            lists: &s.lists,
            quads: &quads,
        };
        let (mut density, mut lambda) = (vec![0.0; n], vec![0.0; n]);
        let mut wall = WallGradient::<3>::new(n);
        constraint.lambda_pass::<f32>(&nb, &mut density, &mut lambda, &mut wall);
        let mut out: Vec<(u64, f32)> = s.ids.iter().copied().zip(density).collect();
        out.sort_by_key(|e| e.0);
        out
    }

    /// Repairs the lists and checks that they then hold every pair within h, and give
    /// the densities of a new search to rounding.
    fn repaired(s: &mut Solver<3>) {
        assert!(repair(s), "repaired");
        assert!(complete(s), "every pair within h after the repair");
        let mut searched = s.clone();
        searched.search(WIDEST_SKIN).unwrap();
        for (a, b) in densities_by_id(s).iter().zip(&densities_by_id(&searched)) {
            assert_eq!(a.0, b.0);
            assert!(
                (a.1 - b.1).abs() <= 1e-5 * b.1,
                "particle {}: {a:?} {b:?}",
                a.0
            );
        }
    }

    /// The pairs within h of the predicted positions that are missing from either
    /// particle's list.
    fn missing_pairs(s: &Solver<3>) -> usize {
        let (p, h2, n) = (&s.predicted, s.kernel.h2(), s.len());
        (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                let d: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
                within(norm2(d), h2)
                    && !(s.lists.contains(i, j as u32) && s.lists.contains(j, i as u32))
            })
            .count()
    }

    /// Whether the lists hold every pair within h of the predicted positions.
    fn complete(s: &Solver<3>) -> bool {
        missing_pairs(s) == 0
    }

    /// Moves particle `pair.0` and the first one between `band` of it towards each
    /// other, by `reach` times `pair.1` and `pair.2`, then each of `moves` by its
    /// offset. `false`, moving nothing, when no particle lies in the band.
    fn approach(
        s: &mut Solver<3>,
        pair: (prop::sample::Index, f32, f32),
        reach: f32,
        band: core::ops::Range<f32>,
        moves: Vec<(prop::sample::Index, [f32; 3])>,
    ) -> bool {
        let (n, p) = (s.len(), &s.predicted);
        let i = pair.0.index(n);
        let apart = |j: usize| -> [f32; 3] { core::array::from_fn(|a| p[a][j] - p[a][i]) };
        let Some(j) = (0..n).find(|&j| band.contains(&norm2(apart(j)).sqrt())) else {
            return false;
        };
        let d = apart(j);
        let unit = d.map(|c| c / norm2(d).sqrt());
        for a in 0..3 {
            s.predicted[a][i] += reach * pair.1 * unit[a];
            s.predicted[a][j] -= reach * pair.2 * unit[a];
        }
        for (k, by) in moves {
            let k = k.index(n);
            for a in 0..3 {
                s.predicted[a][k] += by[a];
            }
        }
        true
    }

    /// Whether few enough particles moved more than half the skin, and few enough
    /// pairs within h are missing from the lists, for the lists to be mended.
    fn mendable(s: &Solver<3>) -> bool {
        let allowed = s.half_skin2();
        let (p, b, n) = (&s.predicted, &s.built, s.len());
        let moved = (0..n)
            .filter(|&k| norm2::<3>(core::array::from_fn(|a| p[a][k] - b[a][k])) > allowed)
            .count();
        moved <= n / FAST_FRACTION && missing_pairs(s) <= MISSING_MOST
    }

    fn lattice() -> Vec<[f32; 3]> {
        cube(8)
    }

    /// `side^3` points 0.1 apart from the origin.
    fn cube(side: usize) -> Vec<[f32; 3]> {
        let mut points = Vec::new();
        for i in 0..side {
            for j in 0..side {
                for k in 0..side {
                    points.push([i as f32 * 0.1, j as f32 * 0.1, k as f32 * 0.1]);
                }
            }
        }
        points
    }

    #[test]
    fn a_search_takes_the_narrowest_skin_few_particles_moved_half_of() {
        // One particle in 256, and at most 512 (a quarter of what a repair mends).
        assert_eq!(skin_budget(100), 0);
        assert_eq!(skin_budget(10_648), 41);
        assert_eq!(skin_budget(97_336), 380);
        assert_eq!(skin_budget(1_000_000), 512);
        let n = 97_336;
        assert_eq!(next_skin(&[0; 5], n), 0.04);
        assert_eq!(next_skin(&[380, 0, 0, 0, 0], n), 0.04);
        assert_eq!(next_skin(&[381, 0, 0, 0, 0], n), 0.05);
        // The 97k dam break while its block collapses.
        assert_eq!(next_skin(&[400, 100, 30, 5, 0], n), 0.05);
        // And in its splash.
        assert_eq!(next_skin(&[4773, 3591, 2544, 1046, 330], n), 0.1);
        assert_eq!(next_skin(&[9000, 9000, 9000, 9000, 9000], n), 0.1);
        assert_eq!(next_skin(&[1, 0, 0, 0, 0], 100), 0.05);
        assert_eq!(next_skin(&[0; 5], 0), 0.04);
        assert!(SKINS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(WIDEST_SKIN, 0.1);
    }

    #[test]
    fn a_step_counts_how_far_its_particles_moved_for_the_next_search() {
        let mut s = built_with(&lattice(), 0.04);
        assert_eq!(s.list_radius(), 0.2 * 1.04);
        let d = s.drift(true);
        assert_eq!((d.most, d.past), (0, [0; 5]));
        // Half the skins in h = 0.2: 0.004, 0.005, 0.006, 0.008 and 0.01.
        shift(&mut s, [0.0; 3], [0.0045, 0.0, 0.0]);
        shift(&mut s, [0.1, 0.0, 0.0], [0.0, 0.007, 0.0]);
        shift(&mut s, [0.2, 0.0, 0.0], [0.0, 0.0, -0.02]);
        let d = s.drift(true);
        assert_eq!(d.past, [3, 2, 2, 1, 1]);
        assert_eq!(f32::from_bits(d.most), 0.02f32 * 0.02);
        // The checks between the iterations need the largest displacement only.
        let d = s.drift(false);
        assert_eq!((f32::from_bits(d.most), d.past), (0.02f32 * 0.02, [0; 5]));
        s.predicted[1][5] = f32::NAN;
        let d = s.drift(true);
        assert!(f32::from_bits(d.most).is_nan());
        assert_eq!(d.past, [4, 3, 3, 2, 2]);
    }

    #[test]
    fn the_flow_outruns_the_skins_when_last_steps_lists_fail_at_the_widest() {
        // 512 particles: the repair mends at most 16 moved ones.
        assert_eq!(Solver::<3>::fast_limit(512), 16);
        let moved = |count: usize, steps: u64| {
            let mut s = built_with(&lattice(), 0.04);
            s.step = steps;
            // Past half the widest skin (0.01 in h = 0.2).
            for x in s.predicted[0].iter_mut().take(count) {
                *x += 0.011;
            }
            s.keeps_lists()
        };
        // The lists of the last step (built after 0 steps, now 1).
        assert_eq!(moved(0, 1), (true, false));
        assert_eq!(moved(16, 1), (true, false), "16 are mended");
        assert_eq!(moved(17, 1), (false, true));
        assert_eq!(moved(512, 1), (false, true));
        // Older lists: the particles may have moved over several steps.
        assert_eq!(moved(512, 2), (false, false));
        // No lists to keep.
        let mut s = built_with(&lattice(), 0.04);
        s.reusable = false;
        assert_eq!(s.keeps_lists(), (false, true));
    }

    #[test]
    fn a_search_keeps_every_density_with_its_particle() {
        let mut s = built(&lattice());
        let tag = |id: u64| 1000.0 + id as f32;
        for i in 0..s.len() {
            s.density[i] = tag(s.ids[i]);
        }
        // Mirrored in x: another Morton order.
        for x in s.predicted[0].iter_mut() {
            *x = 1.0 - *x;
        }
        s.search(WIDEST_SKIN).unwrap();
        assert!(!s.grid.permutation_is_identity());
        for i in 0..s.len() {
            assert_eq!(s.density[i], tag(s.ids[i]), "particle {i}");
        }
    }

    #[test]
    fn lists_need_nothing_when_a_particle_moves_off_into_empty_space() {
        let mut s = built(&lattice());
        let before = all_lists(&s);
        assert!(repair(&mut s), "nothing moved");
        // 0.07 h: more than half the skin (0.01), less than the skin.
        shift(&mut s, [0.0; 3], [-0.014, 0.0, 0.0]);
        assert!(complete(&s));
        assert!(repair(&mut s));
        // Half h more: five times the skin, still alone.
        shift(&mut s, [-0.014, 0.0, 0.0], [-0.1, 0.0, 0.0]);
        assert!(complete(&s));
        assert!(repair(&mut s));
        assert_eq!(all_lists(&s), before, "nothing added");
    }

    #[test]
    fn lists_get_the_pair_of_two_particles_that_close_a_gap_past_the_skin() {
        let mut s = built(&lattice());
        let pairs = s.lists.pairs();
        // sqrt(5) x 0.1 = 0.2236 apart: beyond the list radius, so not in the lists.
        let (a, b) = ([0.2, 0.2, 0.2], [0.3, 0.4, 0.2]);
        let unit = [0.1 / 0.2236, 0.2 / 0.2236, 0.0];
        // Each moves 0.08 h towards the other: 0.1916 apart, within h = 0.2.
        shift(&mut s, a, unit.map(|u| 0.016 * u));
        shift(&mut s, b, unit.map(|u| -0.016 * u));
        assert!(!complete(&s));
        repaired(&mut s);
        assert_eq!(s.lists.pairs(), pairs + 2, "one pair, in both lists");
        // Again: nothing more to add.
        repaired(&mut s);
        assert_eq!(s.lists.pairs(), pairs + 2);
        // One of them alone, 0.15 h (past the skin) towards the other: 0.1936 apart.
        let mut s = built(&lattice());
        shift(&mut s, a, unit.map(|u| 0.03 * u));
        assert!(!complete(&s));
        repaired(&mut s);
        assert_eq!(s.lists.pairs(), pairs + 2);
    }

    #[test]
    fn lists_get_the_pair_of_two_far_movers_that_meet() {
        // Two particles 0.5 apart, away from a lattice, move 0.2 each towards the
        // other: neither was near the other's current position when the grid was
        // built, so only comparing the moved particles with each other finds them.
        let mut points = lattice();
        points.extend([[-1.0, 0.0, 0.0], [-1.5, 0.0, 0.0]]);
        let mut s = built(&points);
        shift(&mut s, [-1.0, 0.0, 0.0], [-0.2, 0.0, 0.0]);
        shift(&mut s, [-1.5, 0.0, 0.0], [0.2, 0.0, 0.0]);
        assert!(!complete(&s));
        repaired(&mut s);
    }

    #[test]
    fn a_particle_moving_through_the_fluid_gets_its_new_neighbours() {
        // Half h through the lattice's middle: about a dozen new pairs.
        let mut s = built(&lattice());
        let pairs = s.lists.pairs();
        shift(&mut s, [0.4, 0.4, 0.4], [0.1, 0.0, 0.0]);
        assert!(!complete(&s));
        repaired(&mut s);
        assert!(s.lists.pairs() > pairs + 10);
    }

    #[test]
    fn restored_lists_come_with_the_repairs_scratch() {
        // A checkpoint's lists are built by the restore, not by a search: the repair's
        // scratch comes with them (a step after the restore neither panics on it nor
        // allocates it), and the restored run continues with the same bits.
        let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
        let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
        let mut points = cube(12);
        points.push([0.61, 0.62, 0.6]);
        s.add_particles(&points, None).unwrap();
        s.step().unwrap();
        let mut r = Solver::<3>::from_checkpoint(&s.checkpoint().unwrap()).unwrap();
        assert!(r.reusable, "the checkpoint's lists");
        assert!(r.repair_scratch.len() >= FAST_MOST.div_ceil(REPAIR_CHUNK));
        assert!(r.mover_cells.capacity() >= FAST_MOST);
        for _ in 0..3 {
            let (a, b) = (s.step().unwrap(), r.step().unwrap());
            assert_eq!(a.searches, b.searches);
        }
        let bits = |x: &Solver<3>| {
            x.positions
                .iter()
                .flatten()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&s), bits(&r));
    }

    #[test]
    fn a_step_mends_the_lists_around_a_squeezed_particle() {
        // A 12^3 lattice at the rest spacing with one more particle squeezed in near a
        // lattice point: the constraint pushes it and its neighbours apart by more than
        // half the skin within the step's iterations, bringing pairs within h that were
        // beyond the lists' radius at the search, and the step mends the lists instead
        // of searching again.
        let params = Params::<3>::builder(0.1).gravity([0.0; 3]).build().unwrap();
        let mut s = Solver::new(params, Domain::new([-10.0; 3], [10.0; 3]).unwrap()).unwrap();
        let mut points = Vec::new();
        for i in 0..12 {
            for j in 0..12 {
                for k in 0..12 {
                    points.push([i as f32 * 0.1, j as f32 * 0.1, k as f32 * 0.1]);
                }
            }
        }
        points.push([0.61, 0.62, 0.6]);
        s.add_particles(&points, None).unwrap();
        let d = s.step().unwrap();
        assert_eq!(d.searches, 1, "no search after the first");
        let (p, b) = (&s.positions, &s.built);
        let (h2, r2) = (s.kernel.h2(), s.list_radius().powi(2));
        let apart = |x: &[Vec<f32>; 3], i: usize, j: usize| {
            norm2::<3>(core::array::from_fn(|a| x[a][i] - x[a][j]))
        };
        let n = s.len();
        let mended = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| within(apart(p, i, j), h2) && !within(apart(b, i, j), r2))
            .count();
        assert!(mended > 0, "pairs brought within h during the iterations");
        // The step's final neighbour counts and densities (the XSPH pass's, over the
        // lists) are those of all pairs (no walls within h).
        let mass = s.params.mass();
        for i in 0..n {
            let others = (0..n).filter(|&j| j != i);
            let count = others
                .clone()
                .filter(|&j| within(apart(p, i, j), h2))
                .count();
            assert_eq!(s.count[i], 1.0 + count as f32, "particle {i}");
            let w: f32 = others.map(|j| s.kernel.poly6(apart(p, i, j))).sum();
            let rho = mass * (s.kernel.poly6(0.0) + w);
            assert!(
                (s.density[i] - rho).abs() <= 1e-5 * rho,
                "particle {i}: {} {rho}",
                s.density[i]
            );
        }
    }

    #[test]
    fn lists_are_not_repaired_around_a_particle_that_is_not_finite() {
        // Its grid query fails: the repair gives up, and the step searches (and
        // reports the divergence).
        let mut s = built(&lattice());
        shift(&mut s, [0.3, 0.3, 0.3], [0.0, 0.02, 0.0]);
        s.predicted[0][100] = f32::NAN;
        let before = all_lists(&s);
        assert!(!repair(&mut s));
        assert_eq!(all_lists(&s), before, "unchanged");
    }

    #[test]
    fn lists_are_not_repaired_for_many_moved_particles() {
        // More than one particle in FAST_FRACTION over half the skin: a search.
        let mut s = built(&lattice());
        let bottom: Vec<[f32; 3]> = lattice().into_iter().filter(|p| p[2] == 0.0).collect();
        assert!(bottom.len() > s.len() / FAST_FRACTION);
        for p in bottom {
            shift(&mut s, p, [0.0, 0.0, -0.012]);
        }
        let before = all_lists(&s);
        assert!(!repair(&mut s));
        assert_eq!(all_lists(&s), before, "unchanged");
    }

    #[test]
    fn many_moved_particles_are_mended_with_each_other() {
        // A 24^3 lattice (up to 432 moved particles are mended): the 216 particles of
        // a block, several of the repair's chunks of them, each jump 0.011-0.016 on
        // every axis, past half the skin (0.01). Pairs of them 0.2236 apart (outside
        // the lists' radius, 0.22) come within h.
        let points = cube(24);
        let mut s = built(&points);
        let block: Vec<[f32; 3]> = points
            .iter()
            .copied()
            .filter(|p| p.iter().all(|&c| (0.75..1.35).contains(&c)))
            .collect();
        assert!(block.len() > 2 * REPAIR_CHUNK && block.len() <= s.len() / FAST_FRACTION);
        let mut state = 7u64;
        let mut jitter = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (state >> 40) as f32 / (1u64 << 24) as f32;
            if u < 0.5 {
                -0.011 - 0.01 * u
            } else {
                0.011 + 0.01 * (u - 0.5)
            }
        };
        for p in &block {
            let by = [jitter(), jitter(), jitter()];
            shift(&mut s, *p, by);
        }
        // Missing pairs of two moved particles, and with unmoved ones.
        let moved = |i: usize| {
            let d: [f32; 3] = core::array::from_fn(|a| s.predicted[a][i] - s.built[a][i]);
            norm2(d) > s.half_skin2()
        };
        let (p, h2, n) = (&s.predicted, s.kernel.h2(), s.len());
        let missing: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| {
                let d: [f32; 3] = core::array::from_fn(|a| p[a][i] - p[a][j]);
                within(norm2(d), h2) && !s.lists.contains(i, j as u32)
            })
            .collect();
        let both = missing
            .iter()
            .filter(|&&(i, j)| moved(i) && moved(j))
            .count();
        assert!(
            both > 0 && missing.len() <= MISSING_MOST,
            "{both} of {}",
            missing.len()
        );
        assert!(mendable(&s));
        repaired(&mut s);
    }

    #[test]
    fn the_moved_particles_cells_hold_every_pair_within_h() {
        // Two points within h lie in neighbouring cells (the runs of cells around one
        // hold the other), also across the origin, far out and between clamped cells.
        let h = 0.2f32;
        let cell = f64::from(h) * MOVER_CELL;
        let mut state = 3u64;
        let mut unit = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        for scale in [1.0f32, 1e3, 3e5, 1e9] {
            for _ in 0..2000 {
                let p: [f32; 3] = core::array::from_fn(|_| (unit() - 0.5) * scale);
                let q: [f32; 3] = core::array::from_fn(|a| p[a] + (unit() - 0.5) * 2.0 * h);
                let d: [f32; 3] = core::array::from_fn(|a| p[a] - q[a]);
                if !within(norm2(d), h * h) {
                    continue;
                }
                let key = mover_cell(q, cell);
                let found = columns_around::<3>(mover_cell(p, cell))
                    .filter(|&(lo, hi)| (lo..=hi).contains(&key))
                    .count();
                assert_eq!(found, 1, "{p:?} {q:?}");
                // The runs ascend, apart.
                let runs: Vec<(u64, u64)> = columns_around::<3>(mover_cell(p, cell)).collect();
                assert!(runs.iter().all(|&(lo, hi)| lo < hi), "{p:?}");
                assert!(runs.windows(2).all(|w| w[0].1 < w[1].0), "{p:?}");
                let runs: Vec<(u64, u64)> =
                    columns_around::<2>(mover_cell([p[0], p[1]], cell)).collect();
                assert!(runs.windows(2).all(|w| w[0].1 < w[1].0), "{p:?}");
                let (p2, q2) = ([p[0], p[1]], [q[0], q[1]]);
                let key = mover_cell(q2, cell);
                assert!(
                    columns_around::<2>(mover_cell(p2, cell))
                        .any(|(lo, hi)| (lo..=hi).contains(&key)),
                    "{p2:?} {q2:?}"
                );
            }
        }
    }

    #[test]
    fn lists_are_not_repaired_for_many_missing_pairs() {
        // A 24^3 lattice: up to 432 moved particles may be checked. 204 of them, a
        // slab, move 0.6 h into the fluid, which brings more than MISSING_MOST pairs.
        let points = cube(24);
        let mut s = built(&points);
        let movers: Vec<[f32; 3]> = points
            .iter()
            .copied()
            .filter(|p| p[2] == 1.0 && p[0] >= 0.35 && p[0] <= 2.0 && p[1] >= 0.35 && p[1] <= 1.5)
            .collect();
        assert!(
            (150..=s.len() / FAST_FRACTION).contains(&movers.len()),
            "{}",
            movers.len()
        );
        for p in movers {
            shift(&mut s, p, [0.05, 0.05, 0.1]);
        }
        let missing = missing_pairs(&s);
        assert!(missing > MISSING_MOST, "{missing}");
        let before = all_lists(&s);
        assert!(!repair(&mut s));
        assert_eq!(all_lists(&s), before, "unchanged");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whenever the repair succeeds, the lists hold every pair within h; when it
        /// gives up, they are as they were, for lists of every skin. Two particles just
        /// beyond the list radius (`0.2 (1 + skin)`) of each other move towards each
        /// other, each by up to three times the skin (`0.2 skin`), and a few others
        /// anywhere; at least 256 particles, so that up to eight may move past half the
        /// skin.
        #[test]
        fn repaired_lists_hold_every_pair_within_h(
            skin in prop::sample::select(SKINS.to_vec()),
            points in prop::collection::vec(prop::array::uniform3(-0.3f32..0.3), 256..500),
            pair in (any::<prop::sample::Index>(), 0.2f32..3.0, 0.2f32..3.0),
            moves in prop::collection::vec(
                (any::<prop::sample::Index>(), prop::array::uniform3(-0.03f32..0.03)),
                0..3,
            ),
        ) {
            let mut s = built_with(&points, skin);
            let radius = s.list_radius();
            prop_assume!(approach(&mut s, pair, 0.2 * skin, radius..radius + 0.02, moves));
            // The repair gives up only for too many moved particles or missing pairs.
            let expected = mendable(&s);
            let before = all_lists(&s);
            prop_assert_eq!(repair(&mut s), expected);
            if expected {
                prop_assert!(complete(&s));
            } else {
                prop_assert_eq!(all_lists(&s), before);
            }
        }

        /// A step keeps the lists exactly when the particles that moved more than
        /// half the skin since they were built are few and bring few pairs within h,
        /// and kept lists hold every pair within h. Two particles just beyond the list
        /// radius of each other move towards each other by up to 2.5 times half the
        /// skin (0.01) each, and a few others anywhere by up to about half the skin.
        #[test]
        fn kept_lists_hold_every_pair_within_h(
            points in prop::collection::vec(prop::array::uniform3(-0.3f32..0.3), 64..400),
            pair in (any::<prop::sample::Index>(), 0.0f32..2.5, 0.0f32..2.5),
            moves in prop::collection::vec(
                (any::<prop::sample::Index>(), prop::array::uniform3(-0.007f32..0.007)),
                0..4,
            ),
        ) {
            let mut s = built(&points);
            prop_assert!(s.keeps_lists().0, "nothing has moved");
            prop_assume!(approach(&mut s, pair, 0.01, 0.22..0.23, moves));
            let expected = mendable(&s);
            prop_assert_eq!(s.keeps_lists().0, expected);
            if expected {
                prop_assert!(complete(&s));
            }
        }
    }
}
