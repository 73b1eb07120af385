//! The pressures the density constraint applies (`Solver::keep_pressures`,
//! `Solver::pressures`): kept, they change no bit of the flow; they are the same bits
//! on any thread count; they follow their particles; and in a settled column their
//! difference between two depths is the weight of the fluid between.

use pbf_solver::{Acceleration, Domain, Iterations, Params, ParamsBuilder, Solver, scenes};

/// A 2D dam break of about 1500 particles with its parameters edited.
fn dam_break(edit: impl Fn(ParamsBuilder<2>) -> ParamsBuilder<2>) -> Solver<2> {
    let scene = scenes::dam_break_2d(1500).unwrap();
    let params = edit(scene.params().to_builder()).build().unwrap();
    let mut s = Solver::new(params, *scene.domain()).unwrap();
    let mut points = Vec::new();
    scene.positions_interleaved(&mut points);
    s.add_particles(&points, None).unwrap();
    s
}

/// An edit of a scene's parameters.
type Edit = fn(ParamsBuilder<2>) -> ParamsBuilder<2>;

/// The edits the tests run under: the defaults (coarse correction on), plain Jacobi
/// passes alone, Chebyshev steps, and an adaptive count, whose last lambda pass moves
/// nothing.
fn variants() -> [(&'static str, Edit); 4] {
    [
        ("defaults", |b| b),
        ("no coarse correction", |b| b.coarse_correction(false)),
        ("Chebyshev", |b| b.acceleration(Acceleration::Chebyshev)),
        ("adaptive", |b| {
            b.iterations(Iterations::Adaptive {
                max_density_error_percent: 0.5,
                min: 2,
                max: 8,
            })
        }),
    ]
}

fn bits<const D: usize>(s: &Solver<D>) -> Vec<u32> {
    let mut out = Vec::new();
    for a in 0..D {
        out.extend(s.positions()[a].iter().map(|v| v.to_bits()));
        out.extend(s.velocities()[a].iter().map(|v| v.to_bits()));
    }
    out
}

#[test]
fn keeping_the_pressures_changes_no_bit_of_the_flow() {
    for (name, edit) in variants() {
        let (mut plain, mut kept) = (dam_break(edit), dam_break(edit));
        kept.keep_pressures(true);
        for step in 1..=60 {
            plain.step().unwrap();
            kept.step().unwrap();
            assert!(bits(&plain) == bits(&kept), "{name}: step {step}");
        }
        assert!(plain.pressures().is_empty(), "{name}");
        let p = kept.pressures();
        assert_eq!(p.len(), kept.len(), "{name}");
        assert!(
            p.iter().all(|v| v.is_finite()),
            "{name}: a pressure not finite"
        );
        // The collapsing column presses on its floor.
        assert!(
            p.iter().any(|v| *v > 100.0),
            "{name}: no pressure above 100 Pa"
        );
    }
}

#[test]
fn the_pressures_are_the_same_bits_on_any_thread_count() {
    for (name, edit) in variants() {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut s = dam_break(edit);
                s.keep_pressures(true);
                for _ in 0..40 {
                    s.step().unwrap();
                }
                let p: Vec<u32> = s.pressures().iter().map(|v| v.to_bits()).collect();
                (p, s.ids().to_vec())
            })
        };
        let one = on(1);
        for threads in [2, 3] {
            assert!(one == on(threads), "{name}: {threads} threads");
        }
    }
}

