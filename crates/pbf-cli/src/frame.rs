//! One frame of particle data, as the writers and the renderer take it.

use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;

/// Particle data in three dimensions (2D scenes get z = 0), in the solver's order.
///
/// ```
/// let solver = pbf_solver::scenes::build("dam-break-2d", 200)?;
/// let frame = pbf_cli::Frame::from_solver(&solver);
/// assert_eq!(frame.len(), solver.len());
/// assert!(frame.positions.iter().all(|p| p[2] == 0.0));
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Velocities.
    pub velocities: Vec<[f32; 3]>,
    /// Densities.
    pub densities: Vec<f32>,
    /// Stable particle ids (empty when read from a format that does not store them).
    pub ids: Vec<u64>,
}

impl Frame {
    /// A frame of the solver's current state.
    ///
    /// ```
    /// let s = pbf_solver::scenes::build("dam-break", 1000)?;
    /// assert_eq!(pbf_cli::Frame::from_solver(&s).densities.len(), 1000);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn from_solver(solver: &AnySolver) -> Self {
        let mut f = Self::default();
        f.capture(solver);
        f
    }

    /// Replaces the content with the solver's current state, reusing the buffers.
    ///
    /// ```
    /// let mut s = pbf_solver::scenes::build("dam-break", 1000)?;
    /// let mut frame = pbf_cli::Frame::default();
    /// s.step()?;
    /// frame.capture(&s);
    /// assert_eq!(frame.len(), 1000);
    /// # Ok::<(), pbf_solver::CoreError>(())
    /// ```
    pub fn capture(&mut self, solver: &AnySolver) {
        match solver {
            AnySolver::Two(s) => self.capture_in(s),
            AnySolver::Three(s) => self.capture_in(s),
        }
    }

    fn capture_in<const D: usize>(&mut self, s: &Solver<D>) {
        let n = s.len();
        let (x, v) = (s.positions(), s.velocities());
        let pad = |arrays: [&[f32]; D], i: usize| -> [f32; 3] {
            core::array::from_fn(|a| if a < D { arrays[a][i] } else { 0.0 })
        };
        self.positions.clear();
        self.positions.extend((0..n).map(|i| pad(x, i)));
        self.velocities.clear();
        self.velocities.extend((0..n).map(|i| pad(v, i)));
        self.densities.clear();
        self.densities.extend_from_slice(s.densities());
        self.ids.clear();
        self.ids.extend_from_slice(s.ids());
    }

    /// Number of particles.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Frame::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no particles.
    ///
    /// ```
    /// assert!(pbf_cli::Frame::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}
