//! Replays every committed input of the `scene_parse` fuzz target (`fuzz/corpus/scene_parse/`)
//! through the harness the target calls, on stable,
//! so that CI checks the whole corpus (and every crash turned regression input) on
//! every submission. Run the fuzzers with `cargo +nightly fuzz run TARGET`.

use std::path::PathBuf;

fn replay(target: &str, harness: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
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
        let outcome = std::panic::catch_unwind(|| harness(&data));
        assert!(outcome.is_ok(), "corpus input {} fails", file.display());
    }
}

#[test]
fn scene_parse_corpus_replays() {
    replay("scene_parse", pbf_cli::fuzzing::scene_parse);
}
