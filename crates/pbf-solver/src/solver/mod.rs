//! The [`Solver`]: its state and construction; the step and the rest of its API live
//! in the files of this module, one concept a file (Macklin & Müller 2013,
//! Algorithm 1).
//!
//! - `step.rs`: [`Solver::step`], the phases in order;
//! - `predict.rs`: the work arrays, external forces and the prediction;
//! - `search.rs`: the neighbour search, keeping the lists, and the checks between
//!   iterations; `skin.rs`: the skins and how far the particles moved; `repair.rs`:
//!   mending the lists;
//! - `constrain.rs`: the coarse correction and the constraint iterations;
//! - `velocity.rs`: the velocity update, contact response, XSPH and vorticity;
//!   `viscous.rs`: the physical viscosity's implicit solve;
//! - `diagnostics.rs`: the step's statistics;
//! - `particles.rs`: adding and removing particles, colliders and emitters;
//!   `accessors.rs`: what a solver reports; `deltas.rs`: [`Solver::position_deltas`];
//!   `state.rs`: the state a checkpoint saves and restores.

use crate::constraint::{WallGradient, jacobi_relaxation};
use crate::diagnostics::StepDiagnostics;
use crate::emitter::Emitter;
use crate::lists::NeighbourLists;
use crate::{Collider, CoreError, Domain, Params, Relaxation};
use pbf_grid::Grid;
use pbf_kernels::{CornerTables, Kernel, TensileCorrection, WallTables};

mod accessors;
mod constrain;
mod deltas;
mod diagnostics;
mod particles;
mod predict;
mod repair;
mod search;
mod skin;
mod state;
mod step;
#[cfg(test)]
mod tests;
mod velocity;
mod viscous;
mod wrap;

use diagnostics::Tally;
use repair::RepairScratch;
use skin::{Drift, WIDEST_SKIN};

// For the checkpoints (`checkpoint/`).
#[cfg_attr(not(feature = "serde"), allow(unused_imports))]
pub(crate) use skin::SKINS;
#[cfg_attr(not(feature = "serde"), allow(unused_imports))]
pub(crate) use state::RestoredState;

/// The most particles a solver holds: indices of the neighbour search are `u32`.
pub const MAX_PARTICLES: usize = (u32::MAX - 1024) as usize;

pub(crate) fn empty<const D: usize, T>() -> [Vec<T>; D] {
    core::array::from_fn(|_| Vec::new())
}

pub(crate) fn refs<const D: usize>(v: &[Vec<f32>; D]) -> [&[f32]; D] {
    core::array::from_fn(|a| v[a].as_slice())
}

pub(crate) fn muts<const D: usize>(v: &mut [Vec<f32>; D]) -> [&mut [f32]; D] {
    let mut it = v.iter_mut();
    core::array::from_fn(|_| it.next().expect("D arrays").as_mut_slice())
}

