//! Runs the built-in 3D dam break and prints the statistics of every tenth step,
//! with the time per phase.
//!
//! ```text
//! cargo run --release -p pbf-solver --example dam_break -- [PARTICLES] [STEPS] [SCENE] [lanes8|scalar]
//! ```

use std::time::Duration;

fn main() -> Result<(), pbf_solver::CoreError> {
    let mut args = std::env::args().skip(1);
    let particles: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let scene = args.next().unwrap_or_else(|| "dam-break".to_string());
    let mut solver = pbf_solver::scenes::build(&scene, particles)?;
    match args.next().as_deref() {
        Some("lanes8") => solver.set_backend(pbf_solver::Backend::Lanes8),
        Some("scalar") => solver.set_backend(pbf_solver::Backend::Scalar),
        _ => {}
    }
    println!(
        "{scene}: {} particles, SIMD backend of f32x8 {}",
        solver.len(),
        pbf_kernels::simd_backend()
    );
    let mut phases = [Duration::ZERO; 5];
    let mut iterations = 0u64;
    for step in 1..=steps {
        let d = solver.step()?;
        if step > steps / 2 {
            phases[0] += d.times.predict;
            phases[1] += d.times.neighbour_search;
            phases[2] += d.times.constraints;
            phases[3] += d.times.velocity;
            phases[4] += d.times.coarse;
            iterations += u64::from(d.iterations);
        }
        if step % 10 == 0 {
            println!(
                "step {step:4}: {:7.2} ms, {} iterations, {} searches, density error avg {:.3}% max {:.2}%, max speed {:.2}, neighbours {:.1}",
                d.times.total().as_secs_f64() * 1e3,
                d.iterations,
                d.searches,
                d.average_density_error * 100.0,
                d.max_density_error * 100.0,
                d.max_speed,
                d.average_neighbours
            );
        }
    }
    let measured = (steps - steps / 2) as f64;
    let ms = |d: Duration| d.as_secs_f64() * 1e3 / measured;
    let total: Duration = phases.iter().sum();
    println!(
        "second half, per step: predict {:.2} ms, neighbour search {:.2} ms, coarse correction {:.2} ms, constraints {:.2} ms, velocity {:.2} ms, total {:.2} ms ({:.1} ns per particle-iteration)",
        ms(phases[0]),
        ms(phases[1]),
        ms(phases[4]),
        ms(phases[2]),
        ms(phases[3]),
        ms(total),
        total.as_secs_f64() * 1e9 / (solver.len() as f64 * iterations as f64)
    );
    Ok(())
}
