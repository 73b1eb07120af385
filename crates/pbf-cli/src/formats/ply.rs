//! PLY through the `ply-rs-bw` crate (the maintained fork of ply-rs): binary little
//! endian, one element `vertex` with float properties `x y z vx vy vz density` and the
//! int property `id`. Blender and MeshLab import the points; the other properties
//! travel along for tools that read them.

use std::io::{BufReader, BufWriter, Write as _};
use std::path::Path;

use ply_rs_bw::parser::{Parser, Reader};
use ply_rs_bw::ply::{
    Addable, ElementDef, Encoding, Header, PropertyAccess, PropertyAccessResult, PropertyDef,
    PropertyType, ScalarType,
};
use ply_rs_bw::writer::Writer;

use super::{format_error, id_from_i32, id32, read_error};
use crate::error::CliError;
use crate::frame::Frame;

const PROPERTIES: [&str; 7] = ["x", "y", "z", "vx", "vy", "vz", "density"];

/// The integer property: the particle's stable id.
const ID: &str = "id";

/// One particle as a PLY vertex: the float properties in [`PROPERTIES`] order, and the id.
#[derive(Debug, Clone, Copy, Default)]
struct Vertex([f32; 7], i32);

impl PropertyAccess for Vertex {
    fn new() -> Self {
        Self::default()
    }
    fn set_float(&mut self, name: &str, value: f32) -> PropertyAccessResult {
        match PROPERTIES.iter().position(|p| *p == name) {
            Some(i) => {
                self.0[i] = value;
                PropertyAccessResult::Set
            }
            None => PropertyAccessResult::Ignored,
        }
    }
    fn set_int(&mut self, name: &str, value: i32) -> PropertyAccessResult {
        if name == ID {
            self.1 = value;
            PropertyAccessResult::Set
        } else {
            PropertyAccessResult::Ignored
        }
    }
    fn get_int(&self, name: &str) -> Option<i32> {
        (name == ID).then_some(self.1)
    }
    fn get_float(&self, name: &str) -> Option<f32> {
        PROPERTIES
            .iter()
            .position(|p| *p == name)
            .map(|i| self.0[i])
    }
}

/// Writes `frame` as binary little-endian PLY.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.ply");
/// let frame = pbf_cli::Frame { positions: vec![[0.5, 1.0, 0.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![] };
/// pbf_cli::formats::ply::write(&frame, &path)?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"ply\nformat binary_little_endian 1.0\n"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn write(frame: &Frame, path: &Path) -> Result<(), CliError> {
    let mut header = Header::new();
    header.encoding = Encoding::BinaryLittleEndian;
    header.comments.push("pbf particles".into());
    let mut element = ElementDef::new("vertex".into());
    for p in PROPERTIES {
        element.properties.add(PropertyDef::new(
            p.into(),
            PropertyType::Scalar(ScalarType::Float),
        ));
    }
    element.properties.add(PropertyDef::new(
        ID.into(),
        PropertyType::Scalar(ScalarType::Int),
    ));
    element.count = frame.len();
    header.elements.add(element.clone());
    let vertices = (0..frame.len())
        .map(|i| {
            let [x, y, z] = frame.positions[i];
            let [vx, vy, vz] = frame.velocities[i];
            Ok(Vertex(
                [x, y, z, vx, vy, vz, frame.densities[i]],
                id32(frame, i, path)?,
            ))
        })
        .collect::<Result<Vec<Vertex>, CliError>>()?;
    let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
    let mut out = BufWriter::new(file);
    let writer = Writer::<Vertex>::new();
    writer
        .write_header(&mut out, &header)
        .and_then(|_| writer.write_payload_of_element(&mut out, &vertices, &element, &header))
        .and_then(|_| out.flush())
        .map_err(|e| CliError::write(path, e))?;
    Ok(())
}

/// Reads the `vertex` element of a PLY file with the properties [`write()`] writes.
///
/// # Errors
/// [`CliError::Read`] or [`CliError::Format`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("bad.ply");
/// std::fs::write(&path, "ply\nformat ascii 1.0\nend_header\n").unwrap();
/// assert!(pbf_cli::formats::ply::read(&path).is_err());
/// ```
pub fn read(path: &Path) -> Result<Frame, CliError> {
    let file = std::fs::File::open(path).map_err(|e| read_error(path, e))?;
    let bad = |m: String| format_error(path, "PLY", m);
    let mut reader = Reader::new(BufReader::new(file));
    let parser = Parser::<Vertex>::new();
    let header = parser
        .read_header(&mut reader)
        .map_err(|e| bad(e.to_string()))?;
    let Some(element) = header.elements.get("vertex") else {
        return Err(bad("no `vertex` element".into()));
    };
    for p in PROPERTIES.into_iter().chain([ID]) {
        if !element.properties.contains_key(p) {
            return Err(bad(format!("the vertex element has no `{p}` property")));
        }
    }
    let vertices = parser
        .read_payload_for_element(&mut reader, element, &header)
        .map_err(|e| bad(e.to_string()))?;
    let mut frame = Frame::default();
    for Vertex([x, y, z, vx, vy, vz, density], id) in vertices {
        frame.positions.push([x, y, z]);
        frame.velocities.push([vx, vy, vz]);
        frame.densities.push(density);
        frame.ids.push(id_from_i32(path, "PLY", id)?);
    }
    Ok(frame)
}
