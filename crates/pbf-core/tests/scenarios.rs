//! The solver's scenario and property tests, one module a file, in a single test
//! binary: as ten binaries of their own, each compiled the solver's generic code again
//! (about 30 s apiece in a CI build, `cargo test --no-run --timings`). The allocation
//! test (`allocation.rs`) keeps a binary of its own, for its counting global allocator.

mod common;

mod chebyshev;
mod checkpoint;
mod coarse;
mod colliders;
mod dam_break;
mod errors;
mod fuzz_corpus;
mod properties;
mod relaxation;
mod rest;
