//! `scaling`: the time per particle-iteration of the 3D dam break at 1M particles
//! against 10k, on the same rayon pool, measured interleaved in one process.
//!
//! ```text
//! cargo bench -p pbf-benches --bench scaling
//! cargo bench -p pbf-benches --bench scaling -- --threads 1 --large-to 100
//! cargo bench -p pbf-benches --bench scaling -- --keep-lists false
//! ```
//!
//! With `--keep-lists false` both scenes search at the start of every step
//! ([`pbf_solver::ParamsBuilder::keep_lists`]): the settled 10k sheet otherwise keeps its
//! lists on most steps, and its steps then do less work a particle-iteration than the
//! 1M dam break's, which searches every step. The report gives the searches a step of
//! each side.
//!
//! Criterion's `step` bench times the two sizes one after the other, a minute apart.
//! On a shared machine the small scene's step moves by 10% or more over a few seconds,
//! so the ratio of two
//! criterion runs moves with it. Here each round times one step of the large scene
//! and then, straight after, enough steps of the small scene to take about as long;
//! both sides of a round's ratio see the same stretch of the machine. The report
//! gives the median of the rounds' ratios and, to tell work from speed apart, the
//! neighbours and list entries a particle of each side.
//!
//! The states match those the `step` bench measures: the small scene after
//! `--small-warm` steps (criterion reaches about step 5000 of the 10k dam break,
//! where the fluid has settled into a sheet), the large one from step `--large-from`
//! to `--large-to` (criterion measures the 1M dam break up to step 160, the block
//! still collapsing).
//!
//! Without arguments, or with a criterion-style filter that `scaling` contains, it
//! runs; any other filter (as in `cargo bench -p pbf-benches -- 1M`) skips it.

use pbf_benches::{dam_break_3d_with, size_label as label};
use pbf_solver::Backend;
use pbf_solver::scenes::AnySolver;
use std::time::Instant;

const USAGE: &str = "usage: scaling [--small 10000] [--large 1000000] [--threads 2] \
[--small-warm 5000] [--large-from 35] [--large-to 160] [--keep-lists true|false] [FILTER]";

/// The options of one run.
struct Options {
    small: usize,
    large: usize,
    threads: usize,
    small_warm: usize,
    large_from: usize,
    large_to: usize,
    keep_lists: bool,
}

impl Options {
    /// The options, or `None` when a filter excludes this bench.
    fn parse() -> Result<Option<Self>, String> {
        let mut o = Options {
            small: 10_000,
            large: 1_000_000,
            threads: 2,
            small_warm: 5000,
            large_from: 35,
            large_to: 160,
            keep_lists: true,
        };
        let mut filters = Vec::new();
        let mut args = std::env::args().skip(1);
        let one = |name: &str, v: Option<String>| -> Result<usize, String> {
            let v = v.ok_or(format!("{name}: missing value"))?;
            v.parse::<usize>().map_err(|e| format!("{name} {v}: {e}"))
        };
        while let Some(a) = args.next() {
            match a.as_str() {
                // cargo bench passes `--bench` to every harness-less bench.
                "--bench" => {}
                "--small" => o.small = one(&a, args.next())?,
                "--large" => o.large = one(&a, args.next())?,
                "--threads" => o.threads = one(&a, args.next())?,
                "--small-warm" => o.small_warm = one(&a, args.next())?,
                "--keep-lists" => {
                    o.keep_lists = match args.next().as_deref() {
                        Some("true") => true,
                        Some("false") => false,
                        v => return Err(format!("--keep-lists: {v:?}, expected true or false")),
                    }
                }
                "--large-from" => o.large_from = one(&a, args.next())?,
                "--large-to" => o.large_to = one(&a, args.next())?,
                "-h" | "--help" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                other if other.starts_with('-') => {
                    return Err(format!("unknown option {other}\n{USAGE}"));
                }
                filter => filters.push(filter.to_string()),
            }
        }
        if !filters.is_empty() && !filters.iter().any(|f| "scaling".contains(f.as_str())) {
            return Ok(None);
        }
        for (name, v) in [
            ("--small", o.small),
            ("--large", o.large),
            ("--threads", o.threads),
        ] {
            if v == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if o.large_to <= o.large_from {
            return Err(format!(
                "--large-to ({}) must be past --large-from ({})",
                o.large_to, o.large_from
            ));
        }
        Ok(Some(o))
    }
}

/// What one side measured over the rounds.
#[derive(Default)]
struct Side {
    /// Seconds per particle-iteration, one entry a round.
    per_particle_iteration: Vec<f64>,
    /// Milliseconds per step, one entry a round.
    step_ms: Vec<f64>,
    steps: u64,
    searches: u64,
    neighbours: f64,
    list_entries: f64,
}

impl Side {
    /// Runs `steps` steps of `solver` and records them as one round.
    fn round(&mut self, solver: &mut AnySolver, steps: usize) -> f64 {
        let n = solver.len() as f64;
        let mut iterations = 0u64;
        let at = Instant::now();
        for _ in 0..steps {
            let d = solver.step().expect("step");
            iterations += u64::from(d.iterations);
            self.searches += u64::from(d.searches);
            self.neighbours += f64::from(d.average_neighbours);
            self.list_entries += d.list_pairs as f64 / n;
        }
        let seconds = at.elapsed().as_secs_f64();
        let per = seconds / (n * iterations as f64);
        self.per_particle_iteration.push(per);
        self.step_ms.push(seconds * 1e3 / steps as f64);
        self.steps += steps as u64;
        per
    }

