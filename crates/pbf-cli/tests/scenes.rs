//! Scene files: `pbf init` round-trips every built-in scene, the embedded default is the
//! library's dam break, and malformed scenes get positioned errors and run nothing.

use crate::common;

use common::{arg, assert_same, run};
use pbf_cli::{CliError, Outcome, Scene, SceneError};
use pbf_solver::scenes;

/// The particle count of each `init` round trip: small, so the steps are quick.
const PARTICLES: usize = 600;

#[test]
fn init_writes_every_builtin_scene_so_that_it_builds_the_library_scene() {
    let dir = tempfile::tempdir().expect("temp dir");
    for info in scenes::SCENES {
        let path = dir.path().join(format!("{}.toml", info.name));
        let (result, printed) = run(&[
            "init",
            info.name,
            "--particles",
            &PARTICLES.to_string(),
            "-o",
            arg(&path),
        ]);
        match result {
            Ok(Outcome::Initialised(p)) => assert_eq!(p, path),
            other => panic!("{}: {other:?}", info.name),
        }
        assert!(printed.contains("pbf run"), "{printed}");
        let scene = Scene::load(&path).expect("the written file loads");
        let mut from_file = scene.build().expect("and builds");
        let mut library = scenes::build(info.name, PARTICLES).expect("library scene");
        assert_same(&from_file, &library, info.name);
        for _ in 0..3 {
            from_file.step().expect("step");
            library.step().expect("step");
        }
        assert_same(
            &from_file,
            &library,
            &format!("{} after 3 steps", info.name),
        );
    }
}

#[test]
fn the_embedded_default_is_the_library_dam_break() {
    let scene = Scene::default_scene().expect("the default scene parses");
    let solver = scene.build().expect("the default scene builds");
    let library = scenes::build("dam-break", solver.len()).expect("library scene");
    assert_same(&solver, &library, "default");
    // And it is exactly what `pbf init dam-break` writes, with its own [run].
    let mut expected = pbf_cli::builtin_scene("dam-break", solver.len(), 0.0, 1).expect("builtin");
    expected.run = scene.file.run.clone();
    assert_eq!(
        scene.file,
        expected,
        "scenes/default.toml is out of date with pbf-solver's dam break: regenerate it with \
         `pbf init dam-break --particles {} -o crates/pbf-cli/scenes/default.toml --force` \
         and restore its header and [run] section",
        solver.len()
    );
}

