//! The solver's scenario and property tests, one module a file, in a single test
//! binary: as ten binaries of their own, each compiled the solver's generic code again
//! (about 30 s apiece in a CI build, `cargo test --no-run --timings`). The allocation
//! test (`allocation.rs`) keeps a binary of its own, for its counting global allocator.

mod common;

mod chebyshev;
mod checkpoint;
mod coarse;
mod colliders;
mod dam_break;
mod edges;
mod errors;
mod free_fall;
mod fuzz_corpus;
mod lists;
mod periodic;
mod pressure;
mod properties;
mod readme;
mod relaxation;
mod rest;
mod state_hash;
mod viscosity;

/// With `autotests = false`, a new file in `tests/` would be compiled by nothing: every
/// `.rs` file there is a module above or the allocation test's own binary.
#[test]
fn every_test_file_is_built() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let declared: Vec<String> = include_str!("scenarios.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .map(|m| format!("{m}.rs"))
        .collect();
    for entry in std::fs::read_dir(&dir).expect("the tests folder") {
        let name = entry
            .expect("an entry")
            .file_name()
            .into_string()
            .expect("UTF-8");
        if name.ends_with(".rs") && name != "scenarios.rs" && name != "allocation.rs" {
            assert!(
                declared.contains(&name),
                "tests/{name} is in no test binary"
            );
        }
    }
}
