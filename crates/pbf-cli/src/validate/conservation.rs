//! Conservation and scale: energy in a closed box without forcing, linear momentum
//! without walls and gravity, and one scene at three scales.

use pbf_solver::{CoreError, Domain, Iterations, Params, Solver};

use super::dam_break::{DamBreakSpec, run_dam_break};
use super::stability::SPACING;

/// Total energy of a column collapsing in a closed box (walls on every side, gravity,
/// the library's defaults, vorticity confinement included), in units of `M g a` (`M`
/// the fluid's mass, `a` the column width; the potential energy counts from the
/// floor). Nothing flows in, so the total must never rise above its start.
///
/// ```
/// let e = pbf_cli::validate::energy_in_a_closed_box(2, 6, 4, 0.1, 0.3)?;
/// assert!(e.largest_rise >= 0.0);
/// assert!(e.points.len() > 10);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyTrace {
    /// 2 or 3.
    pub dimension: usize,
    /// Particles simulated.
    pub particles: usize,
    /// Constraint iterations per step.
    pub iterations: u32,
    /// The tensile term's strength.
    pub s_corr_k: f32,
    /// `(time in s, kinetic, potential)` after every step, from the start.
    pub points: Vec<(f64, f64, f64)>,
    /// The largest amount by which the total ever stood above its value at the start
    /// (0 when it never did).
    pub largest_rise: f64,
}

/// Runs a column of `width x 2 width` particles (`x width/2` deep in 3D), first relaxed
/// for one second in a box of its own width and put at rest, collapsing in a closed
/// box `3 width` long and `3 width` high for `seconds`, at 1/120 s with `iterations`
/// iterations, the tensile term's strength `s_corr_k` (default 0.1) and the rest of
/// the library's defaults.
///
/// # Errors
/// [`CoreError`] from the solver; `dimension` other than 2 or 3.
pub fn energy_in_a_closed_box(
    dimension: usize,
    width: usize,
    iterations: u32,
    s_corr_k: f32,
    seconds: f64,
) -> Result<EnergyTrace, CoreError> {
    match dimension {
        2 => energy::<2>(width, iterations, s_corr_k, seconds),
        3 => energy::<3>(width, iterations, s_corr_k, seconds),
        d => Err(CoreError::InvalidParameter {
            field: "dimension",
            value: d as f64,
            reason: "must be 2 or 3",
        }),
    }
}

fn energy<const D: usize>(
    width: usize,
    iterations: u32,
    s_corr_k: f32,
    seconds: f64,
) -> Result<EnergyTrace, CoreError> {
    let s = SPACING;
    let a = width as f32 * s;
    let params = Params::<D>::builder(s)
        .iterations(Iterations::Fixed(iterations))
        .s_corr_k(s_corr_k)
        .build()?;
    let g = f64::from(-params.gravity()[1]);
    let mut hi = [3.0 * a; D];
    let mut column = [a; D];
    column[1] = 2.0 * a;
    if D == 3 {
        hi[2] = (width / 2).max(2) as f32 * s;
        column[2] = hi[2];
    }
    // A lattice at the rest spacing is denser than the rest density; the constraint
    // would turn that compression into motion in the first steps. Start instead from
    // the column relaxed in a box of its own width, at rest.
    let mut narrow = column;
    narrow[1] = 2.5 * a;
    let mut relax = Solver::new(params.clone(), Domain::new([0.0; D], narrow)?)?;
    relax.add_block([0.0; D], column, [0.0; D])?;
    let relax_steps = (1.0 / f64::from(params.time_step())).round() as u64;
    for _ in 0..relax_steps {
        relax.step()?;
    }
    let mut relaxed = Vec::new();
    relax.positions_interleaved(&mut relaxed);
    let mut solver = Solver::new(params, Domain::new([0.0; D], hi)?)?;
    solver.add_particles(&relaxed, None)?;
    let m = f64::from(solver.params().mass());
    let unit = m * solver.len() as f64 * g * f64::from(a);
    let measure = |solver: &Solver<D>| {
        let (p, v) = (solver.positions(), solver.velocities());
        let mut kinetic = 0.0;
        for axis in v {
            kinetic += axis.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>();
        }
        let potential: f64 = p[1].iter().map(|y| m * g * f64::from(*y)).sum();
        (solver.time(), 0.5 * m * kinetic / unit, potential / unit)
    };
    let mut points = vec![measure(&solver)];
    let steps = (seconds / f64::from(solver.params().time_step())).round() as u64;
    for _ in 0..steps {
        solver.step()?;
        points.push(measure(&solver));
    }
    let start = points[0].1 + points[0].2;
    let largest_rise = points
        .iter()
        .map(|(_, k, p)| k + p - start)
        .fold(0.0f64, f64::max);
    Ok(EnergyTrace {
        dimension: D,
        particles: solver.len(),
        iterations,
        s_corr_k,
        points,
        largest_rise,
    })
}