#[test]
fn init_does_not_overwrite_without_force_and_names_unknown_scenes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.toml");
    std::fs::write(&path, "keep me").expect("write");
    let (result, _) = run(&["init", "glass-2d", "-o", arg(&path)]);
    let err = result.expect_err("refuses");
    assert!(err.to_string().contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "keep me");
    let (result, _) = run(&["init", "glass-2d", "-o", arg(&path), "--force"]);
    assert!(result.is_ok());
    let (result, _) = run(&["init", "teapot"]);
    match result {
        Err(CliError::UnknownScene { name, known }) => {
            assert_eq!(name, "teapot");
            assert!(known.contains("dam-break") && known.contains("glass"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn scenes_lists_every_builtin_scene() {
    let (result, printed) = run(&["scenes"]);
    assert!(matches!(result, Ok(Outcome::Listed)));
    for info in scenes::SCENES {
        assert!(printed.contains(info.name), "{printed}");
    }
}

/// A small valid 3D scene; tests corrupt one line of it.
const GOOD: &str = r#"dimension = 3

[solver]
spacing = 0.1
time_step = 0.01

[domain]
lo = [0.0, 0.0, 0.0]
hi = [1.0, 1.0, 1.0]

[[collider]]
shape = "sphere"
center = [0.5, 0.2, 0.5]
radius = 0.1

[[block]]
lo = [0.0, 0.5, 0.0]
hi = [0.4, 0.9, 0.4]

[run]
steps = 2
"#;

/// Parses `text` (written to a file) and returns the scene error.
fn scene_error(text: &str) -> SceneError {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, text).expect("write");
    let out = dir.path().join("out");
    let (result, _) = run(&["run", arg(&path), "--out", arg(&out), "--quiet"]);
    assert!(
        !out.exists(),
        "nothing may run (or be written) for a bad scene"
    );
    match result {
        Err(CliError::Scene(e)) => {
            assert_eq!(e.path, path);
            e
        }
        other => panic!("expected a scene error, got {other:?}"),
    }
}

/// 1-based line and column of the first occurrence of `needle` in `text`.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let offset = text.find(needle).expect("needle in text");
    let before = &text[..offset];
    (
        before.matches('\n').count() + 1,
        offset - before.rfind('\n').map_or(0, |i| i + 1) + 1,
    )
}

/// 1-based line and column of the value in the first `key = value` of `text`.
fn value_position(text: &str, key: &str, value: &str) -> (usize, usize) {
    let (line, column) = position(text, &format!("{key} = {value}"));
    (line, column + key.chars().count() + 3)
}

#[test]
fn the_good_scene_runs() {
    let scene = Scene::parse(GOOD, "good.toml").expect("parses");
    assert_eq!(scene.build().expect("builds").len(), 64);
}

#[test]
fn a_syntax_error_has_line_and_column() {
    let text = GOOD.replace("time_step = 0.01", "time_step = = 0.01");
    let e = scene_error(&text);
    assert_eq!(e.line, position(&text, "time_step").0);
    assert!(e.column > 1, "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("{}:{}:", e.path.display(), e.line)),
        "{e}"
    );
}

#[test]
fn an_unknown_field_is_named_with_its_position() {
    let text = GOOD.replace("time_step = 0.01", "time_step = 0.01\ntimestep = 0.02");
    let e = scene_error(&text);
    assert_eq!((e.line, e.column), position(&text, "timestep ="));
    assert_eq!(e.field.as_deref(), Some("solver.timestep"));
    assert!(e.message.contains("unknown field `timestep`"), "{e}");
}

#[test]
fn a_negative_radius_is_named_with_its_position() {
    let text = GOOD.replace("radius = 0.1", "radius = -0.1");
    let e = scene_error(&text);
    assert_eq!((e.line, e.column), value_position(&text, "radius", "-0.1"));
    assert_eq!(e.field.as_deref(), Some("collider[0].radius"));
    assert!(
        e.message.contains("-0.1") && e.message.contains("must be > 0"),
        "{e}"
    );
}

#[test]
fn a_wrong_type_is_named() {
    let text = GOOD.replace("spacing = 0.1", "spacing = \"fine\"");
    let e = scene_error(&text);
    assert_eq!(e.line, position(&text, "spacing").0);
    assert_eq!(e.field.as_deref(), Some("solver.spacing"));
}

#[test]
fn a_missing_field_is_named() {
    let text = GOOD.replace("spacing = 0.1\n", "");
    let e = scene_error(&text);
    assert!(e.message.contains("missing field `spacing`"), "{e}");
    assert_eq!(e.field.as_deref(), Some("solver.spacing"), "{e}");
    assert_eq!((e.line, e.column), position(&text, "[solver]"), "{e}");
    // A missing table of the document is named as itself, not as the first key.
    let text = GOOD.replace("[domain]\nlo = [0.0, 0.0, 0.0]\nhi = [1.0, 1.0, 1.0]\n", "");
    let e = scene_error(&text);
    assert!(e.message.contains("missing field `domain`"), "{e}");
    assert_eq!(e.field.as_deref(), Some("domain"), "{e}");
}

/// Errors point at the column of what is wrong, wherever it is on its line: the
/// toml crate's span for syntax and type errors, the value's span for a value the
/// scene rejects.
#[test]
fn toml_errors_report_the_real_column() {
    // A syntax error: the second `=`.
    let text = GOOD.replace("time_step = 0.01", "time_step = = 0.01");
    let e = scene_error(&text);
    assert_eq!(
        (e.line, e.column),
        value_position(&text, "time_step", "= 0.01")
    );
    // A type error in an indented entry, and one inside an array.
    let text = GOOD.replace("spacing = 0.1", "    spacing = \"fine\"");
    let e = scene_error(&text);
    assert_eq!(
        (e.line, e.column),
        value_position(&text, "spacing", "\"fine\"")
    );
    assert_eq!(e.column, 15, "{e}");
    let text = GOOD.replace("lo = [0.0, 0.0, 0.0]", "lo = [0.0, true, 0.0]");
    let e = scene_error(&text);
    assert_eq!((e.line, e.column), position(&text, "true"), "{e}");
    // Values the scene rejects: at the value, not at the start of the line.
    let text = GOOD.replace("radius = 0.1", "  radius   =   -1");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("collider[0].radius"), "{e}");
    assert_eq!((e.line, e.column), position(&text, "-1"), "{e}");
    assert_eq!(e.column, 16, "{e}");
    assert!(
        e.to_string().contains(&format!(
            ":{}:16: `collider[0].radius`: -1 is invalid",
            e.line
        )),
        "{e}"
    );
    let text = GOOD.replace("hi = [1.0, 1.0, 1.0]", "hi = [1.0, 1.0]");
    let e = scene_error(&text);
    assert_eq!((e.line, e.column), position(&text, "[1.0, 1.0]"), "{e}");
    let text = GOOD.replace("steps = 2", "every = 0");
    let e = scene_error(&text);
    assert_eq!(
        (e.line, e.column),
        value_position(&text, "every", "0"),
        "{e}"
    );
    // Conflicting keys: at the key.
    let text = GOOD.replace("steps = 2", "steps = 2\nduration = 1.0");
    let e = scene_error(&text);
    assert_eq!((e.line, e.column), position(&text, "duration"), "{e}");
}

#[test]
fn a_scene_without_particles_is_an_error_naming_what_is_missing() {
    let text = GOOD.replace(
        "[[block]]\nlo = [0.0, 0.5, 0.0]\nhi = [0.4, 0.9, 0.4]\n",
        "",
    );
    assert!(!text.contains("[[block]]"));
    let e = scene_error(&text);
    assert!(
        e.message.contains("no particles")
            && e.message.contains("no [[block]]")
            && e.message.contains("no [[emitter]]"),
        "{e}"
    );
    // An emitter alone is fluid to come: the scene runs.
    let text = text.replace(
        "[run]",
        "[[emitter]]\norigin = [0.5, 0.8, 0.5]\ndirection = [0.0, -1.0, 0.0]\nspeed = 1.0\nradius = 0.2\nstop = 1.0\n\n[run]",
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("emitter.toml");
    std::fs::write(&path, &text).expect("write");
    let out = dir.path().join("out");
    let (result, _) = run(&["run", arg(&path), "-o", arg(&out), "--quiet"]);
    assert_eq!(result.expect("runs").summary().expect("ran").steps, 2);
}

#[test]
fn array_lengths_must_match_the_dimension() {
    let text = GOOD.replace("hi = [1.0, 1.0, 1.0]", "hi = [1.0, 1.0]");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("domain.hi"));
    assert_eq!(e.line, position(&text, "hi = [1.0, 1.0]").0);
    assert!(e.message.contains("has 2 entries, expected 3"), "{e}");
}

#[test]
fn solver_parameters_are_mapped_back_to_their_keys() {
    let text = GOOD.replace("time_step = 0.01", "time_step = -0.01");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("solver.time_step"));
    assert_eq!(
        (e.line, e.column),
        value_position(&text, "time_step", "-0.01")
    );
    let text = GOOD.replace(
        "time_step = 0.01",
        "adaptive = { max_density_error_percent = 1.0, min = 5, max = 2 }",
    );
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("solver.adaptive.max"));
    let text = GOOD.replace(
        "time_step = 0.01",
        "iterations = 3\nadaptive = { max_density_error_percent = 1.0, min = 1, max = 2 }",
    );
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("solver.adaptive"));
}

