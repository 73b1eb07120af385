//! The harnesses of the `solver_step` and `checkpoint_load` fuzz targets
//! (`fuzz/fuzz_targets/`). They live in the crate so that the stable tests replay
//! every committed corpus file through the same code (`tests/fuzz_corpus.rs`). Not
//! part of the public API.
//!
//! Sizes are bounded here, in the harness: at most [`MAX_PARTICLES`] particles, small
//! emitters, a few steps, so that one input cannot run for long or take much memory.
//! What the harness cannot bound before loading, a checkpoint's emitters, the library
//! bounds: a nozzle's layer holds at most
//! [`MAX_LAYER_PARTICLES`](crate::MAX_LAYER_PARTICLES) points (12 MB), checked before
//! it is built, and the harness steps only states with small emitters. What is checked beyond "no panic": a call that
//! fails leaves the solver as it was; a step that succeeds leaves every particle
//! finite and inside the domain with unique ids, and with the bits of a twin solver
//! built from the same input on another backend; a checkpoint that loads saves back
//! to the same bytes, and its first step gives the bits of the state loaded from them
//! on another backend.

use pbf_grid::fuzzing::ByteReader;
/// The corpus replay of the stable tests, here for `pbf-cli`, which has no `pbf-grid`
/// dependency of its own.
pub use pbf_grid::fuzzing::{SKIPPED, corpus_dir, in_repository, replay_corpus};

use crate::{
    Acceleration, Backend, Collider, ColliderKind, CoreError, Domain, Emitter, Iterations, Params,
    Relaxation, Shape, Solver, Wall,
};

#[cfg(feature = "serde")]
mod seeds;
#[cfg(feature = "serde")]
pub use seeds::checkpoint_seeds;

/// The most particles one input makes.
pub const MAX_PARTICLES: usize = 96;

/// The most steps one input runs.
pub const MAX_STEPS: u32 = 4;

/// A value from the next bytes: raw `f32` bits when the selector's low bit is set,
/// otherwise `scale` times a small signed byte.
fn value(r: &mut ByteReader<'_>, scale: f32) -> f32 {
    if r.u8() & 1 == 1 {
        r.f32_bits()
    } else {
        f32::from(r.u8() as i8) * scale
    }
}

fn vector<const D: usize>(r: &mut ByteReader<'_>, scale: f32) -> [f32; D] {
    core::array::from_fn(|_| value(r, scale))
}

/// Runs one `solver_step` input; panics when the solver misbehaves.
pub fn solver_step(data: &[u8]) {
    let mut r = ByteReader::new(data);
    let flags = r.u8();
    if flags & 1 == 0 {
        solver_in::<2>(flags, &mut r);
    } else {
        solver_in::<3>(flags, &mut r);
    }
}

/// What an input picks for its domain with the parameters' mask: periodic axes, and
/// the walls of the faces and the colliders.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Boundaries<const D: usize> {
    /// `Domain::with_periodic`'s axes.
    periodic: [bool; D],
    /// `Domain::with_walls`' faces.
    walls: [[Wall; 2]; D],
    /// Every collider's wall.
    collider_wall: Wall,
}

