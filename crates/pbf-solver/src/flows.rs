//! Flows with known answers, to check the physics against: the scenes the tests and
//! `pbf validate` share.

use crate::{Backend, CoreError, Domain, Params, Solver, Wall};

/// A decaying shear wave in a 2D channel: `v_x = A f(y)` between two walls `H` apart,
/// no gravity, no XSPH, no vorticity confinement. By the diffusion equation its
/// amplitude decays as `exp(-nu k^2 t)`: between free-slip walls the mode
/// `f = cos(pi y / H)` (`k = pi / H`), between no-slip walls `f = sin(2 pi y / H)`
/// (`k = 2 pi / H`). Neither carries a net flux, so the channel's ends (free-slip,
/// `8 H` apart) disturb only their own neighbourhood; the amplitude is measured in the
/// middle fifth.
///
/// ```
/// use pbf_solver::{Backend, Wall, flows::ShearWave};
/// let wave = ShearWave::with_decay(8, Wall::NoSlip, 1.0 / 120.0);
/// assert!((wave.decay_rate() * (1.0 / 120.0) - 0.01).abs() < 1e-6);
/// let mut s = wave.solver(Backend::Lanes)?;
/// let start = wave.amplitude_of(&s);
/// s.step()?;
/// assert!(wave.amplitude_of(&s) < start);
/// # Ok::<(), pbf_solver::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShearWave {
    /// Particles across the channel (`H = rows s`).
    pub rows: usize,
    /// The condition of the two walls.
    pub wall: Wall,
    /// The kinematic viscosity in m^2/s.
    pub nu: f32,
    /// The amplitude `A` in m/s.
    pub amplitude: f32,
    /// The time step.
    pub time_step: f32,
}

impl ShearWave {
    /// The particle spacing of every shear wave.
    pub const SPACING: f32 = 0.01;

    /// The wave whose decay per step `nu k^2 dt` is 0.01 (about a half in 60 steps)
    /// and whose Reynolds number `A / (nu k)` is 1.
    pub fn with_decay(rows: usize, wall: Wall, time_step: f32) -> Self {
        let mut wave = Self {
            rows,
            wall,
            nu: 0.0,
            amplitude: 0.0,
            time_step,
        };
        let k = wave.wavenumber();
        wave.nu = 0.01 / (k * k * time_step);
        wave.amplitude = wave.nu * k;
        wave
    }

    /// The channel's height `H`.
    pub fn height(&self) -> f32 {
        self.rows as f32 * Self::SPACING
    }

    /// The mode's wavenumber `k`.
    pub fn wavenumber(&self) -> f32 {
        let pi = core::f32::consts::PI;
        match self.wall {
            Wall::FreeSlip => pi / self.height(),
            Wall::NoSlip => 2.0 * pi / self.height(),
        }
    }

    /// The analytic decay rate `nu k^2`, per second.
    pub fn decay_rate(&self) -> f32 {
        self.nu * self.wavenumber() * self.wavenumber()
    }

    /// The mode `f(y)`.
    pub fn mode(&self, y: f32) -> f32 {
        let phase = self.wavenumber() * y;
        match self.wall {
            Wall::FreeSlip => phase.cos(),
            Wall::NoSlip => phase.sin(),
        }
    }

    /// The channel filled at the rest spacing, with the wave's velocities.
    ///
    /// # Errors
    /// Those of [`Params`] and [`Solver::new`] for a bad viscosity or time step.
    pub fn solver(&self, backend: Backend) -> Result<Solver<2>, CoreError> {
        let s = Self::SPACING;
        let params = Params::<2>::builder(s)
            .time_step(self.time_step)
            .gravity([0.0, 0.0])
            .xsph_c(0.0)
            .vorticity_rel(0.0)
            .viscosity(self.nu)
            .backend(backend)
            .build()?;
        let (height, length) = (self.height(), 8.0 * self.height());
        let domain = Domain::new([0.0; 2], [length, height])?
            .with_walls([[Wall::FreeSlip; 2], [self.wall; 2]]);
        let mut solver = Solver::new(params, domain)?;
        let mut points = Vec::new();
        let mut velocities = Vec::new();
        for i in 0..8 * self.rows {
            for j in 0..self.rows {
                let p = [(i as f32 + 0.5) * s, (j as f32 + 0.5) * s];
                points.push(p);
                velocities.push([self.amplitude * self.mode(p[1]), 0.0]);
            }
        }
        solver.add_particles(&points, Some(&velocities))?;
        Ok(solver)
    }

    /// The mode's amplitude in the horizontal velocities of the channel's middle
    /// fifth (a least-squares fit of `A f(y)`).
    pub fn amplitude_of(&self, solver: &Solver<2>) -> f64 {
        let length = 8.0 * self.height();
        let (p, v) = (solver.positions(), solver.velocities());
        let (mut along, mut norm) = (0.0f64, 0.0f64);
        for i in 0..solver.len() {
            if (p[0][i] - 0.5 * length).abs() > 0.1 * length {
                continue;
            }
            let f = f64::from(self.mode(p[1][i]));
            along += f64::from(v[0][i]) * f;
            norm += f * f;
        }
        along / norm
    }
}