/// The Jacobi relaxation the scene's solver resolved (3D scenes).
fn relaxation_of(text: &str) -> (pbf_solver::Relaxation, f32) {
    match Scene::parse(text, "r.toml").expect("parses").build() {
        Ok(scenes::AnySolver::Three(s)) => (s.params().relaxation(), s.relaxation()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn relaxation_takes_auto_or_a_number_and_bad_values_are_positioned() {
    use pbf_solver::Relaxation;
    let with = |value: &str| {
        GOOD.replace(
            "time_step = 0.01",
            &format!("time_step = 0.01\nrelaxation = {value}"),
        )
    };
    let (default, omega) = relaxation_of(GOOD);
    assert_eq!(default, Relaxation::Auto);
    assert_eq!(relaxation_of(&with("\"auto\"")), (Relaxation::Auto, omega));
    assert_eq!(relaxation_of(&with("0.8")), (Relaxation::Fixed(0.8), 0.8));
    assert_eq!(relaxation_of(&with("1")), (Relaxation::Fixed(1.0), 1.0));
    // An unknown word and a wrong type: serde's errors, at the value.
    for bad in ["\"none\"", "true"] {
        let text = with(bad);
        let e = scene_error(&text);
        assert_eq!(e.field.as_deref(), Some("solver.relaxation"), "{e}");
        assert_eq!(e.line, position(&text, "relaxation").0, "{e}");
        assert!(e.message.contains("\"auto\" or a number in (0, 1]"), "{e}");
    }
    // Out of range: pbf-solver's error, mapped back to the key, at the value.
    for bad in ["1.5", "0", "-0.3", "nan", "inf"] {
        let text = with(bad);
        let e = scene_error(&text);
        assert_eq!(e.field.as_deref(), Some("solver.relaxation"), "{e}");
        assert_eq!(
            (e.line, e.column),
            value_position(&text, "relaxation", bad),
            "{e}"
        );
        assert!(e.message.contains("must be in (0, 1]"), "{e}");
    }
}

#[test]
fn a_fixed_relaxation_survives_the_toml_writer() {
    let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert_eq!(
        file.solver.relaxation,
        Some(pbf_cli::scene::RelaxationSpec::Auto)
    );
    file.solver.relaxation = Some(pbf_cli::scene::RelaxationSpec::Fixed(0.75));
    let text = pbf_cli::scene_to_toml(&file, "glass, unrelaxed a little");
    assert!(text.contains("relaxation = 0.75"), "{text}");
    let scene = Scene::parse(&text, "g.toml").expect("parses");
    assert_eq!(scene.file, file);
    assert_eq!(
        relaxation_of(&text),
        (pbf_solver::Relaxation::Fixed(0.75), 0.75)
    );
}

#[test]
fn the_xsph_period_takes_step_or_seconds_and_survives_the_toml_writer() {
    use pbf_cli::scene::XsphPeriodSpec;
    let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert_eq!(
        file.solver.xsph_period,
        Some(XsphPeriodSpec::Seconds(0.008333334))
    );
    file.solver.xsph_period = Some(XsphPeriodSpec::Step);
    let text = pbf_cli::scene_to_toml(&file, "glass, per-step XSPH");
    assert!(text.contains("xsph_period = \"step\""), "{text}");
    let scene = Scene::parse(&text, "g.toml").expect("parses");
    assert_eq!(scene.file, file);
    match scene.build() {
        Ok(scenes::AnySolver::Three(s)) => assert_eq!(s.params().xsph_period(), None),
        other => panic!("{other:?}"),
    }
    let with = |value: &str| {
        GOOD.replace(
            "time_step = 0.01",
            &format!("time_step = 0.01\nxsph_period = {value}"),
        )
    };
    let e = scene_error(&with("\"frame\""));
    assert_eq!(e.field.as_deref(), Some("solver.xsph_period"), "{e}");
    assert!(e.message.contains("\"step\" or a number of seconds"), "{e}");
    for bad in ["0", "-0.01", "nan", "inf"] {
        let text = with(bad);
        let e = scene_error(&text);
        assert_eq!(e.field.as_deref(), Some("solver.xsph_period"), "{e}");
        assert_eq!(
            (e.line, e.column),
            value_position(&text, "xsph_period", bad),
            "{e}"
        );
        assert!(e.message.contains("must be > 0 and finite"), "{e}");
    }
}

#[test]
fn chebyshev_acceleration_is_a_key_and_its_conflicts_are_positioned() {
    let with =
        |lines: &str| GOOD.replace("time_step = 0.01", &format!("time_step = 0.01\n{lines}"));
    let text = with("acceleration = \"chebyshev\"");
    match Scene::parse(&text, "c.toml").expect("parses").build() {
        Ok(scenes::AnySolver::Three(s)) => {
            assert_eq!(
                s.params().acceleration(),
                pbf_solver::Acceleration::Chebyshev
            )
        }
        other => panic!("{other:?}"),
    }
    let e = scene_error(&with("acceleration = \"fast\""));
    assert_eq!(e.field.as_deref(), Some("solver.acceleration"), "{e}");
    let text = with(
        "acceleration = \"chebyshev\"\nadaptive = { max_density_error_percent = 1.0, min = 1, max = 9 }",
    );
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("solver.acceleration"), "{e}");
    assert_eq!(
        (e.line, e.column),
        value_position(&text, "acceleration", "\"chebyshev\""),
        "{e}"
    );
    assert!(e.message.contains("Iterations::Fixed"), "{e}");
    let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert_eq!(
        file.solver.acceleration,
        Some(pbf_cli::scene::AccelerationName::None)
    );
    file.solver.acceleration = Some(pbf_cli::scene::AccelerationName::Chebyshev);
    let text = pbf_cli::scene_to_toml(&file, "glass, Chebyshev");
    assert!(text.contains("acceleration = \"chebyshev\""), "{text}");
    assert_eq!(Scene::parse(&text, "g.toml").expect("parses").file, file);
}

#[test]
fn coarse_correction_is_a_key_and_round_trips() {
    let with =
        |lines: &str| GOOD.replace("time_step = 0.01", &format!("time_step = 0.01\n{lines}"));
    for (value, expected) in [("true", true), ("false", false)] {
        let text = with(&format!("coarse_correction = {value}"));
        match Scene::parse(&text, "c.toml").expect("parses").build() {
            Ok(scenes::AnySolver::Three(s)) => {
                assert_eq!(s.params().coarse_correction(), expected)
            }
            other => panic!("{other:?}"),
        }
    }
    let text = with("coarse_correction = \"yes\"");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("solver.coarse_correction"), "{e}");
    assert_eq!((e.line, e.column), position(&text, "\"yes\""), "{e}");
    let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert_eq!(file.solver.coarse_correction, Some(true));
    file.solver.coarse_correction = Some(false);
    let text = pbf_cli::scene_to_toml(&file, "glass, no coarse correction");
    assert!(text.contains("coarse_correction = false"), "{text}");
    assert_eq!(Scene::parse(&text, "g.toml").expect("parses").file, file);
}

#[test]
fn shapes_take_their_own_fields() {
    let text = GOOD.replace("radius = 0.1", "radius = 0.1\nheight = 0.3");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("collider[0].height"));
    let text = GOOD.replace("center = [0.5, 0.2, 0.5]\n", "");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("collider[0]"));
    assert!(e.message.contains("needs `center`"), "{e}");
    let text = GOOD.replace("shape = \"sphere\"", "shape = \"torus\"");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("collider[0].shape"));
}

