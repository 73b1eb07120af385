#![no_main]
//! `cargo +nightly fuzz run scene_parse`: the harness is `pbf_cli::fuzzing::scene_parse`, which the
//! stable tests also run over every file of `fuzz/corpus/scene_parse/`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| pbf_cli::fuzzing::scene_parse(data));
