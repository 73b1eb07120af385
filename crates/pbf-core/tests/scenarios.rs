//! The solver's scenario and property tests, one module a file, in a single test
//! binary: as ten binaries of their own, each compiled the solver's generic code again
//! (about 30 s apiece in a CI build, `cargo test --no-run --timings`). The allocation
//! test (`allocation.rs`) keeps a binary of its own, for its counting global allocator.

mod common;

#[path = "chebyshev.rs"]
mod chebyshev;
#[path = "checkpoint.rs"]
mod checkpoint;
#[path = "coarse.rs"]
mod coarse;
#[path = "colliders.rs"]
mod colliders;
#[path = "dam_break.rs"]
mod dam_break;
#[path = "errors.rs"]
mod errors;
#[path = "fuzz_corpus.rs"]
mod fuzz_corpus;
#[path = "properties.rs"]
mod properties;
#[path = "relaxation.rs"]
mod relaxation;
#[path = "rest.rs"]
mod rest;
