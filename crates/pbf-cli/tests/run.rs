//! The run command: the default run and its picture, pictures and animations, threads,
//! progress, the command-line surface.

use crate::common;

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
    let along_y = image::open(&summary.picture).expect("PNG").to_rgb8();
    // The same run seen along z (the 2D default) gives the same picture.
    let other = dir.path().join("z");
    let (result, _) = run(&[
        "run",
        arg(&scene),
        "--duration",
        "0.05",
        "--out",
        arg(&other),
        "--quiet",
    ]);
    let summary = result.expect("runs").summary().expect("summary").clone();
    let along_z = image::open(&summary.picture).expect("PNG").to_rgb8();
    assert!(along_y == along_z, "--axis changed a 2D picture");
}

/// Pixels of `img` inside `[x0, x1) x [y0, y1)` that differ from `background`.
fn drawn(img: &image::RgbImage, [x0, y0, x1, y1]: [f32; 4], background: [u8; 3]) -> usize {
    let (x0, y0) = (x0.max(0.0) as u32, y0.max(0.0) as u32);
    let (x1, y1) = (
        (x1.max(0.0) as u32).min(img.width()),
        (y1.max(0.0) as u32).min(img.height()),
    );
    (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0 != background)
        .count()
}

#[test]
fn pictures_show_axes_the_time_and_a_colour_bar_from_the_data() {
    use pbf_cli::{Axis, Frame, Renderer, speed_colour};
    let solver = pbf_solver::scenes::build("dam-break-2d", 400).expect("scene");
    let renderer = Renderer::new(&solver, Axis::Z, 480);
    let mut frame = Frame::from_solver(&solver);
    // Speeds that grow from left to right.
    for (v, p) in frame.velocities.iter_mut().zip(&frame.positions) {
        *v = [2.0 * p[0], 0.0, 0.0];
    }
    let img = renderer.render(&frame, 1.0);
    assert_eq!((img.width(), img.height()), renderer.size());
    let (w, h) = (img.width() as f32, img.height() as f32);
    let background = img.get_pixel(0, img.height() - 1).0;
    let [l, t, r, b] = renderer.domain_box();
    // y tick labels left of the box, x tick labels and title below it, the time above
    // it on the left, the colour bar right of it.
    let left = drawn(&img, [0.0, t, l - 2.0, b], background);
    let below = drawn(&img, [l, b + 2.0, r, h], background);
    let time = drawn(&img, [0.0, 0.0, w / 4.0, t - 1.0], background);
    let bar = drawn(&img, [r + 2.0, t, w, b], background);
    assert!(left > 50, "{left} pixels of y axis labels");
    assert!(below > 50, "{below} pixels of x axis labels");
    assert!(time > 30, "{time} pixels of the time");
    assert!(bar > 500, "{bar} pixels of colour bar");
    let bar_colours: std::collections::HashSet<[u8; 3]> = (t as u32..b as u32)
        .flat_map(|y| (r as u32 + 2..w as u32).map(move |x| (x, y)))
        .map(|(x, y)| img.get_pixel(x, y).0)
        .collect();
    assert!(bar_colours.len() > 40, "{} bar colours", bar_colours.len());

    // The slowest particle (left) has the slow end's colour, the fastest the fast end's.
    let by_x = |a: &usize, b: &usize| frame.positions[*a][0].total_cmp(&frame.positions[*b][0]);
    let slowest = (0..frame.len()).min_by(by_x).expect("particles");
    let fastest = (0..frame.len()).max_by(by_x).expect("particles");
    // The box spans the domain: a particle's pixel maps its x and y into it.
    let pixel_of = |i: usize| {
        let p = frame.positions[i];
        let (lo, hi) = match &solver {
            pbf_solver::scenes::AnySolver::Two(s) => (s.domain().lo(), s.domain().hi()),
            pbf_solver::scenes::AnySolver::Three(_) => unreachable!("a 2D scene"),
        };
        let x = l + (p[0] - lo[0]) / (hi[0] - lo[0]) * (r - l);
        let y = b - (p[1] - lo[1]) / (hi[1] - lo[1]) * (b - t);
        img.get_pixel(x as u32, y as u32).0
    };
    let near =
        |a: [u8; 3], c: [f32; 3]| (0..3).all(|k| a[k].abs_diff((c[k] * 255.0).round() as u8) <= 3);
    let range = renderer.colour_range(&frame);
    let slow = speed_colour(frame.velocities[slowest][0] / range.hi);
    assert!(
        near(pixel_of(slowest), slow),
        "{:?} {slow:?}",
        pixel_of(slowest)
    );
    assert!(
        near(pixel_of(fastest), speed_colour(1.0)),
        "{:?}",
        pixel_of(fastest)
    );
    let lum = |p: [u8; 3]| 0.2 * f32::from(p[0]) + 0.7 * f32::from(p[1]) + 0.1 * f32::from(p[2]);
    assert!(lum(pixel_of(fastest)) > lum(pixel_of(slowest)) + 100.0);

    // Another time changes only the top left; faster speeds everywhere change the
    // scale stated on the bar and above it, not the particles' colours.
    let later = renderer.render(&frame, 2.0);
    let changed = |a: &image::RgbImage, b: &image::RgbImage| -> Vec<(u32, u32)> {
        a.enumerate_pixels()
            .filter(|(x, y, p)| b.get_pixel(*x, *y) != *p)
            .map(|(x, y, _)| (x, y))
            .collect()
    };
    let moved = changed(&img, &later);
    assert!(!moved.is_empty());
    assert!(
        moved
            .iter()
            .all(|&(x, y)| (x as f32) < w / 4.0 && (y as f32) < t)
    );
    // Doubling is exact in floating point: every particle keeps its place on the map.
    for v in &mut frame.velocities {
        v[0] *= 2.0;
    }
    let faster = renderer.render(&frame, 1.0);
    let moved = changed(&img, &faster);
    assert!(moved.iter().any(|&(x, _)| x as f32 > r), "the bar's labels");
    assert!(
        moved.iter().all(|&(x, y)| x as f32 > r || (y as f32) < t),
        "only the scale changes"
    );
}

