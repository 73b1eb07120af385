//! Physical viscosity, judged against analytic solutions and physics, with the
//! criteria fixed before the run:
//!
//! - **Shear-wave decay.** A shear flow `v_x = A f(y)` in a channel (no gravity, no
//!   XSPH, no vorticity confinement) decays as `exp(-nu k^2 t)` by the diffusion
//!   equation: with free-slip walls the mode `f = cos(pi y / H)` (`k = pi / H`),
//!   with no-slip walls `f = sin(2 pi y / H)` (`k = 2 pi / H`), both without net
//!   flux, so the ends of a long channel disturb only their neighbourhood. Measured
//!   in the middle fifth of a channel eight times as long as it is high, the decay
//!   rate is within 10% of `nu k^2` (the backward-Euler step's own error at
//!   `nu k^2 dt = 0.01` is 0.5%).
//! - **Momentum and energy** of the solve itself are checked on a lattice by the
//!   unit tests of `src/viscosity/tests.rs`.
//! - **Stability.** A honey-thick fluid (`nu = 1 m^2/s`, `nu dt / h^2` in the
//!   thousands) at 1/30 s settles under gravity without a NaN, never moving faster
//!   than free fall from the domain's height.
//! - **Bits.** Every backend and thread count gives the same bits.

use pbf_solver::{Backend, Domain, Params, Solver, Wall};

const SPACING: f32 = 0.01;

/// A channel `8 H` long and `H = rows s` high, filled at the rest spacing, with the
/// shear flow `v_x = amplitude * mode(y)`.
fn channel(
    rows: usize,
    wall: Wall,
    nu: f32,
    flow: (fn(f32, f32) -> f32, f32),
    backend: Backend,
) -> Solver<2> {
    let (mode, amplitude) = flow;
    let height = rows as f32 * SPACING;
    let length = 8.0 * height;
    let params = Params::<2>::builder(SPACING)
        .gravity([0.0, 0.0])
        .xsph_c(0.0)
        .vorticity_rel(0.0)
        .viscosity(nu)
        .backend(backend)
        .build()
        .unwrap();
    let walls = [[Wall::FreeSlip; 2], [wall; 2]];
    let domain = Domain::new([0.0; 2], [length, height])
        .unwrap()
        .with_walls(walls);
    let mut s = Solver::new(params, domain).unwrap();
    let mut points = Vec::new();
    let mut velocities = Vec::new();
    for i in 0..8 * rows {
        for j in 0..rows {
            let p = [(i as f32 + 0.5) * SPACING, (j as f32 + 0.5) * SPACING];
            points.push(p);
            velocities.push([amplitude * mode(p[1], height), 0.0]);
        }
    }
    s.add_particles(&points, Some(&velocities)).unwrap();
    s
}

/// The amplitude of `mode` in the horizontal velocities of the middle fifth of a
/// channel of height `height`.
fn amplitude(s: &Solver<2>, height: f32, mode: fn(f32, f32) -> f32) -> f64 {
    let length = 8.0 * height;
    let (p, v) = (s.positions(), s.velocities());
    let (mut along, mut norm) = (0.0f64, 0.0f64);
    for i in 0..s.len() {
        if (p[0][i] - 0.5 * length).abs() > 0.1 * length {
            continue;
        }
        let f = f64::from(mode(p[1][i], height));
        along += f64::from(v[0][i]) * f;
        norm += f * f;
    }
    along / norm
}

fn cosine(y: f32, height: f32) -> f32 {
    (core::f32::consts::PI * y / height).cos()
}

fn double_sine(y: f32, height: f32) -> f32 {
    (2.0 * core::f32::consts::PI * y / height).sin()
}

