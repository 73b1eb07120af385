//! Checkpoints: a restored run continues bit for bit; bad bytes are typed errors.

use pbf_solver::{
    CheckpointError, Collider, ColliderKind, CoreError, Domain, Emitter, Params, Relaxation, Shape,
    Solver,
};

fn scene_2d() -> Solver<2> {
    let params = Params::<2>::builder(0.02)
        .xsph_c(0.02)
        .vorticity_rel(0.2)
        .build()
        .unwrap();
    let domain = Domain::new([0.0; 2], [1.0, 0.8])
        .unwrap()
        .with_response(0.1, 0.1)
        .unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    s.add_collider(
        Collider::new(
            Shape::Sphere {
                center: [0.6, 0.15],
                radius: 0.08,
            },
            ColliderKind::Solid,
        )
        .unwrap()
        .with_response(0.2, 0.0)
        .unwrap(),
    )
    .unwrap();
    s.add_emitter(Emitter::new([0.8, 0.6], [-0.3, -1.0], 1.5, 0.04, 0.05, 0.4).unwrap())
        .unwrap();
    s.add_block([0.0, 0.0], [0.3, 0.5], [0.5, 0.0]).unwrap();
    s
}

fn scene_3d() -> Solver<3> {
    let params = Params::<3>::builder(0.05)
        .xsph_c(0.02)
        .vorticity_rel(0.2)
        .build()
        .unwrap();
    let mut s = Solver::new(params, Domain::new([0.0; 3], [1.0, 1.0, 0.5]).unwrap()).unwrap();
    s.add_collider(
        Collider::new(
            Shape::Box {
                center: [0.7, 0.1, 0.25],
                half_extents: [0.05, 0.1, 0.1],
            },
            ColliderKind::Solid,
        )
        .unwrap(),
    )
    .unwrap();
    s.add_block([0.0; 3], [0.3, 0.5, 0.5], [0.0; 3]).unwrap();
    s
}

/// Every observable array, as bits.
fn state<const D: usize>(s: &Solver<D>) -> (Vec<u32>, Vec<u64>, Vec<u32>, u64, u64) {
    let mut bits = Vec::new();
    for a in 0..D {
        bits.extend(s.positions()[a].iter().map(|v| v.to_bits()));
        bits.extend(s.velocities()[a].iter().map(|v| v.to_bits()));
    }
    let density = s.densities().iter().map(|v| v.to_bits()).collect();
    (
        bits,
        s.ids().to_vec(),
        density,
        s.steps(),
        s.time().to_bits(),
    )
}

/// The solver `a`'s checkpoint gives back: the same state, saved again as the same
/// bytes.
fn restored<const D: usize>(a: &Solver<D>) -> Solver<D> {
    let bytes = a.checkpoint().unwrap();
    let b = Solver::<D>::from_checkpoint(&bytes).unwrap();
    assert_eq!(state(a), state(&b), "the restored state differs");
    assert_eq!(b.checkpoint().unwrap(), bytes, "save after load differs");
    b
}

fn continues_bit_identically<const D: usize>(mut a: Solver<D>, before: usize, after: usize) {
    for _ in 0..before {
        a.step().unwrap();
    }
    let mut b = restored(&a);
    for k in 0..after {
        let sa = a.step().unwrap();
        let sb = b.step().unwrap();
        assert_eq!(sa.particles, sb.particles, "step {k}");
        assert_eq!(state(&a), state(&b), "diverged {k} steps after the restore");
    }
}

#[test]
fn restored_2d_run_continues_bit_identically() {
    // The emitter starts at 0.05 s (step 6) and is running at the checkpoint.
    continues_bit_identically(scene_2d(), 30, 40);
}

#[test]
fn restored_3d_run_continues_bit_identically() {
    continues_bit_identically(scene_3d(), 20, 30);
}

