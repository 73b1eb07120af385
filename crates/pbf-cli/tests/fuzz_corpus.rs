//! Replays every committed input of the `scene_parse` fuzz target
//! (`fuzz/corpus/scene_parse/`) through the harness the target calls, on stable, so
//! that CI checks the whole corpus (and every crash turned regression input) on every
//! submission. Run the fuzzer with `cargo +nightly fuzz run scene_parse`.

use pbf_cli::Scene;
use pbf_cli::fuzzing::scene_parse;
use pbf_solver::fuzzing::{SKIPPED, corpus_dir, in_repository, replay_corpus};
use pbf_solver::scenes::AnySolver;

#[test]
fn scene_parse_corpus_replays() {
    replay_corpus(env!("CARGO_MANIFEST_DIR"), "scene_parse", scene_parse);
}

/// The corpus seeds its fuzzer with periodic scenes (`seed-periodic-*`: a 2D channel
/// between no-slip plates, a 3D layer periodic along two axes around a sphere), so
/// that mutations start from domains with periodic axes, no-slip walls and a
/// viscosity: each parses, builds a periodic solver and steps.
#[test]
fn the_periodic_seeds_build_periodic_solvers_that_step() {
    let Some(dir) = corpus_dir(env!("CARGO_MANIFEST_DIR"), "scene_parse") else {
        println!("{}", SKIPPED);
        return;
    };
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus folder") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if !name.starts_with("seed-periodic-") {
            continue;
        }
        seeds += 1;
        let text = std::fs::read_to_string(&path).expect("a seed is text");
        scene_parse(text.as_bytes());
        let scene = Scene::parse(&text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut solver = scene.build().unwrap_or_else(|e| panic!("{name}: {e}"));
        let periodic = match &solver {
            AnySolver::Two(s) => s.domain().periodic().contains(&true),
            AnySolver::Three(s) => s.domain().periodic().contains(&true),
        };
        assert!(periodic, "{name}: no periodic axis");
        for _ in 0..3 {
            solver.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    assert!(seeds >= 2, "{seeds} periodic seeds in {}", dir.display());
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
