//! Houdini's classic binary geometry (`.bgeo`, the format before Houdini 12's JSON
//! based one; Houdini still reads it). No maintained Rust crate writes it, so this
//! module does, uncompressed, in the layout that partio (Disney's particle I/O
//! library) and splashsurf read and write.
//!
//! Every number is big endian. The velocity attribute is named `velocity`, as
//! SPlisHSPlasH and splashsurf name it (Houdini's own name is `v`: an Attribute Rename
//! node maps one to the other).
//!
//! | part | content |
//! |---|---|
//! | magic | the bytes `Bgeo`, then the byte `V` |
//! | header | `i32` version = 5, then `i32` counts: points, primitives (0), point groups (0), primitive groups (0), point attributes (3), vertex attributes (0), primitive attributes (0), detail attributes (0) |
//! | point attribute definitions | per attribute: `u16` name length, the name (no terminator), `u16` component count, `i32` type (0 float, 1 int, 5 vector), one 4-byte default per component |
//! | points | per point: `P` as four `f32` (x, y, z, w = 1), then each attribute's components: `id` (1 `i32`, type int), `velocity` (3 floats, type vector), `density` (1 float) |
//! | primitives, detail | none (the counts are 0) |
//! | end | the bytes `0x00 0xff` |

use std::io::Write as _;
use std::path::Path;

use super::{format_error, id_from_i32, id32, read_error};
use crate::error::CliError;
use crate::frame::Frame;

const MAGIC: &[u8; 4] = b"Bgeo";
const VERSION: i32 = 5;
const TYPE_FLOAT: i32 = 0;
const TYPE_INT: i32 = 1;
const TYPE_VECTOR: i32 = 5;

/// The point attributes written: name, component count, type.
const ATTRIBUTES: [(&str, u16, i32); 3] = [
    ("id", 1, TYPE_INT),
    ("velocity", 3, TYPE_VECTOR),
    ("density", 1, TYPE_FLOAT),
];

/// Writes `frame` as classic uncompressed BGEO.
///
/// # Errors
/// [`CliError::Write`] naming the path (also for more than `i32::MAX` particles).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.bgeo");
/// let frame = pbf_cli::Frame { positions: vec![[0.5, 1.0, 0.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![] };
/// pbf_cli::formats::bgeo::write(&frame, &path)?;
/// assert!(std::fs::read(&path).unwrap().starts_with(b"BgeoV"));
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn write(frame: &Frame, path: &Path) -> Result<(), CliError> {
    let b = encode(frame, path)?;
    let mut file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
    file.write_all(&b).map_err(|e| CliError::write(path, e))
}

/// Writes `frame` as classic BGEO compressed with gzip (`.bgeo.gz`, which partio,
/// Houdini and SPlisHSPlasH's tools read): the bytes of [`write()`](fn@write), deflated.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.bgeo.gz");
/// let frame = pbf_cli::Frame { positions: vec![[0.5, 1.0, 0.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![3] };
/// pbf_cli::formats::bgeo::write_gz(&frame, &path)?;
/// assert_eq!(&std::fs::read(&path).unwrap()[..2], &[0x1f, 0x8b]); // the gzip magic
/// assert_eq!(pbf_cli::formats::bgeo::read_gz(&path)?.ids, vec![3]);
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn write_gz(frame: &Frame, path: &Path) -> Result<(), CliError> {
    let b = encode(frame, path)?;
    let file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    gz.write_all(&b).map_err(|e| CliError::write(path, e))?;
    gz.finish()
        .and_then(|mut f| f.flush())
        .map_err(|e| CliError::write(path, e))
}

/// Reads a gzip-compressed classic BGEO file, as [`read`] reads an uncompressed one.
///
/// # Errors
/// [`CliError::Read`], or [`CliError::Format`] when the file is not gzip or its
/// content is not BGEO.
pub fn read_gz(path: &Path) -> Result<Frame, CliError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| read_error(path, e))?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .map_err(|e| format_error(path, "BGEO", format!("not gzip data: {e}")))?;
    decode(&bytes, path)
}

/// The bytes of `frame` as classic BGEO.
fn encode(frame: &Frame, path: &Path) -> Result<Vec<u8>, CliError> {
    let n = i32::try_from(frame.len())
        .map_err(|_| CliError::write(path, "too many particles for BGEO"))?;
    let mut b = Vec::with_capacity(64 + frame.len() * 32);
    b.extend_from_slice(MAGIC);
    b.push(b'V');
    for count in [VERSION, n, 0, 0, 0, ATTRIBUTES.len() as i32, 0, 0, 0] {
        b.extend_from_slice(&count.to_be_bytes());
    }
    for (name, size, kind) in ATTRIBUTES {
        b.extend_from_slice(&(name.len() as u16).to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&size.to_be_bytes());
        b.extend_from_slice(&kind.to_be_bytes());
        // The default: zero, whose bytes are the same for an int and a float.
        for _ in 0..size {
            b.extend_from_slice(&0i32.to_be_bytes());
        }
    }
    for i in 0..frame.len() {
        let [x, y, z] = frame.positions[i];
        let [vx, vy, vz] = frame.velocities[i];
        for value in [x, y, z, 1.0] {
            b.extend_from_slice(&value.to_be_bytes());
        }
        b.extend_from_slice(&id32(frame, i, path)?.to_be_bytes());
        for value in [vx, vy, vz, frame.densities[i]] {
            b.extend_from_slice(&value.to_be_bytes());
        }
    }
    b.extend_from_slice(&[0x00, 0xff]);
    Ok(b)
}

