//! A pool at rest in a container or in the domain's box: where the faces of its
//! cavity meet (a box's floor and sides, a glass's floor and wall, the domain's floor
//! and sides) the fluid reads the density it has along the floor. The walls' density
//! share there counts the fluid behind each face and the quadrant behind both once.
//! With the nearest face's share alone, the particles along a container's edge miss
//! the other face's fluid, read light, and the constraint lets them crowd into the
//! edge. Along the domain's edges the pool is a check of the fluid at rest only: it
//! reads the floor's density there with the quadrant counted twice as well, and the
//! share itself is pinned by the walls' unit tests.

use pbf_solver::{
    Collider, ColliderKind, Domain, Iterations, Params, Shape, Solver, StepDiagnostics,
};

const S: f32 = 0.05;

/// What a settled pool measured over 0.5 s after 2 s of settling.
#[derive(Debug)]
struct Settled {
    /// The largest maximum density error of a step.
    max: f32,
    /// The largest average density error of a step.
    average: f32,
    /// The mean `rho / rho0 - 1` of the particles within `h` of the floor and of a side
    /// wall: along the edges.
    edges: f64,
    /// The same of the particles within `h` of the floor and farther from every side.
    floor: f64,
}

/// Steps `s` for 2 s, then measures it for 0.5 s; `side(p)` is the distance from `p`
/// to the nearest side wall, `floor` the floor's height.
fn settle<const D: usize>(
    s: &mut Solver<D>,
    floor: f32,
    side: impl Fn(&[f32; D]) -> f32,
) -> Settled {
    for _ in 0..240 {
        s.step().unwrap();
    }
    let h = s.kernel().h();
    let rho0 = s.params().rest_density();
    let (mut max, mut average) = (0.0f32, 0.0f32);
    let (mut edges, mut floors) = ((0.0f64, 0u32), (0.0f64, 0u32));
    for _ in 0..60 {
        let d: StepDiagnostics = s.step().unwrap();
        max = max.max(d.max_density_error);
        average = average.max(d.average_density_error);
        let (x, rho) = (s.positions(), s.densities());
        for (i, r) in rho.iter().enumerate() {
            let p: [f32; D] = core::array::from_fn(|a| x[a][i]);
            if p[1] - floor >= h {
                continue;
            }
            let sum = if side(&p) < h {
                &mut edges
            } else {
                &mut floors
            };
            sum.0 += f64::from(r / rho0 - 1.0);
            sum.1 += 1;
        }
    }
    assert!(edges.1 > 0 && floors.1 > 0);
    Settled {
        max,
        average,
        edges: edges.0 / f64::from(edges.1),
        floor: floors.0 / f64::from(floors.1),
    }
}

/// The pool is within 3% of the rest density everywhere (1% on average), and along its
/// edges its mean density is that along its floor within 0.5% of the rest density.
fn check(what: &str, r: &Settled) {
    eprintln!("{what}: {r:?}");
    assert!(r.max < 0.03 && r.average < 0.01, "{what}: {r:?}");
    assert!((r.edges - r.floor).abs() <= 0.005, "{what}: {r:?}");
}

fn params<const D: usize>() -> Params<D> {
    let mut g = [0.0; D];
    g[1] = -9.81;
    Params::<D>::builder(S)
        .time_step(1.0 / 120.0)
        .iterations(Iterations::Fixed(4))
        .gravity(g)
        .build()
        .unwrap()
}

/// An open box container whose cavity is `cells` spacings wide (and deep in 3D), the
/// fluid filling its lowest `rows` spacings on the rest lattice.
fn box_pool<const D: usize>(cells: usize, rows: usize) -> Solver<D> {
    let (wall, width) = (4.0 * S, cells as f32 * S);
    let size = width + 2.0 * wall + 2.0 * S;
    let mut hi = [size; D];
    hi[1] = 2.0 * width;
    let mut s = Solver::new(params::<D>(), Domain::new([0.0; D], hi).unwrap()).unwrap();
    // The shape's surface is the shell's middle: the cavity starts half a wall in.
    let mut center = [0.5 * size; D];
    center[1] = 0.5 * (width + wall) + 0.5 * wall;
    let mut half_extents = [0.5 * (width + wall); D];
    half_extents[1] = 0.5 * (width + wall);
    s.add_collider(
        Collider::new(
            Shape::Box {
                center,
                half_extents,
            },
            ColliderKind::Container {
                wall_thickness: wall,
                open_top: true,
            },
        )
        .unwrap(),
    )
    .unwrap();
    let lo: [f32; D] = core::array::from_fn(|a| {
        if a == 1 {
            wall
        } else {
            0.5 * size - 0.5 * width
        }
    });
    let top: [f32; D] = core::array::from_fn(|a| {
        if a == 1 {
            wall + rows as f32 * S
        } else {
            0.5 * size + 0.5 * width
        }
    });
    s.add_block(lo, top, [0.0; D]).unwrap();
    s
}

