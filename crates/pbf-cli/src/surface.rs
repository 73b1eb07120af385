//! Surface meshes of the fluid: a closed triangle mesh per frame, reconstructed from
//! the particles with `splashsurf_lib` (marching cubes on an SPH colour field), and
//! written as OBJ, PLY or VTK next to the particle frames (`surface_00000.obj`, ...).
//!
//! The parameters come from the scene ([`SurfaceParams::for_scene`]):
//!
//! | splashsurf | value | why |
//! |---|---|---|
//! | particle radius | spacing / 2 | splashsurf gives each particle the volume of a cube of edge twice its radius, `(2 r)^3`: the rest volume `s^3` of a lattice particle |
//! | compact support radius | the solver's `h` | splashsurf's cubic spline kernel vanishes at its compact support radius as the solver's kernels vanish at `h`; its CLI's `--smoothing-length` is half of it, in particle radii: `l = h / (2 r) = h / s` |
//! | cube size | spacing / 2 | the marching-cubes cell: two cells per particle, `-c 1` in particle radii |
//! | iso-surface threshold | 0.6 | splashsurf's default: the colour field is about 1 inside the fluid and falls to 0 outside |
//!
//! Velocity and density are interpolated to the mesh vertices (SPH with first-order
//! correction, splashsurf's interpolator) and written with the vertices in PLY and VTK;
//! OBJ carries positions and triangles only.
//!
//! ```
//! use pbf_cli::surface::{SurfaceFormat, SurfaceMesh, SurfaceParams};
//! # let dir = tempfile::tempdir().unwrap();
//! // A cube of 6 x 6 x 6 particles at spacing 0.1 (h = 0.2).
//! let s = 0.1f32;
//! let positions: Vec<[f32; 3]> = (0..216)
//!     .map(|i| [(i % 6) as f32 * s, (i / 6 % 6) as f32 * s, (i / 36) as f32 * s])
//!     .collect();
//! let frame = pbf_cli::Frame {
//!     velocities: vec![[1.0, 0.0, 0.0]; 216],
//!     densities: vec![1000.0; 216],
//!     ids: Vec::new(),
//!     positions,
//! };
//! let params = SurfaceParams::for_scene(s, 2.0 * s, 1000.0);
//! let mesh = SurfaceMesh::reconstruct(&frame, &params)?;
//! assert!(mesh.is_closed());
//! assert!(mesh.volume() > 0.5 * 0.6f64.powi(3)); // about the cube's 0.216 m^3
//! mesh.write(SurfaceFormat::Ply, &dir.path().join("surface_00000.ply"))?;
//! # Ok::<(), pbf_cli::CliError>(())
//! ```

use std::collections::HashMap;
use std::io::{BufWriter, Write as _};
use std::path::Path;

use ply_rs_bw::ply::{
    Addable, ElementDef, Encoding, Header, PropertyAccess, PropertyDef, PropertyType, ScalarType,
};
use ply_rs_bw::writer::Writer;
use splashsurf_lib::nalgebra::Vector3;
use splashsurf_lib::sph_interpolation::SphInterpolator;
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataArray, DataSet, ElementType,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use crate::error::CliError;
use crate::frame::Frame;

/// The file format of surface meshes (`--surface`).
///
/// ```
/// use pbf_cli::surface::SurfaceFormat;
/// assert_eq!(SurfaceFormat::Obj.extension(), "obj");
/// assert_eq!(SurfaceFormat::ALL.len(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SurfaceFormat {
    /// Wavefront OBJ (positions and triangles).
    Obj,
    /// Binary PLY with the vertices' velocity and density.
    Ply,
    /// Legacy binary VTK with the vertices' velocity and density.
    Vtk,
}

impl SurfaceFormat {
    /// Every surface format.
    pub const ALL: [SurfaceFormat; 3] =
        [SurfaceFormat::Obj, SurfaceFormat::Ply, SurfaceFormat::Vtk];