/// The denominator of lambda, `sum_k |grad_k C_i|^2 + eps`, for a particle inside a
/// lattice at the rest spacing (where `grad_i C_i` vanishes by symmetry).
pub(crate) fn rest_lattice_denominator<const D: usize>(
    params: &Params<D>,
    kernel: &Kernel<D>,
) -> f64 {
    let scale = f64::from(params.mass() / params.rest_density());
    let mut sum = 0.0f64;
    // The gradient vanishes at the particle itself and from h on.
    crate::viscosity::for_each_lattice_point::<D>(kernel.h(), params.spacing(), |x| {
        let g = kernel.spiky_gradient(x);
        sum += g
            .iter()
            .map(|c| (scale * f64::from(*c)).powi(2))
            .sum::<f64>();
    });
    sum + f64::from(params.cfm_epsilon())
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
    /// The kernel behind two walls at once, for the domain's edges and the inner
    /// edges of containers: built by the first pass that meets either
    /// ([`corner_tables`]).
    corners: std::sync::OnceLock<CornerTables>,
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
    /// Every particle's pressure of the last step when [`Self::keep_pressures`] asks
    /// for it (empty otherwise): during the constraint phases, the potential of the
    /// coarse correction plus each applied lambda times its share of the step's
    /// displacement; at their end, the pressure in pascals ([`Self::pressures`]).
    pressure: Vec<f32>,
    /// Whether the steps keep [`Self::pressures`].
    keep_pressures: bool,
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
    /// current positions ([`mover_cell`](repair::mover_cell)), each with its place in `moved`.
    mover_cells: Vec<(u64, u32)>,
    /// Scratch of [`Self::repair_lists`]: one for each [`REPAIR_CHUNK`](repair::REPAIR_CHUNK) moved
    /// particles.
    repair_scratch: Vec<RepairScratch>,
    /// The predicted positions and one more value per particle, packed for the passes'
    /// gathers ([`crate::lists::pack`]).
    quads: Vec<[f32; 4]>,
    /// The velocities packed the same way for the XSPH pass.
    velocity_quads: Vec<[f32; 4]>,
    /// The coarse density correction's grid and work arrays.
    coarse: Box<crate::coarse::CoarseGrid<D>>,
    /// The physical viscosity's constants and work arrays.
    viscosity: Box<crate::viscosity::Viscosity<D>>,
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
    /// constants support; [`CoreError::InvalidCollider`] when the domain spans more
    /// cells of size h than the neighbour search can index (2^21 per axis in 3D), or
    /// (field `domain.periodic`) when a periodic axis is shorter than three kernel
    /// radii; [`CoreError::InvalidParameter`] naming `viscosity` when the domain has a no-slip wall
    /// ([`Wall::NoSlip`](crate::Wall::NoSlip)) and the viscosity is 0.
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
        for a in (0..D).filter(|&a| domain.periodic()[a]) {
            let length = domain.hi()[a] - domain.lo()[a];
            if !(length >= 3.0 * kernel.h()) {
                return Err(CoreError::InvalidCollider {
                    index: usize::MAX,
                    field: "domain.periodic",
                    value: length.into(),
                    reason: "a periodic axis must be at least three kernel radii long",
                });
            }
        }
        if domain.has_no_slip() && params.viscosity() == 0.0 {
            return Err(CoreError::InvalidParameter {
                field: "viscosity",
                value: 0.0,
                reason: "must be > 0 with a no-slip wall, which acts through the viscosity",
            });
        }
        let volume = params.mass() / params.rest_density();
        let viscosity =
            crate::viscosity::Viscosity::new(&kernel, params.viscosity(), params.spacing(), volume);
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
            corners: std::sync::OnceLock::new(),
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
            pressure: Vec::new(),
            keep_pressures: false,
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
            viscosity: Box::new(viscosity),
            emitted: Vec::new(),
            step: 0,
            time: 0.0,
            last: StepDiagnostics::default(),
        };
        let limit = solver.candidate_limit();
        solver.lists.set_max_candidates(limit);
        solver.lists.set_periodic(solver.domain.periodicity());
        Ok(solver)
    }

    /// How far inside the walls the particles are kept: half the spacing.
    fn margin(&self) -> f32 {
        0.5 * self.params.spacing()
    }
}

/// The corner tables for the walls' shares, when the domain has edges (two axes with
/// walls) or a collider has inner edges: built on first use and kept. A function of
/// the fields it reads, so that a pass can borrow the solver's others mutably beside
/// it.
pub(crate) fn corner_tables<'a, const D: usize>(
    domain: &Domain<D>,
    colliders: &[Collider<D>],
    corners: &'a std::sync::OnceLock<CornerTables>,
    kernel: &Kernel<D>,
) -> Option<&'a CornerTables> {
    (domain.has_edges() || colliders.iter().any(Collider::has_inner_edges))
        .then(|| corners.get_or_init(|| CornerTables::new(kernel)))
}