/// The domain's own box, `cells` spacings wide (and deep in 3D), the fluid filling
/// its lowest `rows` spacings on the rest lattice; no collider.
fn domain_pool<const D: usize>(cells: usize, rows: usize) -> Solver<D> {
    let width = cells as f32 * S;
    let mut hi = [width; D];
    hi[1] = 2.0 * width;
    let mut s = Solver::new(params::<D>(), Domain::new([0.0; D], hi).unwrap()).unwrap();
    let mut top = [width; D];
    top[1] = rows as f32 * S;
    s.add_block([0.0; D], top, [0.0; D]).unwrap();
    s
}

/// The distance from `p` to the nearest side of [`domain_pool`]'s box.
fn domain_side<const D: usize>(cells: usize) -> impl Fn(&[f32; D]) -> f32 {
    let width = cells as f32 * S;
    move |p| {
        (0..D)
            .filter(|&a| a != 1)
            .map(|a| p[a].min(width - p[a]))
            .fold(f32::INFINITY, f32::min)
    }
}

/// A glass (an open cylinder container) of inner radius `radius` spacings, the fluid
/// filling its lowest `rows` spacings on the rest lattice.
fn glass_pool(radius: usize, rows: usize) -> Solver<3> {
    let (wall, r) = (4.0 * S, radius as f32 * S);
    let size = 2.0 * (r + wall) + 2.0 * S;
    let height = 3.0 * rows as f32 * S;
    let domain = Domain::new([0.0; 3], [size, height + wall, size]).unwrap();
    let mut s = Solver::new(params::<3>(), domain).unwrap();
    let c = 0.5 * size;
    s.add_collider(
        Collider::new(
            Shape::Cylinder {
                base: [c, 0.5 * wall, c],
                radius: r + 0.5 * wall,
                height: height + 0.5 * wall - wall,
            },
            ColliderKind::Container {
                wall_thickness: wall,
                open_top: true,
            },
        )
        .unwrap(),
    )
    .unwrap();
    // The lattice points of the cavity, half a spacing clear of its wall.
    let mut points = Vec::new();
    let n = 2 * radius;
    for i in 0..n {
        for j in 0..rows {
            for k in 0..n {
                let p = [
                    c - r + (i as f32 + 0.5) * S,
                    wall + (j as f32 + 0.5) * S,
                    c - r + (k as f32 + 0.5) * S,
                ];
                let (dx, dz) = (p[0] - c, p[2] - c);
                if (dx * dx + dz * dz).sqrt() <= r - 0.5 * S {
                    points.push(p);
                }
            }
        }
    }
    s.add_particles(&points, None).unwrap();
    s
}

/// The distance from `p` to the nearest side of the box cavity `cells` spacings wide
/// centred in [`box_pool`]'s domain.
fn box_side<const D: usize>(cells: usize) -> impl Fn(&[f32; D]) -> f32 {
    let (wall, width) = (4.0 * S, cells as f32 * S);
    let centre = 0.5 * (width + 2.0 * wall + 2.0 * S);
    move |p| {
        (0..D)
            .filter(|&a| a != 1)
            .map(|a| 0.5 * width - (p[a] - centre).abs())
            .fold(f32::INFINITY, f32::min)
    }
}

#[test]
fn a_pool_at_rest_in_a_box_container_reads_its_floors_density_along_its_edges() {
    let floor = 4.0 * S;
    check(
        "2D box",
        &settle(&mut box_pool::<2>(16, 12), floor, box_side::<2>(16)),
    );
    check(
        "3D box",
        &settle(&mut box_pool::<3>(12, 10), floor, box_side::<3>(12)),
    );
}

#[test]
fn a_pool_at_rest_in_a_glass_reads_its_floors_density_along_its_edges() {
    let (radius, wall) = (8, 4.0 * S);
    let r = radius as f32 * S;
    let centre = 0.5 * (2.0 * (r + wall) + 2.0 * S);
    let side = |p: &[f32; 3]| r - ((p[0] - centre).powi(2) + (p[2] - centre).powi(2)).sqrt();
    check("glass", &settle(&mut glass_pool(radius, 10), wall, side));
}

#[test]
fn a_pool_at_rest_in_the_domains_box_reads_its_floors_density_along_its_edges() {
    check(
        "2D domain",
        &settle(&mut domain_pool::<2>(16, 12), 0.0, domain_side::<2>(16)),
    );
    check(
        "3D domain",
        &settle(&mut domain_pool::<3>(12, 10), 0.0, domain_side::<3>(12)),
    );
}