    fn mean(&self, total: f64) -> f64 {
        total / self.steps as f64
    }
}

/// The `q`-quantile (0 to 1) of `values`, by the nearest rank.
fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let o = match Options::parse() {
        Ok(Some(o)) => o,
        Ok(None) => return,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.threads)
        .build()
        .expect("pool");
    println!("{}", pbf_benches::machine::describe());
    println!(
        "scaling: 3D dam break, {} against {}, {} thread(s); Backend::Lanes runs {} lanes; keep_lists {}",
        label(o.large),
        label(o.small),
        o.threads,
        Backend::Lanes.lane_width(),
        o.keep_lists
    );
    pool.install(|| {
        let scene = |n: usize| {
            AnySolver::Three(dam_break_3d_with(n, |p| p.keep_lists(o.keep_lists)))
        };
        let (mut small, mut large) = (scene(o.small), scene(o.large));
        let at = Instant::now();
        for _ in 0..o.small_warm {
            small.step().expect("warm-up");
        }
        let small_step = at.elapsed().as_secs_f64() / o.small_warm.max(1) as f64;
        let at = Instant::now();
        for _ in 0..o.large_from {
            large.step().expect("warm-up");
        }
        let large_step = at.elapsed().as_secs_f64() / o.large_from.max(1) as f64;
        // Small steps a round: about the time of one large step.
        let per_round = if o.small_warm > 0 && o.large_from > 0 {
            (large_step / small_step).round().max(1.0) as usize
        } else {
            100
        };
        let (mut s, mut l) = (Side::default(), Side::default());
        let mut ratios = Vec::new();
        for _ in o.large_from..o.large_to {
            let large_per = l.round(&mut large, 1);
            let small_per = s.round(&mut small, per_round);
            ratios.push(large_per / small_per);
        }
        println!(
            "{} rounds of one {} step and {per_round} {} steps",
            ratios.len(),
            label(o.large),
            label(o.small)
        );
        println!();
        println!(
            "| scene | particles | steps measured | median ms a step | median ns a particle-iteration | neighbours within h a particle | list entries a particle | searches a step |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for (name, side, solver, first) in [
            (label(o.small), &s, &small, o.small_warm),
            (label(o.large), &l, &large, o.large_from),
        ] {
            println!(
                "| dam break {name} | {} | {}-{} | {:.3} | {:.3} | {:.1} | {:.1} | {:.2} |",
                solver.len(),
                first + 1,
                first as u64 + side.steps,
                quantile(&side.step_ms, 0.5),
                quantile(&side.per_particle_iteration, 0.5) * 1e9,
                side.mean(side.neighbours),
                side.mean(side.list_entries),
                side.mean(side.searches as f64),
            );
        }
        println!();
        let entries = l.mean(l.list_entries) / s.mean(s.list_entries);
        let ratio = quantile(&ratios, 0.5);
        println!(
            "time per particle-iteration, {} / {}: median of the rounds {:.3} (quartiles {:.3} and {:.3}); ratio of the medians {:.3}",
            label(o.large),
            label(o.small),
            ratio,
            quantile(&ratios, 0.25),
            quantile(&ratios, 0.75),
            quantile(&l.per_particle_iteration, 0.5) / quantile(&s.per_particle_iteration, 0.5),
        );
        println!(
            "list entries a particle, {} / {}: {entries:.3}; time per list entry: {:.3}",
            label(o.large),
            label(o.small),
            ratio / entries
        );
    });
}
