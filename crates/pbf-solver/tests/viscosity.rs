//! Physical viscosity, judged against analytic solutions and physics, with the
//! criteria fixed before the run:
//!
//! - **Shear-wave decay.** A shear flow `v_x = A f(y)` in a channel (no gravity, no
//!   XSPH, no vorticity confinement) decays as `exp(-nu k^2 t)` by the diffusion
//!   equation: with free-slip walls the mode `f = cos(pi y / H)` (`k = pi / H`),
//!   with no-slip walls `f = sin(2 pi y / H)` (`k = 2 pi / H`), in a channel
//!   periodic along x. The decay rate is within 10% of `nu k^2` (the backward-Euler
//!   step's own error at `nu k^2 dt = 0.01` is 0.5%) at H = 32 spacings, and its
//!   error falls from H = 16 to 32 spacings.
//! - **Plane Poiseuille flow** at Reynolds numbers 0.1, 1 and 10 settles within 2%
//!   (L2, relative to the peak) of the parabola at H = 16 and 32 spacings, the
//!   error falling with resolution.
//! - **Momentum and energy** of the solve itself are checked on a lattice by the
//!   unit tests of `src/viscosity/tests.rs`.
//! - **Stability.** A honey-thick fluid (`nu = 1 m^2/s`, `nu dt / h^2` in the
//!   thousands) at 1/30 s settles under gravity without a NaN, never moving faster
//!   than free fall from the domain's height.
//! - **Bits.** Every backend and thread count gives the same bits.

use pbf_solver::flows::{Couette, Poiseuille, ShearWave};
use pbf_solver::{Backend, Domain, Params, Solver, Wall};

/// The relative error of the measured decay rate of a shear wave (see
/// [`ShearWave`]: `nu k^2 dt = 0.01`, Reynolds number 1) over 60 steps at 1/120 s,
/// at `rows` particles across, with `half_waves` half waves across the channel.
fn mode_decay_rate_error(rows: usize, wall: Wall, half_waves: u32) -> f64 {
    let wave = ShearWave::with_mode(rows, wall, half_waves, 1.0 / 120.0);
    let mut s = wave.solver(Backend::Lanes).unwrap();
    let start = wave.amplitude_of(&s);
    let steps = 60;
    for _ in 0..steps {
        let d = s.step().unwrap();
        assert!(d.viscosity_iterations > 0, "the solve runs");
    }
    let end = wave.amplitude_of(&s);
    let t = f64::from(steps as f32 * wave.time_step);
    let (measured, analytic) = (-(end / start).ln() / t, f64::from(wave.decay_rate()));
    eprintln!(
        "{wall:?}, {half_waves} half waves, H = {rows} s: decay rate {measured:.4} /s, analytic {analytic:.4} /s, error {:+.1}%",
        100.0 * (measured / analytic - 1.0)
    );
    measured / analytic - 1.0
}

/// [`mode_decay_rate_error`] of the mode [`ShearWave::with_decay`] takes.
fn decay_rate_error(rows: usize, wall: Wall) -> f64 {
    let wave = ShearWave::with_decay(rows, wall, 1.0 / 120.0);
    mode_decay_rate_error(rows, wall, wave.half_waves)
}

#[test]
fn a_shear_wave_between_free_slip_walls_decays_at_the_analytic_rate() {
    let errors = [16, 32].map(|rows| decay_rate_error(rows, Wall::FreeSlip));
    assert!(errors[1].abs() <= 0.10, "H = 32 s: {:+.3}", errors[1]);
    assert!(errors[1].abs() < errors[0].abs(), "{errors:?}");
}

#[test]
fn a_shear_wave_between_no_slip_walls_decays_at_the_analytic_rate() {
    let errors = [16, 32].map(|rows| decay_rate_error(rows, Wall::NoSlip));
    assert!(errors[1].abs() <= 0.10, "H = 32 s: {:+.3}", errors[1]);
    assert!(errors[1].abs() < errors[0].abs(), "{errors:?}");
}

