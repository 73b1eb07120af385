//! Surface meshes (`--surface`): a block's surface is closed and holds the block's
//! volume, every format writes one mesh per frame that reads back and a series file
//! with their times, pictures draw the surface, and the flag's mistakes are errors that
//! name the flag.

use crate::common;
use common::series_entries;

use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

use common::{arg, run};
use pbf_cli::surface::{SurfaceMesh, SurfaceParams};
use pbf_cli::{CliError, Frame, Outcome};
use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{PropertyAccess, PropertyAccessResult};

const SPACING: f64 = 0.05;

/// A 3D box with a block of 14 x 14 x 14 particles at spacing 0.05 resting on its floor.
const BLOCK_3D: &str = r#"
dimension = 3
[solver]
spacing = 0.05
[domain]
lo = [0.0, 0.0, 0.0]
hi = [1.1, 1.0, 1.1]
[[block]]
lo = [0.2, 0.0, 0.2]
hi = [0.9, 0.7, 0.9]
"#;

const BLOCK_2D: &str = r#"
dimension = 2
[solver]
spacing = 0.05
[domain]
lo = [0.0, 0.0]
hi = [1.0, 1.0]
[[block]]
lo = [0.2, 0.0]
hi = [0.6, 0.4]
"#;

fn scene(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the scene");
    path
}

/// Runs `scene` with `extra` arguments into `out`, quietly.
fn run_scene(scene: &Path, out: &Path, extra: &[&str]) -> Result<Outcome, CliError> {
    let mut args = vec!["run", arg(scene), "-o", arg(out), "-q"];
    args.extend_from_slice(extra);
    run(&args).0
}

/// An OBJ file of `v x y z` and `f a b c` lines, parsed here rather than by the writer's
/// own code.
fn read_obj(path: &Path) -> SurfaceMesh {
    let text = std::fs::read_to_string(path).expect("an OBJ file");
    let mut mesh = SurfaceMesh::default();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let v: Vec<f32> = words.map(|w| w.parse().expect("a coordinate")).collect();
                assert_eq!(v.len(), 3, "{line}");
                mesh.vertices.push([v[0], v[1], v[2]]);
            }
            Some("f") => {
                let f: Vec<usize> = words.map(|w| w.parse().expect("an index")).collect();
                assert_eq!(f.len(), 3, "{line}");
                assert!(
                    f.iter().all(|&i| i >= 1 && i <= mesh.vertices.len()),
                    "{line}"
                );
                mesh.triangles.push([f[0] - 1, f[1] - 1, f[2] - 1]);
            }
            Some("#") | None => {}
            Some(other) => panic!("unexpected OBJ line kind {other:?}: {line}"),
        }
    }
    mesh
}

#[derive(Default)]
struct PlyVertex([f32; 7]);

const PLY_VERTEX: [&str; 7] = ["x", "y", "z", "vx", "vy", "vz", "density"];

impl PropertyAccess for PlyVertex {
    fn new() -> Self {
        Self::default()
    }
    fn set_float(&mut self, name: &str, value: f32) -> PropertyAccessResult {
        match PLY_VERTEX.iter().position(|p| *p == name) {
            Some(i) => {
                self.0[i] = value;
                PropertyAccessResult::Set
            }
            None => PropertyAccessResult::Ignored,
        }
    }
}

#[derive(Default)]
struct PlyFace(Vec<i32>);

impl PropertyAccess for PlyFace {
    fn new() -> Self {
        Self::default()
    }
    fn set_list_int(&mut self, name: &str, value: Vec<i32>) -> PropertyAccessResult {
        if name == "vertex_indices" {
            self.0 = value;
            PropertyAccessResult::Set
        } else {
            PropertyAccessResult::Ignored
        }
    }
}

