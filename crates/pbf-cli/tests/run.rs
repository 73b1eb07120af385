//! The run command: the default run and its picture, pictures and animations, threads,
//! progress, the command-line surface.

mod common;

use common::{arg, run};
use pbf_cli::{CliError, Outcome};

#[test]
fn a_short_default_run_prints_the_summary_and_writes_its_picture() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (result, printed) = run(&["run", "--steps", "3", "--out", arg(dir.path())]);
    let summary = result.expect("runs").summary().expect("summary").clone();
    assert_eq!(summary.steps, 3);
    assert_eq!(summary.dimension, 3);
    assert!(summary.particles > 1000);
    assert!(summary.particle_iterations_per_second() > 0.0);
    for row in [
        "particles",
        "steps",
        "simulated time",
        "time per step",
        "particle-iterations/s",
        "density error, average",
        "density error, maximum",
        "picture of the last frame",
    ] {
        assert!(printed.contains(row), "missing {row:?} in\n{printed}");
    }
    assert_eq!(summary.picture, dir.path().join("last_frame.png"));
    let img = image::open(&summary.picture).expect("a PNG").to_rgb8();
    assert_eq!(img.width(), 640);
    assert!(img.height() > 100);
    // Particles are drawn: more than the background, outline and colliders.
    let colours: std::collections::HashSet<_> = img.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 20, "{} colours", colours.len());
}

/// The real no-argument path, through the binary, shortened with PBF_DEFAULT_STEPS.
#[test]
fn the_binary_with_no_arguments_runs_the_default_scene() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pbf"))
        .current_dir(dir.path())
        .env(pbf_cli::DEFAULT_STEPS_VAR, "2")
        .output()
        .expect("the binary runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("particle-iterations/s"), "{stdout}");
    assert!(stdout.contains("pbf-out/last_frame.png"), "{stdout}");
    assert!(dir.path().join("pbf-out/last_frame.png").exists());
    image::open(dir.path().join("pbf-out/last_frame.png")).expect("a PNG");
}

#[test]
fn a_bad_default_steps_variable_is_an_error() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_pbf"))
        .args(["run", "--quiet"])
        .env(pbf_cli::DEFAULT_STEPS_VAR, "lots")
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains(pbf_cli::DEFAULT_STEPS_VAR));
}

#[test]
fn render_and_gif_write_pictures_of_every_frame() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = dir.path().join("glass.toml");
    run(&["init", "glass", "--particles", "400", "-o", arg(&scene)])
        .0
        .expect("init");
    let out = dir.path().join("out");
    let (result, printed) = run(&[
        "run",
        arg(&scene),
        "--steps",
        "4",
        "--every",
        "2",
        "--render",
        "--gif",
        "--axis",
        "x",
        "--width",
        "200",
        "--out",
        arg(&out),
    ]);
    let summary = result.expect("runs").summary().expect("summary").clone();
    assert!(printed.contains("animation"), "{printed}");
    assert_eq!(summary.renders.len(), 3);
    for (i, path) in summary.renders.iter().enumerate() {
        assert_eq!(path, &out.join(format!("frame_{i:05}.png")));
        assert_eq!(image::open(path).expect("PNG").width(), 200);
    }
    let gif = summary.gif.expect("a gif");
    let decoder = image::codecs::gif::GifDecoder::new(std::io::BufReader::new(
        std::fs::File::open(&gif).expect("gif"),
    ))
    .expect("a GIF");
    use image::AnimationDecoder;
    let frames = decoder.into_frames().collect_frames().expect("frames");
    assert_eq!(frames.len(), 3);
    assert_eq!(frames[0].buffer().width(), 200);
}

