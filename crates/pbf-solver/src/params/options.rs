//! The choices the parameters hold: the iteration count, the relaxation, the
//! acceleration of the iterations and the backend of the neighbour passes.

use pbf_kernels::LaneKind;

/// How many constraint iterations a step runs.
///
/// ```
/// use pbf_solver::Iterations;
/// let fixed = Iterations::Fixed(4);
/// let adaptive = Iterations::Adaptive { max_density_error_percent: 0.1, min: 1, max: 50 };
/// assert_ne!(fixed, adaptive);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Iterations {
    /// Always this many (Macklin & Müller use 2 to 6; default 4).
    Fixed(u32),
    /// Iterate until the average density error (compression only, in percent of the
    /// rest density) is at most `max_density_error_percent`, running at least `min`
    /// and at most `max` iterations. The count used is reported per step.
    Adaptive {
        /// The target average density error, in percent.
        max_density_error_percent: f32,
        /// The least number of iterations.
        min: u32,
        /// The cap.
        max: u32,
    },
}

/// The Jacobi relaxation `omega` that scales every lambda of the constraint passes
/// (`lambda_i = -omega C_i / (sum_k |grad_k C_i|^2 + eps)`).
///
/// Each pass solves every particle's constraint on its own and applies all the
/// corrections at once, so neighbouring corrections add up: about the rest lattice,
/// one unrelaxed pass over-corrects the shortest density waves by a factor of up to
/// `a_max = 2.64` in 3D and `2.02` in 2D (h = 2 s), and the velocity
/// `v = (p - x) / dt` carries that overshoot into the next step.
///
/// - [`Auto`](Self::Auto) (the default): `omega = min(1, (4/3) / a_max)`, computed from
///   the rest-lattice spectrum of the kernel and the CFM term (0.505 in 3D, 0.66 in 2D
///   at the defaults; [`Solver::relaxation`](crate::Solver::relaxation) reports it).
///   Every wave then shrinks or flips by at most a third per pass, so one or two
///   iterations per step and large time steps stay stable. Where the fluid is
///   compressed by more than 10% (`rho_i > 1.1 rho0`), a particle's multiplier uses
///   `omega 1.1 rho0 / rho_i`: a denser lattice has more neighbours whose corrections
///   add up (`a_max` 1.6 times as large at 2.2 times the rest density), and without
///   the scaling a deep pool squeezed at a large time step over-corrects from pass to
///   pass and boils. Within 10% of rest nothing changes.
/// - [`Fixed`](Self::Fixed)`(w)`, `w` in `(0, 1]`: `Fixed(1.0)` is the paper's
///   unrelaxed Jacobi pass. Long waves (the hydrostatic compression of a deep column)
///   converge `w` times as fast per iteration, so at a fixed iteration count a larger
///   `w` leaves less average density error, but with one or two iterations per step or a
///   large time step the shortest waves grow from step to step and the fluid boils or
///   blows up. [`Iterations::Adaptive`] recovers `Auto`'s accuracy by running more
///   iterations only where the error calls for them.
///
/// Values above 1 are rejected: this is a Jacobi solver, not Gauss-Seidel, and
/// over-relaxation, which speeds up Gauss-Seidel, makes every pass over-correct the
/// short waves further (by `w a_max - 1`, already 1.64 at `w = 1` in 3D) while only
/// the long waves gain; more iterations buy the same gain without the instability.
///
/// ```
/// use pbf_solver::{Params, Relaxation};
/// let p = Params::<3>::builder(0.05).relaxation(Relaxation::Fixed(1.0)).build()?;
/// assert_eq!(p.relaxation(), Relaxation::Fixed(1.0));
/// assert_eq!(Relaxation::default(), Relaxation::Auto);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Relaxation {
    /// `min(1, (4/3) / a_max)` from the rest lattice, times `1.1 rho0 / rho_i` where a
    /// particle is compressed by more than 10%.
    #[default]
    Auto,
    /// This value, in `(0, 1]`.
    Fixed(f32),
}