/// The relative error of the measured decay rate of a channel's shear mode
/// (wavenumber `k_height / H`) against `nu k^2`, at `rows` particles across.
fn decay_rate_error(rows: usize, wall: Wall, mode: fn(f32, f32) -> f32, k_height: f32) -> f64 {
    let height = rows as f32 * SPACING;
    let k = k_height / height;
    let dt = 1.0 / 120.0;
    // nu k^2 dt = 0.01: the amplitude falls to about a half in 60 steps. The flow's
    // Reynolds number A / (nu k) is 1.
    let nu = 0.01 / (k * k * dt);
    let mut s = channel(rows, wall, nu, (mode, nu * k), Backend::Lanes);
    let start = amplitude(&s, height, mode);
    let steps = 60;
    for _ in 0..steps {
        let d = s.step().unwrap();
        assert!(d.viscosity_iterations > 0, "the solve runs");
    }
    let end = amplitude(&s, height, mode);
    let t = f64::from(steps as f32 * dt);
    let (measured, analytic) = (-(end / start).ln() / t, f64::from(nu * k * k));
    eprintln!(
        "{wall:?}, H = {rows} s: decay rate {measured:.4} /s, analytic {analytic:.4} /s, error {:+.1}%",
        100.0 * (measured / analytic - 1.0)
    );
    measured / analytic - 1.0
}

#[test]
fn a_shear_wave_between_free_slip_walls_decays_at_the_analytic_rate() {
    let pi = core::f32::consts::PI;
    let errors = [16, 32].map(|rows| decay_rate_error(rows, Wall::FreeSlip, cosine, pi));
    assert!(errors[1].abs() <= 0.10, "H = 32 s: {:+.3}", errors[1]);
}

#[test]
fn a_shear_wave_between_no_slip_walls_decays_at_the_analytic_rate() {
    let two_pi = 2.0 * core::f32::consts::PI;
    let errors = [16, 32].map(|rows| decay_rate_error(rows, Wall::NoSlip, double_sine, two_pi));
    assert!(errors[1].abs() <= 0.10, "H = 32 s: {:+.3}", errors[1]);
}

#[test]
fn a_honey_thick_fluid_settles_at_a_large_time_step() {
    let params = Params::<2>::builder(0.02)
        .time_step(1.0 / 30.0)
        .viscosity(1.0)
        .build()
        .unwrap();
    let height = 1.0;
    let domain = Domain::new([0.0; 2], [2.0, height])
        .unwrap()
        .with_wall(Wall::NoSlip);
    let mut s = Solver::new(params, domain).unwrap();
    s.add_block([0.0; 2], [0.4, 0.6], [0.0; 2]).unwrap();
    let free_fall = (2.0 * 9.81 * height).sqrt();
    for step in 0..60 {
        let d = s.step().unwrap();
        assert!(
            d.max_speed.is_finite() && d.max_speed <= free_fall,
            "step {step}: {}",
            d.max_speed
        );
        assert!(d.viscosity_iterations <= 100);
    }
}

#[test]
fn viscosity_gives_the_same_bits_on_every_backend_and_thread_count() {
    let run = |backend: Backend, threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut s = channel(16, Wall::NoSlip, 1e-3, (double_sine, 0.03), backend);
            for _ in 0..10 {
                s.step().unwrap();
            }
            let bits = |v: [&[f32]; 2]| -> Vec<u32> {
                v.iter()
                    .flat_map(|a| a.iter().map(|x| x.to_bits()))
                    .collect()
            };
            (bits(s.positions()), bits(s.velocities()))
        })
    };
    let reference = run(Backend::Scalar, 1);
    for backend in [Backend::Lanes, Backend::Lanes8, Backend::Scalar] {
        for threads in [1, 2] {
            assert!(
                run(backend, threads) == reference,
                "{backend:?} on {threads} thread(s)"
            );
        }
    }
}

#[test]
fn a_no_slip_wall_needs_a_viscosity() {
    let params = Params::<2>::builder(0.05).build().unwrap();
    let domain = Domain::new([0.0; 2], [1.0; 2])
        .unwrap()
        .with_wall(Wall::NoSlip);
    let err = Solver::new(params, domain).unwrap_err();
    assert!(
        matches!(
            err,
            pbf_solver::CoreError::InvalidParameter {
                field: "viscosity",
                ..
            }
        ),
        "{err}"
    );
}
