//! Every bad input and the error it gets: the rows of docs/ERRORS.md, one test each.
//! Each failing call is also checked to leave the solver as it was (its checkpoint
//! bytes, which hold the whole state, are unchanged).

use pbf_solver::{
    Collider, ColliderKind, CoreError, Domain, Emitter, Iterations, MAX_LAYER_PARTICLES,
    MAX_PARTICLES, Params, Relaxation, Shape, Solver,
};

fn solver2() -> Solver<2> {
    let mut s = Solver::new(
        Params::<2>::builder(0.05).build().unwrap(),
        Domain::new([0.0; 2], [1.0; 2]).unwrap(),
    )
    .unwrap();
    s.add_block([0.0; 2], [0.2, 0.2], [0.0; 2]).unwrap();
    s.step().unwrap();
    s
}

/// Runs `f` on a solver and checks that it failed and left the solver as it was.
fn fails_unchanged<T: std::fmt::Debug>(
    f: impl FnOnce(&mut Solver<2>) -> Result<T, CoreError>,
) -> CoreError {
    let mut s = solver2();
    let before = s.checkpoint().unwrap();
    let err = f(&mut s).expect_err("the call must fail");
    assert_eq!(s.checkpoint().unwrap(), before, "{err} changed the solver");
    err
}

fn parameter_field(r: Result<Params<3>, CoreError>) -> (&'static str, f64) {
    match r {
        Err(CoreError::InvalidParameter { field, value, .. }) => (field, value),
        other => panic!("expected InvalidParameter, got {other:?}"),
    }
}

#[test]
fn non_finite_position_is_rejected() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let err = fails_unchanged(|s| s.add_particles(&[[0.5, 0.5], [0.5, bad]], None));
        assert!(
            matches!(err, CoreError::NonFiniteParticle { index: 1, field: "position", axis: 1, value } if value.to_bits() == bad.to_bits()),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("particle 1: `position` component 1")
        );
    }
}

