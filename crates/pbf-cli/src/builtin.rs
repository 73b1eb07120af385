//! The built-in scenes of [`pbf_solver::scenes`] as scene files, for `pbf init`.
//!
//! Parameters, domain and colliders are read off the solver the library builds, so
//! they match it exactly; the fluid blocks are not stored by the solver, so they are
//! recomputed here with the library's formulas (operation for operation, so that the
//! `f32` values agree bit for bit). The round-trip test of every scene (load the
//! written file, build, step, compare with the library) keeps the two in step.

use std::fmt::Write as _;

use pbf_solver::scenes::{self, AnySolver, SPACING};
use pbf_solver::{
    Acceleration, Backend, ColliderKind, Iterations, Relaxation, Shape, Solver, Wall,
};

use crate::error::CliError;
use crate::scene::{
    AccelerationName, AdaptiveSpec, BackendName, BlockSpec, ColliderSpec, ContainerSpec,
    DomainSpec, RelaxationSpec, RunSpec, SceneFile, ShapeName, SolverSpec, WallName, WallSpec,
    XsphPeriodSpec,
};

/// The particle count `pbf init` uses when none is given: 8000 in 3D, 2000 in 2D.
///
/// ```
/// assert_eq!(pbf_cli::default_particles(3), 8000);
/// ```
pub fn default_particles(dimension: usize) -> usize {
    if dimension == 2 { 2000 } else { 8000 }
}

/// The scene file of the built-in scene `name` with about `particles` particles, with a
/// `[run]` section of `duration` seconds writing a frame every `every` steps.
///
/// # Errors
/// [`CliError::UnknownScene`] for a name not in [`pbf_solver::scenes::SCENES`];
/// [`CliError::InvalidArgument`] for a particle count the library rejects.
///
/// ```
/// let file = pbf_cli::builtin_scene("dam-break-2d", 800, 2.0, 2)?;
/// assert_eq!(file.dimension, 2);
/// assert_eq!(file.blocks.len(), 1);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn builtin_scene(
    name: &str,
    particles: usize,
    duration: f64,
    every: u64,
) -> Result<SceneFile, CliError> {
    if !scenes::SCENES.iter().any(|s| s.name == name) {
        return Err(CliError::UnknownScene {
            name: name.to_owned(),
            known: scene_names(),
        });
    }
    let solver = scenes::build(name, particles).map_err(|e| CliError::InvalidArgument {
        flag: "--particles",
        message: e.to_string(),
    })?;
    let blocks = blocks(name, particles, &solver);
    let mut file = match &solver {
        AnySolver::Two(s) => describe(s, &blocks),
        AnySolver::Three(s) => describe(s, &blocks),
    };
    file.run = Some(RunSpec {
        steps: None,
        duration: Some(duration),
        every: Some(every),
    });
    Ok(file)
}