#[test]
fn bad_picture_options_are_errors() {
    let message = usage_message(&["run", "--colour", "pink"]);
    assert!(message.contains("pink"), "{message}");
    assert!(
        message.contains("speed") && message.contains("density"),
        "{message}"
    );
    let message = usage_message(&["run", "--axis", "w"]);
    assert!(message.contains("x, y, z"), "{message}");
    let message = usage_message(&["run", "--width", "199"]);
    assert!(
        message.contains("must be between 200 and 4096"),
        "{message}"
    );
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
    assert_eq!(report.lanes, pbf_solver::Backend::Lanes.instructions());
    assert!(
        printed.contains(&format!("{} lanes of {}", report.lane_width, report.lanes)),
        "{printed}"
    );
}

/// The names of the files in `dir`, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_directory_with_frames_is_refused_unless_overwrite() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = dir.path().join("g.toml");
    run(&["init", "glass-2d", "--particles", "200", "-o", arg(&scene)])
        .0
        .expect("init");
    let out = dir.path().join("out");
    let frames = |steps: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            arg(&scene),
            "--steps",
            steps,
            "--every",
            "1",
            "--format",
            "csv",
            "-o",
            arg(&out),
            "-q",
        ];
        args.extend_from_slice(extra);
        run(&args).0
    };
    frames("3", &[]).expect("the first run");
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    let before = listing(&out);
    assert!(before.contains(&"frame_00003.csv".to_owned()), "{before:?}");
    let old_frame = std::fs::read(out.join("frame_00003.csv")).expect("frame");
    // A second run refuses, names the directory and the flag, and touches nothing.
    match frames("1", &[]) {
        Err(e @ CliError::OutputExists { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains(&out.display().to_string()) && message.contains("--overwrite"),
                "{message}"
            );
            assert_eq!(e.exit_code(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(listing(&out), before);
    assert_eq!(
        std::fs::read(out.join("frame_00003.csv")).expect("frame"),
        old_frame
    );
    // Pictures of frames count too.
    let pictures = dir.path().join("pictures");
    run(&[
        "run",
        arg(&scene),
        "--steps",
        "1",
        "--render",
        "-o",
        arg(&pictures),
        "-q",
    ])
    .0
    .expect("pictures");
    assert!(matches!(
        run(&[
            "run",
            arg(&scene),
            "--steps",
            "1",
            "-o",
            arg(&pictures),
            "-q"
        ])
        .0,
        Err(CliError::OutputExists { .. })
    ));
    // --overwrite deletes the old run's files (frame 3 is not written again), keeps
    // the rest, and runs.
    let summary = frames("1", &["--overwrite"])
        .expect("overwrite runs")
        .summary()
        .expect("ran")
        .clone();
    assert_eq!(summary.frames.len(), 2);
    assert_eq!(
        listing(&out),
        [
            "frame_00000.csv",
            "frame_00001.csv",
            "frames.csv.series",
            "last_frame.png",
            "notes.txt"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "mine"
    );
    // A directory with only the last picture (every run writes one) runs as it is.
    let (result, _) = run(&[
        "run",
        arg(&scene),
        "--steps",
        "1",
        "-o",
        arg(&pictures),
        "-q",
        "--overwrite",
    ]);
    result.expect("overwrite");
    assert_eq!(listing(&pictures), ["last_frame.png"]);
    run(&[
        "run",
        arg(&scene),
        "--steps",
        "1",
        "-o",
        arg(&pictures),
        "-q",
    ])
    .0
    .expect("a lone last_frame.png is replaced");
}

/// The message of a usage error, as the binary prints it.
fn usage_message(args: &[&str]) -> String {
    match run(args).0 {
        Err(CliError::Usage(e)) => e.to_string(),
        other => panic!("{args:?}: {other:?}"),
    }
}

#[test]
fn range_errors_are_in_words() {
    let message = usage_message(&["run", "--every", "0"]);
    assert!(message.contains("--every"), "{message}");
    assert!(message.contains("must be at least 1"), "{message}");
    assert!(!message.contains("18446744073709551615"), "{message}");
    let message = usage_message(&["run", "--threads", "0"]);
    assert!(message.contains("must be between 1 and 4096"), "{message}");
    let message = usage_message(&["run", "--width", "9"]);
    assert!(
        message.contains("must be between 200 and 4096"),
        "{message}"
    );
    let message = usage_message(&["soak", "--check-every", "0"]);
    assert!(message.contains("must be at least 1"), "{message}");
    let message = usage_message(&["init", "glass", "--particles", "lots"]);
    assert!(
        message.contains("`lots` is not a whole number"),
        "{message}"
    );
}

/// `-x, --long` pairs of a subcommand's help.
fn short_flags(subcommand: &str) -> Vec<(char, String)> {
    let (result, help) = run(&[subcommand, "--help"]);
    assert!(matches!(result, Ok(Outcome::Help)));
    help.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let rest = line.strip_prefix('-')?;
            let mut chars = rest.chars();
            let short = chars.next()?;
            let long = chars.as_str().strip_prefix(", --")?;
            let long = long.split([' ', '<']).next()?.to_owned();
            Some((short, long))
        })
        .collect()
}

#[test]
fn each_short_flag_has_one_meaning_in_every_subcommand() {
    let mut meanings: std::collections::BTreeMap<char, Vec<(String, &str)>> = Default::default();
    for subcommand in ["run", "init", "bench", "validate", "soak"] {
        for (short, long) in short_flags(subcommand) {
            meanings.entry(short).or_default().push((long, subcommand));
        }
    }
    for (short, uses) in &meanings {
        assert!(
            uses.iter().all(|(long, _)| *long == uses[0].0),
            "-{short} means different flags: {uses:?}"
        );
    }
    let o = &meanings[&'o'];
    assert!(o.iter().all(|(long, _)| long == "output"), "{o:?}");
    let where_o: Vec<&str> = o.iter().map(|(_, s)| *s).collect();
    assert_eq!(where_o, ["run", "init", "validate"]);
    assert!(meanings[&'q'].iter().all(|(long, _)| long == "quiet"));
    // `-o` is the output of `run` as it is of `init`; `--out` still works.
    let dir = tempfile::tempdir().expect("temp dir");
    for flag in ["-o", "--output", "--out"] {
        let out = dir.path().join(flag.trim_start_matches('-'));
        run(&["run", "--steps", "1", flag, arg(&out), "-q"])
            .0
            .expect("runs");
        assert!(out.join("last_frame.png").exists(), "{flag}");
    }
}