#[test]
fn non_finite_velocity_is_rejected() {
    let err = fails_unchanged(|s| s.add_particles(&[[0.5, 0.5]], Some(&[[f32::NAN, 0.0]])));
    assert!(
        matches!(
            err,
            CoreError::NonFiniteParticle {
                index: 0,
                field: "velocity",
                axis: 0,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn position_outside_the_domain_is_rejected() {
    let err = fails_unchanged(|s| s.add_particles(&[[0.5, 0.5], [1.5, 0.5]], None));
    assert_eq!(
        err,
        CoreError::OutsideDomain {
            index: 1,
            position: vec![1.5, 0.5],
            lo: vec![0.0, 0.0],
            hi: vec![1.0, 1.0]
        }
    );
}

#[test]
fn velocity_count_must_match_positions() {
    let err = fails_unchanged(|s| s.add_particles(&[[0.5, 0.5]], Some(&[])));
    assert_eq!(
        err,
        CoreError::LengthMismatch {
            field: "velocities",
            expected: 1,
            found: 0
        }
    );
}

#[test]
fn non_positive_or_non_finite_spacing_is_rejected() {
    // h = kernel_radius_rel * spacing: h <= 0 comes from the spacing.
    for bad in [0.0, -0.1, f32::NAN, f32::INFINITY] {
        assert_eq!(
            parameter_field(Params::<3>::builder(bad).build()).0,
            "spacing"
        );
    }
    // A spacing whose h, mass or relaxation leave the range of f32.
    assert_eq!(
        parameter_field(Params::<3>::builder(1e-30).build()).0,
        "spacing"
    );
    assert_eq!(
        parameter_field(Params::<3>::builder(1e30).build()).0,
        "spacing"
    );
}

#[test]
fn kernel_radius_outside_one_to_eight_spacings_is_rejected() {
    for bad in [0.5, 9.0, f32::NAN] {
        let b = Params::<3>::builder(0.1).kernel_radius_rel(bad);
        assert_eq!(parameter_field(b.build()).0, "kernel_radius_rel");
    }
}

#[test]
fn non_positive_or_non_finite_time_step_is_rejected() {
    for bad in [0.0, -1.0 / 60.0, f32::NAN, f32::INFINITY] {
        let (field, value) = parameter_field(Params::<3>::builder(0.1).time_step(bad).build());
        assert_eq!(field, "time_step");
        assert!(value.to_bits() == f64::from(bad).to_bits());
    }
}

#[test]
fn zero_or_too_many_iterations_are_rejected() {
    let b = || Params::<3>::builder(0.1);
    assert_eq!(
        parameter_field(b().iterations(Iterations::Fixed(0)).build()),
        ("iterations", 0.0)
    );
    assert_eq!(
        parameter_field(b().iterations(Iterations::Fixed(1001)).build()),
        ("iterations", 1001.0)
    );
    let adaptive = |p: f32, min, max| {
        b().iterations(Iterations::Adaptive {
            max_density_error_percent: p,
            min,
            max,
        })
        .build()
    };
    assert_eq!(parameter_field(adaptive(1.0, 0, 4)).0, "iterations.min");
    assert_eq!(parameter_field(adaptive(1.0, 5, 4)).0, "iterations.max");
    assert_eq!(
        parameter_field(adaptive(f32::NAN, 1, 4)).0,
        "max_density_error_percent"
    );
}

#[test]
fn negative_or_nan_parameters_are_rejected() {
    let b = || Params::<3>::builder(0.1);
    let cases: Vec<(Result<Params<3>, CoreError>, &str)> = vec![
        (b().rest_density(-1000.0).build(), "rest_density"),
        (b().rest_density(f32::NAN).build(), "rest_density"),
        (b().gravity([0.0, f32::NAN, 0.0]).build(), "gravity"),
        (b().gravity([f32::INFINITY, 0.0, 0.0]).build(), "gravity"),
        (b().cfm_rel(0.0).build(), "cfm_rel"),
        (b().cfm_rel(f32::NAN).build(), "cfm_rel"),
        (b().s_corr_k(-0.1).build(), "s_corr_k"),
        (b().s_corr_n(0).build(), "s_corr_n"),
        (b().s_corr_n(17).build(), "s_corr_n"),
        (b().s_corr_dq_rel(0.0).build(), "s_corr_dq_rel"),
        (b().s_corr_dq_rel(f32::NAN).build(), "s_corr_dq_rel"),
        (b().xsph_c(-0.01).build(), "xsph_c"),
        (b().xsph_c(1.5).build(), "xsph_c"),
        (b().vorticity_rel(-0.1).build(), "vorticity_rel"),
        (b().vorticity_rel(f32::NAN).build(), "vorticity_rel"),
    ];
    for (result, field) in cases {
        assert_eq!(parameter_field(result).0, field);
    }
}

#[test]
fn relaxation_outside_zero_to_one_is_rejected() {
    let b = || Params::<3>::builder(0.1);
    for bad in [
        0.0,
        -0.0,
        -0.5,
        1.0 + f32::EPSILON,
        2.0,
        f32::NAN,
        f32::INFINITY,
    ] {
        let (field, value) = parameter_field(b().relaxation(Relaxation::Fixed(bad)).build());
        assert_eq!(field, "relaxation", "{bad}");
        assert_eq!(value.to_bits(), f64::from(bad).to_bits(), "{bad}");
    }
    let err = b().relaxation(Relaxation::Fixed(1.5)).build().unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter `relaxation` = 1.5 is invalid: must be in (0, 1]"
    );
    for good in [f32::MIN_POSITIVE, 0.5, 1.0] {
        assert!(b().relaxation(Relaxation::Fixed(good)).build().is_ok());
    }
    assert!(b().relaxation(Relaxation::Auto).build().is_ok());
}

#[test]
fn particle_count_beyond_the_index_type_is_rejected() {
    // 10^6 spacings a side: 10^12 particles, refused before anything is allocated.
    let err = fails_unchanged(|s| s.add_block([0.0; 2], [1e4, 1e4], [0.0; 2]));
    assert!(
        matches!(err, CoreError::TooManyParticles { count, max: MAX_PARTICLES } if count > MAX_PARTICLES),
        "{err}"
    );
}

#[test]
fn a_block_whose_count_overflows_is_rejected() {
    // Regression: the product of the per-axis counts overflowed `usize` (a panic in
    // debug builds) before it was compared with the maximum.
    let mut s = Solver::new(
        Params::<3>::builder(1e-3).build().unwrap(),
        Domain::new([0.0; 3], [1.0; 3]).unwrap(),
    )
    .unwrap();
    let err = s.add_block([0.0; 3], [1e30; 3], [0.0; 3]).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::TooManyParticles {
                count: usize::MAX,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_empty_block_is_rejected_and_an_empty_fluid_steps() {
    // A block thinner than one spacing holds no particle: an error naming its size.
    let err = fails_unchanged(|s| s.add_block([0.0; 2], [0.01, 0.5], [0.0; 2]));
    assert!(
        matches!(err, CoreError::InvalidParameter { field: "block", value, .. } if (value - 0.01).abs() < 1e-6),
        "{err}"
    );
    // No fluid at all is not an error: a step of nothing does nothing.
    let mut s = Solver::new(
        Params::<2>::builder(0.05).build().unwrap(),
        Domain::new([0.0; 2], [1.0; 2]).unwrap(),
    )
    .unwrap();
    assert_eq!(s.add_particles(&[], None).unwrap(), 0..0);
    let stats = s.step().unwrap();
    assert_eq!((stats.particles, s.len(), s.steps()), (0, 0, 1));
}

#[test]
fn degenerate_domains_are_rejected() {
    let field = |r: Result<Domain<2>, CoreError>| match r {
        Err(CoreError::InvalidCollider {
            index: usize::MAX,
            field,
            ..
        }) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(Domain::new([0.0; 2], [1.0, 0.0])), "domain.hi");
    assert_eq!(field(Domain::new([0.0; 2], [0.0, 1.0])), "domain.hi");
    assert_eq!(field(Domain::new([f32::NAN, 0.0], [1.0; 2])), "domain.lo");
    assert_eq!(
        field(Domain::new([0.0; 2], [f32::INFINITY, 1.0])),
        "domain.hi"
    );
    let d = Domain::new([0.0; 2], [1.0; 2]).unwrap();
    assert_eq!(field(d.with_response(-1.0, 0.0)), "friction");
    assert_eq!(field(d.with_response(0.0, 1.5)), "restitution");
    // More cells of size h than the neighbour search can index.
    let err = Solver::new(
        Params::<3>::builder(1e-3).build().unwrap(),
        Domain::new([0.0; 3], [1e4; 3]).unwrap(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::InvalidCollider {
                field: "domain.hi",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn kernel_radius_outside_the_kernel_constants_range_is_rejected() {
    // Valid parameters whose h is too small for the kernel constants to fit in f32.
    let err = Solver::new(
        Params::<3>::builder(1e-6).build().unwrap(),
        Domain::new([0.0; 3], [1e-3; 3]).unwrap(),
    )
    .unwrap_err();
    assert!(matches!(err, CoreError::Kernel(_)), "{err}");
    assert!(
        err.to_string().contains("kernel radius h = 0.000002"),
        "{err}"
    );
}

#[test]
fn colliders_with_degenerate_sizes_are_rejected() {
    let field = |shape: Shape<2>, kind: ColliderKind| match Collider::new(shape, kind) {
        Err(CoreError::InvalidCollider { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    let solid = ColliderKind::Solid;
    let c = [0.5; 2];
    assert_eq!(
        field(
            Shape::Sphere {
                center: c,
                radius: 0.0
            },
            solid
        ),
        "radius"
    );
    assert_eq!(
        field(
            Shape::Sphere {
                center: c,
                radius: f32::NAN
            },
            solid
        ),
        "radius"
    );
    assert_eq!(
        field(
            Shape::Sphere {
                center: [f32::NAN, 0.0],
                radius: 1.0
            },
            solid
        ),
        "center"
    );
    assert_eq!(
        field(
            Shape::Box {
                center: c,
                half_extents: [0.1, 0.0]
            },
            solid
        ),
        "half_extents"
    );
    assert_eq!(
        field(
            Shape::Plane {
                point: c,
                normal: [0.0; 2]
            },
            solid
        ),
        "normal"
    );
    assert_eq!(
        field(
            Shape::Capsule {
                a: c,
                b: c,
                radius: -1.0
            },
            solid
        ),
        "radius"
    );
    assert_eq!(
        field(
            Shape::Cylinder {
                base: c,
                radius: 0.1,
                height: 0.0
            },
            solid
        ),
        "height"
    );
    let sphere = Shape::Sphere {
        center: c,
        radius: 0.1,
    };
    let container = |wall_thickness| ColliderKind::Container {
        wall_thickness,
        open_top: false,
    };
    assert_eq!(field(sphere, container(0.0)), "wall_thickness");
    assert_eq!(
        field(
            Shape::Plane {
                point: c,
                normal: [0.0, 1.0]
            },
            container(0.1)
        ),
        "kind"
    );
    let ok = Collider::new(sphere, solid).unwrap();
    assert!(matches!(
        ok.with_response(f32::NAN, 0.0),
        Err(CoreError::InvalidCollider {
            field: "friction",
            ..
        })
    ));
}

#[test]
fn bad_emitters_are_rejected() {
    let field = |r: Result<Emitter<2>, CoreError>| match r {
        Err(CoreError::InvalidEmitter { field, .. }) => field,
        other => panic!("{other:?}"),
    };
    let (o, d) = ([0.5, 0.5], [0.0, -1.0]);
    assert_eq!(
        field(Emitter::new([f32::NAN, 0.5], d, 1.0, 0.1, 0.0, 1.0)),
        "origin"
    );
    assert_eq!(
        field(Emitter::new(o, [0.0; 2], 1.0, 0.1, 0.0, 1.0)),
        "direction"
    );
    assert_eq!(field(Emitter::new(o, d, 0.0, 0.1, 0.0, 1.0)), "speed");
    assert_eq!(field(Emitter::new(o, d, 1.0, -0.1, 0.0, 1.0)), "radius");
    assert_eq!(field(Emitter::new(o, d, 1.0, 0.1, -1.0, 1.0)), "start");
    assert_eq!(field(Emitter::new(o, d, 1.0, 0.1, 1.0, 1.0)), "stop");
    // A nozzle that reaches out of the domain.
    let e = Emitter::new([0.99, 0.5], [0.0, -1.0], 1.0, 0.2, 0.0, 1.0).unwrap();
    let err = fails_unchanged(|s| s.add_emitter(e.clone()));
    assert!(
        matches!(
            err,
            CoreError::InvalidEmitter {
                field: "origin",
                ..
            }
        ),
        "{err}"
    );
    // Regression (fuzz target `checkpoint_load`): a nozzle so wide that its layer
    // alone would hold more points than `MAX_PARTICLES`; it was built (and memory
    // exhausted) before the nozzle was checked. See also
    // `an_emitter_layer_too_large_for_memory_is_rejected`.
    let e = Emitter::new(o, d, 1.0, 1e30, 0.0, 1.0).unwrap();
    let err = fails_unchanged(|s| s.add_emitter(e.clone()));
    assert!(
        matches!(
            err,
            CoreError::InvalidEmitter {
                field: "radius",
                ..
            }
        ),
        "{err}"
    );
    // A jet so fast that one step would emit more layers than f32 can count.
    let e = Emitter::new(o, d, 1e30, 0.01, 0.0, 1.0).unwrap();
    let err = fails_unchanged(|s| s.add_emitter(e.clone()));
    assert!(
        matches!(err, CoreError::InvalidEmitter { field: "speed", .. }),
        "{err}"
    );
}

#[test]
fn an_emitter_layer_too_large_for_memory_is_rejected() {
    // Regression (fuzz target `checkpoint_load`, out of memory): in a domain wide
    // enough to hold it, a nozzle 20,001 spacings across passed every check (its
    // layer of ~5e8 points is below `MAX_PARTICLES` and lies inside the domain), so
    // `add_emitter` asked for a layer of several gigabytes. It is now rejected, from
    // the nozzle's radius alone, before anything is allocated.
    let spacing = 1.0 / 16.0;
    let mut s = Solver::new(
        Params::<3>::builder(spacing).build().unwrap(),
        Domain::new([0.0; 3], [1e4; 3]).unwrap(),
    )
    .unwrap();
    let before = s.checkpoint().unwrap();
    let down = [0.0, -1.0, 0.0];
    let e = Emitter::new([5e3; 3], down, 1.0, 10_000.0 * spacing, 0.0, 1.0).unwrap();
    let err = s.add_emitter(e).expect_err("a layer of ~3e8 points");
    assert!(
        matches!(err, CoreError::InvalidEmitter { field: "radius", value, .. } if value == 625.0),
        "{err}"
    );
    assert_eq!(s.checkpoint().unwrap(), before, "{err} changed the solver");
    // The widest nozzle allowed (a square of 1023 x 1023 lattice points encloses it)
    // is accepted; half a spacing wider is not.
    let steps = ((MAX_LAYER_PARTICLES as f64).sqrt() as usize - 1) / 2;
    assert_eq!(steps, 511);
    let widest = steps as f32 * spacing;
    let e = Emitter::new([5e3; 3], down, 1.0, widest + 0.5 * spacing, 0.0, 1.0).unwrap();
    s.add_emitter(e).unwrap();
    let e = Emitter::new([5e3; 3], down, 1.0, widest + spacing, 0.0, 1.0).unwrap();
    assert!(matches!(
        s.add_emitter(e),
        Err(CoreError::InvalidEmitter {
            field: "radius",
            ..
        })
    ));
    assert_eq!(s.emitters().len(), 1);
    // In 2D the bound counts the points of the segment.
    let mut s = Solver::new(
        Params::<2>::builder(1.0).build().unwrap(),
        Domain::new([0.0; 2], [1e7; 2]).unwrap(),
    )
    .unwrap();
    let half = (MAX_LAYER_PARTICLES / 2) as f32;
    let e = Emitter::new([5e6; 2], [0.0, -1.0], 1.0, half, 0.0, 1.0).unwrap();
    assert!(matches!(
        s.add_emitter(e),
        Err(CoreError::InvalidEmitter {
            field: "radius",
            ..
        })
    ));
    let e = Emitter::new([5e6; 2], [0.0, -1.0], 1.0, half - 1.0, 0.0, 1.0).unwrap();
    s.add_emitter(e).unwrap();
}

#[test]
fn a_failed_call_leaves_the_solver_as_it_was() {
    // The rows above check each call; here a mix on one solver, then a step that
    // matches a solver that never saw the failed calls.
    let mut a = solver2();
    let mut b = solver2();
    assert!(a.add_particles(&[[0.1, 0.9], [2.0, 0.0]], None).is_err());
    assert!(a.add_block([0.5, 0.5], [0.5, 0.9], [0.0; 2]).is_err());
    assert!(
        a.add_emitter(Emitter::new([0.5, 0.5], [0.0, -1.0], 1e30, 0.1, 0.0, 1.0).unwrap())
            .is_err()
    );
    a.step().unwrap();
    b.step().unwrap();
    assert_eq!(a.checkpoint().unwrap(), b.checkpoint().unwrap());
}

/// Particles crowded to 27 times the rest density (a third of the spacing apart) are
/// a collapsed fluid: the step stops with `Collapsed`, naming a particle of the clump,
/// before the neighbour lists allocate for it. At 8 times (half the spacing) the step
/// runs.
#[test]
fn a_collapsed_fluid_stops_the_step_before_its_lists_take_the_memory() {
    let crowded = |fraction: f32| {
        let params = Params::<3>::builder(0.05)
            .gravity([0.0; 3])
            .build()
            .unwrap();
        let mut s = Solver::new(params, Domain::new([0.0; 3], [2.0; 3]).unwrap()).unwrap();
        let d = 0.05 * fraction;
        let points: Vec<[f32; 3]> = (0..24 * 24 * 24)
            .map(|k| {
                let (x, y, z) = (k % 24, (k / 24) % 24, k / 576);
                [0.5 + x as f32 * d, 0.5 + y as f32 * d, 0.5 + z as f32 * d]
            })
            .collect();
        s.add_particles(&points, None).unwrap();
        s
    };
    let mut s = crowded(1.0 / 3.0);
    match s.step() {
        Err(CoreError::Collapsed {
            step,
            id,
            candidates,
            limit,
        }) => {
            assert_eq!(step, 1);
            assert!(id < 24 * 24 * 24);
            assert!(candidates > limit, "{candidates} <= {limit}");
            // 16 x 27 cells of (2.2 spacings)^3.
            assert_eq!(limit, (16.0f64 * (3.0f64 * 2.2).powi(3)).ceil() as u64);
        }
        other => panic!("expected Collapsed, got {other:?}"),
    }
    let message = s.step().unwrap_err().to_string();
    assert!(message.contains("collapsed") && message.contains("reduce the time step"));
    let mut s = crowded(0.5);
    s.step()
        .expect("eight times the rest density is not a collapse");
}