/// The names of the built-in scenes, comma separated.
pub(crate) fn scene_names() -> String {
    scenes::SCENES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The library's `side`: the lattice side of a block of about `particles` particles.
fn side(particles: usize, dimension: u32) -> usize {
    ((particles as f64).powf(1.0 / f64::from(dimension)).round() as usize).max(2)
}

/// The fluid blocks of each built-in scene, as `(lo, hi)`, computed as in
/// `pbf_solver::scenes`. Where a block depends on the container, its sizes are read off
/// the built scene (exactly the `f32`s the library computed) rather than recomputed.
fn blocks(name: &str, particles: usize, scene: &AnySolver) -> Vec<(Vec<f32>, Vec<f32>)> {
    let s = SPACING;
    match (name, scene) {
        ("dam-break", _) => {
            let a = side(particles, 3) as f32 * s;
            vec![(vec![0.0; 3], vec![a, a, a])]
        }
        ("dam-break-2d", _) => {
            let a = side(particles / 2, 2) as f32 * s;
            vec![(vec![0.0; 2], vec![a, 2.0 * a])]
        }
        ("double-dam-break", _) => {
            let n = side(particles, 3);
            let a = n as f32 * s;
            let half = (n / 2).max(1) as f32 * s;
            vec![
                (vec![0.0; 3], vec![a, a, half]),
                (vec![2.0 * a, 0.0, a - half], vec![3.0 * a, a, a]),
            ]
        }
        ("block-at-rest", _) => {
            let a = side(particles, 3) as f32 * s;
            vec![(vec![0.0; 3], vec![a; 3])]
        }
        ("block-at-rest-2d", _) => {
            let a = side(particles, 2) as f32 * s;
            vec![(vec![0.0; 2], vec![a; 2])]
        }
        ("glass", AnySolver::Three(solver)) => {
            // A block of b x 2b x b centred over the glass, its middle at the rim.
            let b = side(particles / 2, 3) as f32 * s;
            let c = 0.5 * solver.domain().hi()[0];
            let Some(Shape::Cylinder { height, .. }) =
                solver.colliders().first().map(|c| *c.shape())
            else {
                return Vec::new();
            };
            vec![(
                vec![c - 0.5 * b, height - b, c - 0.5 * b],
                vec![c + 0.5 * b, height + b, c + 0.5 * b],
            )]
        }
        ("glass-2d", AnySolver::Two(solver)) => {
            let b = side(particles / 2, 2) as f32 * s;
            let c = 0.5 * solver.domain().hi()[0];
            let Some(Shape::Box { half_extents, .. }) =
                solver.colliders().first().map(|c| *c.shape())
            else {
                return Vec::new();
            };
            let height = 2.0 * half_extents[1];
            vec![(vec![c - 0.5 * b, height - b], vec![c + 0.5 * b, height + b])]
        }
        ("poiseuille-2d" | "couette-2d", AnySolver::Two(solver)) => {
            // The channel is full: one block over the whole domain.
            let (lo, hi) = (solver.domain().lo(), solver.domain().hi());
            vec![(lo.to_vec(), hi.to_vec())]
        }
        _ => Vec::new(),
    }
}

/// An `f32` as the `f64` with the shortest decimal form that reads back as it, so the
/// file says `0.05` rather than `0.05000000074505806`.
fn num(x: f32) -> f64 {
    format!("{x}").parse().unwrap_or(f64::from(x))
}

fn nums(x: &[f32]) -> Vec<f64> {
    x.iter().copied().map(num).collect()
}

fn describe<const D: usize>(solver: &Solver<D>, blocks: &[(Vec<f32>, Vec<f32>)]) -> SceneFile {
    let p = solver.params();
    let (k, n, dq) = p.s_corr();
    let (iterations, adaptive) = match p.iterations() {
        Iterations::Fixed(n) => (Some(n), None),
        Iterations::Adaptive {
            max_density_error_percent,
            min,
            max,
        } => (
            None,
            Some(AdaptiveSpec {
                max_density_error_percent: num(max_density_error_percent),
                min,
                max,
            }),
        ),
    };
    let solver_spec = SolverSpec {
        spacing: num(p.spacing()),
        kernel_radius_rel: Some(num(p.kernel_radius_rel())),
        rest_density: Some(num(p.rest_density())),
        time_step: Some(num(p.time_step())),
        iterations,
        adaptive,
        gravity: Some(nums(&p.gravity())),
        cfm_rel: Some(num(p.cfm_rel())),
        s_corr_k: Some(num(k)),
        s_corr_n: Some(n),
        s_corr_dq_rel: Some(num(dq)),
        xsph_c: Some(num(p.xsph_c())),
        xsph_period: Some(
            p.xsph_period()
                .map_or(XsphPeriodSpec::Step, |t| XsphPeriodSpec::Seconds(num(t))),
        ),
        vorticity_rel: Some(num(p.vorticity_rel())),
        // Written only when on, and the walls only when some face is no-slip: the
        // scenes without keep their text.
        viscosity: (p.viscosity() > 0.0).then(|| num(p.viscosity())),
        unilateral: Some(p.unilateral()),
        relaxation: Some(match p.relaxation() {
            Relaxation::Auto => RelaxationSpec::Auto,
            Relaxation::Fixed(w) => RelaxationSpec::Fixed(num(w)),
        }),
        acceleration: Some(match p.acceleration() {
            Acceleration::None => AccelerationName::None,
            Acceleration::Chebyshev => AccelerationName::Chebyshev,
        }),
        coarse_correction: Some(p.coarse_correction()),
        keep_lists: Some(p.keep_lists()),
        backend: Some(match p.backend() {
            Backend::Lanes => BackendName::Lanes,
            Backend::Lanes8 => BackendName::Lanes8,
            Backend::Scalar => BackendName::Scalar,
        }),
    };
    let d = solver.domain();
    let (friction, restitution) = d.response();
    let domain = DomainSpec {
        lo: nums(&d.lo()),
        hi: nums(&d.hi()),
        friction: Some(num(friction)),
        restitution: Some(num(restitution)),
        wall: d.has_no_slip().then(|| wall_spec(&d.walls())),
        // Written only when some axis is periodic: the scenes without keep their text.
        periodic: d
            .periodic()
            .iter()
            .any(|&p| p)
            .then(|| d.periodic().to_vec()),
        // Written only when some face moves.
        wall_velocity: moving_faces(d),
    };
    let colliders = solver
        .colliders()
        .iter()
        .map(|c| {
            let mut spec = ColliderSpec {
                shape: ShapeName::Sphere,
                point: None,
                normal: None,
                center: None,
                half_extents: None,
                a: None,
                b: None,
                base: None,
                radius: None,
                height: None,
                container: None,
                friction: Some(num(c.response().0)),
                restitution: Some(num(c.response().1)),
                wall: (c.wall() == Wall::NoSlip).then_some(WallName::NoSlip),
            };
            match *c.shape() {
                Shape::Plane { point, normal } => {
                    spec.shape = ShapeName::Plane;
                    spec.point = Some(nums(&point));
                    spec.normal = Some(nums(&normal));
                }
                Shape::Box {
                    center,
                    half_extents,
                } => {
                    spec.shape = ShapeName::Box;
                    spec.center = Some(nums(&center));
                    spec.half_extents = Some(nums(&half_extents));
                }
                Shape::Sphere { center, radius } => {
                    spec.shape = ShapeName::Sphere;
                    spec.center = Some(nums(&center));
                    spec.radius = Some(num(radius));
                }
                Shape::Capsule { a, b, radius } => {
                    spec.shape = ShapeName::Capsule;
                    spec.a = Some(nums(&a));
                    spec.b = Some(nums(&b));
                    spec.radius = Some(num(radius));
                }
                Shape::Cylinder {
                    base,
                    radius,
                    height,
                } => {
                    spec.shape = ShapeName::Cylinder;
                    spec.base = Some(nums(&base));
                    spec.radius = Some(num(radius));
                    spec.height = Some(num(height));
                }
            }
            if let ColliderKind::Container {
                wall_thickness,
                open_top,
            } = c.kind()
            {
                spec.container = Some(ContainerSpec {
                    wall_thickness: num(wall_thickness),
                    open_top,
                });
            }
            spec
        })
        .collect();
    let blocks = blocks
        .iter()
        .map(|(lo, hi)| BlockSpec {
            lo: nums(lo),
            hi: nums(hi),
            velocity: Some(vec![0.0; D]),
        })
        .collect();
    SceneFile {
        dimension: D as u32,
        solver: solver_spec,
        domain,
        colliders,
        blocks,
        emitters: Vec::new(),
        run: None,
    }
}

/// Writes a scene file as commented TOML, `title` as the first comment line.
///
/// ```
/// let file = pbf_cli::builtin_scene("block-at-rest-2d", 100, 1.0, 1)?;
/// let text = pbf_cli::scene_to_toml(&file, "a block at rest");
/// let back: pbf_cli::SceneFile = toml::from_str(&text).unwrap();
/// assert_eq!(back, file);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn scene_to_toml(file: &SceneFile, title: &str) -> String {
    let mut w = TomlWriter::default();
    for line in title.lines() {
        w.comment(line);
    }
    w.comment("Lengths in metres, times in seconds. Every array has `dimension` entries;");
    w.comment(
        "unknown keys are errors. Run it with `pbf run FILE`; `pbf run --help` lists the options.",
    );
    w.blank();
    w.entry("dimension", &file.dimension.to_string(), "2 or 3");
    w.blank();
    w.header("[solver]");
    let s = &file.solver;
    w.entry("spacing", &float(s.spacing), "particle rest spacing s");
    w.opt(
        "kernel_radius_rel",
        s.kernel_radius_rel.map(float),
        "kernel radius h = kernel_radius_rel * s",
    );
    w.opt(
        "rest_density",
        s.rest_density.map(float),
        "kg/m^3 (per m^2 in 2D)",
    );
    w.opt("time_step", s.time_step.map(float), "seconds per step");
    w.opt(
        "iterations",
        s.iterations.map(|n| n.to_string()),
        "or: adaptive = { max_density_error_percent = 0.1, min = 2, max = 20 }",
    );
    if let Some(a) = &s.adaptive {
        let value = format!(
            "{{ max_density_error_percent = {}, min = {}, max = {} }}",
            float(a.max_density_error_percent),
            a.min,
            a.max
        );
        w.entry(
            "adaptive",
            &value,
            "iterate until the average density error is below the target",
        );
    }
    w.opt("gravity", s.gravity.as_deref().map(array), "m/s^2");
    w.opt(
        "cfm_rel",
        s.cfm_rel.map(float),
        "constraint-force mixing: eps = cfm_rel / h^2",
    );
    w.opt(
        "s_corr_k",
        s.s_corr_k.map(float),
        "tensile term s_corr = -k (W(r) / W(dq))^n",
    );
    w.opt("s_corr_n", s.s_corr_n.map(|n| n.to_string()), "");
    w.opt("s_corr_dq_rel", s.s_corr_dq_rel.map(float), "|dq| / h");
    w.opt("xsph_c", s.xsph_c.map(float), "XSPH viscosity");
    w.opt(
        "xsph_period",
        s.xsph_period.map(|t| match t {
            XsphPeriodSpec::Step => "\"step\"".to_owned(),
            XsphPeriodSpec::Seconds(t) => float(t),
        }),
        "seconds over which xsph_c blends (the same fluid at every time step), or \"step\"",
    );
    w.opt(
        "vorticity_rel",
        s.vorticity_rel.map(float),
        "vorticity confinement: eps_v = vorticity_rel * h",
    );
    w.opt(
        "viscosity",
        s.viscosity.map(float),
        "kinematic viscosity nu in m^2/s (0: none; water 1e-6, honey 5e-3)",
    );
    w.opt(
        "unilateral",
        s.unilateral.map(|b| b.to_string()),
        "correct compression only",
    );
    w.opt(
        "relaxation",
        s.relaxation.map(|r| match r {
            RelaxationSpec::Auto => "\"auto\"".to_owned(),
            RelaxationSpec::Fixed(w) => float(w),
        }),
        "Jacobi omega: \"auto\" (stable at 1-2 iterations) or (0, 1]; 1 converges faster",
    );
    w.opt(
        "acceleration",
        s.acceleration.map(|a| {
            match a {
                AccelerationName::None => "\"none\"",
                AccelerationName::Chebyshev => "\"chebyshev\"",
            }
            .to_owned()
        }),
        "\"chebyshev\": about k/2 times faster long-wave convergence at k fixed iterations",
    );
    w.opt(
        "coarse_correction",
        s.coarse_correction.map(|b| b.to_string()),
        "a Poisson solve on 2h cells removes deep compression before the passes",
    );
    w.opt(
        "keep_lists",
        s.keep_lists.map(|b| b.to_string()),
        "false: search at every step (a steadier cost) instead of keeping valid lists",
    );
    w.opt(
        "backend",
        s.backend.map(|b| {
            match b {
                BackendName::Lanes => "\"lanes\"",
                BackendName::Lanes8 => "\"lanes8\"",
                BackendName::Scalar => "\"scalar\"",
            }
            .to_owned()
        }),
        "\"lanes\" (SIMD) or \"scalar\"",
    );
    w.blank();
    w.header("[domain]");
    w.comment("The box no particle leaves.");
    w.entry("lo", &array(&file.domain.lo), "");
    w.entry("hi", &array(&file.domain.hi), "");
    w.opt("friction", file.domain.friction.map(float), "");
    w.opt("restitution", file.domain.restitution.map(float), "");
    w.opt(
        "wall",
        file.domain.wall.as_ref().map(wall_value),
        "\"free-slip\" or \"no-slip\" (needs viscosity > 0), or per axis [lo face, hi face]",
    );
    w.opt(
        "periodic",
        file.domain.periodic.as_ref().map(|p| {
            let flags: Vec<String> = p.iter().map(|b| b.to_string()).collect();
            format!("[{}]", flags.join(", "))
        }),
        "axes without walls: leaving through one face comes back through the other",
    );
    w.opt(
        "wall_velocity",
        file.domain.wall_velocity.as_ref().map(|faces| {
            let pairs: Vec<String> = faces
                .iter()
                .map(|[lo, hi]| format!("[{}, {}]", array(lo), array(hi)))
                .collect();
            format!("[{}]", pairs.join(", "))
        }),
        "per axis [lo face, hi face]: a no-slip face sliding along itself",
    );
    for c in &file.colliders {
        w.blank();
        w.header("[[collider]]");
        w.comment(
            "shape: plane (point, normal), box (center, half_extents), sphere (center, radius),",
        );
        w.comment("capsule (a, b, radius), cylinder (base, radius, height: stands on +y)");
        w.entry("shape", &format!("\"{}\"", c.shape.name()), "");
        for name in crate::scene::VECTOR_FIELDS {
            w.opt(name, c.vector_field(name).map(|v| array(v)), "");
        }
        w.opt("radius", c.radius.map(float), "");
        w.opt("height", c.height.map(float), "");
        if let Some(k) = &c.container {
            let value = format!(
                "{{ wall_thickness = {}, open_top = {} }}",
                float(k.wall_thickness),
                k.open_top
            );
            w.entry("container", &value, "hollow; leave out for a solid");
        }
        w.opt("friction", c.friction.map(float), "");
        w.opt("restitution", c.restitution.map(float), "");
        w.opt(
            "wall",
            c.wall.map(|w| wall_value(&WallSpec::All(w))),
            "\"no-slip\": the fluid at its surface at rest (needs viscosity > 0)",
        );
    }
    for b in &file.blocks {
        w.blank();
        w.header("[[block]]");
        w.comment("Fluid on a lattice at the rest spacing, the first layer s/2 inside `lo`.");
        w.entry("lo", &array(&b.lo), "");
        w.entry("hi", &array(&b.hi), "");
        w.opt("velocity", b.velocity.as_deref().map(array), "");
    }
    for e in &file.emitters {
        w.blank();
        w.header("[[emitter]]");
        w.entry("origin", &array(&e.origin), "");
        w.entry("direction", &array(&e.direction), "");
        w.entry("speed", &float(e.speed), "");
        w.entry("radius", &float(e.radius), "");
        w.opt("start", e.start.map(float), "");
        w.entry("stop", &float(e.stop), "");
    }
    if let Some(r) = &file.run {
        w.blank();
        w.header("[run]");
        w.comment("The command line's --steps, --duration and --every override these.");
        w.opt("steps", r.steps.map(|n| n.to_string()), "");
        w.opt("duration", r.duration.map(float), "simulated seconds");
        w.opt(
            "every",
            r.every.map(|n| n.to_string()),
            "write a frame every this many steps",
        );
    }
    w.text
}

