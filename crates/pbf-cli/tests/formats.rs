//! Every output format, written by a run of the command, reads back with the particle
//! count, ids, positions, velocities and densities of the solver at that step: through
//! the crate's own readers, and through readers written here from each format's
//! specification (legacy VTK, Houdini's classic BGEO, CSV) or another crate's generic
//! parser (PLY), which share no code with the writers. The run's `.series` and `.pvd`
//! files list each frame with its simulated time.

use crate::common;
use common::series_entries;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{arg, run};
use pbf_cli::{CliError, Format, Frame, RunSummary, Scene, frame_file_name};
use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;

/// One particle as the solver holds it, padded to 3D (z = 0 in 2D).
#[derive(Debug, Clone, PartialEq)]
struct Particle {
    id: u64,
    position: [f32; 3],
    velocity: [f32; 3],
    density: f32,
}

/// The solver's particles, read from its own arrays (not through `Frame`).
fn state(solver: &AnySolver) -> Vec<Particle> {
    fn of<const D: usize>(s: &Solver<D>) -> Vec<Particle> {
        let pad = |arrays: [&[f32]; D], i: usize| {
            let mut v = [0.0f32; 3];
            for (a, slot) in v.iter_mut().enumerate().take(D) {
                *slot = arrays[a][i];
            }
            v
        };
        (0..s.len())
            .map(|i| Particle {
                id: s.ids()[i],
                position: pad(s.positions(), i),
                velocity: pad(s.velocities(), i),
                density: s.densities()[i],
            })
            .collect()
    }
    match solver {
        AnySolver::Two(s) => of(s),
        AnySolver::Three(s) => of(s),
    }
}

/// Runs `scene_file` writing every `every`-th of `steps` steps in `format` to `out`.
fn run_frames(scene_file: &Path, format: Format, steps: u64, every: u64, out: &Path) -> RunSummary {
    let (result, _) = run(&[
        "run",
        arg(scene_file),
        "--steps",
        &steps.to_string(),
        "--every",
        &every.to_string(),
        "--format",
        format.extension(),
        "--output",
        arg(out),
        "--quiet",
    ]);
    result
        .expect("the run succeeds")
        .summary()
        .expect("a run")
        .clone()
}

/// The solver's particles and clock at every `every`-th of `steps` steps, stepped here.
fn expected_frames(scene_file: &Path, steps: u64, every: u64) -> Vec<(Vec<Particle>, f64)> {
    let mut solver = Scene::load(scene_file)
        .expect("scene")
        .build()
        .expect("solver");
    let mut frames = vec![(state(&solver), solver.time())];
    for step in 1..=steps {
        solver.step().expect("step");
        if step % every == 0 {
            frames.push((state(&solver), solver.time()));
        }
    }
    frames
}

/// Runs `scene` for `steps` steps writing every `every`-th frame in each format, and
/// checks each frame, read with the crate's reader, against the same scene stepped here.
fn check_scene(scene_file: &Path, steps: u64, every: u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let expected = expected_frames(scene_file, steps, every);
    for format in Format::ALL {
        let out = dir.path().join(format.extension());
        let summary = run_frames(scene_file, format, steps, every, &out);
        assert_eq!(summary.frames.len(), expected.len(), "{format:?}");
        for (k, (particles, _)) in expected.iter().enumerate() {
            let path = out.join(frame_file_name(k as u64, format.extension()));
            assert_eq!(summary.frames[k], path);
            let back = format.read(&path).expect("reads back");
            let frame = Frame {
                positions: particles.iter().map(|p| p.position).collect(),
                velocities: particles.iter().map(|p| p.velocity).collect(),
                densities: particles.iter().map(|p| p.density).collect(),
                ids: particles.iter().map(|p| p.id).collect(),
            };
            assert_eq!(back, frame, "{format:?} frame {k}");
        }
    }
}

