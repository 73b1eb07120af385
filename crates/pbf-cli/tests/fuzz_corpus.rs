//! Replays every committed input of the `scene_parse` fuzz target
//! (`fuzz/corpus/scene_parse/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer with `cargo +nightly fuzz run scene_parse`.

use pbf_cli::fuzzing::scene_parse;
use pbf_solver::fuzzing::{SKIPPED, corpus_dir, in_repository, replay_corpus};

#[test]
fn scene_parse_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "scene_parse", scene_parse);
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
            root.join("fuzz/corpus/scene_parse").is_dir(),
            "the scene_parse corpus is missing from the repository"
        );
        assert!(corpus_dir(manifest, "scene_parse").is_some());
    } else {
        println!("{}", SKIPPED);
    }
}
