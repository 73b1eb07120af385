//! Replays every committed input of the `grid_rebuild` fuzz target
//! (`fuzz/corpus/grid_rebuild/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer itself with `cargo +nightly fuzz run grid_rebuild`.

use std::path::PathBuf;

#[test]
fn grid_rebuild_corpus_replays() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/grid_rebuild");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "{} holds only {} inputs",
        dir.display(),
        files.len()
    );
    for file in &files {
        let data = std::fs::read(file).expect("corpus file");
        let outcome = std::panic::catch_unwind(|| pbf_grid::fuzzing::grid_rebuild(&data));
        assert!(outcome.is_ok(), "corpus input {} fails", file.display());
    }
}
