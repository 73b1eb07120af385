//! The grid's and the lists' integration tests, one module a file, in a single test
//! binary. The allocation test (`allocation.rs`) keeps a binary of its own, for its
//! counting global allocator.

mod common;

mod brute_force;
mod determinism;
mod errors;
mod fuzz_corpus;
mod locality;
mod periodic;
mod permutation;

/// With `autotests = false`, a new file in `tests/` would be compiled by nothing: every
/// `.rs` file there is a module above or a test binary of its own in `Cargo.toml`.
#[test]
fn every_test_file_is_built() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut declared: Vec<String> = include_str!("grid.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(|m| format!("{m}.rs"))
        .collect();
    declared.push("grid.rs".to_string());
    declared.push("allocation.rs".to_string());
    for entry in std::fs::read_dir(dir).expect("tests/") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("utf-8");
        if name.ends_with(".rs") {
            assert!(
                declared.contains(&name),
                "tests/{name} is built by no test binary"
            );
        }
    }
}
