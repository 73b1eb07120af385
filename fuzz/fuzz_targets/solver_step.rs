#![no_main]
//! `cargo +nightly fuzz run solver_step`: the harness is `pbf_solver::fuzzing::solver_step`, which the
//! stable tests also run over every file of `fuzz/corpus/solver_step/`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pbf_solver::fuzzing::solver_step(data));