fn init(dir: &Path, name: &str, particles: usize) -> PathBuf {
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

// ---------------------------------------------------------------------------------------
// Independent readers.

/// A big-endian byte cursor.
struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn new(b: &'a [u8]) -> Self {
        Self { b, at: 0 }
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        s
    }
    fn word(&mut self) -> [u8; 4] {
        self.take(4).try_into().expect("4 bytes")
    }
    fn i32(&mut self) -> i32 {
        i32::from_be_bytes(self.word())
    }
    fn f32(&mut self) -> f32 {
        f32::from_be_bytes(self.word())
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.take(2).try_into().expect("2 bytes"))
    }
    /// The next non-blank text line (the legacy VTK keywords), without its newline.
    fn line(&mut self) -> String {
        while self.b.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
        let end = self.b[self.at..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(self.b.len(), |p| self.at + p);
        let line = String::from_utf8(self.b[self.at..end].to_vec()).expect("ASCII keywords");
        self.at = (end + 1).min(self.b.len());
        line
    }
    fn done(&self) -> bool {
        self.b[self.at..].iter().all(|c| c.is_ascii_whitespace())
    }
}

/// A legacy VTK unstructured grid, as the "VTK File Formats" specification lays out a
/// binary one: a version line, a title, `BINARY`, `DATASET UNSTRUCTURED_GRID`, `POINTS n
/// type`, `CELLS n size`, `CELL_TYPES n`, then `POINT_DATA n` with `SCALARS name type
/// [ncomp]` + `LOOKUP_TABLE` and `VECTORS name type` arrays; big-endian numbers.
#[derive(Debug, Default)]
struct LegacyVtk {
    points: Vec<[f32; 3]>,
    cells: Vec<Vec<i32>>,
    cell_types: Vec<i32>,
    /// Name -> (keyword and type, components, values).
    point_data: HashMap<String, (String, usize, Vec<f64>)>,
}

fn read_values(c: &mut Bytes<'_>, kind: &str, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match kind {
            "float" => f64::from(c.f32()),
            "int" => f64::from(c.i32()),
            "double" => f64::from_be_bytes(c.take(8).try_into().expect("8 bytes")),
            other => panic!("unexpected type {other}"),
        })
        .collect()
}

fn parse_legacy_vtk(bytes: &[u8]) -> LegacyVtk {
    let mut c = Bytes::new(bytes);
    assert!(c.line().starts_with("# vtk DataFile Version "));
    let _title = c.line();
    assert_eq!(c.line(), "BINARY");
    assert_eq!(c.line(), "DATASET UNSTRUCTURED_GRID");
    let mut vtk = LegacyVtk::default();
    let mut points_in_data = None;
    while !c.done() {
        let line = c.line();
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| words[i].parse::<usize>().expect("a count");
        match words[0] {
            "POINTS" => {
                let v = read_values(&mut c, words[2], 3 * number(1));
                vtk.points = v
                    .chunks_exact(3)
                    .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32])
                    .collect();
            }
            "CELLS" => {
                let (n, size) = (number(1), number(2));
                let mut read = 0;
                for _ in 0..n {
                    let k = c.i32();
                    vtk.cells.push((0..k).map(|_| c.i32()).collect());
                    read += 1 + k as usize;
                }
                assert_eq!(read, size, "CELLS size");
            }
            "CELL_TYPES" => vtk.cell_types = (0..number(1)).map(|_| c.i32()).collect(),
            "POINT_DATA" => points_in_data = Some(number(1)),
            "CELL_DATA" => assert_eq!(number(1), vtk.cells.len(), "CELL_DATA count"),
            "SCALARS" => {
                let n = points_in_data.expect("POINT_DATA first");
                let components = words.get(3).map_or(1, |w| w.parse().expect("ncomp"));
                assert_eq!(c.line(), "LOOKUP_TABLE default");
                let values = read_values(&mut c, words[2], n * components);
                vtk.point_data.insert(
                    words[1].to_owned(),
                    (format!("SCALARS {}", words[2]), components, values),
                );
            }
            "VECTORS" => {
                let n = points_in_data.expect("POINT_DATA first");
                let values = read_values(&mut c, words[2], 3 * n);
                vtk.point_data.insert(
                    words[1].to_owned(),
                    (format!("VECTORS {}", words[2]), 3, values),
                );
            }
            other => panic!("unexpected legacy VTK keyword {other:?}"),
        }
    }
    vtk
}

/// A classic BGEO point attribute: name, type code (0 float, 1 int, 5 vector),
/// component count.
type BgeoAttribute = (String, i32, usize);

