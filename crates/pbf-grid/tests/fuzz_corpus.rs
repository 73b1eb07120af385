//! Replays every committed input of the `grid_rebuild` fuzz target
//! (`fuzz/corpus/grid_rebuild/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer itself with `cargo +nightly fuzz run grid_rebuild`.

use pbf_grid::fuzzing::{grid_rebuild, replay_corpus};

#[test]
fn grid_rebuild_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "grid_rebuild", grid_rebuild);
}
