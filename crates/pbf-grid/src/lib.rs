//! Morton-sorted cell lists (being written).