/// A classic (version 5) BGEO file of points, as Houdini's documentation of the
/// format and partio lay it out: `BgeoV`, the version, eight counts, the point
/// attribute definitions, each point's `P` (x, y, z, w) and attribute values, the end
/// bytes `0x00 0xff`; big-endian numbers.
struct Bgeo {
    attributes: Vec<BgeoAttribute>,
    positions: Vec<[f32; 3]>,
    /// Attribute name -> each point's components as raw 4-byte words.
    values: HashMap<String, Vec<Vec<[u8; 4]>>>,
}

fn parse_bgeo(bytes: &[u8]) -> Bgeo {
    let mut c = Bytes::new(bytes);
    assert_eq!(c.take(5), b"BgeoV");
    assert_eq!(c.i32(), 5, "version");
    let counts: [i32; 8] = std::array::from_fn(|_| c.i32());
    let [
        points,
        prims,
        point_groups,
        prim_groups,
        point_attrs,
        vertex_attrs,
        prim_attrs,
        detail_attrs,
    ] = counts;
    assert_eq!(
        (
            prims,
            point_groups,
            prim_groups,
            vertex_attrs,
            prim_attrs,
            detail_attrs
        ),
        (0, 0, 0, 0, 0, 0)
    );
    let mut attributes = Vec::new();
    for _ in 0..point_attrs {
        let len = c.u16() as usize;
        let name = String::from_utf8(c.take(len).to_vec()).expect("name");
        let size = c.u16() as usize;
        let kind = c.i32();
        c.take(4 * size); // defaults
        attributes.push((name, kind, size));
    }
    let mut bgeo = Bgeo {
        attributes,
        positions: Vec::new(),
        values: HashMap::new(),
    };
    for _ in 0..points {
        let p = [c.f32(), c.f32(), c.f32()];
        assert_eq!(c.f32(), 1.0, "w");
        bgeo.positions.push(p);
        for (name, _, size) in &bgeo.attributes {
            let words = (0..*size).map(|_| c.word()).collect();
            bgeo.values.entry(name.clone()).or_default().push(words);
        }
    }
    assert_eq!(c.take(2), [0x00, 0xff]);
    assert!(c.done());
    bgeo
}

/// Reads frame `path` of `format` with the independent reader of that format.
fn read_independently(format: Format, path: &Path) -> Vec<Particle> {
    let bytes = std::fs::read(path).expect("frame");
    match format {
        Format::Vtk => {
            let vtk = parse_legacy_vtk(&bytes);
            let n = vtk.points.len();
            let data = |name: &str, kind: &str, components: usize| {
                let (k, comp, v) = vtk.point_data.get(name).expect(name);
                assert_eq!((k.as_str(), *comp), (kind, components), "{name}");
                v.clone()
            };
            let ids = data("id", "SCALARS int", 1);
            let v = data("velocity", "VECTORS float", 3);
            let rho = data("density", "SCALARS float", 1);
            (0..n)
                .map(|i| Particle {
                    id: ids[i] as u64,
                    position: vtk.points[i],
                    velocity: [v[3 * i] as f32, v[3 * i + 1] as f32, v[3 * i + 2] as f32],
                    density: rho[i] as f32,
                })
                .collect()
        }
        Format::Bgeo | Format::BgeoGz => {
            let bytes = if format == Format::BgeoGz {
                use std::io::Read;
                let mut inflated = Vec::new();
                flate2::read::GzDecoder::new(bytes.as_slice())
                    .read_to_end(&mut inflated)
                    .expect("gzip");
                inflated
            } else {
                bytes
            };
            let bgeo = parse_bgeo(&bytes);
            let float = |w: [u8; 4]| f32::from_be_bytes(w);
            (0..bgeo.positions.len())
                .map(|i| {
                    let v = &bgeo.values["velocity"][i];
                    Particle {
                        id: i32::from_be_bytes(bgeo.values["id"][i][0]) as u64,
                        position: bgeo.positions[i],
                        velocity: [float(v[0]), float(v[1]), float(v[2])],
                        density: float(bgeo.values["density"][i][0]),
                    }
                })
                .collect()
        }
        Format::Ply => {
            use ply_rs_bw::parser::Parser;
            use ply_rs_bw::ply::{DefaultElement, Property};
            let ply = Parser::<DefaultElement>::new()
                .read_ply(&mut std::io::Cursor::new(&bytes))
                .expect("a PLY file");
            let f = |e: &DefaultElement, name: &str| match e.get(name) {
                Some(Property::Float(x)) => *x,
                other => panic!("{name}: {other:?}"),
            };
            ply.payload["vertex"]
                .iter()
                .map(|e| Particle {
                    id: match e.get("id") {
                        Some(Property::Int(id)) => *id as u64,
                        other => panic!("id: {other:?}"),
                    },
                    position: [f(e, "x"), f(e, "y"), f(e, "z")],
                    velocity: [f(e, "vx"), f(e, "vy"), f(e, "vz")],
                    density: f(e, "density"),
                })
                .collect()
        }
        Format::Csv => {
            let text = String::from_utf8(bytes).expect("text");
            let mut lines = text.lines();
            let header: Vec<&str> = lines.next().expect("header").split(',').collect();
            let column = |name: &str| header.iter().position(|h| *h == name).expect(name);
            let [id, x, y, z, vx, vy, vz, rho] =
                ["id", "x", "y", "z", "vx", "vy", "vz", "density"].map(column);
            lines
                .map(|line| {
                    let fields: Vec<&str> = line.split(',').collect();
                    let f = |i: usize| fields[i].parse::<f32>().expect("a number");
                    Particle {
                        id: fields[id].parse().expect("an id"),
                        position: [f(x), f(y), f(z)],
                        velocity: [f(vx), f(vy), f(vz)],
                        density: f(rho),
                    }
                })
                .collect()
        }
    }
}

