//! Prints, for every lane backend, whether this CPU runs it and how many lanes it has:
//! the line a CI log shows so that a reader knows which backends the tests ran and
//! which they skipped.
//!
//! ```text
//! cargo run -p pbf-kernels --example backends
//! ```

use pbf_kernels::LaneKind;

fn main() {
    println!(
        "lane backends on {} (the widest this CPU runs: {}):",
        std::env::consts::ARCH,
        LaneKind::widest().name()
    );
    for kind in LaneKind::ALL {
        let status = if kind.is_available() {
            "runs"
        } else {
            "skipped: this CPU does not run it"
        };
        let lanes = if kind.width() == 1 { "lane " } else { "lanes" };
        println!("  {:<8} {:>2} {lanes}  {status}", kind.name(), kind.width());
    }
}