/// A PLY surface read with ply-rs-bw: vertices with velocity and density, triangles.
fn read_ply(path: &Path) -> SurfaceMesh {
    let mut reader = Reader::new(BufReader::new(
        std::fs::File::open(path).expect("a PLY file"),
    ));
    let vertex_parser = Parser::<PlyVertex>::new();
    let header = vertex_parser
        .read_header(&mut reader)
        .expect("a PLY header");
    let vertex = &header.elements["vertex"];
    for p in PLY_VERTEX {
        assert!(vertex.properties.contains_key(p), "no vertex property {p}");
    }
    let vertices = vertex_parser
        .read_payload_for_element(&mut reader, vertex, &header)
        .expect("vertices");
    let faces = Parser::<PlyFace>::new()
        .read_payload_for_element(&mut reader, &header.elements["face"], &header)
        .expect("faces");
    let mut mesh = SurfaceMesh::default();
    for PlyVertex([x, y, z, vx, vy, vz, density]) in vertices {
        mesh.vertices.push([x, y, z]);
        mesh.velocities.push([vx, vy, vz]);
        mesh.densities.push(density);
    }
    for PlyFace(f) in faces {
        assert_eq!(f.len(), 3, "a triangle");
        let index = |i: i32| usize::try_from(i).expect("a vertex index");
        mesh.triangles.push([index(f[0]), index(f[1]), index(f[2])]);
    }
    mesh
}

/// A VTK surface read with vtkio: the points, triangle cells and the point data.
fn read_vtk(path: &Path) -> SurfaceMesh {
    use vtkio::model::{Attribute, CellType, DataSet, IOBuffer, VertexNumbers, Vtk};
    let vtk = Vtk::import(path).expect("a VTK file");
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        panic!("not an unstructured grid");
    };
    let piece = pieces
        .into_iter()
        .next()
        .expect("a piece")
        .into_loaded_piece_data(None)
        .expect("inline data");
    let floats = |b: &IOBuffer| -> Vec<f32> {
        match b {
            IOBuffer::F32(v) => v.clone(),
            other => panic!("not float: {other:?}"),
        }
    };
    let mut mesh = SurfaceMesh::default();
    let points = floats(&piece.points);
    mesh.vertices = points.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    assert!(piece.cells.types.iter().all(|t| *t == CellType::Triangle));
    let VertexNumbers::Legacy { vertices, .. } = piece.cells.cell_verts else {
        panic!("legacy cells");
    };
    for c in vertices.chunks_exact(4) {
        assert_eq!(c[0], 3, "a triangle");
        mesh.triangles
            .push([c[1] as usize, c[2] as usize, c[3] as usize]);
    }
    for a in &piece.data.point {
        if let Attribute::DataArray(d) = a {
            match d.name.as_str() {
                "velocity" => {
                    mesh.velocities = floats(&d.data)
                        .chunks_exact(3)
                        .map(|c| [c[0], c[1], c[2]])
                        .collect()
                }
                "density" => mesh.densities = floats(&d.data),
                other => panic!("unexpected point data {other}"),
            }
        }
    }
    mesh
}

/// Every edge shared by exactly two triangles, counted here from the triangles alone.
fn assert_closed(mesh: &SurfaceMesh, what: &str) {
    let mut edges: HashMap<(usize, usize), u32> = HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    let open = edges.values().filter(|&&n| n != 2).count();
    assert!(!mesh.triangles.is_empty(), "{what}: no triangles");
    assert_eq!(
        open,
        0,
        "{what}: {open} of {} edges are not shared by two triangles",
        edges.len()
    );
}

/// The enclosed volume by the divergence theorem, summed here in f64.
fn volume(mesh: &SurfaceMesh) -> f64 {
    let p = |i: usize| mesh.vertices[i].map(f64::from);
    mesh.triangles
        .iter()
        .map(|&[a, b, c]| {
            let (a, b, c) = (p(a), p(b), p(c));
            a[0] * (b[1] * c[2] - b[2] * c[1])
                + a[1] * (b[2] * c[0] - b[0] * c[2])
                + a[2] * (b[0] * c[1] - b[1] * c[0])
        })
        .sum::<f64>()
        / 6.0
}

#[test]
fn a_settled_block_has_a_closed_surface_holding_its_volume() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "block.toml", BLOCK_3D);
    let out = dir.path().join("out");
    let outcome = run_scene(
        &scene,
        &out,
        &["--steps", "20", "--every", "10", "--surface", "obj"],
    )
    .expect("runs");
    let summary = outcome.summary().expect("a run");
    assert_eq!(summary.particles, 14 * 14 * 14);
    assert_eq!(summary.surfaces.len(), 3, "frames 0, 10 and 20");
    let fluid = summary.particles as f64 * SPACING.powi(3);
    for (k, path) in summary.surfaces.iter().enumerate() {
        assert_eq!(path, &out.join(format!("surface_{:05}.obj", k)));
        let mesh = read_obj(path);
        assert_closed(&mesh, &path.display().to_string());
        let ratio = volume(&mesh) / fluid;
        eprintln!(
            "{}: {} triangles, closed, volume / (particles x spacing^3) = {ratio:.4}",
            path.display(),
            mesh.triangles.len()
        );
        assert!(
            (ratio - 1.0).abs() < 0.05,
            "{}: volume ratio {ratio}",
            path.display()
        );
    }
}