/// The parameters of an input and the boundaries its mask picks (mask bits 17-19:
/// no coarse correction, a viscosity, no-slip walls by the next byte's bits; bits
/// 20-22: the periodic axes). A no-slip wall without a viscosity is an error of
/// `Solver::new` or `Solver::add_collider`, which the harness expects.
fn params<const D: usize>(r: &mut ByteReader<'_>) -> (Result<Params<D>, CoreError>, Boundaries<D>) {
    let spacing = if r.u8() & 1 == 1 {
        r.f32_bits()
    } else {
        f32::from(r.u8() % 32 + 1) / 128.0
    };
    let mut b = Params::<D>::builder(spacing);
    let mask = r.u32();
    let set = |bit: u32| mask & (1 << bit) != 0;
    if set(0) {
        b = b.kernel_radius_rel(value(r, 0.125));
    }
    if set(1) {
        b = b.rest_density(value(r, 16.0));
    }
    if set(2) {
        b = b.time_step(value(r, 1.0 / 512.0));
    }
    if set(3) {
        b = b.iterations(Iterations::Fixed(r.u32() % 1100));
    }
    if set(4) {
        b = b.iterations(Iterations::Adaptive {
            max_density_error_percent: value(r, 0.05),
            min: u32::from(r.u8()),
            max: u32::from(r.u8()) * 4,
        });
    }
    if set(5) {
        b = b.gravity(vector(r, 0.5));
    }
    if set(6) {
        b = b.cfm_rel(value(r, 0.01));
    }
    if set(7) {
        b = b.s_corr_k(value(r, 0.01));
    }
    if set(8) {
        b = b.s_corr_n(u32::from(r.u8()) % 20);
    }
    if set(9) {
        b = b.s_corr_dq_rel(value(r, 0.01));
    }
    if set(10) {
        b = b.xsph_c(value(r, 0.01));
    }
    if set(11) {
        b = b.vorticity_rel(value(r, 0.01));
    }
    if set(12) {
        b = b.unilateral(false);
    }
    if set(13) {
        b = b.backend(Backend::Scalar);
    }
    if set(14) {
        b = b.relaxation(Relaxation::Fixed(value(r, 1.0 / 64.0)));
    }
    if set(15) {
        b = b.xsph_period((r.u8() % 2 == 1).then(|| value(r, 1.0 / 512.0)));
    }
    if set(16) {
        b = b.acceleration(Acceleration::Chebyshev);
    }
    if set(17) {
        b = b.coarse_correction(false);
    }
    if set(18) {
        b = b.viscosity(value(r, 1.0 / 4096.0));
    }
    let mut boundaries = Boundaries {
        periodic: core::array::from_fn(|a| set(20 + a as u32)),
        walls: [[Wall::FreeSlip; 2]; D],
        collider_wall: Wall::FreeSlip,
    };
    if set(19) {
        // Bit 2a + k: face k of axis a; bit 7: the colliders.
        let faces = r.u8();
        let wall = |bit: usize| {
            if faces & (1 << bit) != 0 {
                Wall::NoSlip
            } else {
                Wall::FreeSlip
            }
        };
        boundaries.walls = core::array::from_fn(|a| [wall(2 * a), wall(2 * a + 1)]);
        boundaries.collider_wall = wall(7);
    }
    (b.build(), boundaries)
}

fn shape<const D: usize>(r: &mut ByteReader<'_>) -> Shape<D> {
    match r.u8() % 5 {
        0 => Shape::Plane {
            point: vector(r, 1.0 / 32.0),
            normal: vector(r, 1.0 / 32.0),
        },
        1 => Shape::Box {
            center: vector(r, 1.0 / 32.0),
            half_extents: vector(r, 1.0 / 32.0),
        },
        2 => Shape::Sphere {
            center: vector(r, 1.0 / 32.0),
            radius: value(r, 1.0 / 32.0),
        },
        3 => Shape::Capsule {
            a: vector(r, 1.0 / 32.0),
            b: vector(r, 1.0 / 32.0),
            radius: value(r, 1.0 / 32.0),
        },
        _ => Shape::Cylinder {
            base: vector(r, 1.0 / 32.0),
            radius: value(r, 1.0 / 32.0),
            height: value(r, 1.0 / 32.0),
        },
    }
}

/// What a solver looks like from outside, to check that failed calls change nothing.
fn fingerprint<const D: usize>(s: &Solver<D>) -> (Vec<u32>, Vec<u64>, usize, u64) {
    let bits = (0..D)
        .flat_map(|a| {
            s.positions()[a]
                .iter()
                .chain(s.velocities()[a])
                .map(|v| v.to_bits())
        })
        .collect();
    (bits, s.ids().to_vec(), s.colliders().len(), s.steps())
}

