//! Legacy VTK through the `vtkio` crate: version 4.2, binary, big endian (the legacy
//! format's byte order), `DATASET UNSTRUCTURED_GRID` with one `VTK_VERTEX` cell (type 1)
//! per particle, so that ParaView shows the points without a filter, and point data
//! `id` (`SCALARS int 1`), `velocity` (`VECTORS float`) and `density`
//! (`SCALARS float 1`).
//!
//! An unstructured grid rather than `POLYDATA`: meshio reads legacy files of
//! unstructured grids only, and ParaView, VisIt, PyVista and splashsurf read both. The
//! legacy format rather than XML `.vtu`: one file per frame that every one of these
//! tools opens, that vtkio writes and reads back, and that a few lines of a test can
//! parse from the format's specification.

use std::path::Path;

use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataArray, DataSet, ElementType, IOBuffer,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};

use super::{format_error, id_from_i32, id32, read_error};
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
    let ids = (0..n)
        .map(|i| id32(frame, i, path))
        .collect::<Result<Vec<i32>, _>>()?;
    let cells =
        u32::try_from(n).map_err(|_| CliError::write(path, "too many particles for VTK"))?;
    let piece = UnstructuredGridPiece {
        points: points.into(),
        cells: Cells {
            cell_verts: VertexNumbers::Legacy {
                num_cells: cells,
                vertices: (0..cells).flat_map(|i| [1, i]).collect(),
            },
            types: vec![CellType::Vertex; n],
        },
        data: Attributes {
            point: vec![
                Attribute::DataArray(DataArray {
                    name: "id".into(),
                    elem: ElementType::Scalars {
                        num_comp: 1,
                        lookup_table: None,
                    },
                    data: ids.into(),
                }),
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

/// Reads a frame from a legacy VTK file written by [`write()`]: the points of an
/// unstructured grid, and the `id`, `velocity` and `density` point data.
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
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        return Err(bad("the data set is not an UNSTRUCTURED_GRID".into()));
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
            if name == "id" {
                let IOBuffer::I32(ids) = data else {
                    return Err(bad("`id` is not int".into()));
                };
                frame.ids = ids
                    .iter()
                    .map(|&id| id_from_i32(path, "VTK", id))
                    .collect::<Result<_, _>>()?;
                continue;
            }
            let values = floats(data).ok_or_else(|| bad(format!("`{name}` is not float")))?;
            match name.as_str() {
                "velocity" => frame.velocities = triples(&values),
                "density" => frame.densities = values,
                _ => {}
            }
        }
    }
    if frame.velocities.len() != n || frame.densities.len() != n || frame.ids.len() != n {
        return Err(bad(format!(
            "expected `id`, `velocity` and `density` for each of the {n} points"
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