/// A fluid at rest keeps its lists from step to step until its drift adds up to half
/// the skin; a checkpoint saves where the lists were built, and the restored run keeps
/// or replaces them where the saved one does. Restored without them, it would search
/// at once, reorder the particles and add up the same pairs in another order.
#[test]
fn a_run_that_keeps_its_lists_continues_bit_identically() {
    let mut a = pbf_solver::scenes::block_at_rest::<2>(900).unwrap();
    let mut steps = 0;
    while a.step().unwrap().searches > 0 {
        steps += 1;
        assert!(steps < 400, "the block should come to rest");
    }
    let mut b = restored(&a);
    let mut kept = 0;
    for k in 0..40 {
        let (sa, sb) = (a.step().unwrap(), b.step().unwrap());
        assert_eq!(sa.searches, sb.searches, "step {k}");
        kept += usize::from(sa.searches == 0);
        assert_eq!(state(&a), state(&b), "diverged {k} steps after the restore");
    }
    assert!(kept > 0, "no step kept its lists after the restore");
}

/// The lists' skin follows the flow (`StepDiagnostics::list_skin`): a checkpoint saves
/// the skin of the last search and the one the next search takes, so a run saved
/// while its lists are narrow continues with the same skins and bits.
#[test]
fn a_run_with_narrow_lists_continues_bit_identically() {
    let mut a = pbf_solver::scenes::dam_break_3d(4000).unwrap();
    let mut steps = 0;
    while a.step().unwrap().list_skin == 0.1 {
        steps += 1;
        assert!(steps < 200, "the dam break should narrow its lists");
    }
    let mut b = restored(&a);
    let mut skins = Vec::new();
    for k in 0..30 {
        let (sa, sb) = (a.step().unwrap(), b.step().unwrap());
        assert_eq!(sa.list_skin.to_bits(), sb.list_skin.to_bits(), "step {k}");
        assert_eq!(sa.list_pairs, sb.list_pairs, "step {k}");
        assert_eq!(state(&a), state(&b), "diverged {k} steps after the restore");
        skins.push(sa.list_skin);
    }
    assert!(skins.iter().any(|&s| s < 0.1), "{skins:?}");
}

/// The lists' two skins and the steps run when they were built (one byte below 128)
/// come last but for the viscosity (four bytes), the walls (one byte each for the
/// domain's and the colliders', free-slip), the periodic axes (one byte, none) and
/// the faces' velocities (one byte, none):
/// a value that is not one of the skins the solver takes, or lists
/// built after more steps than have run, are errors naming the field.
#[test]
fn bad_list_skins_in_a_checkpoint_are_errors() {
    let mut a = scene_2d();
    a.step().unwrap();
    let bytes = a.checkpoint().unwrap();
    let payload = &bytes[32..];
    // The bytes of the viscosity, the walls, the periodic axes and the faces'
    // velocities.
    const TAIL: usize = 8;
    let step_at = payload.len() - 1 - TAIL;
    assert_eq!(payload[step_at], 0, "the first step's lists");
    let at = step_at - 8;
    let skin =
        |k: usize| f32::from_le_bytes(payload[at + 4 * k..at + 4 * k + 4].try_into().unwrap());
    assert_eq!(skin(0), a.last_diagnostics().list_skin);
    assert!([0.04, 0.05, 0.06, 0.08, 0.1].contains(&skin(1)));
    for (k, field) in [(0, "list_skins.0"), (1, "list_skins.1")] {
        for value in [0.3, 0.0, -0.1, 0.09, f32::NAN, f32::INFINITY] {
            let mut bad = payload.to_vec();
            bad[at + 4 * k..at + 4 * k + 4].copy_from_slice(&value.to_le_bytes());
            let err =
                Solver::<2>::from_checkpoint(&pbf_solver::fuzzing::seal(2, &bad)).unwrap_err();
            assert!(
                matches!(&err, CoreError::Checkpoint(e) if matches!(**e, CheckpointError::Inconsistent { field: f, .. } if f == field)),
                "{value}: {err}"
            );
            assert!(err.to_string().contains(field), "{err}");
        }
    }
    let mut early = payload.to_vec();
    early[step_at] = 1;
    assert!(Solver::<2>::from_checkpoint(&pbf_solver::fuzzing::seal(2, &early)).is_ok());
    early[step_at] = 2;
    let err = Solver::<2>::from_checkpoint(&pbf_solver::fuzzing::seal(2, &early)).unwrap_err();
    assert!(
        matches!(&err, CoreError::Checkpoint(e) if matches!(**e, CheckpointError::Inconsistent { field: "lists_step", .. })),
        "{err}"
    );
}