/// The backend a twin of a solver on `backend` runs: the scalar reference for the
/// lanes, and for the scalar path the lanes that `flags` bit 3 picks.
fn twin_backend(backend: Backend, flags: u8) -> Backend {
    match (backend, flags & 8 != 0) {
        (Backend::Scalar, false) => Backend::Lanes,
        (Backend::Scalar, true) => Backend::Lanes8,
        _ => Backend::Scalar,
    }
}

/// Two solvers of the same input on two backends (see [`twin_backend`]), stepped
/// together: every backend gives the bits of the others, so after every step their
/// positions, velocities and ids must agree bit for bit, and a step that fails must
/// fail on both with the same error.
fn solver_in<const D: usize>(flags: u8, r: &mut ByteReader<'_>) {
    let (Ok(params), boundaries) = params::<D>(r) else {
        return;
    };
    let twin_params = params
        .to_builder()
        .backend(twin_backend(params.backend(), flags))
        .build()
        .expect("parameters that differ in the backend alone build");
    let mut twin_reader = r.clone();
    let Some(mut solver) = set_up(flags, params, boundaries, r) else {
        return;
    };
    let mut twin = set_up(flags, twin_params, boundaries, &mut twin_reader)
        .expect("the twin sets up as the solver");
    let steps = u32::from(flags >> 4) % (MAX_STEPS + 1);
    for _ in 0..steps {
        match (solver.step(), twin.step()) {
            (Ok(stats), Ok(_)) => {
                assert_eq!(stats.particles, solver.len());
                check_particles(&solver);
                assert!(
                    fingerprint(&solver) == fingerprint(&twin),
                    "{:?} and {:?} disagree after step {}",
                    solver.params().backend(),
                    twin.params().backend(),
                    solver.steps()
                );
            }
            (
                Err(e @ (CoreError::Diverged { .. } | CoreError::Collapsed { .. })),
                Err(twin_error),
            ) => {
                assert_eq!(e, twin_error, "the backends fail differently");
                return;
            }
            (a, b) => panic!("step gave {a:?}, its twin {b:?}"),
        }
    }
}

