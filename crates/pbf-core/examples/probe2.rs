use pbf_grid::Grid;
fn main() {
    let s = 0.05f32;
    let h = 0.1f32;
    let mut x = vec![]; let mut y = vec![];
    for j in 0..10 { for i in 0..10 { x.push((i as f32 + 0.5) * s); y.push((j as f32 + 0.5) * s); } }
    let mut g = Grid::<2>::new();
    g.rebuild([&x, &y], h).unwrap();
    let mut scratch = Vec::new();
    g.reorder(&mut x, &mut scratch).unwrap();
    g.reorder(&mut y, &mut scratch).unwrap();
    let mut a = 0; let mut b = 0;
    for i in 0..100 {
        g.for_each_neighbour([&x, &y], i, |_| a += 1);
        let c = g.cell_of()[i] as usize;
        for r in g.candidate_ranges(c) { for j in r.start..r.end { let j = j as usize; if (x[i]-x[j]).powi(2) + (y[i]-y[j]).powi(2) < h*h { b += 1; } } }
    }
    println!("for_each_neighbour {a} candidate ranges {b}; cells {}", g.cells().len());
    println!("cell 0 ranges {:?}", g.candidate_ranges(0));
}