    /// The file extension (without the dot).
    ///
    /// ```
    /// assert_eq!(pbf_cli::surface::SurfaceFormat::Vtk.extension(), "vtk");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            SurfaceFormat::Obj => "obj",
            SurfaceFormat::Ply => "ply",
            SurfaceFormat::Vtk => "vtk",
        }
    }
}

/// `surface_00042.obj`: the name of the surface of frame `index`.
///
/// ```
/// assert_eq!(pbf_cli::surface::surface_file_name(42, "obj"), "surface_00042.obj");
/// ```
pub fn surface_file_name(index: u64, extension: &str) -> String {
    format!("surface_{index:05}.{extension}")
}

/// The parameters of a reconstruction, lengths in metres.
///
/// ```
/// let p = pbf_cli::surface::SurfaceParams::for_scene(0.05, 0.1, 1000.0);
/// assert_eq!((p.particle_radius, p.kernel_radius, p.cube_size, p.iso), (0.025, 0.1, 0.025, 0.6));
/// assert_eq!(p.splashsurf_arguments(), "-r 0.025 -l 2 -c 1 -t 0.6 --rest-density 1000");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfaceParams {
    /// The particle radius: half the rest spacing, so that splashsurf's particle volume
    /// `(2 r)^3` is the lattice's `s^3`.
    pub particle_radius: f32,
    /// The compact support radius of splashsurf's kernel: the solver's `h`.
    pub kernel_radius: f32,
    /// The edge of a marching-cubes cell.
    pub cube_size: f32,
    /// The iso-surface threshold of the colour field (about 1 inside the fluid).
    pub iso: f32,
    /// The rest density, which scales the particles' mass (the surface does not depend on
    /// it: the colour field sums volumes).
    pub rest_density: f32,
}

impl SurfaceParams {
    /// splashsurf's default iso-surface threshold.
    pub const DEFAULT_ISO: f32 = 0.6;

    /// The parameters of a scene of rest `spacing`, kernel radius `h` and
    /// `rest_density`: particle radius and cube size `spacing / 2`, compact support `h`,
    /// iso-surface threshold [`DEFAULT_ISO`](Self::DEFAULT_ISO).
    ///
    /// ```
    /// let p = pbf_cli::surface::SurfaceParams::for_scene(0.02, 0.04, 1000.0);
    /// assert_eq!(p.cube_size, 0.01);
    /// ```
    pub fn for_scene(spacing: f32, h: f32, rest_density: f32) -> Self {
        Self {
            particle_radius: spacing / 2.0,
            kernel_radius: h,
            cube_size: spacing / 2.0,
            iso: Self::DEFAULT_ISO,
            rest_density,
        }
    }

    /// The parameters of `splashsurf reconstruct` that give the same surface from the
    /// particle frames: `-r` the particle radius in metres, then the smoothing length
    /// `-l` (half the compact support) and cube size `-c` in particle radii, and the
    /// threshold `-t`.
    ///
    /// ```
    /// let p = pbf_cli::surface::SurfaceParams::for_scene(0.1, 0.25, 1000.0);
    /// assert_eq!(p.splashsurf_arguments(), "-r 0.05 -l 2.5 -c 1 -t 0.6 --rest-density 1000");
    /// ```
    pub fn splashsurf_arguments(&self) -> String {
        let r = self.particle_radius;
        format!(
            "-r {} -l {} -c {} -t {} --rest-density {}",
            r,
            short(self.kernel_radius / (2.0 * r)),
            short(self.cube_size / r),
            self.iso,
            self.rest_density
        )
    }

    fn splashsurf(&self) -> splashsurf_lib::Parameters<f32> {
        let mut p = splashsurf_lib::Parameters::new(
            self.particle_radius,
            self.kernel_radius,
            self.cube_size,
        );
        p.iso_surface_threshold = self.iso;
        p.rest_density = self.rest_density;
        p
    }
}

