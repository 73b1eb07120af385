//! The collapse of a water column (Martin & Moyce 1952): a column of width `a` and
//! height `2a` released against a wall; the surge front's distance from that wall,
//! `Z = z / a`, against `T = t sqrt(2 g / a)`, beside the published points.

use pbf_solver::scenes::scene_time_step;
use pbf_solver::{CoreError, Domain, Iterations, Params, Solver, Wall};

use super::stability::SPACING;

/// The published points (their figure 3, both column widths), with the source header,
/// as shipped in `crates/pbf-cli/data/martin_moyce_1952.csv`.
pub const MARTIN_MOYCE_CSV: &str = include_str!("../../data/martin_moyce_1952.csv");

/// One published point.
///
/// ```
/// let points = pbf_cli::validate::martin_moyce();
/// assert_eq!(points.len(), 25);
/// assert_eq!(points[0].series, "a=1.125in");
/// assert!((points[0].t - 0.849).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ReferencePoint {
    /// The experiment's series (its column width).
    pub series: String,
    /// `T = t sqrt(2 g / a)`.
    pub t: f64,
    /// `Z = z / a`.
    pub z: f64,
}

/// The published points, parsed from [`MARTIN_MOYCE_CSV`] (comment lines start with
/// `#`, then a header `series,T,Z`).
pub fn martin_moyce() -> Vec<ReferencePoint> {
    parse_reference(MARTIN_MOYCE_CSV)
}

/// Parses `series,T,Z` rows, skipping `#` comments, the header and malformed rows.
fn parse_reference(text: &str) -> Vec<ReferencePoint> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split(',');
            let (series, t, z) = (f.next()?, f.next()?, f.next()?);
            Some(ReferencePoint {
                series: series.trim().to_owned(),
                t: t.trim().parse().ok()?,
                z: z.trim().parse().ok()?,
            })
        })
        .collect()
}

/// One dam-break run. The tank is `16 a` long (the published front reaches `14 a`)
/// and `2.5 a` high; in 3D it is `depth` particles deep between frictionless walls.
///
/// ```
/// let spec = pbf_cli::validate::DamBreakSpec::new(2, 20);
/// assert_eq!(spec.scale, 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DamBreakSpec {
    /// 2 or 3.
    pub dimension: usize,
    /// The column width `a` in particles.
    pub width: usize,
    /// 3D only: the depth in particles.
    pub depth: usize,
    /// Time step in seconds (at scale 1).
    pub time_step: f32,
    /// The iteration mode.
    pub iterations: Iterations,
    /// Run until this `T`.
    pub end: f64,
    /// Every length (spacing, domain, column) and gravity multiplied by this.
    pub scale: f32,
    /// Whether the column first settles at rest behind a gate at `x = a` (a wall of
    /// a tank `a` long), which then opens at once: the released column is the
    /// relaxed one, not the lattice.
    pub relax: bool,
    /// The front: `None`, the farthest particle plus half a spacing; `Some(d)`, the
    /// far edge of the farthest column (one spacing wide) whose fluid is at least `d`
    /// spacings deep ([`front_by_depth`]).
    pub front_depth: Option<f32>,
    /// The kinematic viscosity in m^2/s (at the run's scale; 0: none), and with it a
    /// no-slip floor ([`water_viscosity`] gives the experiment's).
    pub viscosity: f32,
    /// Whether the tensile correction `s_corr` acts (at the library's default
    /// strength) or is off.
    pub tensile: bool,
}

impl DamBreakSpec {
    /// The plain settings: 1/240 s, 6 iterations, to `T = 9.5` (past the last
    /// published point), depth `a / 2` in 3D, scale 1, the lattice released at once,
    /// the front the farthest particle.
    pub fn new(dimension: usize, width: usize) -> Self {
        Self {
            dimension,
            width,
            depth: (width / 2).max(2),
            time_step: 1.0 / 240.0,
            iterations: Iterations::Fixed(6),
            end: 9.5,
            scale: 1.0,
            relax: false,
            front_depth: None,
            viscosity: 0.0,
            tensile: true,
        }
    }

