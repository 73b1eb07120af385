#![no_main]
//! `cargo +nightly fuzz run grid_rebuild`: the harness is `pbf_grid::fuzzing::grid_rebuild`, which the
//! stable tests also run over every file of `fuzz/corpus/grid_rebuild/`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pbf_grid::fuzzing::grid_rebuild(data));