#[test]
fn a_block_outside_the_domain_is_named() {
    let text = GOOD.replace("hi = [0.4, 0.9, 0.4]", "hi = [0.4, 1.9, 0.4]");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("block[0]"));
    assert_eq!(e.line, position(&text, "[[block]]").0);
    let text = GOOD.replace("hi = [0.4, 0.9, 0.4]", "hi = [0.4, 0.3, 0.4]");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("block[0].hi"));
    assert!(e.message.contains("hi - lo = -0.2 is invalid"), "{e}");
}

#[test]
fn emitter_errors_are_named() {
    let emitter = "\n[[emitter]]\norigin = [0.5, 0.8, 0.5]\ndirection = [0.0, -1.0, 0.0]\nspeed = 1.0\nradius = 0.2\nstop = 1.0\n";
    let good = GOOD.replace("\n[run]", &format!("{emitter}\n[run]"));
    assert!(
        Scene::parse(&good, "e.toml")
            .expect("parses")
            .build()
            .is_ok()
    );
    let text = good.replace(
        "direction = [0.0, -1.0, 0.0]",
        "direction = [0.0, 0.0, 0.0]",
    );
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("emitter[0].direction"));
    assert_eq!(e.line, position(&text, "direction").0);
    let text = good.replace("stop = 1.0", "start = 2.0\nstop = 1.0");
    assert_eq!(scene_error(&text).field.as_deref(), Some("emitter[0].stop"));
}