/// How the constraint iterations of a step combine (see [`ParamsBuilder::acceleration`](crate::ParamsBuilder::acceleration)).
///
/// ```
/// use pbf_solver::{Acceleration, Params};
/// let p = Params::<3>::builder(0.05).acceleration(Acceleration::Chebyshev).build()?;
/// assert_eq!(p.acceleration(), Acceleration::Chebyshev);
/// assert_eq!(Acceleration::default(), Acceleration::None);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Acceleration {
    /// Plain (relaxed) Jacobi: each iteration starts from the last one's positions.
    #[default]
    None,
    /// Chebyshev semi-iteration over the Jacobi passes: long density waves converge
    /// about twice as fast; needs [`Iterations::Fixed`] and [`Relaxation::Auto`].
    Chebyshev,
}

/// Which implementation of the neighbour passes runs.
///
/// All three give the same bits on every input (a test compares every particle over a
/// 3D and a 2D dam break): a lane holds one particle, which adds its neighbours' terms
/// in list order as the scalar path does. `Lanes` is the fastest, `Scalar` the
/// reference.
///
/// ```
/// use pbf_solver::Backend;
/// assert_eq!(Backend::default(), Backend::Lanes);
/// // 16 on a CPU with AVX-512F, else 8.
/// assert!([8, 16].contains(&Backend::Lanes.lane_width()));
/// assert_eq!(Backend::Lanes8.lane_width(), 8);
/// assert_eq!(Backend::Scalar.lane_width(), 1);
/// // Which instructions carry the lanes here ("avx512f", "avx", "f32x8" or "scalar").
/// println!("{}", Backend::Lanes.instructions());
/// assert_eq!(Backend::Scalar.instructions(), "scalar");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The widest lanes this CPU runs, checked at run time: sixteen particles at a
    /// time in one AVX-512 register where the CPU has AVX-512F, else eight as
    /// [`Backend::Lanes8`] runs them (the default).
    #[default]
    Lanes,
    /// Eight particles at a time, on every CPU: in one 256-bit AVX register where the
    /// CPU has AVX (checked at run time), else on `wide`'s `f32x8`, whose
    /// instructions the build's target features choose (two SSE2 registers in a
    /// default x86-64 build, NEON on aarch64). The AVX register is the faster of
    /// the two.
    /// A checkpoint records only whether the backend is `Scalar`, so this one restores
    /// as `Lanes`, which continues with the same bits.
    Lanes8,
    /// One particle and one neighbour at a time through the scalar reference of
    /// `pbf-kernels`.
    Scalar,
}

impl Backend {
    /// How many neighbours one instruction handles with this backend on this CPU.
    pub fn lane_width(self) -> usize {
        self.lane_kind().width()
    }

    /// The instructions that carry this backend's lanes on this CPU: `"avx512f"`
    /// (sixteen lanes), `"avx"` (eight in one register), `"f32x8"` (eight through
    /// `wide`, with the build's target features) or `"scalar"`.
    pub fn instructions(self) -> &'static str {
        self.lane_kind().name()
    }

    /// The lanes of `pbf-kernels` this backend runs on this CPU (the solver's passes
    /// are dispatched to them): always an available kind.
    ///
    /// ```
    /// use pbf_solver::Backend;
    /// use pbf_kernels::LaneKind;
    /// assert_eq!(Backend::Scalar.lane_kind(), LaneKind::Scalar);
    /// assert_eq!(Backend::Lanes.lane_kind(), LaneKind::widest());
    /// assert!(Backend::Lanes8.lane_kind().is_available());
    /// ```
    pub fn lane_kind(self) -> LaneKind {
        match self {
            Backend::Scalar => LaneKind::Scalar,
            Backend::Lanes => LaneKind::widest(),
            Backend::Lanes8 => LaneKind::widest_eight(),
        }
    }
}