    /// The refinement study's settings: iterations adaptive to an average density
    /// error of at most [`REFINEMENT_DENSITY_ERROR`] percent (2 to 100), the time step
    /// of the built-in scenes for a fall from `2a` (Courant number 0.5, at most
    /// 1/240 s), the column relaxed behind a gate, and the front where the fluid is
    /// [`FRONT_DEPTH`] spacings deep.
    ///
    /// ```
    /// let spec = pbf_cli::validate::DamBreakSpec::refinement(2, 100);
    /// assert!(spec.relax && spec.time_step < 1.0 / 240.0);
    /// ```
    pub fn refinement(dimension: usize, width: usize) -> Self {
        let height = 2.0 * width as f32 * SPACING;
        Self {
            time_step: scene_time_step(height, 2.0 * SPACING, 9.81),
            iterations: Iterations::Adaptive {
                max_density_error_percent: REFINEMENT_DENSITY_ERROR,
                min: 2,
                max: 100,
            },
            relax: true,
            front_depth: Some(FRONT_DEPTH),
            ..Self::new(dimension, width)
        }
    }
}

/// The average density error (percent) the refinement study's adaptive iterations
/// hold every step to.
pub const REFINEMENT_DENSITY_ERROR: f32 = 0.5;

/// The depth, in particle spacings, from which the refinement study counts fluid as
/// the surge: a layer thinner than the kernel radius (2 spacings) is not resolved
/// fluid (its particles lack the neighbours of their density), and the leading film
/// of single particles that outruns the surge is not what the experiment's front
/// was read from.
pub const FRONT_DEPTH: f32 = 2.0;

/// The width of the wider column of Martin & Moyce's experiment: 2.25 in, in metres.
pub const EXPERIMENT_WIDTH: f64 = 2.25 * 0.0254;

/// The kinematic viscosity of water (m^2/s, at 20 C).
pub const WATER_VISCOSITY: f64 = 1.0e-6;

/// The kinematic viscosity that gives a column `width` particles wide (at the
/// study's spacing and `g = 9.81`) the Reynolds number `sqrt(g a) a / nu` of water in
/// the experiment's 2.25 in column: `nu = nu_water (a / a_experiment)^(3/2)`. The
/// experiment's wall friction acts through it on a no-slip floor
/// ([`DamBreakSpec::viscosity`]).
///
/// ```
/// // A column 1.25 m wide (25 particles) behaves as the 57 mm one of water with
/// // about a hundred times water's viscosity.
/// let nu = pbf_cli::validate::water_viscosity(25);
/// assert!((nu - 1.02e-4).abs() < 1e-6, "{nu}");
/// ```
pub fn water_viscosity(width: usize) -> f32 {
    let a = width as f64 * f64::from(SPACING);
    (WATER_VISCOSITY * (a / EXPERIMENT_WIDTH).powf(1.5)) as f32
}

/// The front curve of a run.
///
/// ```
/// let mut spec = pbf_cli::validate::DamBreakSpec::new(2, 8);
/// spec.end = 1.0;
/// let c = pbf_cli::validate::run_dam_break(&spec)?;
/// assert_eq!(c.particles, 128);
/// assert!((c.points[0].1 - 1.0).abs() < 1e-6); // the front starts at the column's side
/// assert!(c.points.last().unwrap().1 > 1.0);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FrontCurve {
    /// The run.
    pub spec: DamBreakSpec,
    /// Particles simulated.
    pub particles: usize,
    /// `(T, Z)` from the start, after every step.
    pub points: Vec<(f64, f64)>,
}

/// Runs the collapse and records the front after every step: the largest `x` of any
/// particle plus half a spacing (its edge), over `a`.
///
/// # Errors
/// [`CoreError`] from the solver; [`CoreError::InvalidParameter`] (`dimension`) for
/// a dimension other than 2 or 3.
///
/// ```
/// let mut spec = pbf_cli::validate::DamBreakSpec::new(4, 8);
/// assert!(pbf_cli::validate::run_dam_break(&spec).is_err());
/// ```
pub fn run_dam_break(spec: &DamBreakSpec) -> Result<FrontCurve, CoreError> {
    match spec.dimension {
        2 => front::<2>(spec),
        3 => front::<3>(spec),
        d => Err(CoreError::InvalidParameter {
            field: "dimension",
            value: d as f64,
            reason: "must be 2 or 3",
        }),
    }
}