#[test]
fn a_missing_file_names_the_path() {
    let (result, _) = run(&["run", "there/is/no/such/scene.toml"]);
    let err = result.expect_err("fails");
    assert!(matches!(err, CliError::Read { .. }));
    assert!(
        err.to_string().contains("there/is/no/such/scene.toml"),
        "{err}"
    );
}

/// The binary itself: each bad input exits non-zero with `error: ...` on stderr.
#[test]
fn the_binary_reports_errors_with_a_non_zero_exit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p
    };
    let malformed = write("malformed.toml", &GOOD.replace("[domain]", "[domain"));
    let unknown = write(
        "unknown.toml",
        &GOOD.replace("radius = 0.1", "radius = 0.1\ncolour = \"red\""),
    );
    let negative = write(
        "negative.toml",
        &GOOD.replace("radius = 0.1", "radius = -1.0"),
    );
    let missing = dir.path().join("missing.toml");
    let cases = [
        (malformed, "malformed.toml:"),
        (unknown, "`collider[0].colour`"),
        (negative, "`collider[0].radius`: -1 is invalid"),
        (missing.clone(), "cannot read"),
    ];
    for (path, expected) in cases {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_pbf"))
            .args([
                "run",
                arg(&path),
                "--quiet",
                "--out",
                arg(&dir.path().join("out")),
            ])
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}: {stderr}",
            path.display()
        );
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(stderr.contains(expected), "{}: {stderr}", path.display());
        assert!(stderr.contains(arg(&path)), "{stderr}");
        assert!(!dir.path().join("out").exists());
    }
}