/// The positions the lists were built from end the payload (postcard: `Some`, the
/// axes, each a length and its `f32`s): a NaN among them, or positions the particles
/// are not in the grid's order of, are errors naming them.
#[test]
fn bad_lists_positions_in_a_checkpoint_are_errors() {
    let mut a = pbf_solver::scenes::block_at_rest::<2>(100).unwrap();
    while a.step().unwrap().searches > 0 {}
    let bytes = a.checkpoint().unwrap();
    assert!(Solver::<2>::from_checkpoint(&bytes).is_ok());
    let (payload, n) = (&bytes[32..], a.len());
    assert!(n < 128, "one byte of length an axis");
    // The lists' two skins and their step (one byte) follow the positions, then the
    // viscosity (four bytes), the walls (one byte each for the domain and the
    // colliders), the periodic axes (one byte) and the faces' velocities (one byte).
    let last = payload.len() - 9 - 8 - 4;
    // The last particle's y, then its x.
    let (y, x) = (last, last - 4 * n - 1 - 4);
    let last_y = f32::from_le_bytes(payload[y..y + 4].try_into().unwrap());
    assert!((last_y - a.positions()[1][n - 1]).abs() < 0.2 * a.kernel().h());
    let mut bad = payload.to_vec();
    bad[x..x + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let err = Solver::<2>::from_checkpoint(&pbf_solver::fuzzing::seal(2, &bad)).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::NonFiniteParticle {
                field: "lists_built",
                axis: 0,
                ..
            }
        ),
        "{err}"
    );
    // The last particle in the grid's order, put at the bottom.
    let mut bad = payload.to_vec();
    bad[y..y + 4].copy_from_slice(&0.001f32.to_le_bytes());
    let err = Solver::<2>::from_checkpoint(&pbf_solver::fuzzing::seal(2, &bad)).unwrap_err();
    assert!(
        matches!(&err, CoreError::Checkpoint(e) if matches!(**e, CheckpointError::Inconsistent { field: "lists_built", .. })),
        "{err}"
    );
}

#[test]
fn a_fixed_relaxation_is_saved_and_the_restored_run_continues_bit_identically() {
    let params = Params::<2>::builder(0.02)
        .relaxation(Relaxation::Fixed(0.8))
        .build()
        .unwrap();
    let mut a = Solver::new(params, Domain::new([0.0; 2], [1.0, 0.8]).unwrap()).unwrap();
    a.add_block([0.0, 0.0], [0.3, 0.5], [0.0; 2]).unwrap();
    for _ in 0..5 {
        a.step().unwrap();
    }
    let b = Solver::<2>::from_checkpoint(&a.checkpoint().unwrap()).unwrap();
    assert_eq!(b.params().relaxation(), Relaxation::Fixed(0.8));
    assert_eq!(b.relaxation(), 0.8);
    continues_bit_identically(a, 0, 20);
    // `Auto` stays `Auto` (resolved again on loading, to the same value).
    let auto = Solver::<2>::from_checkpoint(&scene_2d().checkpoint().unwrap()).unwrap();
    assert_eq!(auto.params().relaxation(), Relaxation::Auto);
    assert_eq!(
        auto.relaxation().to_bits(),
        scene_2d().relaxation().to_bits()
    );
}

#[test]
fn restored_run_is_bit_identical_on_another_thread_count() {
    let mut a = scene_2d();
    for _ in 0..10 {
        a.step().unwrap();
    }
    let bytes = a.checkpoint().unwrap();
    let mut b = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| {
            let mut b = Solver::<2>::from_checkpoint(&bytes).unwrap();
            for _ in 0..10 {
                b.step().unwrap();
            }
            b
        });
    for _ in 0..10 {
        a.step().unwrap();
    }
    assert_eq!(state(&a), state(&b));
    b.step().unwrap();
}

fn checkpoint_error(r: Result<Solver<2>, CoreError>) -> CheckpointError {
    match r {
        Err(CoreError::Checkpoint(e)) => *e,
        other => panic!("expected a checkpoint error, got {other:?}"),
    }
}