#[test]
fn the_iso_threshold_moves_the_surface_and_the_cube_size_refines_it() {
    let s = 0.05f32;
    let n = 12;
    let positions: Vec<[f32; 3]> = (0..n * n * n)
        .map(|i| {
            [
                (i % n) as f32 * s,
                (i / n % n) as f32 * s,
                (i / (n * n)) as f32 * s,
            ]
        })
        .collect();
    let frame = Frame {
        velocities: vec![[0.5, -1.0, 0.0]; positions.len()],
        densities: vec![1000.0; positions.len()],
        ids: Vec::new(),
        positions,
    };
    let params = SurfaceParams::for_scene(s, 2.0 * s, 1000.0);
    let volume_at = |p: SurfaceParams| {
        let mesh = SurfaceMesh::reconstruct(&frame, &p).expect("reconstructs");
        assert!(mesh.is_closed(), "{p:?}");
        (mesh.volume(), mesh)
    };
    let (low, _) = volume_at(SurfaceParams { iso: 0.4, ..params });
    let (default, mesh) = volume_at(params);
    let (high, _) = volume_at(SurfaceParams { iso: 0.8, ..params });
    assert!(low > default && default > high, "{low} {default} {high}");
    // A uniform velocity and density come through interpolation unchanged.
    assert_eq!(mesh.velocities.len(), mesh.vertices.len());
    for (v, d) in mesh.velocities.iter().zip(&mesh.densities) {
        assert!(
            (v[0] - 0.5).abs() < 1e-3 && (v[1] + 1.0).abs() < 1e-3 && v[2].abs() < 1e-3,
            "{v:?}"
        );
        assert!((d - 1000.0).abs() < 1.0, "{d}");
    }
    let (_, fine) = volume_at(SurfaceParams {
        cube_size: s / 4.0,
        ..params
    });
    assert!(fine.triangles.len() > 3 * mesh.triangles.len());
}

#[test]
fn every_format_writes_one_mesh_per_frame_that_reads_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "block.toml", BLOCK_3D);
    for (extension, read) in [
        ("obj", read_obj as fn(&Path) -> SurfaceMesh),
        ("ply", read_ply),
        ("vtk", read_vtk),
    ] {
        let out = dir.path().join(extension);
        // The particle frames in the same format sit beside the surfaces.
        let outcome = run_scene(
            &scene,
            &out,
            &[
                "--steps",
                "4",
                "--every",
                "2",
                "--format",
                "vtk",
                "--surface",
                extension,
            ],
        )
        .expect("runs");
        let summary = outcome.summary().expect("a run");
        assert_eq!(summary.frames.len(), 3);
        assert_eq!(summary.surfaces.len(), summary.frames.len(), "{extension}");
        for k in 0..3 {
            let path = out.join(format!("surface_{k:05}.{extension}"));
            assert_eq!(summary.surfaces[k], path);
            assert!(out.join(format!("frame_{k:05}.vtk")).exists());
            let mesh = read(&path);
            assert_closed(&mesh, &path.display().to_string());
            if extension == "obj" {
                continue;
            }
            assert_eq!(mesh.velocities.len(), mesh.vertices.len(), "{extension}");
            assert_eq!(mesh.densities.len(), mesh.vertices.len(), "{extension}");
            // Interpolation with first-order correction weighs the particles with
            // positive weights that sum to 1: each vertex's value lies within the range
            // of the frame's particle values.
            let particles = pbf_cli::Format::Vtk
                .read(&out.join(format!("frame_{k:05}.vtk")))
                .expect("the frame");
            let range = |values: Vec<f32>| {
                let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                move |x: f32| {
                    x >= lo - 1e-3 * lo.abs().max(1.0) && x <= hi + 1e-3 * hi.abs().max(1.0)
                }
            };
            let density = range(particles.densities.clone());
            assert!(
                mesh.densities.iter().all(|&d| density(d)),
                "{extension}: densities"
            );
            for axis in 0..3 {
                let within = range(particles.velocities.iter().map(|v| v[axis]).collect());
                assert!(
                    mesh.velocities.iter().all(|v| within(v[axis])),
                    "{extension}: velocity axis {axis}"
                );
            }
            // The surface's density is below the bulk's: the particles there miss
            // neighbours outside the fluid.
            let mean = mesh.densities.iter().map(|&d| f64::from(d)).sum::<f64>()
                / mesh.densities.len() as f64;
            assert!(
                mean > 500.0 && mean < 1000.0,
                "{extension}: mean density {mean}"
            );
        }
    }
}

