//! The solver's neighbour lists are `pbf-grid`'s: the density pass of `pbf-grid` over
//! them, with a `pbf-kernels` backend, gives the solver's densities bit for bit.

use pbf_kernels::{Kernel, LaneKind};
use pbf_solver::{Domain, Params, Solver};

#[test]
fn the_grids_density_pass_over_the_solvers_lists_gives_its_densities() {
    // A free block far from every wall (no gravity), so the walls add nothing.
    let spacing = 0.05;
    let params = Params::<3>::builder(spacing)
        .gravity([0.0; 3])
        .build()
        .unwrap();
    let mut s = Solver::new(params, Domain::new([-2.0; 3], [2.0; 3]).unwrap()).unwrap();
    s.add_block([-0.3; 3], [0.3; 3], [0.5, -0.2, 0.1]).unwrap();
    let kernel = Kernel::<3>::new(s.params().kernel_radius()).unwrap();
    for step in 0..5 {
        s.step().unwrap();
        let lists = s.neighbour_lists();
        assert_eq!(lists.len(), s.len());
        for kind in LaneKind::ALL {
            let mut rho = vec![0.0f32; s.len()];
            match pbf_grid::lists::densities(
                kind,
                lists,
                s.positions(),
                &kernel,
                s.params().mass(),
                &mut rho,
            ) {
                Ok(()) => {
                    let differ =
                        (0..s.len()).find(|&i| rho[i].to_bits() != s.densities()[i].to_bits());
                    assert!(
                        differ.is_none(),
                        "step {step}, {} lanes: particle {differ:?}: {:?} against the solver's {:?}",
                        kind.name(),
                        differ.map(|i| rho[i]),
                        differ.map(|i| s.densities()[i])
                    );
                }
                Err(_) => kind.report_skipped(),
            }
        }
    }
}
