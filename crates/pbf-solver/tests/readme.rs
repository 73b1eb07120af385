//! The crate README's example (run as a doc test) is the one the workspace README
//! shows: in the repository checkout the two code blocks are equal, so the workspace
//! README's example is tested too. A packaged crate has no workspace README.

/// The first ```rust block of a Markdown text.
fn rust_block(text: &str) -> Option<&str> {
    let start = text.find("```rust\n")? + "```rust\n".len();
    let len = text[start..].find("```")?;
    Some(&text[start..start + len])
}

#[test]
fn the_workspace_readme_shows_the_crate_readme_example() {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let ours = rust_block(include_str!("../README.md")).expect("a rust block");
    assert!(ours.contains("Solver::new"), "{ours}");
    if !pbf_solver::fuzzing::in_repository(manifest) {
        println!("skipped: the workspace README is not present (packaged crate)");
        return;
    }
    let root = std::path::Path::new(manifest).join("../../README.md");
    let text = std::fs::read_to_string(&root).expect("the workspace README");
    assert_eq!(rust_block(&text), Some(ours), "{}", root.display());
}