fn front<const D: usize>(spec: &DamBreakSpec) -> Result<FrontCurve, CoreError> {
    let s = SPACING * spec.scale;
    let g = 9.81 * spec.scale;
    let a = spec.width as f32 * s;
    let mut gravity = [0.0; D];
    gravity[1] = -g;
    let params = Params::<D>::builder(s)
        .time_step(spec.time_step)
        .iterations(spec.iterations)
        .gravity(gravity)
        .viscosity(spec.viscosity);
    let params = if spec.tensile {
        params
    } else {
        params.s_corr_k(0.0)
    }
    .build()?;
    let mut hi = [0.0; D];
    hi[0] = 16.0 * a;
    hi[1] = 2.5 * a;
    let mut column = [0.0; D];
    column[0] = a;
    column[1] = 2.0 * a;
    if D == 3 {
        hi[2] = spec.depth as f32 * s;
        column[2] = hi[2];
    }
    let time_scale = (2.0 * f64::from(g) / f64::from(a)).sqrt();
    let mut walls = [[Wall::FreeSlip; 2]; D];
    if spec.viscosity > 0.0 {
        walls[1][0] = Wall::NoSlip;
    }
    let mut solver = Solver::new(params.clone(), Domain::new([0.0; D], hi)?.with_walls(walls))?;
    if spec.relax {
        let mut gate = hi;
        gate[0] = a;
        let mut behind = Solver::new(params, Domain::new([0.0; D], gate)?)?;
        behind.add_block([0.0; D], column, [0.0; D])?;
        // At rest: the fastest particle below 1% of sqrt(g a).
        settle(&mut behind, time_scale, 0.01 * f64::from(g * a).sqrt())?;
        let mut points = Vec::new();
        behind.positions_interleaved(&mut points);
        solver.add_particles(&points, None)?;
    } else {
        solver.add_block([0.0; D], column, [0.0; D])?;
    }
    let (a64, s64) = (f64::from(a), f64::from(s));
    let front = |solver: &Solver<D>| match spec.front_depth {
        None => {
            let x = solver.positions()[0];
            (f64::from(x.iter().fold(f32::MIN, |m, v| m.max(*v))) + 0.5 * s64) / a64
        }
        Some(depth) => front_by_depth(solver, depth) / a64,
    };
    let mut points = vec![(0.0, front(&solver))];
    let steps = (spec.end / (f64::from(spec.time_step) * time_scale)).ceil() as u64;
    for _ in 0..steps {
        solver.step()?;
        points.push((solver.time() * time_scale, front(&solver)));
    }
    Ok(FrontCurve {
        spec: *spec,
        particles: solver.len(),
        points,
    })
}

/// Steps the column behind its gate until it is at rest: from `T = 2` on, until its
/// largest speed is below `rest` (m/s), for at most `T = 20` (`time_scale` is
/// `sqrt(2 g / a)`).
fn settle<const D: usize>(
    solver: &mut Solver<D>,
    time_scale: f64,
    rest: f64,
) -> Result<(), CoreError> {
    while solver.time() * time_scale < 20.0 {
        let d = solver.step()?;
        if f64::from(d.max_speed) < rest && solver.time() * time_scale > 2.0 {
            break;
        }
    }
    Ok(())
}

/// The far edge of the farthest column of fluid, one spacing wide along x, whose fluid
/// is at least `depth` spacings deep: in 2D the column's particles times the spacing,
/// in 3D its particles over the particles across the tank's depth.
///
/// ```
/// use pbf_solver::{Domain, Params, Solver};
/// use pbf_cli::validate::front_by_depth;
/// let params = Params::<2>::builder(0.01).build()?;
/// let mut s = Solver::new(params, Domain::new([0.0; 2], [1.0; 2])?)?;
/// s.add_block([0.0; 2], [0.2, 0.1], [0.0; 2])?; // 10 deep up to x = 0.2
/// s.add_particles(&[[0.5, 0.005]], None)?; // a lone particle far ahead
/// assert!((front_by_depth(&s, 2.0) - 0.2).abs() < 1e-6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn front_by_depth<const D: usize>(solver: &Solver<D>, depth: f32) -> f64 {
    let s = f64::from(solver.params().spacing());
    let (lo, hi) = (solver.domain().lo(), solver.domain().hi());
    let across = if D == 3 {
        ((f64::from(hi[2]) - f64::from(lo[2])) / s).round().max(1.0)
    } else {
        1.0
    };
    let columns = ((f64::from(hi[0]) - f64::from(lo[0])) / s).ceil() as usize + 1;
    let mut counts = vec![0u32; columns];
    for &x in solver.positions()[0] {
        let k = ((f64::from(x) - f64::from(lo[0])) / s).floor().max(0.0) as usize;
        counts[k.min(columns - 1)] += 1;
    }
    let needed = f64::from(depth) * across;
    counts
        .iter()
        .rposition(|&c| f64::from(c) >= needed)
        .map_or(f64::from(lo[0]), |k| f64::from(lo[0]) + (k + 1) as f64 * s)
}