fn check_independently(scene_file: &Path, steps: u64, every: u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let expected = expected_frames(scene_file, steps, every);
    assert!(expected[0].0.len() > 100, "a scene with particles");
    // The solver reorders its particles as it steps: ids are not indices, so a writer
    // that wrote indices fails here.
    assert!(
        expected
            .iter()
            .any(|(p, _)| p.iter().enumerate().any(|(i, q)| q.id != i as u64)),
        "ids that differ from indices"
    );
    for format in Format::ALL {
        let out = dir.path().join(format.extension());
        let summary = run_frames(scene_file, format, steps, every, &out);
        assert_eq!(summary.frames.len(), expected.len(), "{format:?}");
        for (k, (particles, _)) in expected.iter().enumerate() {
            let back = read_independently(format, &summary.frames[k]);
            assert_eq!(back.len(), particles.len(), "{format:?} frame {k}: count");
            for (i, (b, p)) in back.iter().zip(particles).enumerate() {
                assert_eq!(b, p, "{format:?} frame {k}, particle {i}");
            }
        }
    }
}

#[test]
fn independent_readers_see_the_solver_state_of_a_3d_scene() {
    let dir = tempfile::tempdir().expect("temp dir");
    check_independently(&init(dir.path(), "dam-break", 400), 4, 2);
}

#[test]
fn independent_readers_see_the_solver_state_of_a_2d_scene_with_z_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = init(dir.path(), "dam-break-2d", 300);
    check_independently(&scene, 2, 1);
    // The 2D state moved in x and y: z = 0 is written, not a copy of y.
    let out = dir.path().join("vtk");
    let summary = run_frames(&scene, Format::Vtk, 2, 1, &out);
    let last = read_independently(Format::Vtk, summary.frames.last().expect("frames"));
    assert!(
        last.iter()
            .all(|p| p.position[2] == 0.0 && p.velocity[2] == 0.0)
    );
    assert!(last.iter().any(|p| p.velocity[1] != 0.0));
}

