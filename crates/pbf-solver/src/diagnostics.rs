//! What a step reports about itself.

use std::time::Duration;

/// Wall-clock time of each phase of a step.
///
/// ```
/// let t = pbf_solver::PhaseTimes::default();
/// assert_eq!(t.total(), std::time::Duration::ZERO);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// Emission, forces, prediction and the first collision projection.
    pub predict: Duration,
    /// Grid rebuild and the reordering of every per-particle array.
    pub neighbour_search: Duration,
    /// The coarse density correction ([`crate::ParamsBuilder::coarse_correction`]; zero
    /// when it is off).
    pub coarse: Duration,
    /// The constraint iterations (lambda and position-delta passes with collisions,
    /// and the searches and checks of the lists between them).
    pub constraints: Duration,
    /// Velocity update, contact response, XSPH viscosity (which also computes the
    /// final densities), vorticity confinement and the statistics below.
    pub velocity: Duration,
    /// The physical viscosity's implicit solve ([`crate::ParamsBuilder::viscosity`];
    /// zero when it is off).
    pub viscosity: Duration,
}

impl PhaseTimes {
    /// The sum of the phases.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = pbf_solver::PhaseTimes { predict: Duration::from_millis(1), velocity: Duration::from_millis(2), ..Default::default() };
    /// assert_eq!(t.total(), Duration::from_millis(3));
    /// ```
    pub fn total(&self) -> Duration {
        self.predict
            + self.neighbour_search
            + self.coarse
            + self.constraints
            + self.velocity
            + self.viscosity
    }
}

/// Statistics of one step.
///
/// Density errors count compression only, in the convention of the SPH literature:
/// `max(rho_i / rho0 - 1, 0)`, averaged over all particles or maximised. They are
/// measured at the step's final positions, after its last position correction.
/// Neighbour counts exclude the particle itself.
///
/// ```
/// let d = pbf_solver::StepDiagnostics::default();
/// assert_eq!(d.particles, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepDiagnostics {
    /// The step's number (1 for the first step).
    pub step: u64,
    /// Particles simulated.
    pub particles: usize,
    /// Constraint iterations run.
    pub iterations: u32,
    /// Average density error (compression), a fraction: 0.01 is 1%.
    pub average_density_error: f32,
    /// Maximum density error (compression), a fraction.
    pub max_density_error: f32,
    /// Largest particle speed after the step.
    pub max_speed: f32,
    /// `sum 1/2 m |v|^2` after the step.
    pub kinetic_energy: f64,
    /// Fewest neighbours within h.
    pub min_neighbours: u32,
    /// Average neighbours within h.
    pub average_neighbours: f32,
    /// Most neighbours within h.
    pub max_neighbours: u32,
    /// Entries in the step's neighbour lists (as last built, with the pairs added when
    /// they were mended): the ordered pairs `(i, j)`, `j != i`, within
    /// `h (1 + list_skin)` at the positions of the last search, and those that
    /// particles moving further brought within h since. Every neighbour pass of the step
    /// (`iterations` lambda and position-delta passes, XSPH with curl and the final
    /// densities and, when on, vorticity) evaluates these pairs, sixteen or eight
    /// particles at a time.
    pub list_pairs: u64,
    /// The skin of the step's neighbour lists, relative to h (see `list_pairs`): that
    /// of the step's last search, or of the lists it kept. Each search takes the
    /// narrowest of 0.04, 0.05, 0.06, 0.08 and 0.1 past whose half at most one
    /// particle in 256 (and at most 512) had moved by the end of the last step, and
    /// 0.1 after a step that had to search again inside its iterations: about a
    /// quarter fewer pairs than at 0.1 while few particles move far within a step
    /// (as while a dam-break block collapses), and the fewest searches and mends
    /// when many do.
    ///
    /// ```
    /// use pbf_solver::{Domain, Params, Solver};
    /// let mut s = Solver::new(Params::<2>::builder(0.05).build()?, Domain::new([0.0; 2], [1.0; 2])?)?;
    /// s.add_block([0.0; 2], [0.5, 0.5], [0.0; 2])?;
    /// // The first search takes the widest skin.
    /// assert_eq!(s.step()?.list_skin, 0.1);
    /// for _ in 0..20 {
    ///     let skin = s.step()?.list_skin;
    ///     assert!([0.04, 0.05, 0.06, 0.08, 0.1].contains(&skin));
    /// }
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub list_skin: f32,
    /// Neighbour searches in the step: one whenever too many particles have moved by
    /// more than half the lists' skin (`list_skin h / 2`) since the last search, or bring too
    /// many pairs within h, for the lists to be mended by adding the missing pairs;
    /// checked at the start of the step (on the predicted positions, against the
    /// last step's lists), before every constraint iteration and before the XSPH
    /// pass. So a fluid at rest keeps its lists, and its particles their order, from
    /// step to step (0 searches) until its drift adds up; a step after particles were
    /// added or removed always starts with a search.
    pub searches: u32,
    /// Conjugate-gradient iterations of the physical viscosity's solve in the step
    /// (0 when it is off; at most 100, where the solve keeps its last iterate).
    pub viscosity_iterations: u32,
    /// Time per phase.
    pub times: PhaseTimes,
}