#[test]
fn truncated_checkpoint_is_an_error_at_every_length() {
    let mut a = scene_2d();
    a.step().unwrap();
    let bytes = a.checkpoint().unwrap();
    for len in 0..bytes.len() {
        let e = checkpoint_error(Solver::<2>::from_checkpoint(&bytes[..len]));
        assert!(
            matches!(
                e,
                CheckpointError::Truncated { .. } | CheckpointError::NotACheckpoint { .. }
            ),
            "{len}: {e}"
        );
    }
}

#[test]
fn corrupted_checkpoint_is_an_error() {
    let bytes = scene_2d().checkpoint().unwrap();
    for k in (32..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[k] ^= 0x10;
        assert!(matches!(
            checkpoint_error(Solver::<2>::from_checkpoint(&bad)),
            CheckpointError::Corrupted { .. }
        ));
    }
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(
        checkpoint_error(Solver::<2>::from_checkpoint(&long)),
        CheckpointError::TrailingBytes { extra: 1 }
    );
}

#[test]
fn wrong_version_or_dimension_is_an_error() {
    let bytes = scene_2d().checkpoint().unwrap();
    assert_eq!(bytes[8..12], pbf_solver::CHECKPOINT_VERSION.to_le_bytes());
    // Version 1 (before the relaxation was saved) and a future version.
    for found in [1, pbf_solver::CHECKPOINT_VERSION + 1] {
        let mut other = bytes.clone();
        other[8..12].copy_from_slice(&found.to_le_bytes());
        assert_eq!(
            checkpoint_error(Solver::<2>::from_checkpoint(&other)),
            CheckpointError::UnsupportedVersion {
                found,
                supported: pbf_solver::CHECKPOINT_VERSION
            }
        );
    }
    let err = Solver::<3>::from_checkpoint(&bytes).unwrap_err();
    assert!(
        matches!(&err, CoreError::Checkpoint(e) if **e == CheckpointError::WrongDimension { found: 2, expected: 3 }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "checkpoint: checkpoint holds a 2D solver, expected 3D"
    );
}

#[test]
fn bad_values_inside_a_checkpoint_get_the_api_errors() {
    // A checkpoint whose payload decodes but carries a bad value: re-seal a payload in
    // which one f32 of the state was replaced (the harness's `seal` writes the hash).
    let bytes = scene_3d().checkpoint().unwrap();
    let payload = &bytes[32..];
    // The payload starts with the spacing (postcard: f32 little-endian).
    let mut bad = payload.to_vec();
    bad[..4].copy_from_slice(&(-1.0f32).to_le_bytes());
    let err = Solver::<3>::from_checkpoint(&pbf_solver::fuzzing::seal(3, &bad)).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::InvalidParameter {
                field: "spacing",
                ..
            }
        ),
        "{err}"
    );
    // A relaxation out of range: postcard writes `Some(0.75)` as 1 then the f32.
    let params = Params::<3>::builder(0.05)
        .relaxation(Relaxation::Fixed(0.75))
        .build()
        .unwrap();
    let fixed = Solver::new(params, Domain::new([0.0; 3], [1.0; 3]).unwrap())
        .unwrap()
        .checkpoint()
        .unwrap();
    let mut needle = vec![1u8];
    needle.extend_from_slice(&0.75f32.to_le_bytes());
    let mut bad = fixed[32..].to_vec();
    let at = bad
        .windows(5)
        .position(|w| w == needle)
        .expect("the relaxation in the payload");
    bad[at + 1..at + 5].copy_from_slice(&1.5f32.to_le_bytes());
    let err = Solver::<3>::from_checkpoint(&pbf_solver::fuzzing::seal(3, &bad)).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::InvalidParameter {
                field: "relaxation",
                ..
            }
        ),
        "{err}"
    );
    // A payload cut short decodes to an error, not a panic.
    let err =
        Solver::<3>::from_checkpoint(&pbf_solver::fuzzing::seal(3, &payload[..40])).unwrap_err();
    assert!(
        matches!(&err, CoreError::Checkpoint(e) if matches!(**e, CheckpointError::Decode { .. })),
        "{err}"
    );
}