#[test]
fn vtk_frames_are_unstructured_grids_of_vertex_cells() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (result, _) = run(&[
        "run",
        "--steps",
        "1",
        "--every",
        "1",
        "--format",
        "vtk",
        "-o",
        arg(dir.path()),
        "--quiet",
    ]);
    result.expect("run");
    let bytes = std::fs::read(dir.path().join("frame_00001.vtk")).expect("frame 1");
    let text = String::from_utf8_lossy(&bytes);
    for needle in [
        "# vtk DataFile Version 4.2\n",
        "\nBINARY\n",
        "\nDATASET UNSTRUCTURED_GRID\n",
        "\nCELL_TYPES ",
        "\nSCALARS id int 1\n",
        "\nVECTORS velocity float\n",
        "SCALARS density float 1\n",
    ] {
        assert!(text.contains(needle), "missing {needle:?}");
    }
    assert!(!text.contains("POLYDATA"));
    let vtk = parse_legacy_vtk(&bytes);
    let n = vtk.points.len();
    assert!(n > 1000);
    // One VTK_VERTEX (type 1) cell per particle, the particle's own point.
    assert_eq!(vtk.cell_types, vec![1; n]);
    let expected: Vec<Vec<i32>> = (0..n as i32).map(|i| vec![i]).collect();
    assert_eq!(vtk.cells, expected);
}

#[test]
fn bgeo_and_ply_name_their_attributes_as_the_tools_do() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = init(dir.path(), "glass", 200);
    let bgeo = run_frames(&scene, Format::Bgeo, 1, 1, &dir.path().join("bgeo"));
    let parsed = parse_bgeo(&std::fs::read(&bgeo.frames[1]).expect("frame"));
    assert_eq!(
        parsed.attributes,
        [
            ("id".to_owned(), 1, 1),
            ("velocity".to_owned(), 5, 3),
            ("density".to_owned(), 0, 1)
        ]
    );
    let ply = run_frames(&scene, Format::Ply, 1, 1, &dir.path().join("ply"));
    let bytes = std::fs::read(&ply.frames[1]).expect("frame");
    let end = b"end_header\n";
    let header_end = bytes
        .windows(end.len())
        .position(|w| w == end)
        .expect("a header");
    let header = String::from_utf8_lossy(&bytes[..header_end]);
    for line in [
        "format binary_little_endian 1.0",
        "property float x",
        "property float vx",
        "property float density",
        "property int id",
    ] {
        assert!(header.contains(line), "{line} in\n{header}");
    }
}

// ---------------------------------------------------------------------------------------
// Series files.

/// Asserts that `(name, time)` entries are `expected`, times to the last bit but one
/// (JSON readers need not parse decimals exactly).
fn assert_entries(entries: &[(String, f64)], expected: &[(String, f64)], what: &str) {
    assert_eq!(entries.len(), expected.len(), "{what}: {entries:?}");
    for ((name, time), (want_name, want_time)) in entries.iter().zip(expected) {
        assert_eq!(name, want_name, "{what}");
        assert!(
            (time - want_time).abs() <= 4.0 * f64::EPSILON * want_time.abs(),
            "{what}: {name} at {time}, expected {want_time}"
        );
    }
}

/// The `(file, timestep)` entries of a `.pvd` collection.
fn pvd_entries(path: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).expect("pvd file");
    assert!(text.starts_with("<?xml"), "{text}");
    assert!(text.contains("<VTKFile type=\"Collection\""), "{text}");
    let body = text
        .split_once("<Collection>")
        .and_then(|(_, rest)| rest.split_once("</Collection>"))
        .expect("a Collection element")
        .0;
    assert!(text.trim_end().ends_with("</VTKFile>"), "{text}");
    let attribute = |element: &str, name: &str| {
        let start = element.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
        let len = element[start..].find('"').expect("closing quote");
        element[start..start + len].to_owned()
    };
    body.split("<DataSet")
        .skip(1)
        .map(|element| {
            assert!(element.trim_end().ends_with("/>"), "{element}");
            (
                attribute(element, "file"),
                attribute(element, "timestep").parse().expect("a time"),
            )
        })
        .collect()
}

