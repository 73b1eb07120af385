//! Replays every committed input of the `solver_step` and `checkpoint_load` fuzz
//! targets (`fuzz/corpus/TARGET/`) through the harnesses the targets call, on stable,
//! so that CI checks the whole corpus (and every crash turned regression input) on
//! every submission. Run the fuzzers with `cargo +nightly fuzz run TARGET`.

use pbf_core::fuzzing::{checkpoint_load, replay_corpus, solver_step};

#[test]
fn solver_step_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "solver_step", solver_step);
}

#[test]
fn checkpoint_load_corpus_replays() {
    replay_corpus(
        env!("CARGO_MANIFEST_DIR"),
        "checkpoint_load",
        checkpoint_load,
    );
}
