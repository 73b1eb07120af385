//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

use pbf_cli::{CliError, Outcome};
use pbf_solver::Solver;
use pbf_solver::scenes::AnySolver;

/// Runs the command in-process with its output captured.
pub fn run(args: &[&str]) -> (Result<Outcome, CliError>, String) {
    let mut out = Vec::new();
    let mut full = vec!["pbf"];
    full.extend_from_slice(args);
    let result = pbf_cli::run_with_output(full, &mut out);
    (result, String::from_utf8_lossy(&out).into_owned())
}

/// A path as a `&str` argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

/// Asserts two solvers describe the same scene: parameters, domain, colliders and
/// every particle (positions, velocities, ids), bit for bit.
pub fn assert_same(a: &AnySolver, b: &AnySolver, what: &str) {
    match (a, b) {
        (AnySolver::Two(a), AnySolver::Two(b)) => same(a, b, what),
        (AnySolver::Three(a), AnySolver::Three(b)) => same(a, b, what),
        _ => panic!("{what}: dimensions differ"),
    }
}

fn same<const D: usize>(a: &Solver<D>, b: &Solver<D>, what: &str) {
    assert_eq!(a.params(), b.params(), "{what}: parameters");
    assert_eq!(a.domain(), b.domain(), "{what}: domain");
    assert_eq!(a.colliders(), b.colliders(), "{what}: colliders");
    assert_eq!(a.len(), b.len(), "{what}: particle count");
    assert_eq!(a.ids(), b.ids(), "{what}: ids");
    for axis in 0..D {
        assert_eq!(
            a.positions()[axis],
            b.positions()[axis],
            "{what}: positions, axis {axis}"
        );
        assert_eq!(
            a.velocities()[axis],
            b.velocities()[axis],
            "{what}: velocities, axis {axis}"
        );
    }
}

/// The `(name, time)` entries of a `.series` file, checked for ParaView's layout.
pub fn series_entries(path: &std::path::Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).expect("series file");
    let json: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(json["file-series-version"], "1.0", "{text}");
    json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().expect("name").to_owned(),
                f["time"].as_f64().expect("time"),
            )
        })
        .collect()
}