#[test]
fn series_and_pvd_list_every_frame_with_its_simulated_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = init(dir.path(), "glass-2d", 200);
    let (steps, every) = (6, 2);
    let expected = expected_frames(&scene, steps, every);
    let times: Vec<f64> = expected.iter().map(|(_, t)| *t).collect();
    assert!(times.windows(2).all(|w| w[1] > w[0]) && times[0] == 0.0);
    for format in Format::ALL {
        let out = dir.path().join(format.extension());
        let summary = run_frames(&scene, format, steps, every, &out);
        let names: Vec<String> = (0..times.len() as u64)
            .map(|k| frame_file_name(k, format.extension()))
            .collect();
        let series = out.join(pbf_cli::series_file_name(format.extension()));
        assert_eq!(summary.series.as_ref(), Some(&series));
        assert_eq!(summary.frame_times, times, "{format:?}");
        let expected: Vec<(String, f64)> =
            names.iter().cloned().zip(times.iter().copied()).collect();
        assert_entries(&series_entries(&series), &expected, &format!("{format:?}"));
        let pvd = out.join(pbf_cli::PVD_FILE_NAME);
        if format == Format::Vtk {
            assert_eq!(summary.collection.as_ref(), Some(&pvd));
            assert_eq!(pvd_entries(&pvd), expected);
        } else {
            assert!(!pvd.exists() && summary.collection.is_none(), "{format:?}");
        }
    }
    // No frames asked for: no series files.
    let out = dir.path().join("pictures");
    let (result, _) = run(&["run", arg(&scene), "--steps", "1", "-o", arg(&out), "-q"]);
    let summary = result.expect("runs").summary().expect("ran").clone();
    assert!(summary.series.is_none() && summary.collection.is_none());
    assert_eq!(std::fs::read_dir(&out).expect("out").count(), 1);
}

#[test]
fn a_run_stopped_midway_leaves_valid_series_of_what_it_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = init(dir.path(), "glass-2d", 200);
    let out = dir.path().join("out");
    // A directory where frame 2 goes: the run fails there, after frames 0 and 1.
    std::fs::create_dir_all(out.join(frame_file_name(2, "vtk"))).expect("dir");
    let (result, _) = run(&[
        "run",
        arg(&scene),
        "--steps",
        "5",
        "--every",
        "1",
        "--format",
        "vtk",
        "-o",
        arg(&out),
        "-q",
    ]);
    match result {
        Err(CliError::Write { path, .. }) => assert_eq!(path, out.join(frame_file_name(2, "vtk"))),
        other => panic!("{other:?}"),
    }
    let expected = expected_frames(&scene, 1, 1);
    let written: Vec<(String, f64)> = expected
        .iter()
        .enumerate()
        .map(|(k, (_, t))| (frame_file_name(k as u64, "vtk"), *t))
        .collect();
    assert_entries(
        &series_entries(&out.join("frames.vtk.series")),
        &written,
        "series",
    );
    assert_eq!(pvd_entries(&out.join("frames.pvd")), written);
    for name in ["frames.vtk.series.tmp", "frames.pvd.tmp"] {
        assert!(!out.join(name).exists(), "{name}");
    }
}

/// `--format bgeo-gz` writes gzip files (`frame_NNNNN.bgeo.gz`) that inflate, with the
/// `flate2` decoder, to exactly the bytes `--format bgeo` writes for the same run, and
/// that a second run into the same directory counts as frames of its own.
#[test]
fn compressed_bgeo_is_the_bgeo_gzipped() {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("temp dir");
    let scene = init(dir.path(), "glass", 200);
    let plain = run_frames(&scene, Format::Bgeo, 1, 1, &dir.path().join("bgeo"));
    let out = dir.path().join("gz");
    let packed = run_frames(&scene, Format::BgeoGz, 1, 1, &out);
    assert_eq!(plain.frames.len(), packed.frames.len());
    for (a, b) in plain.frames.iter().zip(&packed.frames) {
        let name = b.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("frame_") && name.ends_with(".bgeo.gz"),
            "{name}"
        );
        let gz = std::fs::read(b).expect("frame");
        assert_eq!(&gz[..2], &[0x1f, 0x8b], "the gzip magic");
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut inflated)
            .expect("gzip");
        assert_eq!(inflated, std::fs::read(a).expect("frame"), "{name}");
    }
    assert!(out.join("frames.bgeo.gz.series").is_file());
    let (again, _) = common::run(&[
        "run",
        common::arg(&scene),
        "--steps",
        "1",
        "--format",
        "bgeo-gz",
        "-o",
        common::arg(&out),
    ]);
    assert!(
        matches!(again, Err(pbf_cli::CliError::OutputExists { .. })),
        "{again:?}"
    );
}