#[test]
fn two_d_scenes_are_drawn_as_they_are() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = dir.path().join("d.toml");
    run(&[
        "init",
        "dam-break-2d",
        "--particles",
        "200",
        "-o",
        arg(&scene),
    ])
    .0
    .expect("init");
    let (result, _) = run(&[
        "run",
        arg(&scene),
        "--duration",
        "0.05",
        "--out",
        arg(dir.path()),
        "--quiet",
        "--axis",
        "y",
    ]);
    let summary = result.expect("runs").summary().expect("summary").clone();
    assert_eq!(summary.steps, 6); // 0.05 s at 1/120 s, rounded up
    let img = image::open(&summary.picture).expect("PNG");
    // The 2D tank is 5a x 2.5a: the picture is twice as wide as high, whatever --axis says.
    let ratio = img.width() as f32 / img.height() as f32;
    assert!((ratio - 2.0).abs() < 0.15, "{ratio}");
}

#[test]
fn threads_give_the_same_result() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = dir.path().join("d.toml");
    run(&[
        "init",
        "dam-break",
        "--particles",
        "1000",
        "-o",
        arg(&scene),
    ])
    .0
    .expect("init");
    let mut frames = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(threads);
        let (result, _) = run(&[
            "run",
            arg(&scene),
            "--steps",
            "3",
            "--every",
            "3",
            "--format",
            "csv",
            "--threads",
            threads,
            "--quiet",
            "--out",
            arg(&out),
        ]);
        let summary = result.expect("runs").summary().expect("summary").clone();
        assert_eq!(summary.threads.to_string(), threads);
        frames.push(std::fs::read_to_string(out.join("frame_00001.csv")).expect("frame"));
    }
    assert_eq!(frames[0], frames[1]);
}

#[test]
fn quiet_prints_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (result, printed) = run(&["run", "--steps", "1", "--quiet", "--out", arg(dir.path())]);
    result.expect("runs");
    assert!(printed.is_empty(), "{printed}");
}

#[test]
fn help_and_version_print_and_succeed() {
    let (result, printed) = run(&["--help"]);
    assert!(matches!(result, Ok(Outcome::Help)));
    assert!(
        printed.contains("pbf init") && printed.contains(pbf_cli::DEFAULT_STEPS_VAR),
        "{printed}"
    );
    let (result, printed) = run(&["run", "--help"]);
    assert!(matches!(result, Ok(Outcome::Help)));
    for flag in [
        "--steps",
        "--duration",
        "--out",
        "--format",
        "--every",
        "--threads",
        "--quiet",
        "--render",
        "--gif",
    ] {
        assert!(printed.contains(flag), "{flag} in {printed}");
    }
    let (result, printed) = run(&["--version"]);
    assert!(matches!(result, Ok(Outcome::Help)));
    assert!(printed.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn command_line_mistakes_are_usage_errors() {
    for args in [
        &["run", "--steps", "-3"][..],
        &["run", "--steps", "3", "--duration", "1"],
        &["run", "--format", "obj"],
        &["run", "--every", "0"],
        &["run", "--threads", "0"],
        &["run", "--duration", "nan"],
        &["frobnicate"],
    ] {
        let (result, _) = run(args);
        match result {
            Err(e @ CliError::Usage(_)) => assert_eq!(e.exit_code(), 2),
            other => panic!("{args:?}: {other:?}"),
        }
    }
}

#[test]
fn bench_reports_one_and_all_threads() {
    let (result, printed) = run(&["bench", "--particles", "500", "--steps", "2"]);
    let Ok(Outcome::Benchmarked(report)) = result else {
        panic!("{result:?}");
    };
    assert_eq!(report.runs[0].threads, 1);
    assert!(
        report
            .runs
            .iter()
            .all(|r| r.particle_iterations_per_second > 0.0)
    );
    assert!(
        printed.contains("particle-iterations/s") && printed.contains(report.simd),
        "{printed}"
    );
    // The passes' lanes as the solver picks them on this CPU.
    assert_eq!(report.lanes, pbf_core::Backend::Lanes.instructions());
    assert!(
        printed.contains(&format!("{} lanes of {}", report.lane_width, report.lanes)),
        "{printed}"
    );
}
