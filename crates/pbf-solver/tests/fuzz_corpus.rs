//! Replays every committed input of the `solver_step` and `checkpoint_load` fuzz
//! targets (`fuzz/corpus/TARGET/`) through the harnesses the targets call, on stable,
//! so that CI checks the whole corpus (and every crash turned regression input) on
//! every submission. Run the fuzzers with `cargo +nightly fuzz run TARGET`.

use pbf_solver::fuzzing::{
    SKIPPED, checkpoint_load, checkpoint_loads, checkpoint_seeds, corpus_dir, in_repository,
    replay_corpus, solver_step,
};

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

/// The `checkpoint_load` corpus holds loadable checkpoints of the current format (the
/// `seed-*` inputs), so that the fuzzer and this replay reach the validation and the
/// step behind the decoder. When the format changes, this fails until the seeds are
/// written again: `PBF_WRITE_SEEDS=1 cargo test -p pbf-solver --test scenarios seeds`.
#[test]
fn checkpoint_seeds_are_in_the_corpus_and_load() {
    // A packaged crate has no corpus: the seeds are still checked to load.
    let dir = corpus_dir(env!("CARGO_MANIFEST_DIR"), "checkpoint_load");
    let write = std::env::var_os("PBF_WRITE_SEEDS").is_some();
    let seeds = checkpoint_seeds();
    assert!(seeds.len() >= 4, "{} seeds", seeds.len());
    for (name, input) in seeds {
        assert!(checkpoint_loads(&input), "the seed {name} does not load");
        // The harness steps it with its twin (bit 2) and finds the same bits.
        checkpoint_load(&input);
        let Some(dir) = &dir else { continue };
        let path = dir.join(format!("seed-{name}"));
        if write {
            std::fs::write(&path, &input).expect("the corpus folder is writable");
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; write the seeds with PBF_WRITE_SEEDS=1 cargo test -p pbf-solver \
                 --test scenarios seeds",
                path.display()
            )
        });
        assert!(
            checkpoint_loads(&committed),
            "{} no longer loads (the format changed?): write the seeds again with \
             PBF_WRITE_SEEDS=1 cargo test -p pbf-solver --test scenarios seeds",
            path.display()
        );
    }
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
            root.join("fuzz/corpus/solver_step").is_dir(),
            "the solver_step corpus is missing from the repository"
        );
        assert!(corpus_dir(manifest, "solver_step").is_some());
        assert!(
            root.join("fuzz/corpus/checkpoint_load").is_dir(),
            "the checkpoint_load corpus is missing from the repository"
        );
        assert!(corpus_dir(manifest, "checkpoint_load").is_some());
    } else {
        println!("{}", SKIPPED);
    }
}
