//! Particle file formats: one writer and one reader per format, each module named after
//! its format. Readers exist to check the writers (every writer has a round-trip test)
//! and for tools that post-process frames.
//!
//! | format | crate | layout |
//! |---|---|---|
//! | `vtk` | vtkio | legacy VTK 4.2, binary (big endian), UNSTRUCTURED_GRID with one VTK_VERTEX cell per particle, point data `id` (SCALARS int), `velocity` (VECTORS float) and `density` (SCALARS float): ParaView, meshio and splashsurf read it |
//! | `bgeo` | (none exists; by hand) | Houdini's classic uncompressed binary geometry with point attributes `id` (int), `velocity` (vector) and `density` (float), see [`bgeo`] |
//! | `ply` | ply-rs-bw | binary little endian, element `vertex` with `float x y z vx vy vz density` and `int id`: Blender and MeshLab read it |
//! | `csv` | (std) | header `id,x,y,z,vx,vy,vz,density`, shortest round-trip decimals |
//!
//! Every format carries the particle's stable id (the solver's [`ids`](pbf_solver::Solver::ids)),
//! its velocity and its density; 2D scenes are written with z = 0. The binary formats
//! store ids as 32-bit signed integers, the widest integer every reader of them takes;
//! a frame with a larger id is a write error, not a wrapped id.

pub mod bgeo;
pub mod csv;
pub mod ply;
pub mod vtk;

use std::path::Path;

use crate::error::CliError;
use crate::frame::Frame;

/// A particle file format.
///
/// ```
/// use pbf_cli::Format;
/// assert_eq!(Format::Vtk.extension(), "vtk");
/// assert_eq!(Format::from_extension("bgeo"), Some(Format::Bgeo));
/// assert_eq!(Format::from_extension("bgeo.gz"), Some(Format::BgeoGz));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Legacy binary VTK (ParaView, splashsurf).
    Vtk,
    /// Houdini classic binary geometry.
    Bgeo,
    /// Houdini classic binary geometry compressed with gzip (`.bgeo.gz`).
    #[value(name = "bgeo-gz", alias = "bgeo.gz")]
    BgeoGz,
    /// Binary PLY (Blender, MeshLab).
    Ply,
    /// Comma-separated values.
    Csv,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 5] = [
        Format::Vtk,
        Format::Bgeo,
        Format::BgeoGz,
        Format::Ply,
        Format::Csv,
    ];

    /// The file extension (without the dot).
    ///
    /// ```
    /// assert_eq!(pbf_cli::Format::Ply.extension(), "ply");
    /// ```
    pub fn extension(self) -> &'static str {
        match self {
            Format::Vtk => "vtk",
            Format::Bgeo => "bgeo",
            Format::BgeoGz => "bgeo.gz",
            Format::Ply => "ply",
            Format::Csv => "csv",
        }
    }

    /// The format of a file extension.
    ///
    /// ```
    /// assert_eq!(pbf_cli::Format::from_extension("csv"), Some(pbf_cli::Format::Csv));
    /// assert_eq!(pbf_cli::Format::from_extension("obj"), None);
    /// ```
    pub fn from_extension(ext: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.extension() == ext)
    }

    /// Writes `frame` to `path`.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the path.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use pbf_cli::{Format, Frame};
    /// let frame = Frame { positions: vec![[1.0, 2.0, 3.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![7] };
    /// for format in Format::ALL {
    ///     let path = dir.path().join(format!("f.{}", format.extension()));
    ///     format.write(&frame, &path)?;
    ///     assert_eq!(format.read(&path)?.positions, frame.positions);
    /// }
    /// # Ok::<(), pbf_cli::CliError>(())
    /// ```
    pub fn write(self, frame: &Frame, path: &Path) -> Result<(), CliError> {
        match self {
            Format::Vtk => vtk::write(frame, path),
            Format::Bgeo => bgeo::write(frame, path),
            Format::BgeoGz => bgeo::write_gz(frame, path),
            Format::Ply => ply::write(frame, path),
            Format::Csv => csv::write(frame, path),
        }
    }

    /// Reads a frame written by [`write()`](Self::write): positions, velocities,
    /// densities and ids.
    ///
    /// # Errors
    /// [`CliError::Read`] when the file cannot be read, [`CliError::Format`] when its
    /// content is not what the writer produces.
    ///
    /// ```
    /// assert!(pbf_cli::Format::Csv.read("no/such.csv".as_ref()).is_err());
    /// ```
    pub fn read(self, path: &Path) -> Result<Frame, CliError> {
        match self {
            Format::Vtk => vtk::read(path),
            Format::Bgeo => bgeo::read(path),
            Format::BgeoGz => bgeo::read_gz(path),
            Format::Ply => ply::read(path),
            Format::Csv => csv::read(path),
        }
    }
}

/// `frame_00042.vtk`: the name of frame `index`.
///
/// ```
/// assert_eq!(pbf_cli::frame_file_name(42, "vtk"), "frame_00042.vtk");
/// ```
pub fn frame_file_name(index: u64, extension: &str) -> String {
    format!("frame_{index:05}.{extension}")
}

/// The id of particle `i` as the binary formats store it: the frame's id, or the index
/// for a frame without ids.
pub(crate) fn id32(frame: &Frame, i: usize, path: &Path) -> Result<i32, CliError> {
    let id = frame.ids.get(i).copied().unwrap_or(i as u64);
    i32::try_from(id).map_err(|_| {
        CliError::write(
            path,
            format!("particle id {id} does not fit the format's 32-bit integer"),
        )
    })
}

/// An id read back from a 32-bit integer field.
pub(crate) fn id_from_i32(path: &Path, format: &'static str, id: i32) -> Result<u64, CliError> {
    u64::try_from(id).map_err(|_| format_error(path, format, format!("negative particle id {id}")))
}

pub(crate) fn read_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::Read {
        path: path.to_owned(),
        source,
    }
}

pub(crate) fn format_error(
    path: &Path,
    format: &'static str,
    message: impl Into<String>,
) -> CliError {
    CliError::Format {
        path: path.to_owned(),
        format,
        message: message.into(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A frame with awkward values: negative, tiny, large, non-round.
    pub(crate) fn sample(n: usize) -> Frame {
        let f = |i: usize, k: u32| {
            ((i as f32 + 0.1) * 1.37f32.powi(k as i32)).sin() * 10f32.powi(k as i32 % 5 - 2)
        };
        Frame {
            positions: (0..n).map(|i| [f(i, 1), f(i, 2), f(i, 3)]).collect(),
            velocities: (0..n).map(|i| [f(i, 4), -f(i, 5), f(i, 6)]).collect(),
            densities: (0..n).map(|i| 1000.0 + f(i, 7)).collect(),
            ids: (0..n as u64).map(|i| i * 3 + 1).collect(),
        }
    }

    pub(crate) fn round_trip(format: Format, frame: &Frame) -> Frame {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(frame_file_name(0, format.extension()));
        format.write(frame, &path).expect("write");
        format.read(&path).expect("read back")
    }

    #[test]
    fn every_format_reads_back_exactly() {
        for n in [0, 1, 257] {
            let frame = sample(n);
            for format in Format::ALL {
                let back = round_trip(format, &frame);
                assert_eq!(back.positions, frame.positions, "{format:?} n={n}");
                assert_eq!(back.velocities, frame.velocities, "{format:?} n={n}");
                assert_eq!(back.densities, frame.densities, "{format:?} n={n}");
                assert_eq!(back.ids, frame.ids, "{format:?} n={n}");
            }
        }
    }
}
