//! The time series of a run's frames, as ParaView and other tools open them: a
//! `frames.EXT.series` JSON file for every frame format (ParaView's file-series format,
//! `{"file-series-version": "1.0", "files": [{"name": ..., "time": ...}]}`), for VTK
//! frames a `frames.pvd` collection (`<VTKFile type="Collection">`), and a
//! `surfaces.EXT.series` file for the surface meshes (OBJ, PLY and VTK, which ParaView
//! all reads). Each lists every file's simulated time in seconds and is rewritten after
//! every frame, through a temporary file renamed over the old one, so a run stopped
//! midway leaves valid files that list the frames it wrote.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::CliError;
use crate::formats::Format;
use crate::surface::SurfaceFormat;

/// The name of the ParaView collection file of VTK frames.
pub const PVD_FILE_NAME: &str = "frames.pvd";

/// `frames.vtk.series`: the name of the file-series file of frames with `extension`.
/// ParaView picks the reader of the frames from the extension before `.series`.
///
/// ```
/// assert_eq!(pbf_cli::series_file_name("vtk"), "frames.vtk.series");
/// ```
pub fn series_file_name(extension: &str) -> String {
    format!("frames.{extension}.series")
}

/// `surfaces.obj.series`: the name of the file-series file of surface meshes with
/// `extension`, beside the particle frames' own series.
///
/// ```
/// assert_eq!(pbf_cli::surface_series_file_name("obj"), "surfaces.obj.series");
/// ```
pub fn surface_series_file_name(extension: &str) -> String {
    format!("surfaces.{extension}.series")
}

/// Writes the series files of one run as its frames are written.
#[derive(Debug)]
pub(crate) struct SeriesWriter {
    series: PathBuf,
    pvd: Option<PathBuf>,
    /// File name (relative to the output directory) and simulated time of each frame.
    frames: Vec<(String, f64)>,
}

impl SeriesWriter {
    /// The series files of frames in `format` in `dir` (nothing is written yet).
    pub(crate) fn new(dir: &Path, format: Format) -> Self {
        Self {
            series: dir.join(series_file_name(format.extension())),
            pvd: (format == Format::Vtk).then(|| dir.join(PVD_FILE_NAME)),
            frames: Vec::new(),
        }
    }

    /// The series file of surface meshes in `format` in `dir` (no `.pvd`: ParaView's
    /// collection would repeat the `.series` file's content).
    pub(crate) fn for_surfaces(dir: &Path, format: SurfaceFormat) -> Self {
        Self {
            series: dir.join(surface_series_file_name(format.extension())),
            pvd: None,
            frames: Vec::new(),
        }
    }

    /// The `.series` file.
    pub(crate) fn series_path(&self) -> &Path {
        &self.series
    }

    /// The `.pvd` file, for VTK frames.
    pub(crate) fn pvd_path(&self) -> Option<&Path> {
        self.pvd.as_deref()
    }

    /// Adds the frame `file_name` at simulated `time` and rewrites the files.
    ///
    /// # Errors
    /// [`CliError::Write`] naming the file that could not be written.
    pub(crate) fn push(&mut self, file_name: String, time: f64) -> Result<(), CliError> {
        self.frames.push((file_name, time));
        replace(&self.series, &series_json(&self.frames))?;
        if let Some(pvd) = &self.pvd {
            replace(pvd, &pvd_xml(&self.frames))?;
        }
        Ok(())
    }
}

/// A time in seconds as JSON and XML take it: the shortest decimal that reads back as
/// the same `f64` (times are finite: the solver's clock is a sum of finite steps).
fn seconds(time: f64) -> String {
    if time.is_finite() {
        format!("{time:?}")
    } else {
        "0.0".to_owned()
    }
}

/// The file-series JSON of `frames`.
fn series_json(frames: &[(String, f64)]) -> String {
    let mut s = String::from("{\n  \"file-series-version\": \"1.0\",\n  \"files\": [\n");
    for (i, (name, time)) in frames.iter().enumerate() {
        let comma = if i + 1 < frames.len() { "," } else { "" };
        let _ = writeln!(
            s,
            "    {{ \"name\": \"{}\", \"time\": {} }}{comma}",
            json_escape(name),
            seconds(*time)
        );
    }
    s.push_str("  ]\n}\n");
    s
}

/// The ParaView collection XML of `frames`.
fn pvd_xml(frames: &[(String, f64)]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n  <Collection>\n",
    );
    for (name, time) in frames {
        let _ = writeln!(
            s,
            "    <DataSet timestep=\"{}\" group=\"\" part=\"0\" file=\"{}\"/>",
            seconds(*time),
            xml_escape(name)
        );
    }
    s.push_str("  </Collection>\n</VTKFile>\n");
    s
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Writes `text` to `path` through a temporary file beside it, renamed over `path`: a
/// reader never sees a half-written file.
fn replace(path: &Path, text: &str) -> Result<(), CliError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| CliError::write(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| CliError::write(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_lists_names_and_times() {
        let frames = vec![
            ("frame_00000.vtk".to_owned(), 0.0),
            ("a\"b".to_owned(), 0.5),
        ];
        let json = series_json(&frames);
        assert!(json.contains("\"file-series-version\": \"1.0\""), "{json}");
        assert!(
            json.contains("{ \"name\": \"frame_00000.vtk\", \"time\": 0.0 },"),
            "{json}"
        );
        assert!(
            json.contains("{ \"name\": \"a\\\"b\", \"time\": 0.5 }\n"),
            "{json}"
        );
        let xml = pvd_xml(&frames);
        assert!(
            xml.contains("<DataSet timestep=\"0.5\" group=\"\" part=\"0\" file=\"a&quot;b\"/>"),
            "{xml}"
        );
        assert_eq!(series_json(&[]).matches('{').count(), 1);
    }

    #[test]
    fn each_push_leaves_complete_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut w = SeriesWriter::new(dir.path(), Format::Vtk);
        w.push("frame_00000.vtk".into(), 0.0).expect("push");
        w.push("frame_00001.vtk".into(), 0.25).expect("push");
        let json = std::fs::read_to_string(w.series_path()).expect("series");
        assert_eq!(json, series_json(&w.frames));
        assert!(json.trim_end().ends_with('}'));
        let pvd = std::fs::read_to_string(w.pvd_path().expect("pvd")).expect("pvd");
        assert_eq!(pvd.matches("<DataSet ").count(), 2);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
        assert!(
            SeriesWriter::new(dir.path(), Format::Csv)
                .pvd_path()
                .is_none()
        );
    }
}
