//! Legacy VTK through the `vtkio` crate: version 4.2, binary, big endian (the legacy
//! format's byte order), `DATASET POLYDATA` with one `VERTICES` cell per particle so
//! that ParaView shows the points without a filter, and point data `velocity`
//! (`VECTORS float`) and `density` (`SCALARS float 1`). splashsurf reads it too.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, DataArray, DataSet, ElementType, IOBuffer, PolyDataPiece,
    Version, VertexNumbers, Vtk,
};

use super::{format_error, read_error};
use crate::error::CliError;
use crate::frame::Frame;

/// Writes `frame` as legacy binary VTK.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.vtk");
/// let frame = pbf_cli::Frame { positions: vec![[0.5, 1.0, 0.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![] };
/// pbf_cli::formats::vtk::write(&frame, &path)?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"# vtk DataFile Version 4.2\n"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn write(frame: &Frame, path: &Path) -> Result<(), CliError> {
    let n = frame.len();
    let points: Vec<f32> = frame.positions.iter().flatten().copied().collect();
    let velocity: Vec<f32> = frame.velocities.iter().flatten().copied().collect();
    let vertices: Vec<u32> = (0..n as u32).flat_map(|i| [1, i]).collect();
    let piece = PolyDataPiece {
        points: points.into(),
        verts: Some(VertexNumbers::Legacy {
            num_cells: n as u32,
            vertices,
        }),
        data: Attributes {
            point: vec![
                Attribute::DataArray(DataArray {
                    name: "velocity".into(),
                    elem: ElementType::Vectors,
                    data: velocity.into(),
                }),
                Attribute::DataArray(DataArray {
                    name: "density".into(),
                    elem: ElementType::Scalars {
                        num_comp: 1,
                        lookup_table: None,
                    },
                    data: frame.densities.clone().into(),
                }),
            ],
            cell: Vec::new(),
        },
        ..Default::default()
    };
    Vtk {
        version: Version::new_legacy(4, 2),
        title: "pbf particles".into(),
        byte_order: ByteOrder::BigEndian,
        file_path: None,
        data: DataSet::inline(piece),
    }
    .export_be(path)
    .map_err(|e| CliError::write(path, e))
}

/// Reads a frame from a legacy VTK file written by [`write()`] (positions, and the
/// `velocity` and `density` point data).
///
/// # Errors
/// [`CliError::Read`] or [`CliError::Format`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("bad.vtk");
/// std::fs::write(&path, "not vtk").unwrap();
/// assert!(pbf_cli::formats::vtk::read(&path).is_err());
/// ```
pub fn read(path: &Path) -> Result<Frame, CliError> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(read_error(path, e));
    }
    let bad = |m: String| format_error(path, "VTK", m);
    let vtk = Vtk::import(path).map_err(|e| bad(e.to_string()))?;
    let DataSet::PolyData { pieces, .. } = vtk.data else {
        return Err(bad("the data set is not POLYDATA".into()));
    };
    let Some(piece) = pieces.into_iter().next() else {
        return Err(bad("no data piece".into()));
    };
    let piece = piece
        .into_loaded_piece_data(None)
        .map_err(|e| bad(e.to_string()))?;
    let points = floats(&piece.points).ok_or_else(|| bad("points are not float".into()))?;
    let n = points.len() / 3;
    let mut frame = Frame {
        positions: triples(&points),
        ..Default::default()
    };
    for attribute in &piece.data.point {
        if let Attribute::DataArray(DataArray { name, data, .. }) = attribute {
            let values = floats(data).ok_or_else(|| bad(format!("`{name}` is not float")))?;
            match name.as_str() {
                "velocity" => frame.velocities = triples(&values),
                "density" => frame.densities = values,
                _ => {}
            }
        }
    }
    if frame.velocities.len() != n || frame.densities.len() != n {
        return Err(bad(format!(
            "expected `velocity` and `density` for each of the {n} points"
        )));
    }
    Ok(frame)
}

fn floats(buffer: &IOBuffer) -> Option<Vec<f32>> {
    match buffer {
        IOBuffer::F32(v) => Some(v.clone()),
        IOBuffer::F64(v) => Some(v.iter().map(|x| *x as f32).collect()),
        _ => None,
    }
}

fn triples(v: &[f32]) -> Vec<[f32; 3]> {
    v.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}
