//! The coarse correction on 2D columns and blocks: at rest, squeezed, and across
//! periodic faces.

use super::*;

/// A 2D column `cols` particles wide and `rows` deep on the floor of a box,
/// squeezed vertically to `1 / (1 + c)` of its rest depth.
fn column(c: f32, cols: usize, rows: usize) -> ([Vec<f32>; 2], Domain<2>, f32) {
    let s = 0.05;
    let width = cols as f32 * s;
    let domain = Domain::new([0.0; 2], [width, 4.0 * rows as f32 * s]).unwrap();
    let mut p = [Vec::new(), Vec::new()];
    for j in 0..rows {
        for i in 0..cols {
            p[0].push((i as f32 + 0.5) * s);
            p[1].push((j as f32 + 0.5) * s / (1.0 + c));
        }
    }
    (p, domain, s)
}

/// The scene of a column in `domain` at spacing `s`, without colliders.
fn scene(domain: &Domain<2>, s: f32) -> Scene<'_, 2> {
    Scene {
        h: 2.0 * s,
        spacing: s,
        margin: 0.5 * s,
        domain,
        colliders: &[],
    }
}

fn correct(c: f32) -> ([Vec<f32>; 2], [Vec<f32>; 2], f32) {
    let (before, domain, s) = column(c, 40, 48);
    let mut after = before.clone();
    let scene = scene(&domain, s);
    let mut grid = CoarseGrid::default();
    let [x, y] = &mut after;
    grid.correct(&scene, [x.as_mut_slice(), y.as_mut_slice()], None);
    assert!(grid.iterations > 0 || c == 0.0);
    (before, after, s)
}

#[test]
fn a_column_at_rest_is_left_alone() {
    let (before, after, s) = correct(0.0);
    for a in 0..2 {
        for (p, q) in before[a].iter().zip(&after[a]) {
            assert!((p - q).abs() < 1e-3 * s, "moved {} spacings", (p - q) / s);
        }
    }
}

/// The potential written with the correction is the one the particles move down
/// the gradient of: 0 or below, deepest at the floor, and its difference between
/// two depths in the column's interior is the displacement integrated between
/// them (to the interpolation's accuracy).
#[test]
fn the_potential_is_what_the_particles_move_by_the_gradient_of() {
    let (before, domain, s) = column(0.2, 40, 48);
    let mut after = before.clone();
    let mut phi = vec![f32::NAN; before[0].len()];
    let scene = scene(&domain, s);
    let mut grid = CoarseGrid::default();
    let [x, y] = &mut after;
    grid.correct(&scene, [x.as_mut_slice(), y.as_mut_slice()], Some(&mut phi));
    assert!(phi.iter().all(|p| *p <= 0.0), "phi above 0");
    // The middle column of particles, by height.
    let middle: Vec<(f32, f32, f32)> = (0..before[0].len())
        .filter(|&i| (before[0][i] - 20.5 * s).abs() < 0.1 * s)
        .map(|i| (before[1][i], phi[i], after[1][i] - before[1][i]))
        .collect();
    assert_eq!(middle.len(), 48);
    let deepest = middle.iter().fold(0.0f32, |m, p| m.min(p.1));
    assert_eq!(deepest, middle[0].1, "phi is lowest at the floor");
    // d phi / dy against the displacement, between rows 8 and 24 (clear of the floor
    // and the surface): the trapezoid rule over the rows between.
    let integral: f32 = (8..24)
        .map(|j| 0.5 * (middle[j].2 + middle[j + 1].2) * (middle[j + 1].0 - middle[j].0))
        .sum();
    let difference = middle[24].1 - middle[8].1;
    assert!(
        (difference - integral).abs() < 0.05 * integral.abs(),
        "phi rises {difference} where the displacement integrates to {integral}"
    );
}

/// Corrects `points` (squeezed by `squeeze` towards the floor) once in `domain`,
/// and gives each particle's displacement.
fn displacements(points: &[Vec<f32>; 2], domain: &Domain<2>, s: f32) -> Vec<[f32; 2]> {
    let mut after = points.clone();
    let mut grid = CoarseGrid::default();
    let [x, y] = &mut after;
    grid.correct(
        &scene(domain, s),
        [x.as_mut_slice(), y.as_mut_slice()],
        None,
    );
    assert!(grid.iterations > 0);
    (0..points[0].len())
        .map(|i| {
            let dx = domain.periodicity().image(0, after[0][i] - points[0][i]);
            [dx, after[1][i] - points[1][i]]
        })
        .collect()
}

/// A squeezed column filling a periodic axis reads the same compression at every
/// x, so every particle of a row moves up alike (the faces are not seams), and
/// away from the side walls a walled column moves the same (to the solve's
/// tolerance).
#[test]
fn a_column_filling_a_periodic_axis_is_lifted_alike_at_every_x() {
    let (cols, rows) = (40, 48);
    let (points, walled, s) = column(0.2, cols, rows);
    let periodic = walled.with_periodic([true, false]).unwrap();
    let w = displacements(&points, &walled, s);
    let p = displacements(&points, &periodic, s);
    let largest = p.iter().fold(0.0f32, |m, u| m.max(u[1].abs()));
    assert!(largest > 0.1 * s, "the column moved {largest}");
    for row in 0..rows {
        let middle = p[row * cols + cols / 2][1];
        for i in row * cols..(row + 1) * cols {
            assert!(
                p[i][0].abs() < 1e-4 * s,
                "particle {i} moved sideways {:?}",
                p[i]
            );
            assert!(
                (p[i][1] - middle).abs() < 1e-3 * largest,
                "row {row}: particle {i} moved {:?}, the middle {middle}",
                p[i]
            );
            let x = points[0][i];
            if (0.5..1.5).contains(&x) {
                assert!(
                    (w[i][1] - p[i][1]).abs() < 0.03 * largest,
                    "particle {i}: walled {:?}, periodic {:?}",
                    w[i],
                    p[i]
                );
            }
        }
    }
}

