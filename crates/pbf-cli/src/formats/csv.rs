//! CSV: a header `id,x,y,z,vx,vy,vz,density` and one line per particle. Floats are
//! written in the shortest decimal form that reads back as the same `f32`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use super::{format_error, read_error};
use crate::error::CliError;
use crate::frame::Frame;

/// The header line.
pub const HEADER: &str = "id,x,y,z,vx,vy,vz,density";

/// Writes `frame` as CSV. Particles without ids get their index.
///
/// # Errors
/// [`CliError::Write`] naming the path.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("f.csv");
/// let frame = pbf_cli::Frame { positions: vec![[0.5, 1.0, 0.0]], velocities: vec![[0.0; 3]], densities: vec![1000.0], ids: vec![3] };
/// pbf_cli::formats::csv::write(&frame, &path)?;
/// let text = std::fs::read_to_string(&path).unwrap();
/// assert_eq!(text, "id,x,y,z,vx,vy,vz,density\n3,0.5,1,0,0,0,0,1000\n");
/// # Ok::<(), pbf_cli::CliError>(())
/// ```
pub fn write(frame: &Frame, path: &Path) -> Result<(), CliError> {
    let mut text = String::with_capacity(64 * (frame.len() + 1));
    text.push_str(HEADER);
    text.push('\n');
    for i in 0..frame.len() {
        let id = frame.ids.get(i).copied().unwrap_or(i as u64);
        let [x, y, z] = frame.positions[i];
        let [vx, vy, vz] = frame.velocities[i];
        let _ = writeln!(
            text,
            "{id},{x},{y},{z},{vx},{vy},{vz},{}",
            frame.densities[i]
        );
    }
    let mut file = std::fs::File::create(path).map_err(|e| CliError::write(path, e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::write(path, e))
}

/// Reads a CSV frame written by [`write()`].
///
/// # Errors
/// [`CliError::Read`] or [`CliError::Format`] (with the line number).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("bad.csv");
/// std::fs::write(&path, "id,x\n").unwrap();
/// assert!(pbf_cli::formats::csv::read(&path).is_err());
/// ```
pub fn read(path: &Path) -> Result<Frame, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| read_error(path, e))?;
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        return Err(format_error(
            path,
            "CSV",
            format!("the first line must be `{HEADER}`"),
        ));
    }
    let mut frame = Frame::default();
    for (n, line) in lines.enumerate() {
        let bad = |what: &str| format_error(path, "CSV", format!("line {}: {what}", n + 2));
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != 8 {
            return Err(bad("expected 8 fields"));
        }
        frame
            .ids
            .push(fields[0].parse().map_err(|_| bad("bad id"))?);
        let mut v = [0f32; 7];
        for (slot, field) in v.iter_mut().zip(&fields[1..]) {
            *slot = field.parse().map_err(|_| bad("bad number"))?;
        }
        frame.positions.push([v[0], v[1], v[2]]);
        frame.velocities.push([v[3], v[4], v[5]]);
        frame.densities.push(v[6]);
    }
    Ok(frame)
}