#[test]
fn every_backend_name_builds_its_backend_and_survives_the_toml_writer() {
    use pbf_cli::scene::BackendName;
    use pbf_solver::Backend;
    for (name, word, backend) in [
        (BackendName::Lanes, "lanes", Backend::Lanes),
        (BackendName::Lanes8, "lanes8", Backend::Lanes8),
        (BackendName::Scalar, "scalar", Backend::Scalar),
    ] {
        let text = GOOD.replace(
            "time_step = 0.01",
            &format!("time_step = 0.01\nbackend = \"{word}\""),
        );
        match Scene::parse(&text, "b.toml").expect("parses").build() {
            Ok(scenes::AnySolver::Three(s)) => assert_eq!(s.params().backend(), backend),
            other => panic!("{other:?}"),
        }
        let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
        file.solver.backend = Some(name);
        let written = pbf_cli::scene_to_toml(&file, "glass");
        assert!(
            written.contains(&format!("backend = \"{word}\"")),
            "{written}"
        );
        assert_eq!(Scene::parse(&written, "g.toml").expect("parses").file, file);
    }
    let e = scene_error(&GOOD.replace(
        "time_step = 0.01",
        "time_step = 0.01\nbackend = \"lanes16\"",
    ));
    assert_eq!(e.field.as_deref(), Some("solver.backend"), "{e}");
}