/// A ratio printed with at most 4 decimals and no trailing zeros (`2`, `1.25`).
fn short(x: f32) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

/// A triangle mesh of the fluid's surface with the velocity and density of the fluid at
/// each vertex.
///
/// ```
/// use pbf_cli::surface::SurfaceMesh;
/// // A tetrahedron with outward-facing triangles.
/// let mesh = SurfaceMesh {
///     vertices: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
///     triangles: vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
///     ..Default::default()
/// };
/// assert!(mesh.is_closed());
/// assert!((mesh.volume() - 1.0 / 6.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurfaceMesh {
    /// Vertex positions.
    pub vertices: Vec<[f32; 3]>,
    /// Triangles as vertex indices, counter-clockwise seen from outside.
    pub triangles: Vec<[usize; 3]>,
    /// The fluid's velocity at each vertex (empty when not interpolated).
    pub velocities: Vec<[f32; 3]>,
    /// The fluid's density at each vertex (empty when not interpolated).
    pub densities: Vec<f32>,
}

impl SurfaceMesh {
    /// A closed box of 12 outward-facing triangles from `lo` to `hi` (for tests).
    #[cfg(test)]
    pub(crate) fn cuboid(lo: [f32; 3], hi: [f32; 3]) -> SurfaceMesh {
        let vertices = (0..8)
            .map(|i| {
                [
                    if i & 1 == 0 { lo[0] } else { hi[0] },
                    if i & 2 == 0 { lo[1] } else { hi[1] },
                    if i & 4 == 0 { lo[2] } else { hi[2] },
                ]
            })
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let triangles = quads
            .iter()
            .flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]])
            .collect();
        Self {
            vertices,
            triangles,
            ..Default::default()
        }
    }

    /// Reconstructs the surface of the particles of a 3D `frame`, and interpolates their
    /// velocity and density to its vertices. A frame without particles has an empty
    /// surface.
    ///
    /// # Errors
    /// [`CliError::Surface`] when splashsurf fails (for instance a grid too large for
    /// its index type).
    ///
    /// ```
    /// use pbf_cli::surface::{SurfaceMesh, SurfaceParams};
    /// let mesh = SurfaceMesh::reconstruct(&pbf_cli::Frame::default(), &SurfaceParams::for_scene(0.1, 0.2, 1000.0))?;
    /// assert!(mesh.triangles.is_empty());
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn reconstruct(frame: &Frame, params: &SurfaceParams) -> Result<Self, CliError> {
        if frame.is_empty() {
            return Ok(Self::default());
        }
        let positions: Vec<Vector3<f32>> =
            frame.positions.iter().map(|&p| Vector3::from(p)).collect();
        let reconstruction =
            splashsurf_lib::reconstruct_surface::<i64, f32>(&positions, &params.splashsurf())
                .map_err(|e| surface_error(&e))?;
        let mesh = &reconstruction.mesh;
        let vertices: Vec<[f32; 3]> = mesh.vertices.iter().map(|v| [v.x, v.y, v.z]).collect();
        let mut out = Self {
            triangles: mesh.triangles.clone(),
            velocities: Vec::new(),
            densities: Vec::new(),
            vertices,
        };
        // The densities splashsurf computed are those of every particle (no bounding box
        // filters them); interpolation needs them for the particles' volumes.
        let with_data =
            frame.velocities.len() == frame.len() && frame.densities.len() == frame.len();
        if let Some(densities) = reconstruction.particle_densities.as_ref()
            && with_data
            && densities.len() == positions.len()
            && !mesh.vertices.is_empty()
        {
            let mass = params.rest_density * (2.0 * params.particle_radius).powi(3);
            let interpolator =
                SphInterpolator::new(&positions, densities, mass, params.kernel_radius);
            let velocities: Vec<Vector3<f32>> =
                frame.velocities.iter().map(|&v| Vector3::from(v)).collect();
            out.velocities = interpolator
                .interpolate_vector_quantity(&velocities, &mesh.vertices, true)
                .into_iter()
                .map(|v| [v.x, v.y, v.z])
                .collect();
            out.densities =
                interpolator.interpolate_scalar_quantity(&frame.densities, &mesh.vertices, true);
        }
        Ok(out)
    }

    /// The number of edges not shared by exactly two triangles (boundary and
    /// non-manifold edges): 0 for a closed mesh.
    ///
    /// ```
    /// let open = pbf_cli::surface::SurfaceMesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    ///     triangles: vec![[0, 1, 2]],
    ///     ..Default::default()
    /// };
    /// assert_eq!(open.open_edges(), 3);
    /// ```
    pub fn open_edges(&self) -> usize {
        let mut count: HashMap<(usize, usize), u32> = HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *count.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
        count.values().filter(|&&n| n != 2).count()
    }

    /// Whether every edge is shared by exactly two triangles.
    ///
    /// ```
    /// assert!(pbf_cli::surface::SurfaceMesh::default().is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.open_edges() == 0
    }

    /// The enclosed volume by the divergence theorem: the sum over triangles of
    /// `a . (b x c) / 6`, positive for outward-facing triangles of a closed mesh.
    ///
    /// ```
    /// assert_eq!(pbf_cli::surface::SurfaceMesh::default().volume(), 0.0);
    /// ```
    pub fn volume(&self) -> f64 {
        let v = |i: usize| self.vertices[i].map(f64::from);
        self.triangles
            .iter()
            .map(|&[a, b, c]| {
                let (a, b, c) = (v(a), v(b), v(c));
                let cross = [
                    b[1] * c[2] - b[2] * c[1],
                    b[2] * c[0] - b[0] * c[2],
                    b[0] * c[1] - b[1] * c[0],
                ];
                (a[0] * cross[0] + a[1] * cross[1] + a[2] * cross[2]) / 6.0
            })
            .sum()
    }

    /// Writes the mesh to `path` in `format`.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use pbf_cli::surface::{SurfaceFormat, SurfaceMesh};
    /// let mesh = SurfaceMesh {
    ///     vertices: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
    ///     triangles: vec![[0, 1, 2]],
    ///     ..Default::default()
    /// };
    /// let path = dir.path().join("t.obj");
    /// mesh.write(SurfaceFormat::Obj, &path)?;
    /// assert!(std::fs::read_to_string(&path).unwrap().contains("\nf 1 2 3\n"));
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn write(&self, format: SurfaceFormat, path: &Path) -> Result<(), CliError> {
        if let Some(bad) = self
            .triangles
            .iter()
            .flatten()
            .find(|&&i| i >= self.vertices.len())
        {
            return Err(CliError::write(
                path,
                format!("triangle vertex {bad} of {} vertices", self.vertices.len()),
            ));
        }
        match format {
            SurfaceFormat::Obj => self.write_obj(path),
            SurfaceFormat::Ply => self.write_ply(path),
            SurfaceFormat::Vtk => self.write_vtk(path),
        }
    }

    /// Whether the velocities and densities have one entry per vertex (a reconstruction
    /// from a frame with velocities and densities interpolates them).
    ///
    /// ```
    /// let mut mesh = pbf_cli::surface::SurfaceMesh {
    ///     vertices: vec![[0.0; 3]],
    ///     ..Default::default()
    /// };
    /// assert!(!mesh.has_data());
    /// mesh.velocities.push([1.0, 0.0, 0.0]);
    /// mesh.densities.push(1000.0);
    /// assert!(mesh.has_data());
    /// ```
    pub fn has_data(&self) -> bool {
        self.velocities.len() == self.vertices.len() && self.densities.len() == self.vertices.len()
    }

    fn write_obj(&self, path: &Path) -> Result<(), CliError> {
        let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
        let mut out = BufWriter::new(file);
        let mut write = || -> std::io::Result<()> {
            writeln!(
                out,
                "# pbf surface: {} vertices, {} triangles",
                self.vertices.len(),
                self.triangles.len()
            )?;
            for [x, y, z] in &self.vertices {
                writeln!(out, "v {x} {y} {z}")?;
            }
            // OBJ counts vertices from 1.
            for [a, b, c] in &self.triangles {
                writeln!(out, "f {} {} {}", a + 1, b + 1, c + 1)?;
            }
            out.flush()
        };
        write().map_err(|e| CliError::write(path, e))
    }

    fn write_ply(&self, path: &Path) -> Result<(), CliError> {
        let data = self.has_data();
        let mut header = Header::new();
        header.encoding = Encoding::BinaryLittleEndian;
        header.comments.push("pbf surface".into());
        let mut vertex = ElementDef::new("vertex".into());
        let names: &[&str] = if data { &PLY_VERTEX } else { &PLY_VERTEX[..3] };
        for p in names {
            vertex.properties.add(PropertyDef::new(
                (*p).into(),
                PropertyType::Scalar(ScalarType::Float),
            ));
        }
        vertex.count = self.vertices.len();
        let mut face = ElementDef::new("face".into());
        face.properties.add(PropertyDef::new(
            FACE_INDICES.into(),
            PropertyType::List(ScalarType::UChar, ScalarType::Int),
        ));
        face.count = self.triangles.len();
        header.elements.add(vertex.clone());
        header.elements.add(face.clone());
        let vertices: Vec<PlyVertex> = (0..self.vertices.len())
            .map(|i| {
                let [x, y, z] = self.vertices[i];
                let ([vx, vy, vz], density) = if data {
                    (self.velocities[i], self.densities[i])
                } else {
                    ([0.0; 3], 0.0)
                };
                PlyVertex([x, y, z, vx, vy, vz, density])
            })
            .collect();
        let faces = self
            .triangles
            .iter()
            .map(|t| {
                let index = |i: usize| {
                    i32::try_from(i).map_err(|_| {
                        CliError::write(path, format!("vertex {i} does not fit PLY's 32-bit index"))
                    })
                };
                Ok(PlyFace([index(t[0])?, index(t[1])?, index(t[2])?]))
            })
            .collect::<Result<Vec<_>, CliError>>()?;
        let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
        let mut out = BufWriter::new(file);
        Writer::<PlyVertex>::new()
            .write_header(&mut out, &header)
            .and_then(|_| {
                Writer::<PlyVertex>::new()
                    .write_payload_of_element(&mut out, &vertices, &vertex, &header)
            })
            .and_then(|_| {
                Writer::<PlyFace>::new().write_payload_of_element(&mut out, &faces, &face, &header)
            })
            .and_then(|_| out.flush())
            .map_err(|e| CliError::write(path, e))?;
        Ok(())
    }

    fn write_vtk(&self, path: &Path) -> Result<(), CliError> {
        let points: Vec<f32> = self.vertices.iter().flatten().copied().collect();
        let too_many = || CliError::write(path, "too many vertices or triangles for VTK");
        let cells = u32::try_from(self.triangles.len()).map_err(|_| too_many())?;
        let mut vertices = Vec::with_capacity(self.triangles.len() * 4);
        for t in &self.triangles {
            vertices.push(3);
            for &i in t {
                vertices.push(u32::try_from(i).map_err(|_| too_many())?);
            }
        }
        let mut point = Vec::new();
        if self.has_data() {
            point.push(Attribute::DataArray(DataArray {
                name: "velocity".into(),
                elem: ElementType::Vectors,
                data: self
                    .velocities
                    .iter()
                    .flatten()
                    .copied()
                    .collect::<Vec<f32>>()
                    .into(),
            }));
            point.push(Attribute::DataArray(DataArray {
                name: "density".into(),
                elem: ElementType::Scalars {
                    num_comp: 1,
                    lookup_table: None,
                },
                data: self.densities.clone().into(),
            }));
        }
        let piece = UnstructuredGridPiece {
            points: points.into(),
            cells: Cells {
                cell_verts: VertexNumbers::Legacy {
                    num_cells: cells,
                    vertices,
                },
                types: vec![CellType::Triangle; self.triangles.len()],
            },
            data: Attributes {
                point,
                cell: Vec::new(),
            },
        };
        Vtk {
            version: Version::new_legacy(4, 2),
            title: "pbf surface".into(),
            byte_order: ByteOrder::BigEndian,
            file_path: None,
            data: DataSet::inline(piece),
        }
        .export_be(path)
        .map_err(|e| CliError::write(path, e))
    }
}

