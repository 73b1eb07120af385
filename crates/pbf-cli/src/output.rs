//! The files a run writes in its output directory, and the check before a run that it
//! does not mix its frames with an earlier run's.
//!
//! A run owns these names in its directory: the frames `frame_NNNNN.{vtk,bgeo,ply,csv,png}`,
//! the surface meshes `surface_NNNNN.{obj,ply,vtk}`,
//! the series files `frames.pvd`, `frames.EXT.series` and `surfaces.EXT.series` (and
//! their temporary
//! `.tmp` files), `animation.gif` and `last_frame.png`. Nothing else there is read,
//! changed or deleted.

use std::path::{Path, PathBuf};

use crate::error::CliError;
use crate::formats::Format;
use crate::series::{PVD_FILE_NAME, series_file_name, surface_series_file_name};
use crate::surface::SurfaceFormat;

/// The picture every run writes.
pub(crate) const LAST_FRAME: &str = "last_frame.png";
/// The animation of `--gif`.
pub(crate) const ANIMATION: &str = "animation.gif";

/// Whether `name` is a file a run writes, and whether it belongs to a series of frames
/// (every such file but `last_frame.png`, which each run replaces whole).
fn owned(name: &str) -> Option<bool> {
    if name == LAST_FRAME {
        return Some(false);
    }
    if name == ANIMATION {
        return Some(true);
    }
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    let extensions = Format::ALL.map(Format::extension);
    if base == PVD_FILE_NAME
        || extensions.iter().any(|e| base == series_file_name(e))
        || SurfaceFormat::ALL
            .iter()
            .any(|f| base == surface_series_file_name(f.extension()))
    {
        return Some(true);
    }
    // The stem is the name up to its first dot: an extension may have two parts
    // (`bgeo.gz`).
    let (stem, extension) = name.split_once('.')?;
    let numbered = |digits: &str| digits.len() >= 5 && digits.bytes().all(|b| b.is_ascii_digit());
    let is_frame = stem.strip_prefix("frame_").is_some_and(numbered)
        && (extension == "png" || extensions.contains(&extension));
    let is_surface = stem.strip_prefix("surface_").is_some_and(numbered)
        && SurfaceFormat::ALL
            .iter()
            .any(|f| f.extension() == extension);
    (is_frame || is_surface).then_some(true)
}

/// The files of earlier runs in `dir`, sorted: those of a series of frames, and all of
/// them (`last_frame.png` included). Empty when `dir` does not exist.
fn earlier_files(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), CliError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Vec::new(), Vec::new()));
        }
        Err(source) => {
            return Err(CliError::Read {
                path: dir.to_owned(),
                source,
            });
        }
    };
    let (mut series, mut all) = (Vec::new(), Vec::new());
    for entry in entries {
        let entry = entry.map_err(|source| CliError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        let name = entry.file_name();
        let Some(in_series) = name.to_str().and_then(owned) else {
            continue;
        };
        if !is_file {
            continue;
        }
        if in_series {
            series.push(entry.path());
        }
        all.push(entry.path());
    }
    series.sort();
    all.sort();
    Ok((series, all))
}

/// Readies `dir` for a run: refuses a directory that holds the frames of an earlier run
/// unless `overwrite`, which deletes every file a run writes there first.
///
/// # Errors
/// [`CliError::OutputExists`] naming the directory and a file in it;
/// [`CliError::Write`] for a file that cannot be deleted.
pub(crate) fn prepare(dir: &Path, overwrite: bool) -> Result<(), CliError> {
    let (series, all) = earlier_files(dir)?;
    if !overwrite {
        if let Some(first) = series.first() {
            return Err(CliError::OutputExists {
                dir: dir.to_owned(),
                example: first
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                count: series.len(),
            });
        }
        return Ok(());
    }
    for path in all {
        std::fs::remove_file(&path).map_err(|e| CliError::write(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_names_a_run_writes_are_its_own() {
        for name in [
            "frame_00000.vtk",
            "frame_123456.csv",
            "frame_00007.png",
            "surface_00000.obj",
            "surface_00012.ply",
            "surface_123456.vtk",
            "frames.pvd",
            "frames.ply.series",
            "frames.vtk.series.tmp",
            "surfaces.obj.series",
            "surfaces.vtk.series.tmp",
            "animation.gif",
        ] {
            assert_eq!(owned(name), Some(true), "{name}");
        }
        assert_eq!(owned("last_frame.png"), Some(false));
        for name in [
            "frame_0001.vtk",
            "frame_00001.obj",
            "surface_0001.obj",
            "surface_00001.csv",
            "surface_00001.png",
            "my_surface_00001.obj",
            "frame_0000x.vtk",
            "my_frame_00001.vtk",
            "frames.obj.series",
            "surfaces.csv.series",
            "surface.obj.series",
            "notes.txt",
            "scene.toml",
        ] {
            assert_eq!(owned(name), None, "{name}");
        }
    }

    #[test]
    fn overwrite_deletes_only_the_runs_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str| std::fs::write(dir.path().join(name), "x").expect("write");
        write("notes.txt");
        write("last_frame.png");
        prepare(dir.path(), false).expect("a lone last_frame.png is no series");
        write("frame_00000.bgeo");
        write("frames.bgeo.series");
        write("surface_00000.obj");
        match prepare(dir.path(), false) {
            Err(CliError::OutputExists { dir: d, count, .. }) => {
                assert_eq!((d.as_path(), count), (dir.path(), 3));
            }
            other => panic!("{other:?}"),
        }
        prepare(dir.path(), true).expect("overwrite");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
        prepare(&dir.path().join("missing"), false).expect("a new directory");
    }
}
