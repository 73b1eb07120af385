//! The state after a fixed number of steps, hashed and compared with a stored value:
//! a change that moves code (between files or crates) keeps these bits, and so does
//! every backend and thread count. A change that means to alter the step's arithmetic
//! updates the stored hashes in the same commit and says why.

use pbf_solver::{Backend, Collider, ColliderKind, Domain, Params, Shape, Solver};

/// FNV-1a over the bits of ids, positions, velocities and densities, in order.
fn hash<const D: usize>(s: &Solver<D>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |word: u64| {
        for byte in word.to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    s.ids().iter().for_each(|&id| eat(id));
    for a in 0..D {
        s.positions()[a]
            .iter()
            .for_each(|x| eat(u64::from(x.to_bits())));
        s.velocities()[a]
            .iter()
            .for_each(|x| eat(u64::from(x.to_bits())));
    }
    s.densities()
        .iter()
        .for_each(|x| eat(u64::from(x.to_bits())));
    h
}

/// A 3D dam break of 1,000 particles against a sphere, XSPH and vorticity on (the
/// defaults), 4 iterations.
fn dam_break_3d(backend: Backend) -> Solver<3> {
    let spacing = 0.05;
    let a = 10.0 * spacing;
    let params = Params::<3>::builder(spacing)
        .backend(backend)
        .build()
        .unwrap();
    let domain = Domain::new([0.0; 3], [3.0 * a, 1.5 * a, a]).unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    s.add_block([0.0; 3], [a, a, a], [0.0; 3]).unwrap();
    let sphere = Shape::Sphere {
        center: [1.8 * a, 0.0, 0.5 * a],
        radius: 0.3 * a,
    };
    s.add_collider(Collider::new(sphere, ColliderKind::Solid).unwrap())
        .unwrap();
    s
}

/// A 2D dam break of 800 particles, the defaults.
fn dam_break_2d(backend: Backend) -> Solver<2> {
    let spacing = 0.05;
    let a = 20.0 * spacing;
    let params = Params::<2>::builder(spacing)
        .backend(backend)
        .build()
        .unwrap();
    let domain = Domain::new([0.0; 2], [4.0 * a, 2.0 * a]).unwrap();
    let mut s = Solver::new(params, domain).unwrap();
    s.add_block([0.0; 2], [a, 2.0 * a], [0.0; 2]).unwrap();
    s
}

const STEPS: usize = 150;
const HASH_3D: u64 = 0x04d1_105b_50b2_71ad;
const HASH_2D: u64 = 0x00e6_af3e_a526_dc41;

fn hashes(backend: Backend, threads: usize) -> (u64, u64) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut three = dam_break_3d(backend);
        let mut two = dam_break_2d(backend);
        for _ in 0..STEPS {
            three.step().unwrap();
            two.step().unwrap();
        }
        (hash(&three), hash(&two))
    })
}

#[test]
fn the_state_after_a_dam_break_keeps_its_stored_hash_on_every_backend() {
    for backend in [Backend::Lanes, Backend::Lanes8, Backend::Scalar] {
        for threads in [1, 2] {
            let (h3, h2) = hashes(backend, threads);
            eprintln!(
                "{backend:?} ({}), {threads} thread(s): 3D {h3:#018x}, 2D {h2:#018x}",
                backend.instructions()
            );
            assert_eq!(h3, HASH_3D, "3D on {backend:?}, {threads} thread(s)");
            assert_eq!(h2, HASH_2D, "2D on {backend:?}, {threads} thread(s)");
        }
    }
}