/// Mean and largest `|Z - Z_published|` over published points, our `Z` interpolated
/// linearly in `T`.
///
/// ```
/// use pbf_cli::validate::{deviation, FrontCurve, DamBreakSpec, ReferencePoint};
/// let curve = FrontCurve { spec: DamBreakSpec::new(2, 8), particles: 0, points: vec![(0.0, 1.0), (2.0, 3.0)] };
/// let reference = [ReferencePoint { series: "x".into(), t: 1.0, z: 2.5 }];
/// let d = deviation(&curve, &reference);
/// assert!((d.mean - 0.5).abs() < 1e-12 && d.points == 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// Mean absolute deviation in `Z` (units of `a`).
    pub mean: f64,
    /// Largest absolute deviation in `Z`.
    pub max: f64,
    /// Mean of `|Z - Z_published| / Z_published`.
    pub mean_relative: f64,
    /// Points compared (those within the curve's `T` range).
    pub points: usize,
}

/// The deviation of `curve` from `reference` (see [`Deviation`]).
pub fn deviation(curve: &FrontCurve, reference: &[ReferencePoint]) -> Deviation {
    let mut diffs = Vec::new();
    for r in reference {
        if let Some(z) = interpolate(&curve.points, r.t) {
            diffs.push(((z - r.z).abs(), (z - r.z).abs() / r.z));
        }
    }
    let n = diffs.len().max(1) as f64;
    Deviation {
        mean: diffs.iter().map(|d| d.0).sum::<f64>() / n,
        max: diffs.iter().fold(0.0, |m, d| m.max(d.0)),
        mean_relative: diffs.iter().map(|d| d.1).sum::<f64>() / n,
        points: diffs.len(),
    }
}

/// The front's mean speed `dZ/dT` between `T = 6` and `T = 9`, once the surge runs
/// at its own pace (`None` when the curve ends before `T = 9`). Ritter's
/// shallow-water solution for a dam break onto a dry, frictionless bed runs at
/// `2 sqrt(g h0)`: `dZ/dT = 2` for a column `2a` high.
///
/// ```
/// use pbf_cli::validate::{DamBreakSpec, FrontCurve, late_front_speed};
/// let curve = FrontCurve { spec: DamBreakSpec::new(2, 8), particles: 0, points: vec![(0.0, 1.0), (10.0, 21.0)] };
/// assert!((late_front_speed(&curve).unwrap() - 2.0).abs() < 1e-12);
/// ```
pub fn late_front_speed(curve: &FrontCurve) -> Option<f64> {
    let (early, late) = (
        interpolate(&curve.points, 6.0)?,
        interpolate(&curve.points, 9.0)?,
    );
    Some((late - early) / 3.0)
}

/// The front speed of shallow-water theory over a dry frictionless bed (Ritter), in
/// `dZ/dT`: see [`late_front_speed`].
pub const RITTER_FRONT_SPEED: f64 = 2.0;

/// `y(x)` by linear interpolation over points sorted by `x`; `None` outside them.
pub(crate) fn interpolate(points: &[(f64, f64)], x: f64) -> Option<f64> {
    let k = points.partition_point(|p| p.0 < x);
    if k == 0 {
        return (points.first()?.0 == x).then(|| points[0].1);
    }
    let (a, b) = (points[k - 1], *points.get(k)?);
    let u = if b.0 > a.0 {
        (x - a.0) / (b.0 - a.0)
    } else {
        0.0
    };
    Some(a.1 + u * (b.1 - a.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_parses_whole_and_skips_junk() {
        let all = martin_moyce();
        assert_eq!(all.len(), 25);
        assert_eq!(all.iter().filter(|p| p.series == "a=2.25in").count(), 15);
        assert!(
            all.windows(2)
                .all(|w| w[0].series != w[1].series || w[0].t < w[1].t)
        );
        let odd = parse_reference("# c\nseries,T,Z\nx,1,2\nbroken\ny,nan?,3\n");
        assert_eq!(
            odd,
            [ReferencePoint {
                series: "x".into(),
                t: 1.0,
                z: 2.0
            }]
        );
    }

    #[test]
    fn interpolation_is_linear_and_bounded() {
        let p = [(0.0, 0.0), (1.0, 2.0), (3.0, 4.0)];
        assert_eq!(interpolate(&p, 0.5), Some(1.0));
        assert_eq!(interpolate(&p, 2.0), Some(3.0));
        assert_eq!(interpolate(&p, 0.0), Some(0.0));
        assert_eq!(interpolate(&p, 3.0), Some(4.0));
        assert_eq!(interpolate(&p, 3.5), None);
        assert_eq!(interpolate(&p, -1.0), None);
    }
}
