//! Scene generators shared by the benches.
