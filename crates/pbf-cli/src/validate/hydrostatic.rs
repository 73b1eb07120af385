//! Hydrostatic pressure: a column of water settled in a closed box, the pressure the
//! density constraint applies ([`Solver::pressures`]) against depth, and its rise
//! against the weight of the fluid, `rho0 |g| d`.

use pbf_solver::{CoreError, Domain, Params, Solver};

/// The relative deviation of the fitted rise of pressure with depth from `rho0 |g|`
/// that a run may have: stated before the run.
pub const HYDROSTATIC_TOLERANCE: f64 = 0.02;

/// The kinetic energy, a fraction of `M |g| H` (the column's mass, gravity, its
/// depth), below which a column counts as settled over the measured steps: stated
/// before the run.
pub const SETTLED_ENERGY: f64 = 1e-3;

/// The column: `width` particles wide (along x, and z in 3D) and `depth` deep at the
/// rest spacing `spacing`, in a closed box of its own width and twice its depth, at
/// the library's defaults (1/120 s); settled for `settle` seconds, then measured over
/// `measure` seconds.
///
/// ```
/// let spec = pbf_cli::validate::HydrostaticSpec::full(2);
/// assert_eq!((spec.width, spec.depth), (40, 40));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HydrostaticSpec {
    /// 2 or 3.
    pub dimension: usize,
    /// Width in particles.
    pub width: usize,
    /// Depth in particles.
    pub depth: usize,
    /// The rest spacing in metres.
    pub spacing: f32,
    /// Seconds before the measurement.
    pub settle: f64,
    /// Seconds measured.
    pub measure: f64,
}

impl HydrostaticSpec {
    /// The full runs: 40 x 40 particles in 2D, 12 x 40 x 12 in 3D, at 0.01 m, 3 s
    /// settled and 0.5 s measured.
    pub fn full(dimension: usize) -> Self {
        Self {
            dimension,
            width: if dimension == 2 { 40 } else { 12 },
            depth: 40,
            spacing: 0.01,
            settle: 3.0,
            measure: 0.5,
        }
    }

    /// The quick runs: half as deep (20 particles), 2 s settled.
    pub fn quick(dimension: usize) -> Self {
        Self {
            width: if dimension == 2 { 20 } else { 8 },
            depth: 20,
            settle: 2.0,
            ..Self::full(dimension)
        }
    }
}

/// One settled column's pressure.
///
/// ```
/// use pbf_cli::validate::{HydrostaticSpec, hydrostatic_column};
/// let spec = HydrostaticSpec { dimension: 2, width: 8, depth: 8, spacing: 0.01, settle: 0.1, measure: 0.05 };
/// let r = hydrostatic_column(&spec)?;
/// assert_eq!(r.particles, 64);
/// assert!(r.slope_ratio.is_finite() && !r.by_depth.is_empty());
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HydrostaticRun {
    /// The column.
    pub spec: HydrostaticSpec,
    /// Particles simulated.
    pub particles: usize,
    /// The kernel radius h in metres.
    pub h: f64,
    /// `rho0 |g|` in pascals per metre.
    pub weight: f64,
    /// The mean kinetic energy of the measured steps over `M |g| H`.
    pub kinetic_energy: f64,
    /// The mean average density error of the measured steps (a fraction).
    pub density_error: f64,
    /// The rise of pressure with depth fitted by least squares over the particles
    /// of every measured step that are at least h below the free surface and h above
    /// the floor, in pascals per metre.
    pub slope: f64,
    /// `slope / (rho0 |g|)`.
    pub slope_ratio: f64,
    /// The depth at which the fitted line reaches 0, in metres (negative: above the
    /// free surface).
    pub zero_depth: f64,
    /// `(depth in metres, mean pressure in pascals)` per layer one spacing thick,
    /// averaged over the measured steps, from the surface down.
    pub by_depth: Vec<(f64, f64)>,
}

impl HydrostaticRun {
    /// Whether the column settled (its kinetic energy below [`SETTLED_ENERGY`]) and
    /// its pressure rises within [`HYDROSTATIC_TOLERANCE`] of the weight.
    pub fn passes(&self) -> bool {
        self.kinetic_energy < SETTLED_ENERGY
            && (self.slope_ratio - 1.0).abs() <= HYDROSTATIC_TOLERANCE
    }
}