/// `viscosity` and `wall` reach the solver, survive the TOML writer, and bad values
/// are errors naming their key.
#[test]
fn viscosity_and_walls_are_scene_keys() {
    let with = |viscosity: &str, wall: &str| {
        GOOD.replace(
            "time_step = 0.01",
            &format!("time_step = 0.01\nviscosity = {viscosity}"),
        )
        .replace(
            "hi = [1.0, 1.0, 1.0]",
            &format!("hi = [1.0, 1.0, 1.0]\nwall = {wall}"),
        )
    };
    let text = with(
        "1e-3",
        r#"[["free-slip", "free-slip"], ["no-slip", "free-slip"], ["no-slip", "no-slip"]]"#,
    );
    let scene = Scene::parse(&text, "v.toml").expect("parses");
    let built = scene.build().expect("builds");
    let scenes::AnySolver::Three(mut s) = built else {
        panic!("3D")
    };
    assert_eq!(s.params().viscosity(), 1e-3);
    use pbf_solver::Wall::{FreeSlip, NoSlip};
    assert_eq!(
        s.domain().walls(),
        [[FreeSlip, FreeSlip], [NoSlip, FreeSlip], [NoSlip, NoSlip]]
    );
    let d = s.step().expect("steps");
    assert!(d.viscosity_iterations > 0);
    let round = pbf_cli::scene_to_toml(&scene.file, "viscous");
    assert_eq!(
        Scene::parse(&round, "r.toml").expect("parses").file,
        scene.file
    );
    let all = Scene::parse(&with("1e-3", "\"no-slip\""), "a.toml").expect("parses");
    let scenes::AnySolver::Three(s) = all.build().expect("builds") else {
        panic!("3D")
    };
    assert_eq!(s.domain().walls(), [[NoSlip; 2]; 3]);

    let e = scene_error(&with("-1.0", "\"free-slip\""));
    assert_eq!(e.field.as_deref(), Some("solver.viscosity"), "{e}");
    let e = scene_error(&with("1e-3", "\"sticky\""));
    assert_eq!(e.field.as_deref(), Some("domain.wall"), "{e}");
    assert!(e.message.contains("no-slip"), "{e}");
    let e = scene_error(&with("1e-3", r#"[["no-slip", "no-slip"]]"#));
    assert_eq!(e.field.as_deref(), Some("domain.wall"), "{e}");
    assert!(e.message.contains("expected 3"), "{e}");
    // A no-slip wall acts through the viscosity: without one it is an error.
    let e = scene_error(&with("0.0", "\"no-slip\""));
    assert_eq!(e.field.as_deref(), Some("solver.viscosity"), "{e}");
    // So is a collider's.
    let collider = |viscosity: &str, wall: &str| {
        with(viscosity, "\"free-slip\"")
            .replace("radius = 0.1", &format!("radius = 0.1\nwall = {wall}"))
    };
    let scene = Scene::parse(&collider("1e-3", "\"no-slip\""), "c.toml").expect("parses");
    let scenes::AnySolver::Three(s) = scene.build().expect("builds") else {
        panic!("3D")
    };
    assert_eq!(s.colliders()[0].wall(), NoSlip);
    let round = pbf_cli::scene_to_toml(&scene.file, "no-slip ball");
    assert_eq!(
        Scene::parse(&round, "r.toml").expect("parses").file,
        scene.file
    );
    let e = scene_error(&collider("0.0", "\"no-slip\""));
    assert_eq!(e.field.as_deref(), Some("collider[0].wall"), "{e}");
    let e = scene_error(&collider("1e-3", "\"sticky\""));
    assert_eq!(e.field.as_deref(), Some("collider[0].wall"), "{e}");
}

#[test]
fn periodic_is_a_domain_key_and_its_errors_are_positioned() {
    let with = |periodic: &str, coarse: bool| {
        GOOD.replace(
            "hi = [1.0, 1.0, 1.0]",
            &format!("hi = [1.0, 1.0, 1.0]\nperiodic = {periodic}"),
        )
        .replace(
            "time_step = 0.01",
            &format!("time_step = 0.01\ncoarse_correction = {coarse}"),
        )
    };
    let text = with("[true, false, true]", false);
    match Scene::parse(&text, "p.toml").expect("parses").build() {
        Ok(scenes::AnySolver::Three(mut s)) => {
            assert_eq!(s.domain().periodic(), [true, false, true]);
            s.step().expect("steps");
        }
        other => panic!("{other:?}"),
    }
    // Without the key, no axis is periodic.
    match Scene::parse(GOOD, "g.toml").expect("parses").build() {
        Ok(scenes::AnySolver::Three(s)) => assert_eq!(s.domain().periodic(), [false; 3]),
        other => panic!("{other:?}"),
    }
    // A wrong length, a wrong type.
    let text = with("[true, false]", false);
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("domain.periodic"), "{e}");
    assert_eq!(e.line, position(&text, "periodic = [true, false]").0, "{e}");
    assert!(e.message.contains("has 2 entries, expected 3"), "{e}");
    let text = with("[1, 0, 0]", false);
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("domain.periodic"), "{e}");
    let text = with("true", false);
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("domain.periodic"), "{e}");
    // A periodic axis shorter than three kernel radii.
    let text =
        with("[true, false, false]", false).replace("hi = [1.0, 1.0, 1.0]", "hi = [0.5, 1.0, 1.0]");
    let e = scene_error(&text);
    assert_eq!(e.field.as_deref(), Some("domain.periodic"), "{e}");
    assert!(e.message.contains("three kernel radii"), "{e}");
    // The coarse correction wraps around the periodic axes.
    let text = with("[true, false, false]", true);
    match Scene::parse(&text, "p.toml").expect("parses").build() {
        Ok(scenes::AnySolver::Three(mut s)) => {
            assert!(s.params().coarse_correction());
            s.step().expect("steps");
        }
        other => panic!("{other:?}"),
    }
    // The key survives the TOML writer; a scene without periodic axes writes none.
    let mut file = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert_eq!(file.domain.periodic, None);
    let plain = pbf_cli::scene_to_toml(&file, "glass");
    assert!(!plain.contains("periodic"), "{plain}");
    file.domain.periodic = Some(vec![true, false, true]);
    file.solver.coarse_correction = Some(false);
    let text = pbf_cli::scene_to_toml(&file, "glass, periodic");
    assert!(text.contains("periodic = [true, false, true]"), "{text}");
    assert_eq!(Scene::parse(&text, "g.toml").expect("parses").file, file);
}

