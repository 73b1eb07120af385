//! Replays every committed input of the `grid_rebuild` fuzz target
//! (`fuzz/corpus/grid_rebuild/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer itself with `cargo +nightly fuzz run grid_rebuild`.

use pbf_grid::fuzzing::{SKIPPED, corpus_dir, grid_rebuild, in_repository, replay_corpus};

#[test]
fn grid_rebuild_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "grid_rebuild", grid_rebuild);
}

/// In the repository checkout (the workspace `Cargo.toml` two folders up) the corpus
/// is present, so the replays above cannot pass by skipping it; only a packaged crate,
/// which ships no corpus, skips.
#[test]
fn the_corpus_is_found_in_the_repository_checkout() {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let root = std::path::Path::new(manifest).join("../..");
    let workspace = std::fs::read_to_string(root.join("Cargo.toml"))
        .is_ok_and(|text| text.lines().any(|line| line.trim() == "[workspace]"));
    assert_eq!(in_repository(manifest), workspace);
    if workspace {
        assert!(
            root.join("fuzz/corpus/grid_rebuild").is_dir(),
            "the grid_rebuild corpus is missing from the repository"
        );
        assert!(corpus_dir(manifest, "grid_rebuild").is_some());
    } else {
        println!("{}", SKIPPED);
    }
}