/// On a periodic axis the correction does not depend on where the fluid sits: a
/// squeezed block straddling the faces moves as the same block in the middle.
#[test]
fn a_block_across_the_periodic_faces_moves_as_one_in_the_middle() {
    let (middle, domain, s) = column(0.2, 20, 48);
    // The block 20 spacings wide in a period of 60 (3.0, 15 cells of 2 h).
    let domain = Domain::new(domain.lo(), [3.0, domain.hi()[1]])
        .unwrap()
        .with_periodic([true, false])
        .unwrap();
    let shift = |points: &[Vec<f32>; 2], by: f32| {
        let x = points[0]
            .iter()
            .map(|&x| domain.periodicity().wrap(0, x + by).0)
            .collect();
        [x, points[1].clone()]
    };
    // Six cells to the middle, and eleven cells on, where it straddles x = 3.
    let inside = shift(&middle, 1.2);
    let across = shift(&middle, 2.2);
    assert!(across[0].iter().any(|&x| x < 0.5) && across[0].iter().any(|&x| x > 2.5));
    let a = displacements(&inside, &domain, s);
    let b = displacements(&across, &domain, s);
    let largest = a
        .iter()
        .fold(0.0f32, |m, u| m.max(u[0].abs().max(u[1].abs())));
    assert!(largest > 0.1 * s, "the block moved {largest}");
    for (i, (a, b)) in a.iter().zip(&b).enumerate() {
        for axis in 0..2 {
            assert!(
                (a[axis] - b[axis]).abs() < 2e-3 * largest,
                "particle {i}: in the middle {a:?}, across the faces {b:?}"
            );
        }
    }
    // The block spreads sideways as well as up: the correction reaches across the
    // faces as it does inside.
    let sideways = b.iter().fold(0.0f32, |m, u| m.max(u[0].abs()));
    assert!(sideways > 0.1 * largest, "sideways {sideways} of {largest}");
}

#[test]
fn a_squeezed_column_is_lifted_back_towards_its_rest_depth() {
    let c = 0.2;
    let (before, after, s) = correct(c);
    let top = |y: &[f32]| y.iter().fold(0.0f32, |m, &v| m.max(v));
    let rest_top = 47.5 * s;
    let (from, to) = (top(&before[1]), top(&after[1]));
    // The squeeze left the top (rest_top - from) below its rest height; the
    // correction lifts it by most of that (the partly filled cells at the surface
    // read less compression than there is, and the Jacobi passes finish the job),
    // and never past it.
    let lift = (to - from) / (rest_top - from);
    assert!((0.55..=1.1).contains(&lift), "lifted {lift} of the squeeze");
    // Nothing is pushed down (beyond a hundredth of a spacing at the floor, where
    // the cells reach into the wall).
    for (p, q) in before[1].iter().zip(&after[1]) {
        assert!(
            q - p > -1e-2 * s,
            "a particle moved down by {}",
            (p - q) / s
        );
    }
    // The walls keep the column where it is sideways, and the box's middle too.
    let sideways = before[0]
        .iter()
        .zip(&after[0])
        .fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
    assert!(
        sideways < 0.05 * (rest_top - from),
        "sideways {}",
        sideways / s
    );
}

/// A column at rest that a step's gravity carries `delta` into its floor, its
/// lowest row held at the floor (as the collisions hold it): the compression sits
/// at the floor, and every row above the lowest, clear of the surface, is lifted by
/// about `delta` as one, the rows near the floor too. The cells' weights read 86%
/// of the shift as compression (the lowest cell gains 1.2 of its 14 rest
/// particles' weight per column, of 16 in a full cell), so the lift is that, less
/// what the side walls take, and never more than `delta` and a little.
#[test]
fn a_column_carried_into_its_floor_is_lifted_as_one() {
    let (cols, rows) = (40, 48);
    let (mut points, domain, s) = column(0.0, cols, rows);
    let delta = 0.4 * s;
    for y in points[1].iter_mut().skip(cols) {
        *y -= delta;
    }
    let u = displacements(&points, &domain, s);
    // The middle column, clear of the side walls.
    let lift = |row: usize| u[row * cols + cols / 2][1] / delta;
    let near_floor: Vec<f32> = (1..=8).map(lift).collect();
    for row in 1..rows - 8 {
        assert!(
            (0.75..=1.15).contains(&lift(row)),
            "row {row} lifted {} of the shift; rows 1-8: {near_floor:?}",
            lift(row)
        );
    }
    // The rows within two cells of the floor move together.
    let spread = near_floor.iter().fold(0.0f32, |m, &l| m.max(l))
        - near_floor.iter().fold(f32::INFINITY, |m, &l| m.min(l));
    assert!(spread < 0.02, "rows 1-8 lifted {near_floor:?}");
}