/// A solver with the boundaries, colliders, emitter and particles of the input that
/// follows the parameters, or `None` when the input's domain or solver is invalid (as
/// it must be: every other error panics). Failed calls are checked to change nothing.
fn set_up<const D: usize>(
    flags: u8,
    params: Params<D>,
    boundaries: Boundaries<D>,
    r: &mut ByteReader<'_>,
) -> Option<Solver<D>> {
    let lo: [f32; D] = vector(r, 1.0 / 16.0);
    let size: [f32; D] = vector(r, 1.0 / 16.0);
    let hi: [f32; D] = core::array::from_fn(|a| lo[a] + size[a]);
    let domain = match Domain::new(lo, hi) {
        Ok(d) => d,
        Err(CoreError::InvalidCollider { .. }) => return None,
        Err(e) => panic!("Domain::new gave {e:?}"),
    };
    let domain = match domain.with_response(value(r, 1.0 / 64.0), value(r, 1.0 / 64.0)) {
        Ok(d) => d,
        Err(CoreError::InvalidCollider { .. }) => domain,
        Err(e) => panic!("with_response gave {e:?}"),
    };
    let domain = match domain.with_periodic(boundaries.periodic) {
        Ok(d) => d.with_walls(boundaries.walls),
        Err(CoreError::InvalidCollider { .. }) => return None,
        Err(e) => panic!("with_periodic gave {e:?}"),
    };
    let mut solver = match Solver::new(params.clone(), domain) {
        Ok(s) => s,
        // A periodic axis shorter than 3 h, a no-slip face without a viscosity: refused
        // as documented.
        Err(
            CoreError::InvalidCollider { .. }
            | CoreError::Kernel(_)
            | CoreError::InvalidParameter {
                field: "viscosity", ..
            },
        ) => return None,
        Err(e) => panic!("Solver::new gave {e:?}"),
    };
    for _ in 0..r.u8() % 3 {
        let kind = match r.u8() % 3 {
            0 => ColliderKind::Solid,
            k => ColliderKind::Container {
                wall_thickness: value(r, 1.0 / 64.0),
                open_top: k == 2,
            },
        };
        if let Ok(c) = Collider::new(shape(r), kind) {
            let c = c.with_wall(boundaries.collider_wall);
            let before = fingerprint(&solver);
            if solver.add_collider(c).is_err() {
                assert_eq!(
                    before,
                    fingerprint(&solver),
                    "a failed add_collider changed"
                );
            }
        }
    }
    if flags & 2 != 0 {
        let e = Emitter::new(
            vector(r, 1.0 / 16.0),
            vector(r, 1.0 / 16.0),
            value(r, 1.0 / 16.0),
            value(r, 1.0 / 256.0),
            value(r, 1.0 / 64.0),
            value(r, 1.0 / 16.0),
        );
        // Harness bounds: a small nozzle, at most a few layers per step.
        if let Ok(e) = e {
            let s = params.spacing();
            let per_step = e.speed * params.time_step() / s;
            if e.radius <= 4.0 * s && per_step <= 4.0 {
                let before = fingerprint(&solver);
                if solver.add_emitter(e).is_err() {
                    assert_eq!(before, fingerprint(&solver), "a failed add_emitter changed");
                }
            }
        }
    }
    // Particles: in the domain (small values scaled to it) or raw bits.
    let raw = flags & 4 != 0;
    let per_particle = if raw { 8 * D } else { 2 * D };
    let n = (r.remaining() / per_particle.max(1)).min(MAX_PARTICLES);
    let mut positions = Vec::with_capacity(n);
    let mut velocities = Vec::with_capacity(n);
    for _ in 0..n {
        let p: [f32; D] = core::array::from_fn(|a| {
            if raw {
                r.f32_bits()
            } else {
                lo[a] + f32::from(r.u8()) / 255.0 * (hi[a] - lo[a])
            }
        });
        let v: [f32; D] = core::array::from_fn(|_| {
            if raw {
                r.f32_bits()
            } else {
                f32::from(r.u8() as i8) / 32.0
            }
        });
        positions.push(p);
        velocities.push(v);
    }
    let before = fingerprint(&solver);
    match solver.add_particles(&positions, Some(&velocities)) {
        Ok(ids) => assert_eq!(ids.end - ids.start, n as u64),
        Err(
            CoreError::NonFiniteParticle { .. }
            | CoreError::OutsideDomain { .. }
            | CoreError::TooManyParticles { .. },
        ) => {
            assert_eq!(
                before,
                fingerprint(&solver),
                "a failed add_particles changed"
            );
        }
        Err(e) => panic!("add_particles gave {e:?}"),
    }
    Some(solver)
}

/// Every particle finite and inside the domain, ids unique and below the next id.
fn check_particles<const D: usize>(solver: &Solver<D>) {
    let n = solver.len();
    for a in 0..D {
        assert_eq!(solver.positions()[a].len(), n);
        assert_eq!(solver.velocities()[a].len(), n);
    }
    for i in 0..n {
        let p: [f32; D] = core::array::from_fn(|a| solver.positions()[a][i]);
        assert!(p.iter().all(|c| c.is_finite()), "particle {i} at {p:?}");
        assert!(
            solver.domain().contains(p),
            "particle {i} at {p:?} left {:?}",
            solver.domain()
        );
    }
    let mut ids = solver.ids().to_vec();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "repeated ids");
}

/// Runs one `checkpoint_load` input; panics when loading misbehaves.
///
/// The first byte chooses the dimension and whether the harness re-seals the rest
/// (writes a valid header with the right length and hash over the payload) before
/// loading: without that, the hash rejects nearly every mutation before the decoder
/// and the validation behind it are reached.
#[cfg(feature = "serde")]
pub fn checkpoint_load(data: &[u8]) {
    let (flags, rest) = flags_and_rest(data);
    if flags & 1 == 0 {
        checkpoint_in::<2>(flags, rest);
    } else {
        checkpoint_in::<3>(flags, rest);
    }
}

