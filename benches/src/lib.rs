//! Scene generators shared by the benches.

pub mod density;