/// The float properties of a PLY surface vertex (the first three alone for a mesh
/// without interpolated data).
const PLY_VERTEX: [&str; 7] = ["x", "y", "z", "vx", "vy", "vz", "density"];

/// The list property of a PLY face: its vertex indices (the name Blender, MeshLab and
/// splashsurf read).
const FACE_INDICES: &str = "vertex_indices";

#[derive(Debug, Clone, Copy, Default)]
struct PlyVertex([f32; 7]);

impl PropertyAccess for PlyVertex {
    fn new() -> Self {
        Self::default()
    }
    fn get_float(&self, name: &str) -> Option<f32> {
        PLY_VERTEX
            .iter()
            .position(|p| *p == name)
            .map(|i| self.0[i])
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct PlyFace([i32; 3]);

impl PropertyAccess for PlyFace {
    fn new() -> Self {
        Self::default()
    }
    fn get_list_int(&self, name: &str) -> Option<&[i32]> {
        (name == FACE_INDICES).then_some(&self.0[..])
    }
}

/// splashsurf's error with its causes, as one line.
fn surface_error(e: &dyn std::error::Error) -> CliError {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    CliError::Surface { message }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed unit cube of 12 outward-facing triangles, offset from the origin (the
    /// divergence-theorem volume does not depend on where the origin is).
    fn cube() -> SurfaceMesh {
        SurfaceMesh::cuboid([3.0, -2.0, 0.5], [4.0, -1.0, 1.5])
    }

    #[test]
    fn a_closed_cube_has_its_volume_and_no_open_edge() {
        let mut mesh = cube();
        assert_eq!(mesh.open_edges(), 0);
        assert!((mesh.volume() - 1.0).abs() < 1e-9, "{}", mesh.volume());
        mesh.triangles.pop();
        assert_eq!(mesh.open_edges(), 3);
        mesh.triangles.push([0, 1, 2]);
        mesh.triangles.push([0, 1, 2]);
        assert!(!mesh.is_closed());
    }

    #[test]
    fn splashsurf_arguments_follow_the_scene() {
        let p = SurfaceParams::for_scene(0.04, 0.08, 1000.0);
        assert_eq!(
            p.splashsurf_arguments(),
            "-r 0.02 -l 2 -c 1 -t 0.6 --rest-density 1000"
        );
        let p = SurfaceParams {
            cube_size: 0.01,
            iso: 0.5,
            ..p
        };
        assert_eq!(
            p.splashsurf_arguments(),
            "-r 0.02 -l 2 -c 0.5 -t 0.5 --rest-density 1000"
        );
        assert_eq!(short(1.0 / 3.0), "0.3333");
    }

    #[test]
    fn a_triangle_index_past_the_vertices_is_a_write_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mesh = SurfaceMesh {
            vertices: vec![[0.0; 3]],
            triangles: vec![[0, 0, 1]],
            ..Default::default()
        };
        for format in SurfaceFormat::ALL {
            let path = dir.path().join(surface_file_name(0, format.extension()));
            let err = mesh.write(format, &path).expect_err("index 1 of 1 vertex");
            assert!(err.to_string().contains("triangle vertex 1"), "{err}");
        }
    }
}