#[derive(Default)]
struct TomlWriter {
    text: String,
}

impl TomlWriter {
    fn comment(&mut self, line: &str) {
        let _ = writeln!(self.text, "# {line}");
    }
    fn blank(&mut self) {
        self.text.push('\n');
    }
    fn header(&mut self, h: &str) {
        let _ = writeln!(self.text, "{h}");
    }
    fn entry(&mut self, key: &str, value: &str, comment: &str) {
        let line = format!("{key} = {value}");
        if comment.is_empty() {
            let _ = writeln!(self.text, "{line}");
        } else {
            let _ = writeln!(self.text, "{line:<34} # {comment}");
        }
    }
    fn opt(&mut self, key: &str, value: Option<String>, comment: &str) {
        if let Some(v) = value {
            self.entry(key, &v, comment);
        }
    }
}

/// A TOML float: always with a decimal point or exponent.
fn float(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:?}")
    }
}

fn array(v: &[f64]) -> String {
    format!(
        "[{}]",
        v.iter().map(|x| float(*x)).collect::<Vec<_>>().join(", ")
    )
}

/// The scene's `wall_velocity` of the domain `d`: `None` when every face is at rest
/// or periodic.
fn moving_faces<const D: usize>(d: &pbf_solver::Domain<D>) -> Option<Vec<[Vec<f64>; 2]>> {
    let faces: Vec<[Vec<f64>; 2]> = (0..D)
        .map(|axis| [0, 1].map(|side| nums(&d.wall_velocity(axis, side))))
        .collect();
    let moving = (0..D)
        .filter(|&a| !d.periodic()[a])
        .any(|a| faces[a].iter().flatten().any(|&c| c != 0.0));
    moving.then_some(faces)
}