#[test]
fn wall_velocity_is_a_domain_key_and_its_errors_name_it() {
    let with = |velocity: &str| {
        GOOD.replace(
            "hi = [1.0, 1.0, 1.0]",
            &format!("hi = [1.0, 1.0, 1.0]\nwall = \"no-slip\"\nwall_velocity = {velocity}"),
        )
        .replace("time_step = 0.01", "time_step = 0.01\nviscosity = 1e-3")
    };
    let lid = "[[[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0.1, 0, 0.05]], [[0, 0, 0], [0, 0, 0]]]";
    let scene = Scene::parse(&with(lid), "lid.toml").expect("parses");
    let scenes::AnySolver::Three(mut s) = scene.build().expect("builds") else {
        panic!("3D")
    };
    assert_eq!(s.domain().wall_velocity(1, 1), [0.1, 0.0, 0.05]);
    assert_eq!(s.domain().wall_velocity(1, 0), [0.0; 3]);
    s.step().expect("steps");
    // The writer keeps it; a scene whose faces are at rest writes none.
    let round = pbf_cli::scene_to_toml(&scene.file, "lid");
    assert!(round.contains("wall_velocity"), "{round}");
    assert_eq!(
        Scene::parse(&round, "r.toml").expect("parses").file,
        scene.file
    );
    let glass = pbf_cli::builtin_scene("glass", PARTICLES, 0.0, 1).expect("builtin");
    assert!(!pbf_cli::scene_to_toml(&glass, "glass").contains("wall_velocity"));
    // A wrong count of pairs or components, a velocity along the face's normal, a
    // free-slip face.
    let e = scene_error(&with("[[[0, 0, 0], [0, 0, 0]]]"));
    assert_eq!(e.field.as_deref(), Some("domain.wall_velocity"), "{e}");
    assert!(e.message.contains("expected 3"), "{e}");
    let e = scene_error(&with(
        "[[[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0.1, 0]], [[0, 0, 0], [0, 0, 0]]]",
    ));
    assert_eq!(
        e.field.as_deref(),
        Some("domain.wall_velocity[1][1]"),
        "{e}"
    );
    let e = scene_error(&with(
        "[[[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0.1, 0]], [[0, 0, 0], [0, 0, 0]]]",
    ));
    assert_eq!(e.field.as_deref(), Some("domain.wall_velocity"), "{e}");
    assert!(e.message.contains("normal"), "{e}");
    let e = scene_error(&with(lid).replace("wall = \"no-slip\"", "wall = \"free-slip\""));
    assert_eq!(e.field.as_deref(), Some("domain.wall_velocity"), "{e}");
    assert!(e.message.contains("no-slip"), "{e}");
}
