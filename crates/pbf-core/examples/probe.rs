use pbf_core::{Backend, Domain, Params, Solver};
fn scene(backend: Backend, nudge: bool) -> Solver<3> {
    let params = Params::<3>::builder(0.05).backend(backend).build().unwrap();
    let a = 0.4; let domain = Domain::new([0.0; 3], [3.0 * a, 1.5 * a, a]).unwrap();
    let mut b = Solver::new(params.clone(), domain).unwrap(); b.add_block([0.0;3],[a,a,a],[0.0;3]).unwrap();
    let mut p = Vec::new(); b.positions_interleaved(&mut p);
    if nudge { for q in p.iter_mut() { q[0] = f32::from_bits(q[0].to_bits()+1); } }
    let mut s = Solver::new(params, domain).unwrap(); s.add_particles(&p, None).unwrap(); s
}
fn com(s: &Solver<3>) -> [f64;3] { let p = s.positions(); core::array::from_fn(|a| p[a].iter().map(|v| *v as f64).sum::<f64>() / s.len() as f64) }
fn main() {
    let mut runs = [scene(Backend::Lanes,false), scene(Backend::Lanes,true), scene(Backend::Scalar,false)];
    for step in 1..=100 { let d: Vec<_> = runs.iter_mut().map(|r| r.step().unwrap()).collect();
      if step % 20 == 0 { let c: Vec<_> = runs.iter().map(com).collect();
        println!("{step}: com dx ulp {:.2e} scalar {:.2e} | ke {:.4} {:.4} {:.4} | err {:.4} {:.4} {:.4}",
          (0..3).map(|a| (c[0][a]-c[1][a]).abs()).fold(0.0,f64::max)/0.1, (0..3).map(|a| (c[0][a]-c[2][a]).abs()).fold(0.0,f64::max)/0.1,
          d[0].kinetic_energy, d[1].kinetic_energy, d[2].kinetic_energy, d[0].average_density_error, d[1].average_density_error, d[2].average_density_error); } }
}
