//! Every output format, written by a run of the command, reads back with the particle
//! count, positions, velocities and densities of the solver at that step.

mod common;

use std::path::Path;

use common::{arg, run};
use pbf_cli::{Format, Frame, Scene, frame_file_name};

/// Runs `scene` for `steps` steps writing every `every`-th frame in each format, and
/// checks each frame against the same scene stepped here.
fn check_scene(scene_file: &Path, steps: u64, every: u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    for format in Format::ALL {
        let out = dir.path().join(format.extension());
        let (result, _) = run(&[
            "run",
            arg(scene_file),
            "--steps",
            &steps.to_string(),
            "--every",
            &every.to_string(),
            "--format",
            format.extension(),
            "--out",
            arg(&out),
            "--quiet",
        ]);
        let summary = result
            .expect("the run succeeds")
            .summary()
            .expect("a run")
            .clone();
        assert_eq!(summary.frames.len() as u64, steps / every + 1, "{format:?}");
        let mut solver = Scene::load(scene_file)
            .expect("scene")
            .build()
            .expect("solver");
        for step in 0..=steps {
            if step > 0 {
                solver.step().expect("step");
            }
            if step % every != 0 {
                continue;
            }
            let path = out.join(frame_file_name(step / every, format.extension()));
            assert_eq!(summary.frames[(step / every) as usize], path);
            let back = format.read(&path).expect("reads back");
            let expected = Frame::from_solver(&solver);
            assert_eq!(back.len(), expected.len(), "{format:?} step {step}: count");
            assert_eq!(
                back.positions, expected.positions,
                "{format:?} step {step}: positions"
            );
            assert_eq!(
                back.velocities, expected.velocities,
                "{format:?} step {step}: velocities"
            );
            assert_eq!(
                back.densities, expected.densities,
                "{format:?} step {step}: densities"
            );
            if format == Format::Csv {
                assert_eq!(back.ids, expected.ids, "step {step}: ids");
            }
        }
    }
}

fn init(dir: &Path, name: &str, particles: usize) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let (result, _) = run(&[
        "init",
        name,
        "--particles",
        &particles.to_string(),
        "-o",
        arg(&path),
    ]);
    result.expect("init");
    path
}

#[test]
fn frames_of_a_3d_scene_read_back_in_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    check_scene(&init(dir.path(), "double-dam-break", 500), 4, 2);
}

#[test]
fn frames_of_a_2d_scene_read_back_in_every_format() {
    let dir = tempfile::tempdir().expect("temp dir");
    check_scene(&init(dir.path(), "glass-2d", 300), 3, 1);
}

#[test]
fn vtk_frames_are_legacy_binary_polydata_with_named_point_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (result, _) = run(&[
        "run",
        "--steps",
        "1",
        "--every",
        "1",
        "--format",
        "vtk",
        "--out",
        arg(dir.path()),
        "--quiet",
    ]);
    result.expect("run");
    let bytes = std::fs::read(dir.path().join("frame_00001.vtk")).expect("frame 1");
    let text = String::from_utf8_lossy(&bytes);
    for needle in [
        "# vtk DataFile Version 4.2",
        "\nBINARY\n",
        "DATASET POLYDATA",
        "POINTS",
        "VERTICES",
        "POINT_DATA",
        "VECTORS velocity float",
        "SCALARS density float 1",
    ] {
        assert!(text.contains(needle), "missing {needle:?}");
    }
}