/// Linear momentum of two blocks that collide head-on and off-centre, far from every
/// wall, without gravity.
///
/// ```
/// let m = pbf_cli::validate::momentum_without_walls(2, 5, 0.2, 0.1)?;
/// assert!(m.largest_drift < 1e-3);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MomentumTrace {
    /// 2 or 3.
    pub dimension: usize,
    /// Particles simulated.
    pub particles: usize,
    /// The vorticity confinement strength used (relative to h).
    pub vorticity_rel: f32,
    /// `(time in s, |P(t) - P(0)| / sum m |v_i(0)|)` after every step.
    pub points: Vec<(f64, f64)>,
    /// The largest relative drift.
    pub largest_drift: f64,
}

/// Two blocks of `width^D` particles approach at 2 m/s each, offset by half a block
/// across, in a domain far larger than they reach, for `seconds`, with the library's
/// defaults except no gravity and the given vorticity confinement.
///
/// # Errors
/// [`CoreError`] from the solver; `dimension` other than 2 or 3.
pub fn momentum_without_walls(
    dimension: usize,
    width: usize,
    seconds: f64,
    vorticity_rel: f32,
) -> Result<MomentumTrace, CoreError> {
    match dimension {
        2 => momentum::<2>(width, seconds, vorticity_rel),
        3 => momentum::<3>(width, seconds, vorticity_rel),
        d => Err(CoreError::InvalidParameter {
            field: "dimension",
            value: d as f64,
            reason: "must be 2 or 3",
        }),
    }
}

fn momentum<const D: usize>(
    width: usize,
    seconds: f64,
    vorticity_rel: f32,
) -> Result<MomentumTrace, CoreError> {
    let s = SPACING;
    let b = width as f32 * s;
    let params = Params::<D>::builder(s)
        .gravity([0.0; D])
        .vorticity_rel(vorticity_rel)
        .build()?;
    let reach = 10.0 * b + 4.0 * seconds as f32;
    let mut solver = Solver::new(params, Domain::new([-reach; D], [reach; D])?)?;
    let mut lo = [-0.5 * b; D];
    lo[0] = -1.5 * b;
    let mut hi = lo.map(|c| c + b);
    let mut v = [0.0; D];
    v[0] = 2.0;
    solver.add_block(lo, hi, v)?;
    lo[0] = 0.5 * b;
    lo[1] += 0.5 * b;
    hi = lo.map(|c| c + b);
    v[0] = -2.0;
    solver.add_block(lo, hi, v)?;
    let total = |solver: &Solver<D>| -> [f64; D] {
        core::array::from_fn(|a| solver.velocities()[a].iter().map(|c| f64::from(*c)).sum())
    };
    let start = total(&solver);
    let scale: f64 = (0..solver.len())
        .map(|i| {
            let v = solver.velocities();
            (0..D)
                .map(|a| f64::from(v[a][i]).powi(2))
                .sum::<f64>()
                .sqrt()
        })
        .sum();
    let steps = (seconds / f64::from(solver.params().time_step())).round() as u64;
    let mut points = vec![(0.0, 0.0)];
    for _ in 0..steps {
        solver.step()?;
        let now = total(&solver);
        let drift = (0..D)
            .map(|a| (now[a] - start[a]).powi(2))
            .sum::<f64>()
            .sqrt()
            / scale;
        points.push((solver.time(), drift));
    }
    Ok(MomentumTrace {
        dimension: D,
        particles: solver.len(),
        vorticity_rel,
        largest_drift: points.iter().fold(0.0, |m, p| m.max(p.1)),
        points,
    })
}

/// The 2D dam break at several scales: the dimensionless front curves and their
/// largest difference from the curve at scale 1.
///
/// ```
/// let r = pbf_cli::validate::scale_invariance(6, 0.5, &[0.01, 1.0])?;
/// assert_eq!(r.curves.len(), 2);
/// assert!(r.largest_difference < 1e-2);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleInvariance {
    /// `(scale, (T, Z) points)`.
    pub curves: Vec<(f32, Vec<(f64, f64)>)>,
    /// The largest `|Z_scale(T) - Z_1(T)|` over every scale and step, in units of `a`.
    pub largest_difference: f64,
}

/// Runs the 2D collapse of a column `width` particles wide to `end` (in `T`) at each
/// of `scales` (lengths and gravity scaled, time step and iterations not).
///
/// # Errors
/// [`CoreError`] from the solver.
pub fn scale_invariance(
    width: usize,
    end: f64,
    scales: &[f32],
) -> Result<ScaleInvariance, CoreError> {
    let mut curves = Vec::new();
    for &scale in scales {
        let mut spec = DamBreakSpec::new(2, width);
        spec.end = end;
        spec.scale = scale;
        curves.push((scale, run_dam_break(&spec)?.points));
    }
    let unit = curves
        .iter()
        .find(|(s, _)| *s == 1.0)
        .map(|c| c.1.clone())
        .unwrap_or_else(|| curves.first().map(|c| c.1.clone()).unwrap_or_default());
    let mut largest = 0.0f64;
    for (_, c) in &curves {
        for (p, q) in c.iter().zip(&unit) {
            largest = largest.max((p.1 - q.1).abs());
        }
    }
    Ok(ScaleInvariance {
        curves,
        largest_difference: largest,
    })
}
