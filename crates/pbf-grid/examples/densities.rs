//! SPH densities from `pbf-grid` and `pbf-kernels` alone: a grid sorts the particles,
//! neighbour lists are built over the sorted order, and the density pass runs on every
//! lane backend this CPU has. Every backend gives the same bits; the densities match a
//! brute-force sum over all pairs to rounding.
//!
//! Run with `cargo run --release -p pbf-grid --example densities`.

use pbf_grid::Grid;
use pbf_grid::lists::{NeighbourLists, densities, room_per_particle};
use pbf_kernels::{Kernel, LaneKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A jittered 24^3 lattice at spacing s, kernel radius h = 2 s.
    let (side, spacing) = (24usize, 0.05f32);
    let kernel = Kernel::<3>::new(2.0 * spacing)?;
    let jitter = |i: usize, k: usize| {
        let hash = (i as u32)
            .wrapping_mul(2_654_435_761)
            .wrapping_add(k as u32 * 40_503);
        (hash % 1000) as f32 / 1000.0 * 0.2 * spacing
    };
    let n = side * side * side;
    let mut positions: [Vec<f32>; 3] = Default::default();
    for i in 0..n {
        let cell = [i % side, (i / side) % side, i / (side * side)];
        for a in 0..3 {
            positions[a].push(cell[a] as f32 * spacing + jitter(i, a));
        }
    }

    // Sort by the grid, then build the lists over the sorted order.
    let mut grid = Grid::<3>::new();
    grid.rebuild([&positions[0], &positions[1], &positions[2]], kernel.h())?;
    let mut sorted: [Vec<f32>; 3] = Default::default();
    for a in 0..3 {
        sorted[a] = vec![0.0; n];
        grid.reorder_into(&positions[a], &mut sorted[a])?;
    }
    let sorted = [&sorted[0][..], &sorted[1][..], &sorted[2][..]];
    let mut lists = NeighbourLists::default();
    lists.build(
        &grid,
        sorted,
        kernel.h2(),
        room_per_particle::<3>(kernel.h(), spacing),
    )?;
    println!("{n} particles, {} list entries", lists.pairs());

    // The density pass on every backend; the mass gives the lattice about 1000.
    let mass = 1000.0 * spacing.powi(3);
    let mut reference = vec![0.0f32; n];
    densities(
        LaneKind::Scalar,
        &lists,
        sorted,
        &kernel,
        mass,
        &mut reference,
    )?;
    for kind in LaneKind::ALL {
        let mut rho = vec![0.0f32; n];
        match densities(kind, &lists, sorted, &kernel, mass, &mut rho) {
            Ok(()) => {
                let same = rho
                    .iter()
                    .zip(&reference)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                println!(
                    "{:>8} ({:>2} lanes): bits of the scalar pass: {same}",
                    kind.name(),
                    kind.width()
                );
                assert!(same, "{} differs from the scalar pass", kind.name());
            }
            Err(e) => println!("{:>8}: skipped ({e})", kind.name()),
        }
    }

    // Against brute force over every pair (a sample of particles).
    let mut worst = 0.0f64;
    for i in (0..n).step_by(97) {
        let mut sum = kernel.poly6(0.0) as f64;
        for j in 0..n {
            let r2 = pbf_grid::distance2(
                [sorted[0][i], sorted[1][i], sorted[2][i]],
                [sorted[0][j], sorted[1][j], sorted[2][j]],
            );
            if j != i && pbf_grid::within(r2, kernel.h2()) {
                sum += kernel.poly6(r2) as f64;
            }
        }
        let brute = mass as f64 * sum;
        worst = worst.max((reference[i] as f64 - brute).abs() / brute);
    }
    println!("largest relative difference from brute force: {worst:.2e}");
    assert!(worst < 1e-5, "the lists' densities differ from brute force");
    let mean = reference.iter().map(|&r| r as f64).sum::<f64>() / n as f64;
    println!("mean density {mean:.1} kg/m^3");
    Ok(())
}