#[test]
fn two_d_scenes_refuse_surfaces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "flat.toml", BLOCK_2D);
    let out = dir.path().join("out");
    match run_scene(&scene, &out, &["--steps", "1", "--surface", "obj"]) {
        Err(
            e @ CliError::InvalidArgument {
                flag: "--surface", ..
            },
        ) => {
            assert!(e.to_string().contains("2D"), "{e}");
            assert_eq!(e.exit_code(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists(), "nothing ran");
}

#[test]
fn bad_surface_overrides_are_errors_naming_the_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "block.toml", BLOCK_3D);
    let out = dir.path().join("out");
    let usage = |extra: &[&str], flag: &str, words: &str| match run_scene(&scene, &out, extra) {
        Err(e @ CliError::Usage(_)) => {
            let message = e.to_string();
            assert!(
                message.contains(flag) && message.contains(words),
                "{message}"
            );
            assert_eq!(e.exit_code(), 2);
        }
        other => panic!("{extra:?}: {other:?}"),
    };
    usage(
        &["--surface", "obj", "--surface-cube-size", "0"],
        "--surface-cube-size",
        "above 0",
    );
    usage(
        &["--surface", "obj", "--surface-cube-size", "wide"],
        "--surface-cube-size",
        "not a number",
    );
    usage(
        &["--surface", "obj", "--surface-iso", "1.5"],
        "--surface-iso",
        "below 1",
    );
    usage(
        &["--surface", "obj", "--surface-iso", "-0.1"],
        "--surface-iso",
        "above 0",
    );
    usage(&["--surface", "stl"], "--surface", "obj");
    // An override without --surface has nothing to apply to.
    usage(&["--surface-iso", "0.5"], "--surface", "");
    // Cube sizes the scene cannot use: finer than spacing/10, coarser than h.
    for cube in ["0.001", "0.5"] {
        match run_scene(
            &scene,
            &out,
            &["--surface", "obj", "--surface-cube-size", cube],
        ) {
            Err(
                e @ CliError::InvalidArgument {
                    flag: "--surface-cube-size",
                    ..
                },
            ) => {
                let message = e.to_string();
                assert!(
                    message.contains("spacing/10") && message.contains("h = 0.1"),
                    "{message}"
                );
            }
            other => panic!("{cube}: {other:?}"),
        }
    }
    assert!(!out.exists(), "nothing ran");
    // Values in range run.
    let outcome = run_scene(
        &scene,
        &out,
        &[
            "--steps",
            "0",
            "--surface",
            "obj",
            "--surface-cube-size",
            "0.02",
            "--surface-iso",
            "0.5",
        ],
    )
    .expect("runs");
    assert_closed(
        &read_obj(&outcome.summary().expect("a run").surfaces[0]),
        "overrides",
    );
}

#[test]
fn surfaces_belong_to_the_run_and_overwrite_clears_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "block.toml", BLOCK_3D);
    let out = dir.path().join("out");
    run_scene(
        &scene,
        &out,
        &["--steps", "2", "--every", "1", "--surface", "ply"],
    )
    .expect("runs");
    std::fs::write(out.join("notes.txt"), "mine").expect("write");
    // Surfaces alone are an earlier run's files.
    match run_scene(&scene, &out, &["--steps", "0", "--surface", "obj"]) {
        Err(CliError::OutputExists { example, count, .. }) => {
            assert!(example.starts_with("surface_"), "{example}");
            assert_eq!(count, 4, "three meshes and their series");
        }
        other => panic!("{other:?}"),
    }
    run_scene(
        &scene,
        &out,
        &["--steps", "0", "--surface", "obj", "--overwrite"],
    )
    .expect("runs");
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "last_frame.png",
            "notes.txt",
            "surface_00000.obj",
            "surfaces.obj.series"
        ]
    );
}

