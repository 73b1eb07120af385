//! Replays every committed input of the `scene_parse` fuzz target
//! (`fuzz/corpus/scene_parse/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer with `cargo +nightly fuzz run scene_parse`.

use pbf_cli::fuzzing::scene_parse;
use pbf_core::fuzzing::replay_corpus;

#[test]
fn scene_parse_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "scene_parse", scene_parse);
}