/// The scene's `wall` for the faces `walls`: one name when every face has it.
fn wall_spec(walls: &[[Wall; 2]]) -> WallSpec {
    let name = |w: Wall| match w {
        Wall::FreeSlip => WallName::FreeSlip,
        Wall::NoSlip => WallName::NoSlip,
    };
    let faces: Vec<[WallName; 2]> = walls.iter().map(|f| f.map(name)).collect();
    match faces.first() {
        Some(&[first, _]) if faces.iter().flatten().all(|&w| w == first) => WallSpec::All(first),
        _ => WallSpec::PerFace(faces),
    }
}

/// The TOML value of a `wall`.
fn wall_value(wall: &WallSpec) -> String {
    let word = |w: &WallName| match w {
        WallName::FreeSlip => "\"free-slip\"",
        WallName::NoSlip => "\"no-slip\"",
    };
    match wall {
        WallSpec::All(w) => word(w).to_owned(),
        WallSpec::PerFace(faces) => {
            let pairs: Vec<String> = faces
                .iter()
                .map(|[lo, hi]| format!("[{}, {}]", word(lo), word(hi)))
                .collect();
            format!("[{}]", pairs.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_toml_floats() {
        assert_eq!(float(1000.0), "1000.0");
        assert_eq!(float(0.05), "0.05");
        assert_eq!(float(-9.81), "-9.81");
        assert_eq!(float(f64::INFINITY), "inf");
        assert_eq!(num(1.0 / 60.0), 0.016666668);
    }

    #[test]
    fn every_scene_has_blocks() {
        for s in scenes::SCENES {
            let solver = scenes::build(s.name, 1000).expect("scene");
            assert!(!blocks(s.name, 1000, &solver).is_empty(), "{}", s.name);
        }
    }

    #[test]
    fn unknown_scenes_are_named() {
        let e = builtin_scene("nope", 100, 1.0, 1).unwrap_err();
        assert!(e.to_string().contains("nope") && e.to_string().contains("dam-break"));
    }
}