#[test]
fn a_series_file_lists_every_mesh_with_its_simulated_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = scene(dir.path(), "block.toml", BLOCK_3D);
    for extension in ["obj", "ply", "vtk"] {
        let out = dir.path().join(extension);
        // CSV frames give the frames' times to compare with.
        let outcome = run_scene(
            &scene,
            &out,
            &[
                "--steps",
                "4",
                "--every",
                "2",
                "--format",
                "csv",
                "--surface",
                extension,
            ],
        )
        .expect("runs");
        let summary = outcome.summary().expect("a run");
        let series = out.join(format!("surfaces.{extension}.series"));
        assert_eq!(summary.surface_series.as_ref(), Some(&series));
        assert_eq!(
            series,
            out.join(pbf_cli::surface_series_file_name(extension))
        );
        let entries = series_entries(&series);
        assert_eq!(entries.len(), 3, "{extension}: {entries:?}");
        assert_eq!(summary.frame_times.len(), 3);
        for (k, (name, time)) in entries.iter().enumerate() {
            assert_eq!(name, &format!("surface_{k:05}.{extension}"));
            assert_eq!(summary.surfaces[k], out.join(name));
            let want = summary.frame_times[k];
            assert!(
                (time - want).abs() <= 4.0 * f64::EPSILON * want.abs(),
                "{extension}: {name} at {time}, the frame at {want}"
            );
        }
        assert_eq!(entries[0].1, 0.0);
        assert!(entries[1].1 > 0.0 && entries[2].1 > entries[1].1);
    }
    // Without --surface there is no surface series.
    let out = dir.path().join("none");
    let outcome = run_scene(&scene, &out, &["--steps", "0"]).expect("runs");
    assert!(outcome.summary().expect("a run").surface_series.is_none());
}

#[test]
fn pictures_draw_the_surface_with_no_holes_in_the_fluid() {
    use pbf_cli::{Axis, Renderer, Scene};
    let dir = tempfile::tempdir().expect("temp dir");
    let scene_path = scene(dir.path(), "block.toml", BLOCK_3D);
    let solver = Scene::parse(BLOCK_3D, &scene_path)
        .and_then(|s| s.build())
        .expect("the scene");
    let width = 400;
    let [l, t, r, b] = Renderer::new(&solver, Axis::Z, width).domain_box();
    // The domain is 1.1 m wide and 1 m high; the block spans x 0.2 to 0.9, y 0 to 0.7.
    let pixel = |x: f32, y: f32| ((l + x / 1.1 * (r - l)) as u32, (b - y * (b - t)) as u32);
    let pictures = |surface: bool| {
        let out = dir
            .path()
            .join(if surface { "surface" } else { "particles" });
        let mut extra = vec!["--steps", "3", "--every", "2", "--render", "--width", "400"];
        if surface {
            extra.extend_from_slice(&["--surface", "obj"]);
        }
        let outcome = run_scene(&scene_path, &out, &extra).expect("runs");
        let summary = outcome.summary().expect("a run");
        assert_eq!(summary.renders.len(), 2);
        // Step 2's picture, and the last frame's (step 3, past the last mesh file).
        [&summary.renders[1], &summary.picture].map(|p| image::open(p).expect("a PNG").to_rgb8())
    };
    let particles = pictures(false);
    let surface = pictures(true);
    for (k, (with_surface, without)) in surface.iter().zip(&particles).enumerate() {
        assert_ne!(with_surface, without, "picture {k}: the surface is drawn");
        // The empty top right of the domain shows the domain's own colour.
        let (x, y) = pixel(1.0, 0.9);
        let domain = with_surface.get_pixel(x, y).0;
        assert_eq!(without.get_pixel(x, y).0, domain, "picture {k}");
        // Well inside the block's projection the surface covers every pixel: no
        // background shows through, where the particles' discs leave gaps.
        let holes = |img: &image::RgbImage| {
            let (x0, y0) = pixel(0.3, 0.6);
            let (x1, y1) = pixel(0.8, 0.1);
            (y0..y1)
                .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                .filter(|&(x, y)| img.get_pixel(x, y).0 == domain)
                .count()
        };
        let (surface_holes, particle_holes) = (holes(with_surface), holes(without));
        eprintln!(
            "picture {k}: {surface_holes} holes in the surface, {particle_holes} between the particles"
        );
        assert_eq!(surface_holes, 0, "picture {k}");
        assert!(particle_holes > 0, "picture {k}");
    }
}
