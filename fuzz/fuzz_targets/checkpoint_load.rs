#![no_main]
//! `cargo +nightly fuzz run checkpoint_load`: the harness is `pbf_solver::fuzzing::checkpoint_load`, which the
//! stable tests also run over every file of `fuzz/corpus/checkpoint_load/`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pbf_solver::fuzzing::checkpoint_load(data));