#[test]
fn the_pressures_follow_their_particles() {
    let mut s = dam_break(|b| b);
    s.keep_pressures(true);
    for _ in 0..30 {
        s.step().unwrap();
    }
    // Keyed by id before and after removing every other particle: the survivors
    // keep theirs.
    let before: Vec<(u64, u32)> = s
        .ids()
        .iter()
        .zip(s.pressures())
        .map(|(id, p)| (*id, p.to_bits()))
        .collect();
    let removed = s.retain_particles(|id, _, _| id % 2 == 0);
    assert!(removed > 0);
    assert_eq!(s.pressures().len(), s.len());
    for (id, p) in s.ids().iter().zip(s.pressures()) {
        let was = before.iter().find(|(b, _)| b == id).expect("a survivor");
        assert_eq!(was.1, p.to_bits(), "particle {id}");
    }
    // A particle added after the step has none yet; the next step gives every one.
    s.add_particles(&[[0.05, 0.5]], None).unwrap();
    assert_eq!(s.pressures().len(), s.len());
    assert_eq!(*s.pressures().last().unwrap(), 0.0);
    s.step().unwrap();
    assert_eq!(s.pressures().len(), s.len());
    // Turned off, they are dropped.
    s.keep_pressures(false);
    assert!(s.pressures().is_empty());
    s.step().unwrap();
    assert!(s.pressures().is_empty());
}

/// A 2D column 12 spacings wide and 24 deep in a closed box, settled for 2 s under
/// `edit`, then stepped 0.25 s more: the slope of the pressure against height fitted
/// over every particle and step between `h` above the floor and `h` below the
/// surface, over `-rho0 |g|`.
fn slope_over_weight(edit: impl Fn(ParamsBuilder<2>) -> ParamsBuilder<2>) -> f64 {
    let s = 0.01f32;
    let (w, h) = (12.0 * s, 24.0 * s);
    let params = edit(Params::<2>::builder(s)).build().unwrap();
    let (rho0, g, radius) = (
        f64::from(params.rest_density()),
        f64::from(params.gravity()[1]),
        params.kernel_radius(),
    );
    let mut solver = Solver::new(params, Domain::new([0.0; 2], [w, 2.0 * h]).unwrap()).unwrap();
    solver.add_block([0.0; 2], [w, h], [0.0; 2]).unwrap();
    solver.keep_pressures(true);
    for _ in 0..240 {
        solver.step().unwrap();
    }
    let (mut n, mut sy, mut sp, mut syy, mut syp) = (0.0f64, 0.0, 0.0, 0.0, 0.0);
    for _ in 0..30 {
        solver.step().unwrap();
        let (y, p) = (solver.positions()[1], solver.pressures());
        for i in 0..solver.len() {
            if y[i] < radius || y[i] > h - radius {
                continue;
            }
            let (y, p) = (f64::from(y[i]), f64::from(p[i]));
            n += 1.0;
            (sy, sp, syy, syp) = (sy + y, sp + p, syy + y * y, syp + y * p);
        }
    }
    let slope = (n * syp - sy * sp) / (n * syy - sy * sy);
    slope / (rho0 * g)
}

#[test]
fn a_settled_columns_pressure_rises_with_depth_by_its_weight() {
    // With the coarse correction (on by default) its grid gradient, which is exact for
    // a linear potential, carries most of the weight, whatever the passes after it:
    // the slope is the weight's.
    for (name, edit) in variants() {
        if name == "no coarse correction" {
            continue;
        }
        let ratio = slope_over_weight(edit);
        assert!(
            (ratio - 1.0).abs() < 0.05,
            "{name}: the pressure rises {ratio} times the weight with depth"
        );
    }
    // The Jacobi passes alone, converged (Chebyshev steps, 16 iterations: the column
    // is within a fraction of a percent of the rest density), carry the weight
    // through the symmetric sum, which gives `c` times a linear field's gradient:
    // 0.886 on the square rest lattice at h = 2 s, 0.856 on the hexagonal one. The
    // pressure then rises `1 / c` times the weight, and reads the lambdas' share
    // with nothing else in it: without the Chebyshev shares, or with a sign or a
    // factor of the step wrong, it would be far off.
    let ratio = slope_over_weight(|b| {
        b.coarse_correction(false)
            .acceleration(Acceleration::Chebyshev)
            .iterations(Iterations::Fixed(16))
    });
    assert!(
        (1.0 / 0.91..1.0 / 0.82).contains(&ratio),
        "the passes alone: the pressure rises {ratio} times the weight with depth"
    );
}