/// Wraps a payload in a valid header (see [`checkpoint_load`]).
#[cfg(feature = "serde")]
pub fn seal(dimension: usize, payload: &[u8]) -> Vec<u8> {
    let mut out = crate::checkpoint::header(dimension, payload).to_vec();
    out.extend_from_slice(payload);
    out
}

/// Whether a `checkpoint_load` input holds a checkpoint that loads (the harness's
/// first step, without the checks and the step behind it).
#[cfg(feature = "serde")]
pub fn checkpoint_loads(data: &[u8]) -> bool {
    let (flags, rest) = flags_and_rest(data);
    if flags & 1 == 0 {
        loaded::<2>(flags, rest).is_some()
    } else {
        loaded::<3>(flags, rest).is_some()
    }
}

/// A `checkpoint_load` input's first byte (0 when empty) and the bytes after it.
#[cfg(feature = "serde")]
fn flags_and_rest(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&flags, rest)) => (flags, rest),
        None => (0, data),
    }
}

/// The solver an input's bytes load as, re-sealed first when bit 1 of `flags` says so.
#[cfg(feature = "serde")]
fn loaded<const D: usize>(flags: u8, rest: &[u8]) -> Option<Solver<D>> {
    let bytes = if flags & 2 != 0 {
        seal(D, rest)
    } else {
        rest.to_vec()
    };
    Solver::<D>::from_checkpoint(&bytes).ok()
}

