//! The harness of the `scene_parse` fuzz target (`fuzz/fuzz_targets/scene_parse.rs`).
//! It lives in the crate so that the stable tests replay every committed corpus file
//! through the same code (`tests/fuzz_corpus.rs`). Not part of the public API.
//!
//! The input is scene text. A scene that parses is built and stepped when it is small
//! (the bounds are the harness's, not the library's: at most [`MAX_PARTICLES`]
//! particles from blocks, small emitters, a few steps). Checked beyond "no panic":
//! errors name a place in the file, built solvers keep every particle finite and
//! inside the domain.

use crate::{CliError, Scene};
use pbf_solver::scenes::AnySolver;

/// The most particles a scene's blocks may make for the harness to build it.
pub const MAX_PARTICLES: f64 = 2000.0;

/// Runs one input; panics when parsing or building misbehaves.
pub fn scene_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let scene = match Scene::parse(text, "fuzz.toml") {
        Ok(scene) => scene,
        Err(CliError::Scene(e)) => {
            assert!(e.line >= 1 && e.column >= 1, "no place in {e:?}");
            return;
        }
        Err(e) => panic!("parse gave {e:?}"),
    };
    let f = &scene.file;
    let spacing = f.solver.spacing;
    let d = f.dimension as i32;
    let particles: f64 = f
        .blocks
        .iter()
        .map(|b| {
            b.lo.iter()
                .zip(&b.hi)
                .map(|(lo, hi)| ((hi - lo) / spacing).abs() + 1.0)
                .product::<f64>()
        })
        .sum();
    let emitters_small = f.emitters.iter().all(|e| {
        let dt = f.solver.time_step.unwrap_or(1.0 / 120.0);
        (e.radius / spacing).abs() <= 4.0 && (e.speed * dt / spacing).abs() <= 4.0
    });
    let lattice = f.solver.kernel_radius_rel.unwrap_or(2.0);
    if !(particles.is_finite() && particles <= MAX_PARTICLES && emitters_small && lattice <= 8.0)
        || d > 3
    {
        return;
    }
    let mut solver = match scene.build() {
        Ok(s) => s,
        Err(CliError::Scene(e)) => {
            assert!(e.line >= 1 && e.column >= 1, "no place in {e:?}");
            return;
        }
        Err(e) => panic!("build gave {e:?}"),
    };
    for _ in 0..3 {
        match solver.step() {
            Ok(_) => {}
            Err(
                pbf_solver::CoreError::Diverged { .. } | pbf_solver::CoreError::Collapsed { .. },
            ) => {
                return;
            }
            Err(e) => panic!("step gave {e:?}"),
        }
        match &solver {
            AnySolver::Two(s) => check(s),
            AnySolver::Three(s) => check(s),
        }
    }
}

fn check<const D: usize>(s: &pbf_solver::Solver<D>) {
    for i in 0..s.len() {
        let p: [f32; D] = core::array::from_fn(|a| s.positions()[a][i]);
        assert!(
            s.domain().contains(p),
            "particle {i} at {p:?} left the domain"
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn harness_runs_the_default_scene_text() {
        super::scene_parse(b"dimension = 2\n[solver]\nspacing = 0.1\n[domain]\nlo = [0, 0]\nhi = [1, 1]\n[[block]]\nlo = [0, 0]\nhi = [0.5, 0.5]\n");
        super::scene_parse(b"dimension = 2\n[solver]\nspacing = -1\n");
        super::scene_parse(&[0xff, 0xfe]);
    }
}