/// Runs the column of `spec`.
///
/// The depth of a particle is measured from the free surface at the height the
/// fluid's rest volume fills, `N s^D / width^(D-1)`. The fit leaves out two layers,
/// for what acts there besides the weight: the particles within h of the free surface
/// (their kernels reach past it, the unilateral constraint does not pull, and the
/// pressure there is the surface's, 0, not the bulk's) and those within h of the
/// floor (where the walls' share of density and gradient, the wall model, acts).
///
/// # Errors
/// [`CoreError`] from the solver; `dimension` other than 2 or 3.
pub fn hydrostatic_column(spec: &HydrostaticSpec) -> Result<HydrostaticRun, CoreError> {
    match spec.dimension {
        2 => column::<2>(spec),
        3 => column::<3>(spec),
        d => Err(CoreError::InvalidParameter {
            field: "dimension",
            value: d as f64,
            reason: "must be 2 or 3",
        }),
    }
}

fn column<const D: usize>(spec: &HydrostaticSpec) -> Result<HydrostaticRun, CoreError> {
    let s = spec.spacing;
    let (w, depth) = (spec.width as f32 * s, spec.depth as f32 * s);
    let params = Params::<D>::builder(s).build()?;
    let mut hi = [w; D];
    hi[1] = 2.0 * depth;
    let mut block = [w; D];
    block[1] = depth;
    let mut solver = Solver::new(params, Domain::new([0.0; D], hi)?)?;
    solver.add_block([0.0; D], block, [0.0; D])?;
    solver.keep_pressures(true);
    let p = solver.params();
    let (rho0, g, h) = (
        f64::from(p.rest_density()),
        -f64::from(p.gravity()[1]),
        f64::from(p.kernel_radius()),
    );
    let dt = f64::from(p.time_step());
    let n = solver.len();
    let (s, w) = (f64::from(s), f64::from(w));
    let surface = n as f64 * s.powi(D as i32) / w.powi(D as i32 - 1);
    let mass = f64::from(p.mass()) * n as f64;
    let settle = (spec.settle / dt).round() as usize;
    let measure = ((spec.measure / dt).round() as usize).max(1);
    for _ in 0..settle {
        solver.step()?;
    }
    let layers = (surface / s).ceil() as usize + 2;
    let (mut sums, mut counts) = (vec![0.0f64; layers], vec![0u64; layers]);
    let (mut m, mut sd, mut sp, mut sdd, mut sdp) = (0.0f64, 0.0, 0.0, 0.0, 0.0);
    let (mut energy, mut error) = (0.0, 0.0);
    for _ in 0..measure {
        let d = solver.step()?;
        energy += d.kinetic_energy / (mass * g * surface);
        error += f64::from(d.average_density_error);
        let (y, pressure) = (solver.positions()[1], solver.pressures());
        for (yi, pi) in y.iter().zip(pressure) {
            let (y, p) = (f64::from(*yi), f64::from(*pi));
            let d = surface - y;
            let layer = ((d / s).floor().max(0.0) as usize).min(layers - 1);
            sums[layer] += p;
            counts[layer] += 1;
            if d >= h && y >= h {
                m += 1.0;
                (sd, sp, sdd, sdp) = (sd + d, sp + p, sdd + d * d, sdp + d * p);
            }
        }
    }
    let slope = (m * sdp - sd * sp) / (m * sdd - sd * sd);
    let intercept = (sp - slope * sd) / m;
    Ok(HydrostaticRun {
        spec: *spec,
        particles: n,
        h,
        weight: rho0 * g,
        kinetic_energy: energy / measure as f64,
        density_error: error / measure as f64,
        slope,
        slope_ratio: slope / (rho0 * g),
        zero_depth: -intercept / slope,
        by_depth: sums
            .iter()
            .zip(&counts)
            .enumerate()
            .filter(|(_, (_, c))| **c > 0)
            .map(|(k, (sum, c))| ((k as f64 + 0.5) * s, sum / *c as f64))
            .collect(),
    })
}