#[cfg(feature = "serde")]
fn checkpoint_in<const D: usize>(flags: u8, rest: &[u8]) {
    let Some(mut solver) = loaded::<D>(flags, rest) else {
        return;
    };
    check_particles(&solver);
    let again = solver.checkpoint().expect("a loaded state encodes");
    let mut reloaded = Solver::<D>::from_checkpoint(&again).expect("a saved state loads");
    assert_eq!(
        again,
        reloaded.checkpoint().expect("a loaded state encodes"),
        "save, load, save is not stable"
    );
    // Harness bounds: step only small states with small emitters (a checkpoint may
    // hold an emitter that adds millions of particles a step, which is valid).
    let s = solver.params().spacing();
    let dt = solver.params().time_step();
    let small_emitters = solver
        .emitters()
        .iter()
        .all(|e| e.radius() <= 4.0 * s && e.speed() * dt <= 4.0 * s);
    if solver.len() <= MAX_PARTICLES && small_emitters && flags & 4 != 0 {
        // The state saved and loaded again is the twin, on another backend: the same
        // bits.
        let twin = &mut reloaded;
        twin.set_backend(twin_backend(solver.params().backend(), flags));
        match (solver.step(), twin.step()) {
            (Ok(_), Ok(_)) => {
                check_particles(&solver);
                assert!(
                    fingerprint(&solver) == fingerprint(twin),
                    "{:?} and {:?} disagree after loading and a step",
                    solver.params().backend(),
                    twin.params().backend()
                );
            }
            (Err(e @ CoreError::Diverged { .. }), Err(twin_error)) => {
                assert_eq!(e, twin_error, "the backends fail differently");
            }
            (a, b) => panic!("step after loading gave {a:?}, its twin {b:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_runs_a_small_scene() {
        solver_step(&[]);
        // 2D, 3 steps, default parameters, a domain of 8 x 8 / 16, some particles.
        let mut input = vec![
            0x30, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 0, 0, 0, 0,
        ];
        input.extend((0..64u8).map(|k| k.wrapping_mul(37)));
        solver_step(&input);
        // The scalar path (mask bit 13), its twin on eight lanes (flags bit 3).
        input[0] = 0x38;
        input[4] = 0x20;
        solver_step(&input);
    }

    /// A 2D input whose mask (bits 17-20) turns the coarse correction off, sets a
    /// viscosity and the next byte's no-slip floor, and makes x periodic, in a domain
    /// 0.5 long (four kernel radii); then 16 particles.
    fn periodic_input() -> Vec<u8> {
        let mut input = vec![
            0x30, 0, 7, 0x00, 0x00, 0x1E, 0x00, 0, 16, 0b100, 0, 0, 0, 0, 0, 8, 0, 8, 0, 0, 0, 0, 0,
        ];
        input.extend((0..64u8).map(|k| k.wrapping_mul(37)));
        input
    }

    #[test]
    fn the_harness_makes_periodic_domains_with_viscosity_and_no_slip_walls() {
        let input = periodic_input();
        let mut r = ByteReader::new(&input[1..]);
        let (built, boundaries) = params::<2>(&mut r);
        let built = built.expect("valid parameters");
        assert!(!built.coarse_correction() && built.viscosity() > 0.0);
        let mut s = set_up(input[0], built, boundaries, &mut r).expect("a periodic solver");
        assert_eq!(s.domain().periodic(), [true, false]);
        assert_eq!(s.domain().walls()[1], [Wall::NoSlip, Wall::FreeSlip]);
        assert_eq!(s.len(), 16);
        for _ in 0..MAX_STEPS {
            s.step().expect("the periodic solver steps");
            check_particles(&s);
        }
        // The harness itself, with its twin.
        solver_step(&input);
        // With the coarse correction left on, the correction wraps around the
        // periodic axis.
        let mut coarse = input.clone();
        coarse[5] = 0x1C;
        let mut r = ByteReader::new(&coarse[1..]);
        let (built, boundaries) = params::<2>(&mut r);
        let built = built.expect("valid parameters");
        assert!(built.coarse_correction());
        let mut s = set_up(coarse[0], built, boundaries, &mut r).expect("a periodic solver");
        assert_eq!(s.domain().periodic(), [true, false]);
        for _ in 0..MAX_STEPS {
            s.step()
                .expect("the periodic solver steps with the correction");
            check_particles(&s);
        }
        solver_step(&coarse);
    }

    /// Whether `input` sets up a periodic solver with particles whose first step
    /// succeeds.
    fn periodic_and_steps<const D: usize>(input: &[u8]) -> bool {
        let mut r = ByteReader::new(&input[1..]);
        let (built, boundaries) = params::<D>(&mut r);
        built.is_ok_and(|p| {
            set_up(input[0], p, boundaries, &mut r).is_some_and(|mut s| {
                s.domain().periodic().contains(&true) && !s.is_empty() && s.step().is_ok()
            })
        })
    }

    /// Inputs of random even bytes behind a valid spacing and a mask that asks for
    /// every combination of bits 17-22: the harness runs every one, and some set up
    /// periodic solvers (2D and 3D) that step.
    #[test]
    fn random_inputs_make_periodic_solvers_that_step() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut byte = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 56) as u8
        };
        let mut stepped = [0usize; 2];
        for k in 0..384u32 {
            let dimension = (k % 2) as u8;
            let mut input = vec![0x30 | dimension, 0, 4 + (k % 6) as u8, 0, 0];
            input.push(((k / 6) % 64) as u8 * 2);
            input.push(0);
            // Even bytes: every value takes the small-value path (a raw-bits domain is
            // nearly always invalid).
            input.extend((0..160).map(|_| byte() & !1));
            solver_step(&input);
            let ok = if dimension == 0 {
                periodic_and_steps::<2>(&input)
            } else {
                periodic_and_steps::<3>(&input)
            };
            stepped[dimension as usize] += usize::from(ok);
        }
        assert!(
            stepped.iter().all(|&n| n > 0),
            "periodic solvers that stepped, 2D and 3D: {stepped:?}"
        );
    }

    #[test]
    fn the_twin_runs_another_backend() {
        for flags in [0, 8] {
            for backend in [Backend::Lanes, Backend::Lanes8, Backend::Scalar] {
                assert_ne!(twin_backend(backend, flags), backend);
            }
        }
        assert_eq!(twin_backend(Backend::Scalar, 8), Backend::Lanes8);
    }
}