/// A big-endian cursor that reports running past the end as an error.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn f32(&mut self) -> Option<f32> {
        Some(f32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// Reads a classic BGEO file of points: positions and the `id`, `velocity` and
/// `density` point attributes (other float, int and vector attributes are skipped).
///
/// # Errors
/// [`CliError::Read`] or [`CliError::Format`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("bad.bgeo");
/// std::fs::write(&path, b"Bgeo").unwrap();
/// assert!(pbf_cli::formats::bgeo::read(&path).is_err());
/// ```
pub fn read(path: &Path) -> Result<Frame, CliError> {
    let bytes = std::fs::read(path).map_err(|e| read_error(path, e))?;
    decode(&bytes, path)
}

/// The frame in the classic BGEO `bytes` of the file at `path` (named in errors).
fn decode(bytes: &[u8], path: &Path) -> Result<Frame, CliError> {
    let bad = |m: &str| format_error(path, "BGEO", m);
    let truncated = || bad("the file ends early");
    let mut c = Cursor { bytes, at: 0 };
    if c.take(5) != Some(b"BgeoV".as_slice()) {
        return Err(bad(
            "no `BgeoV` magic (only the classic format is supported)",
        ));
    }
    let mut header = [0i32; 9];
    for h in &mut header {
        *h = c.i32().ok_or_else(truncated)?;
    }
    let [
        version,
        points,
        prims,
        _,
        _,
        point_attributes,
        _,
        prim_attributes,
        detail_attributes,
    ] = header;
    if version != VERSION {
        return Err(bad("the version is not 5"));
    }
    if prims != 0 || prim_attributes != 0 || detail_attributes != 0 {
        return Err(bad("primitives and detail attributes are not supported"));
    }
    let n = usize::try_from(points).map_err(|_| bad("negative point count"))?;
    let attributes =
        usize::try_from(point_attributes).map_err(|_| bad("negative attribute count"))?;
    // (name, offset in floats after P, component count)
    let mut layout = Vec::with_capacity(attributes);
    let mut width = 0usize;
    for _ in 0..attributes {
        let len = usize::from(c.u16().ok_or_else(truncated)?);
        let name = String::from_utf8_lossy(c.take(len).ok_or_else(truncated)?).into_owned();
        let size = usize::from(c.u16().ok_or_else(truncated)?);
        let kind = c.i32().ok_or_else(truncated)?;
        if ![TYPE_FLOAT, TYPE_INT, TYPE_VECTOR].contains(&kind) {
            return Err(bad("only float, int and vector attributes are supported"));
        }
        c.take(4 * size).ok_or_else(truncated)?;
        layout.push((name, width, size, kind));
        width += size;
    }
    let find = |wanted: &str, size: usize| {
        layout
            .iter()
            .find(|(name, _, s, kind)| name == wanted && *s == size && *kind != TYPE_INT)
            .map(|(_, offset, _, _)| *offset)
    };
    let velocity = find("velocity", 3);
    let density = find("density", 1);
    let id = layout
        .iter()
        .find(|(name, _, s, kind)| name == "id" && *s == 1 && *kind == TYPE_INT)
        .map(|(_, offset, _, _)| *offset);
    let mut frame = Frame::default();
    // Each component as its 4 raw bytes: floats and ints alike.
    let mut record = vec![[0u8; 4]; width];
    let float = |bytes: [u8; 4]| f32::from_be_bytes(bytes);
    for _ in 0..n {
        let p = [c.f32(), c.f32(), c.f32(), c.f32()];
        let [Some(x), Some(y), Some(z), Some(_w)] = p else {
            return Err(truncated());
        };
        for r in &mut record {
            let bytes = c.take(4).ok_or_else(truncated)?;
            r.copy_from_slice(bytes);
        }
        frame.positions.push([x, y, z]);
        if let Some(o) = velocity {
            frame
                .velocities
                .push([float(record[o]), float(record[o + 1]), float(record[o + 2])]);
        }
        if let Some(o) = density {
            frame.densities.push(float(record[o]));
        }
        if let Some(o) = id {
            frame
                .ids
                .push(id_from_i32(path, "BGEO", i32::from_be_bytes(record[o]))?);
        }
    }
    if c.take(2) != Some([0x00, 0xff].as_slice()) {
        return Err(bad("missing the end bytes 0x00 0xff"));
    }
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_as_documented() {
        let frame = crate::formats::tests::sample(2);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.bgeo");
        write(&frame, &path).expect("write");
        let b = std::fs::read(&path).expect("read");
        let header = 5 + 9 * 4;
        let defs = (2 + 2 + 2 + 4 + 4) + (2 + 8 + 2 + 4 + 3 * 4) + (2 + 7 + 2 + 4 + 4);
        assert_eq!(b.len(), header + defs + 2 * 9 * 4 + 2);
        assert_eq!(&b[5..9], &5i32.to_be_bytes());
        assert_eq!(&b[9..13], &2i32.to_be_bytes());
        assert_eq!(&b[25..29], &3i32.to_be_bytes());
        let p = header + defs;
        assert_eq!(&b[p..p + 4], &frame.positions[0][0].to_be_bytes());
        assert_eq!(&b[p + 12..p + 16], &1f32.to_be_bytes());
        assert_eq!(&b[p + 16..p + 20], &(frame.ids[0] as i32).to_be_bytes());
        assert_eq!(&b[p + 20..p + 24], &frame.velocities[0][0].to_be_bytes());
        assert_eq!(&b[b.len() - 2..], &[0x00, 0xff]);
    }

    #[test]
    fn truncated_files_are_errors() {
        let frame = crate::formats::tests::sample(3);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.bgeo");
        write(&frame, &path).expect("write");
        let b = std::fs::read(&path).expect("read");
        for cut in [3, 20, 60, b.len() - 1] {
            std::fs::write(&path, &b[..cut]).expect("write");
            assert!(read(&path).is_err(), "cut at {cut}");
        }
    }
}
