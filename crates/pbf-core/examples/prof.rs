//! Scratch profiler (not committed).
use pbf_core::scenes::dam_break_3d;
use pbf_core::{Domain, Solver};
use std::time::{Duration, Instant};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map_or(100_000, |s| s.parse().unwrap());
    let steps: usize = args.get(2).map_or(10, |s| s.parse().unwrap());
    let coarse = std::env::var("COARSE").is_ok();
    let d = dam_break_3d(n).unwrap();
    let p = d
        .params()
        .to_builder()
        .coarse_correction(coarse)
        .build()
        .unwrap();
    let (lo, hi) = (d.domain().lo(), d.domain().hi());
    let a = hi[2] - lo[2];
    let mut s = Solver::new(p, Domain::new(lo, hi).unwrap()).unwrap();
    s.add_block([0.0; 3], [a, a, a], [0.0; 3]).unwrap();
    for _ in 0..30 {
        s.step().unwrap();
    }
    let mut t = [Duration::ZERO; 5];
    let start = Instant::now();
    let mut searches = 0;
    for _ in 0..steps {
        let d = s.step().unwrap();
        t[0] += d.times.predict;
        t[1] += d.times.neighbour_search;
        t[2] += d.times.constraints;
        t[3] += d.times.velocity;
        t[4] += d.times.coarse;
        searches += d.searches;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3 / steps as f64;
    println!(
        "{} particles coarse={coarse}: step {:.2} ms: predict {:.2} search {:.2} coarse {:.2} constraints {:.2} velocity {:.2}; searches/step {:.2}",
        s.len(),
        ms(start.elapsed()),
        ms(t[0]),
        ms(t[1]),
        ms(t[4]),
        ms(t[2]),
        ms(t[3]),
        searches as f64 / steps as f64
    );
}