/// The slowest no-slip mode, `sin(pi y / H)`, has the wavenumber of the free-slip
/// channel's `cos(pi y / H)`: at 16 particles across it decays within 10% of
/// `nu k^2`, and the no-slip walls add at most 2% to the free-slip channel's error, so
/// the error of the shorter `sin(2 pi y / H)` there is its wavenumber's, not the
/// walls'.
#[test]
fn the_slowest_no_slip_shear_wave_decays_as_the_free_slip_one() {
    let no_slip = mode_decay_rate_error(16, Wall::NoSlip, 1);
    let free_slip = mode_decay_rate_error(16, Wall::FreeSlip, 1);
    assert!(no_slip.abs() <= 0.10, "no-slip: {no_slip:+.3}");
    assert!(
        (no_slip - free_slip).abs() <= 0.02,
        "no-slip {no_slip:+.3}, free-slip {free_slip:+.3}"
    );
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
            let wave = ShearWave::with_decay(16, Wall::NoSlip, 1.0 / 120.0);
            let mut s = wave.solver(backend).unwrap();
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

/// No-slip colliders act as no-slip faces do: the no-slip shear wave between two
/// plane colliders (the domain's own walls far away and free-slip) decays as between
/// no-slip faces of the domain, within 2% (the same distances and normals; the
/// planes' contact and density shares are those of the faces).
#[test]
fn no_slip_plane_colliders_act_as_no_slip_faces() {
    use pbf_solver::{Collider, ColliderKind, Shape};
    let wave = ShearWave::with_decay(16, Wall::NoSlip, 1.0 / 120.0);
    let faces = wave.solver(Backend::Lanes).unwrap();
    let height = wave.height();
    let params = faces.params().clone();
    let domain = Domain::new([0.0, -height], [2.0 * height, 2.0 * height])
        .unwrap()
        .with_periodic([true, false])
        .unwrap();
    let mut planes = Solver::new(params, domain).unwrap();
    for (y, normal) in [(0.0, 1.0), (height, -1.0)] {
        let plane = Shape::Plane {
            point: [0.0, y],
            normal: [0.0, normal],
        };
        let collider = Collider::new(plane, ColliderKind::Solid)
            .unwrap()
            .with_wall(Wall::NoSlip);
        planes.add_collider(collider).unwrap();
    }
    let mut points = Vec::new();
    faces.positions_interleaved(&mut points);
    let velocities: Vec<[f32; 2]> = (0..faces.len())
        .map(|i| [faces.velocities()[0][i], faces.velocities()[1][i]])
        .collect();
    planes.add_particles(&points, Some(&velocities)).unwrap();
    let rate = |mut s: Solver<2>| {
        let start = wave.amplitude_of(&s);
        for _ in 0..60 {
            s.step().unwrap();
        }
        -(wave.amplitude_of(&s) / start).ln() / 0.5
    };
    let (with_faces, with_planes) = (rate(faces), rate(planes));
    eprintln!("decay rate: no-slip faces {with_faces:.4} /s, no-slip planes {with_planes:.4} /s");
    assert!(
        (with_planes / with_faces - 1.0).abs() <= 0.02,
        "{with_planes} against {with_faces}"
    );
}

#[test]
fn a_no_slip_collider_needs_a_viscosity() {
    use pbf_solver::{Collider, ColliderKind, Shape};
    let params = Params::<2>::builder(0.05).build().unwrap();
    let mut s = Solver::new(params, Domain::new([0.0; 2], [1.0; 2]).unwrap()).unwrap();
    let ball = Shape::Sphere {
        center: [0.5, 0.5],
        radius: 0.1,
    };
    let collider = Collider::new(ball, ColliderKind::Solid)
        .unwrap()
        .with_wall(Wall::NoSlip);
    let err = s.add_collider(collider).unwrap_err();
    assert!(
        matches!(
            err,
            pbf_solver::CoreError::InvalidCollider {
                field: "wall",
                index: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(s.colliders().is_empty());
}

/// The steady L2 deviation from the parabola, relative to the peak, of plane
/// Poiseuille flow (see [`Poiseuille`]: peak 0.02 m/s, 1/30 s steps) at `rows`
/// particles across, after its settling time from rest.
fn poiseuille_error(rows: usize, reynolds: f32) -> f64 {
    let flow = Poiseuille::new(rows, reynolds, 0.02, 1.0 / 30.0);
    let mut s = flow.solver(Backend::Lanes).unwrap();
    let steps = (flow.settling_time() / f64::from(flow.time_step)).ceil() as usize;
    let mut most = 0;
    for _ in 0..steps {
        most = most.max(s.step().unwrap().viscosity_iterations);
    }
    let error = flow.profile_error(&s);
    eprintln!(
        "Poiseuille Re {reynolds}, H = {rows} s, {steps} steps (CG at most {most}): L2 deviation {:.2}% of the peak",
        100.0 * error
    );
    error
}

/// Plane Poiseuille flow at Reynolds numbers 0.1, 1 and 10 settles to the analytic
/// parabola within 2% (L2, relative to the peak) at 16 and at 32 particles across,
/// closer at 32.
#[test]
fn poiseuille_flow_settles_to_the_parabola_and_converges() {
    for reynolds in [0.1, 1.0, 10.0] {
        let errors = [16, 32].map(|rows| poiseuille_error(rows, reynolds));
        assert!(
            errors.iter().all(|e| *e <= 0.02) && errors[1] < errors[0],
            "Re {reynolds}: {errors:?} at H = 16, 32 s"
        );
    }
}

/// The L2 deviations from the series, relative to the plate's speed, of Couette flow
/// starting up (see [`Couette`]: Reynolds number 1, plate at 0.02 m/s) at `rows`
/// particles across, at the times `0.02, 0.1, 0.5 H^2 / nu`.
fn couette_errors(rows: usize) -> [f64; 3] {
    let flow = Couette::new(rows, 1.0, 0.02);
    let mut s = flow.solver(Backend::Lanes).unwrap();
    let mut errors = [0.0; 3];
    let mut done = 0;
    for (k, fraction) in [0.02, 0.1, 0.5].into_iter().enumerate() {
        let steps = (fraction / 0.002f64).round() as usize;
        while done < steps {
            s.step().unwrap();
            done += 1;
        }
        errors[k] = flow.profile_error(&s);
    }
    eprintln!(
        "Couette, H = {rows} s: L2 deviation {:.2}%, {:.2}%, {:.2}% of U at 0.02, 0.1, 0.5 H^2/nu",
        100.0 * errors[0],
        100.0 * errors[1],
        100.0 * errors[2]
    );
    errors
}

/// Couette flow starting up follows the analytic series within 2% of the plate's
/// speed (L2) at three times at 32 particles across, closer than at 16.
#[test]
fn couette_flow_starts_up_as_the_series_says() {
    let [coarse, fine] = [16, 32].map(couette_errors);
    for k in 0..3 {
        assert!(
            fine[k] <= 0.02 && fine[k] < coarse[k],
            "time {k}: {:.4} at H = 32 s, {:.4} at 16 s",
            fine[k],
            coarse[k]
        );
    }
}

/// A face's velocity is refused, naming `domain.wall_velocity`, for an axis or side
/// out of range, a periodic axis, a free-slip face, a non-finite component and a
/// component along the face's normal; making the face free-slip again stops it.
#[test]
fn bad_wall_velocities_are_errors() {
    use pbf_solver::CoreError;
    let walls = [[Wall::FreeSlip; 2], [Wall::NoSlip, Wall::FreeSlip]];
    let domain = Domain::new([0.0; 2], [1.0; 2]).unwrap().with_walls(walls);
    let periodic = domain.with_periodic([true, false]).unwrap();
    let refused = |result: Result<Domain<2>, CoreError>| match result {
        Err(CoreError::InvalidCollider { field, .. }) => field == "domain.wall_velocity",
        _ => false,
    };
    assert!(refused(domain.with_wall_velocity(2, 0, [0.1, 0.0])));
    assert!(refused(domain.with_wall_velocity(1, 2, [0.1, 0.0])));
    assert!(refused(periodic.with_wall_velocity(0, 0, [0.0, 0.1])));
    assert!(refused(domain.with_wall_velocity(1, 1, [0.1, 0.0])));
    assert!(refused(domain.with_wall_velocity(1, 0, [f32::NAN, 0.0])));
    assert!(refused(domain.with_wall_velocity(1, 0, [0.0, 0.1])));
    let moving = domain.with_wall_velocity(1, 0, [0.1, 0.0]).unwrap();
    assert_eq!(moving.wall_velocity(1, 0), [0.1, 0.0]);
    let still = moving.with_walls([[Wall::FreeSlip; 2]; 2]);
    assert_eq!(still.wall_velocity(1, 0), [0.0; 2]);
}
