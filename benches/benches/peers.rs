//! `peers`: pbf side by side with published Rust crates, in one process, on the same
//! input, reporting ratios. Built only with the `peers` feature:
//!
//! ```text
//! cargo bench -p pbf-benches --features peers --bench peers
//! cargo bench -p pbf-benches --features peers --bench peers -- dam --sizes 22 --frames 12
//! cargo bench -p pbf-benches --features peers --bench peers -- search --sides 46
//! ```
//!
//! Two comparisons, each printed as a Markdown table (run `-- --help` for the options):
//!
//! - `dam`: the 3D dam break against `salva3d` 0.11 (DFSPH). Particle radius
//!   r = 0.025 (spacing 2r), kernel radius h = 4r, rest density 1000, gravity 9.81,
//!   an n x n x n block in the corner of an open-top tank of inner size
//!   4a x 1.5a x a (a = 2rn). Both sides get the same particle positions and step the
//!   same frames of 1/60 s, back to back: frame k of pbf, then frame k of salva, on a
//!   rayon pool of 1 thread for even k and of 2 threads for odd k, so that both thread
//!   counts see the same stretch of the flow. Reported per side: the median time of a
//!   frame on each pool, the particles that left the tank, and the largest density,
//!   both measured after every frame.
//! - `search`: fixed-radius neighbour search, build plus one full pass over every
//!   point's neighbours, on a jittered lattice (spacing s, radius 2s, shuffled order):
//!   `pbf-grid` (fused cell-blocked pass, and CSR list plus a pass over it) against
//!   `splashsurf_lib`'s spatial-hashing search and `kiddo`'s k-d tree. The pass sums
//!   the poly6 kernel over each point's neighbours, so every method does the same
//!   arithmetic; the harness checks that they all find the same number of pairs.
//!
//! The last lines print what a report needs besides the tables: the SIMD
//! backend, the CPU and its clock, and the roofline figures of pbf's constraint passes.

use kiddo::{ImmutableKdTree, SquaredEuclidean};
use nalgebra::Vector3;
use pbf_benches::fused_density;
use pbf_grid::{Grid, NeighbourList};
use pbf_kernels::Kernel;
use pbf_solver::{Acceleration, Collider, ColliderKind, Domain, Iterations, Params, Shape, Solver};
use rayon::prelude::*;
use salva3d::LiquidWorld;
use salva3d::kernel::{CubicSplineKernel, Kernel as SalvaKernel};
use salva3d::object::interaction_groups::InteractionGroups;
use salva3d::object::{Boundary, Fluid};
use salva3d::solver::DFSPHSolver;
use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Particle radius r of the dam break; the spacing is 2r.
const RADIUS: f32 = 0.025;
/// Particle spacing 2r.
const SPACING: f32 = 2.0 * RADIUS;
/// Kernel radius h = 4r = 2 spacings.
const H: f32 = 4.0 * RADIUS;
/// Rest density.
const RHO0: f32 = 1000.0;
/// Gravity, down the y axis.
const GRAVITY: f32 = 9.81;
/// A frame.
const FRAME: f32 = 1.0 / 60.0;
/// Largest density allowed for a stable frame, relative to rest.
const DENSITY_LIMIT: f32 = 1.10;
/// Wall thickness of pbf's tank (four spacings: see `ColliderKind::Container`).
const WALL: f32 = 4.0 * SPACING;

/// The options of one run.
struct Options {
    dam: bool,
    search: bool,
    sizes: Vec<usize>,
    frames: usize,
    salva_substeps: usize,
    pbf_substeps: usize,
    pbf_iterations: u32,
    /// pbf's acceleration of its constraint iterations.
    pbf_acceleration: Acceleration,
    /// Whether pbf runs its coarse density correction.
    pbf_coarse: bool,
    salva_default_volume: bool,
    salva_wall_layers: usize,
    pbf_only: bool,
    sides: Vec<usize>,
    reps: usize,
}

const USAGE: &str = "usage: peers [dam] [search] [--sizes 22,31,46] [--frames 60] \
[--salva-substeps 4] [--salva-lattice-volume] [--salva-wall-layers 2] [--pbf-only] [--pbf-substeps 2] [--pbf-iterations 5] [--pbf-acceleration chebyshev|none] [--pbf-coarse on|off] [--sides 46,100] [--reps 5]";

impl Options {
    fn parse() -> Result<Self, String> {
        let mut o = Options {
            dam: false,
            search: false,
            sizes: vec![22, 31, 46],
            frames: 60,
            salva_substeps: 4,
            // The cheapest of the configurations tried that keeps the dam break within
            // 10% of rest density over 60 frames at every size (2 x 4 with the coarse
            // correction is cheaper at 100k but exceeds 10% at 30k).
            pbf_substeps: 2,
            pbf_iterations: 5,
            pbf_acceleration: Acceleration::Chebyshev,
            pbf_coarse: false,
            salva_default_volume: true,
            salva_wall_layers: 2,
            pbf_only: false,
            sides: vec![46, 100],
            reps: 5,
        };
        let mut args = std::env::args().skip(1);
        let list = |v: Option<String>| -> Result<Vec<usize>, String> {
            let v = v.ok_or("missing value")?;
            v.split(',')
                .map(|s| s.trim().parse::<usize>().map_err(|e| format!("{s}: {e}")))
                .collect()
        };
        let one = |v: Option<String>| -> Result<usize, String> {
            let v = v.ok_or("missing value")?;
            v.parse::<usize>().map_err(|e| format!("{v}: {e}"))
        };
        while let Some(a) = args.next() {
            match a.as_str() {
                // cargo bench passes `--bench` to every harness-less bench.
                "--bench" => {}
                "dam" => o.dam = true,
                "search" => o.search = true,
                "--sizes" => o.sizes = list(args.next())?,
                "--frames" => o.frames = one(args.next())?,
                "--salva-substeps" => o.salva_substeps = one(args.next())?,
                "--pbf-substeps" => o.pbf_substeps = one(args.next())?,
                "--pbf-iterations" => {
                    o.pbf_iterations =
                        u32::try_from(one(args.next())?).map_err(|e| e.to_string())?
                }
                "--sides" => o.sides = list(args.next())?,
                "--salva-lattice-volume" => o.salva_default_volume = false,
                "--pbf-only" => o.pbf_only = true,
                "--pbf-coarse" => {
                    o.pbf_coarse = match args.next().as_deref() {
                        Some("on") => true,
                        Some("off") => false,
                        other => {
                            return Err(format!("--pbf-coarse takes on or off, not {other:?}"));
                        }
                    }
                }
                "--pbf-acceleration" => {
                    o.pbf_acceleration = match args.next().as_deref() {
                        Some("chebyshev") => Acceleration::Chebyshev,
                        Some("none") => Acceleration::None,
                        other => {
                            return Err(format!(
                                "--pbf-acceleration takes chebyshev or none, not {other:?}"
                            ));
                        }
                    }
                }
                "--salva-wall-layers" => o.salva_wall_layers = one(args.next())?,
                "--reps" => o.reps = one(args.next())?,
                "-h" | "--help" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        if !o.dam && !o.search {
            o.dam = true;
            o.search = true;
        }
        let positive = [
            ("--frames", o.frames),
            ("--salva-substeps", o.salva_substeps),
            ("--pbf-substeps", o.pbf_substeps),
            ("--reps", o.reps),
            ("--salva-wall-layers", o.salva_wall_layers),
            ("--pbf-iterations", o.pbf_iterations as usize),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{name} must be at least 1"));
        }
        if o.sizes.iter().chain(&o.sides).any(|&n| n < 2) {
            return Err("sizes and sides must be at least 2".to_string());
        }
        Ok(o)
    }
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn median(v: &mut [f64]) -> f64 {
    assert!(!v.is_empty(), "median of nothing");
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A time in milliseconds with three significant digits.
fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

// ---------------------------------------------------------------------------------
// Density estimator shared by both sides.
// ---------------------------------------------------------------------------------

/// One density estimator for both sides, from positions alone: `rho_i = rho0 * S_i /
/// S_rest`, where `S_i = sum_j W_poly6(|x_i - x_j|)` over the fluid particles within
/// `h` (`j = i` included) and `S_rest` is the same sum inside the rest lattice. It
/// reads exactly `rho0` inside the initial block, whatever mass or kernel a solver
/// uses internally. Walls add no term, so particles next to a wall read low; the
/// maximum lies in the bulk, where the estimate is complete.
struct DensityProbe {
    kernel: Kernel<3>,
    rest_sum: f32,
    grid: Grid<3>,
    sorted: [Vec<f32>; 3],
    scratch: Vec<f32>,
    sums: Vec<f32>,
}

impl DensityProbe {
    fn new() -> Self {
        let kernel = Kernel::<3>::new(H).expect("h > 0");
        let reach = (H / SPACING).ceil() as i32;
        let mut rest_sum = 0.0;
        for i in -reach..=reach {
            for j in -reach..=reach {
                for k in -reach..=reach {
                    let d = [i, j, k].map(|c| c as f32 * SPACING);
                    rest_sum += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                }
            }
        }
        DensityProbe {
            kernel,
            rest_sum,
            grid: Grid::new(),
            sorted: Default::default(),
            scratch: Vec::new(),
            sums: Vec::new(),
        }
    }

    /// The largest density over `positions` (SoA), by the shared estimator.
    fn max_density(&mut self, positions: [&[f32]; 3]) -> f32 {
        self.grid.rebuild(positions, H).expect("finite positions");
        for (axis, out) in self.sorted.iter_mut().enumerate() {
            out.clear();
            out.extend_from_slice(positions[axis]);
            self.grid
                .reorder(out, &mut self.scratch)
                .expect("same length");
        }
        self.sums.clear();
        self.sums.resize(positions[0].len(), 0.0);
        let (grid, kernel) = (&self.grid, &self.kernel);
        let [x, y, z] = &self.sorted;
        let sorted = [x.as_slice(), y, z];
        grid.par_for_each_cell(&mut self.sums, |cell, out| {
            let first = grid.cells()[cell].start as usize;
            for (k, s) in out.iter_mut().enumerate() {
                let i = first + k;
                grid.for_each_neighbour(sorted, i, |j| {
                    let d = [x[i] - x[j], y[i] - y[j], z[i] - z[j]];
                    *s += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                });
            }
        })
        .expect("one sum per point");
        let max = self.sums.par_iter().copied().reduce(|| 0.0, f32::max);
        RHO0 * max / self.rest_sum
    }

    /// Mean number of candidates per particle (points in the 27 cells around its
    /// cell) and of neighbours within h (self excluded), for the roofline figures.
    fn candidates_and_neighbours(&mut self, positions: [&[f32]; 3]) -> (f64, f64) {
        self.max_density(positions);
        let grid = &self.grid;
        let mut candidates = 0u64;
        for (cell, range) in grid.cells().iter().enumerate() {
            let per_point: u64 = grid
                .candidate_ranges(cell)
                .iter()
                .map(|r| u64::from(r.end - r.start))
                .sum();
            candidates += per_point * u64::from(range.end - range.start);
        }
        let [x, y, z] = &self.sorted;
        let sorted = [x.as_slice(), y, z];
        let mut neighbours = 0u64;
        for i in 0..grid.len() {
            grid.for_each_neighbour(sorted, i, |j| neighbours += u64::from(j != i));
        }
        let n = grid.len().max(1) as f64;
        (candidates as f64 / n, neighbours as f64 / n)
    }
}

// ---------------------------------------------------------------------------------
// The dam break.
// ---------------------------------------------------------------------------------

/// The scene: the block's particle positions and the tank.
struct DamBreak {
    n: usize,
    /// Block side a = 2rn.
    a: f32,
    block: Vec<[f32; 3]>,
}

impl DamBreak {
    fn new(n: usize) -> Self {
        let a = SPACING * n as f32;
        let mut block = Vec::with_capacity(n * n * n);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    block.push([i, j, k].map(|c| RADIUS + SPACING * c as f32));
                }
            }
        }
        DamBreak { n, a, block }
    }

    /// Inner size of the tank.
    fn tank(&self) -> [f32; 3] {
        [4.0 * self.a, 1.5 * self.a, self.a]
    }

    /// Particles whose centre is more than one particle radius outside the tank's
    /// walls or below its floor (the top is open: above the rim is inside), or not
    /// finite.
    fn leaks(&self, positions: [&[f32]; 3]) -> usize {
        let t = self.tank();
        let inside = |p: [f32; 3]| {
            p.iter().all(|c| c.is_finite())
                && p[0] >= -RADIUS
                && p[0] <= t[0] + RADIUS
                && p[1] >= -RADIUS
                && p[2] >= -RADIUS
                && p[2] <= t[2] + RADIUS
        };
        (0..positions[0].len())
            .filter(|&i| !inside([positions[0][i], positions[1][i], positions[2][i]]))
            .count()
    }

    /// pbf: the same particles in a container (an open-top box whose inner faces are
    /// the tank's), `substeps` steps per frame of `iterations` each (with the given
    /// acceleration and, if `coarse`, the coarse density correction), the solver's
    /// other defaults (XSPH c = 0.01, vorticity 0.1, CFM 0.1, s_corr k = 0.1).
    fn pbf(
        &self,
        substeps: usize,
        iterations: u32,
        acceleration: Acceleration,
        coarse: bool,
    ) -> Solver<3> {
        let t = self.tank();
        let params = Params::<3>::builder(SPACING)
            .kernel_radius_rel(H / SPACING)
            .rest_density(RHO0)
            .gravity([0.0, -GRAVITY, 0.0])
            .time_step(FRAME / substeps as f32)
            .iterations(Iterations::Fixed(iterations))
            .acceleration(acceleration)
            .coarse_correction(coarse)
            .build()
            .expect("valid parameters");
        // Room around the walls, and above the rim for splashes.
        let pad = WALL + SPACING;
        let domain =
            Domain::new([-pad; 3], [t[0] + pad, 3.0 * self.a, t[2] + pad]).expect("valid domain");
        let mut solver = Solver::new(params, domain).expect("valid solver");
        // The wall is centred on the box's surface: move the surface half a wall
        // outwards so that the inner faces are x = 0, 4a, y = 0, z = 0, a; the rim is
        // at y = 1.5a.
        let half = 0.5 * WALL;
        let lo = [-half, -half, -half];
        let hi = [t[0] + half, t[1], t[2] + half];
        let tank = Collider::new(
            Shape::Box {
                center: std::array::from_fn(|a| 0.5 * (lo[a] + hi[a])),
                half_extents: std::array::from_fn(|a| 0.5 * (hi[a] - lo[a])),
            },
            ColliderKind::Container {
                wall_thickness: WALL,
                open_top: true,
            },
        )
        .expect("valid tank");
        solver.add_collider(tank).expect("tank");
        solver.add_particles(&self.block, None).expect("particles");
        solver
    }

    /// salva: DFSPH with its default parameters and cubic-spline kernels, no
    /// viscosity or other non-pressure force (its cheapest setting), and the tank as
    /// `layers` layers of boundary particles at spacing 2r (the spacing of salva's own
    /// surface sampling), the first on the inner faces. One layer, what salva's own
    /// sampling of a surface gives, lets more particles out at the tank's edges.
    fn salva(&self, default_volume: bool, layers: usize) -> LiquidWorld {
        // smoothing factor 2: salva's h = r * factor * 2 = 4r.
        let mut world = LiquidWorld::new(DFSPHSolver::<CubicSplineKernel>::new(), RADIUS, 2.0, 1.0);
        let positions: Vec<Vector3<f32>> = self
            .block
            .iter()
            .map(|p| Vector3::new(p[0], p[1], p[2]))
            .collect();
        let mut fluid = Fluid::new(positions, RADIUS, RHO0, InteractionGroups::default());
        if !default_volume {
            // salva's default particle volume, 0.8 (2r)^3, is tuned for a smaller
            // kernel: at h = 4r its own density estimate of this lattice is 800, so
            // the block would shrink by a fifth before it felt any pressure. With the
            // lattice cell's volume, (2r)^3, the block starts at rest density (its
            // cubic spline sums to 1/(2r)^3 over the lattice), as pbf's does.
            fluid
                .volumes
                .iter_mut()
                .for_each(|v| *v = SPACING * SPACING * SPACING);
        }
        let _ = world.add_fluid(fluid);
        let walls: Vec<Vector3<f32>> = self
            .wall_lattice(layers)
            .into_iter()
            .map(|c| Vector3::from(c.map(|c| c as f32 * SPACING)))
            .collect();
        let _ = world.add_boundary(Boundary::new(walls, InteractionGroups::default()));
        world
    }

    /// Integer lattice coordinates (units of the spacing) of the tank's floor and four
    /// walls, `layers` deep (the first layer on the inner faces, the others behind it),
    /// each point once.
    fn wall_lattice(&self, layers: usize) -> BTreeSet<[i32; 3]> {
        let (nx, nz) = (4 * self.n as i32, self.n as i32);
        let ny = (1.5 * self.n as f32).ceil() as i32;
        let d = layers as i32 - 1;
        let mut set = BTreeSet::new();
        for i in -d..=nx + d {
            for k in -d..=nz + d {
                for j in -d..=ny {
                    let outside_x = i <= 0 || i >= nx;
                    let outside_y = j <= 0;
                    let outside_z = k <= 0 || k >= nz;
                    if outside_x || outside_y || outside_z {
                        set.insert([i, j, k]);
                    }
                }
            }
        }
        set
    }
}

/// salva's own density estimate, recomputed from its public state the way its DFSPH
/// solver computes it (its densities are private): `rho_i = sum_j m_j W(x_ij) +
/// sum_b rho0 V_b W(x_ib)` with its cubic spline of support h, over fluid particles
/// `j` (`j = i` included) and boundary particles `b` with the volumes salva computed
/// in its last substep.
#[derive(Default)]
struct SalvaDensity {
    grid: Grid<3>,
    points: [Vec<f32>; 3],
    weights: Vec<f32>,
    sorted: [Vec<f32>; 3],
    sorted_weights: Vec<f32>,
    fluid: Vec<bool>,
    sorted_fluid: Vec<bool>,
    scratch: Vec<f32>,
    flag_scratch: Vec<bool>,
    sums: Vec<f32>,
}

impl SalvaDensity {
    fn max_density(&mut self, world: &LiquidWorld) -> f32 {
        let fluid = &world.fluids().as_slice()[0];
        for v in self.points.iter_mut() {
            v.clear();
        }
        self.weights.clear();
        self.fluid.clear();
        for (i, p) in fluid.positions.iter().enumerate() {
            for a in 0..3 {
                self.points[a].push(p[a]);
            }
            self.weights.push(fluid.particle_mass(i));
            self.fluid.push(true);
        }
        for b in world.boundaries().as_slice() {
            for (p, v) in b.positions.iter().zip(&b.volumes) {
                for a in 0..3 {
                    self.points[a].push(p[a]);
                }
                self.weights.push(fluid.density0 * v);
                self.fluid.push(false);
            }
        }
        let [x, y, z] = &self.points;
        self.grid.rebuild([x, y, z], H).expect("finite positions");
        for a in 0..3 {
            self.sorted[a].clone_from(&self.points[a]);
            self.grid
                .reorder(&mut self.sorted[a], &mut self.scratch)
                .expect("same length");
        }
        self.sorted_weights.clone_from(&self.weights);
        self.grid
            .reorder(&mut self.sorted_weights, &mut self.scratch)
            .expect("same length");
        self.sorted_fluid.clone_from(&self.fluid);
        self.grid
            .reorder(&mut self.sorted_fluid, &mut self.flag_scratch)
            .expect("same length");
        self.sums.clear();
        self.sums.resize(self.weights.len(), 0.0);
        let (grid, w, is_fluid) = (&self.grid, &self.sorted_weights, &self.sorted_fluid);
        let [x, y, z] = &self.sorted;
        let sorted = [x.as_slice(), y, z];
        grid.par_for_each_cell(&mut self.sums, |cell, out| {
            let first = grid.cells()[cell].start as usize;
            for (k, s) in out.iter_mut().enumerate() {
                let i = first + k;
                if is_fluid[i] {
                    grid.for_each_neighbour(sorted, i, |j| {
                        let d = [x[i] - x[j], y[i] - y[j], z[i] - z[j]];
                        let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                        *s += w[j] * CubicSplineKernel::scalar_apply(r, H);
                    });
                }
            }
        })
        .expect("one sum per point");
        self.sums.par_iter().copied().reduce(|| 0.0, f32::max)
    }
}

fn salva_positions(world: &LiquidWorld) -> [Vec<f32>; 3] {
    let fluid = &world.fluids().as_slice()[0];
    std::array::from_fn(|a| fluid.positions.iter().map(|p| p[a]).collect())
}

/// What one side measured over the run.
#[derive(Default)]
struct SideStats {
    /// Frame times in ms, per pool (1 thread, 2 threads).
    times: [Vec<f64>; 2],
    /// Largest leak count after any frame.
    leaks: usize,
    /// Largest density after any frame (shared estimator).
    max_density: f32,
    /// Largest density by the side's own estimator.
    max_own_density: f32,
    /// The frame after which the first leak was seen, if any.
    first_leak: Option<usize>,
}

impl SideStats {
    fn record(
        &mut self,
        frame: usize,
        pool: usize,
        time: Duration,
        leaks: usize,
        density: f32,
        own: f32,
    ) {
        self.times[pool].push(ms(time));
        self.max_own_density = self.max_own_density.max(own);
        if leaks > 0 && self.first_leak.is_none() {
            self.first_leak = Some(frame);
        }
        self.leaks = self.leaks.max(leaks);
        self.max_density = self.max_density.max(density);
    }

    /// No leak, and the side's own density estimate within 10% of its rest density.
    fn stable(&self) -> bool {
        self.leaks == 0 && self.max_own_density <= DENSITY_LIMIT * RHO0
    }

    fn median(&self, pool: usize) -> f64 {
        median(&mut self.times[pool].clone())
    }
}

/// pbf's own figures over its 2-thread frames, for the roofline line.
#[derive(Default)]
struct PbfPasses {
    steps: u64,
    constraint_time: Duration,
    /// Neighbour passes of the constraint phase: `iterations` lambda and delta passes
    /// per step (the final densities come with the XSPH pass, in the velocity phase).
    passes: u64,
    /// Pair evaluations of those passes: each pass evaluates every entry of the step's
    /// neighbour lists (`StepDiagnostics::list_pairs`).
    pairs: f64,
}

struct DamRow {
    n: usize,
    particles: usize,
    pbf: SideStats,
    salva: SideStats,
    passes: PbfPasses,
    candidates: f64,
    neighbours: f64,
}

fn dam_break(o: &Options, pools: &[rayon::ThreadPool; 2]) -> Vec<DamRow> {
    let mut rows = Vec::new();
    for &n in &o.sizes {
        let scene = DamBreak::new(n);
        let particles = scene.block.len();
        let mut pbf = scene.pbf(
            o.pbf_substeps,
            o.pbf_iterations,
            o.pbf_acceleration,
            o.pbf_coarse,
        );
        let mut salva =
            (!o.pbf_only).then(|| scene.salva(o.salva_default_volume, o.salva_wall_layers));
        let mut probe = DensityProbe::new();
        let mut salva_density = SalvaDensity::default();
        let mut row = DamRow {
            n,
            particles,
            pbf: SideStats::default(),
            salva: SideStats::default(),
            passes: PbfPasses::default(),
            candidates: 0.0,
            neighbours: 0.0,
        };
        eprintln!(
            "dam break n = {n}: {particles} particles, {} salva boundary particles, {} frames",
            salva
                .as_ref()
                .map_or(0, |s| s.boundaries().as_slice()[0].num_particles()),
            o.frames
        );
        let gravity = Vector3::new(0.0, -GRAVITY, 0.0);
        let salva_dt = FRAME / o.salva_substeps as f32;
        for frame in 1..=o.frames {
            let which = frame % 2; // odd frames on 2 threads, even on 1
            let p = &pools[which];
            // pbf's frame.
            let start = Instant::now();
            let mut diagnostics = Vec::with_capacity(o.pbf_substeps);
            p.install(|| {
                for _ in 0..o.pbf_substeps {
                    diagnostics.push(pbf.step().expect("pbf step"));
                }
            });
            let pbf_time = start.elapsed();
            let mut own = 0.0f32;
            for d in &diagnostics {
                // pbf's own estimate: the densities of each substep's final
                // positions, from its XSPH pass (compression only).
                own = own.max(RHO0 * (1.0 + d.max_density_error));
                if which == 1 {
                    row.passes.steps += 1;
                    row.passes.constraint_time += d.times.constraints;
                    let passes = 2 * u64::from(d.iterations);
                    row.passes.passes += passes;
                    row.passes.pairs += d.list_pairs as f64 * passes as f64;
                }
            }
            // Measurements, not timed.
            let pos = pbf.positions();
            let (leaks, density) = (scene.leaks(pos), p.install(|| probe.max_density(pos)));
            row.pbf.record(frame, which, pbf_time, leaks, density, own);
            // salva's frame, right after.
            let mut salva_time = Duration::ZERO;
            if let Some(salva) = salva.as_mut() {
                let start = Instant::now();
                p.install(|| {
                    for _ in 0..o.salva_substeps {
                        salva.step(salva_dt, &gravity);
                    }
                });
                salva_time = start.elapsed();
                let sp = salva_positions(salva);
                let sp = [sp[0].as_slice(), &sp[1], &sp[2]];
                let (leaks, density) = (scene.leaks(sp), p.install(|| probe.max_density(sp)));
                let own = p.install(|| salva_density.max_density(salva));
                row.salva
                    .record(frame, which, salva_time, leaks, density, own);
            }
            eprintln!(
                "  frame {frame:3} ({}t): pbf {:8.2} ms, leaks {:5}, max density {:5.0} (own {:5.0}) | salva {:9.2} ms, leaks {:5}, max density {:5.0} (own {:5.0})",
                which + 1,
                ms(pbf_time),
                row.pbf.leaks,
                row.pbf.max_density,
                row.pbf.max_own_density,
                ms(salva_time),
                row.salva.leaks,
                row.salva.max_density,
                row.salva.max_own_density
            );
        }
        if let Some(salva) = &salva {
            let sp = salva_positions(salva);
            let t = scene.tank();
            let out: Vec<String> = (0..sp[0].len())
                .filter(|&i| scene.leaks([&sp[0][i..=i], &sp[1][i..=i], &sp[2][i..=i]]) > 0)
                .take(6)
                .map(|i| {
                    format!(
                        "({:.3}, {:.3}, {:.3}) from ({:.3}, {:.3}, {:.3})",
                        sp[0][i],
                        sp[1][i],
                        sp[2][i],
                        scene.block[i][0],
                        scene.block[i][1],
                        scene.block[i][2]
                    )
                })
                .collect();
            if !out.is_empty() {
                eprintln!(
                    "  salva particles outside the tank [0, {:.3}] x [0, ..) x [0, {:.3}] at the end (up to 6): {}",
                    t[0],
                    t[2],
                    out.join("; ")
                );
            }
        }
        let (c, nb) = pools[1].install(|| probe.candidates_and_neighbours(pbf.positions()));
        row.candidates = c;
        row.neighbours = nb;
        rows.push(row);
    }
    rows
}

fn print_dam(o: &Options, rows: &[DamRow]) {
    println!();
    println!(
        "### Dam break: pbf ({} substeps x {} iterations{}{} per frame) vs salva3d 0.11 DFSPH ({} substeps per frame)",
        o.pbf_substeps,
        o.pbf_iterations,
        match o.pbf_acceleration {
            Acceleration::Chebyshev => ", Chebyshev",
            _ => "",
        },
        if o.pbf_coarse {
            ", coarse correction"
        } else {
            ""
        },
        o.salva_substeps
    );
    println!();
    println!(
        "{} frames of 1/60 s from rest; times are medians over the frames run on each pool; leaks and max densities are the worst after any frame. Max density: shared estimator / the side's own estimator. Stable: no leak and own max density <= {:.0}.",
        o.frames,
        DENSITY_LIMIT * RHO0
    );
    println!();
    println!(
        "| scene | particles | threads | pbf ms/frame | salva ms/frame | salva / pbf | pbf leaks | pbf max density (shared / own) | salva leaks | salva max density (shared / own) | stable (pbf, salva) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in rows {
        for (pool, threads) in [(0usize, 1usize), (1, 2)] {
            if r.pbf.times[pool].is_empty() {
                continue;
            }
            let p = r.pbf.median(pool);
            let s = if r.salva.times[pool].is_empty() {
                f64::NAN
            } else {
                r.salva.median(pool)
            };
            let yes = |b: bool| if b { "yes" } else { "**no**" };
            println!(
                "| dam break n = {} | {} | {} | {} | {} | **{:.1}x** | {} | {:.0} / {:.0} | {}{} | {:.0} / {:.0} | {}, {} |",
                r.n,
                r.particles,
                threads,
                fmt_ms(p),
                fmt_ms(s),
                s / p,
                r.pbf.leaks,
                r.pbf.max_density,
                r.pbf.max_own_density,
                r.salva.leaks,
                r.salva
                    .first_leak
                    .map_or(String::new(), |f| format!(" (from frame {f})")),
                r.salva.max_density,
                r.salva.max_own_density,
                yes(r.pbf.stable()),
                yes(r.salva.stable())
            );
        }
    }
    println!();
    println!(
        "- shared estimator: rho0 * sum_j W_poly6(x_ij) / (the same sum inside the rest lattice), over fluid particles only, from positions after each frame; it reads exactly 1000 in the initial block on both sides"
    );
    println!(
        "- own estimators: pbf: the densities its XSPH pass computes at each substep's final positions (poly6, m = rho0 (2r)^3, compression only); salva: sum_j m_j W + sum_b rho0 V_b W (cubic spline, its particle volumes and boundary volumes), recomputed from its public state after each frame"
    );
}

// ---------------------------------------------------------------------------------
// Neighbour search.
// ---------------------------------------------------------------------------------

/// SplitMix64: a small deterministic generator for the point sets.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// `side^3` lattice points of spacing `SPACING`, each moved by up to a quarter
/// spacing per axis, in a random order.
fn jittered_lattice(side: usize) -> Vec<[f32; 3]> {
    let mut rng = Rng(side as u64);
    let mut points = Vec::with_capacity(side * side * side);
    for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                points.push([i, j, k].map(|c| (c as f32 + 0.25 * rng.signed()) * SPACING));
            }
        }
    }
    for i in (1..points.len()).rev() {
        points.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    points
}

/// What a method returns: build time, pass time, pairs found (self excluded) and
/// the sum of all kernel sums (a checksum).
struct SearchRun {
    build: Duration,
    pass: Duration,
    pairs: u64,
    checksum: f64,
}

/// The methods compared.
const METHODS: [&str; 4] = [
    "pbf-grid, fused cell-blocked pass (no lists; AVX-512F where present)",
    "pbf-grid, CSR list + pass",
    "splashsurf_lib 0.14 spatial hashing (Vec<Vec>) + pass",
    "kiddo 6.3 ImmutableKdTree + within-radius queries",
];

/// Scratch kept across repetitions, so that allocation of the first run is not timed
/// twice for the methods that reuse buffers (pbf-grid's API is built for reuse).
struct SearchState {
    grid: Grid<3>,
    soa: [Vec<f32>; 3],
    sorted: [Vec<f32>; 3],
    list: NeighbourList,
    sums: Vec<f32>,
    counts: Vec<u32>,
}

fn run_method(
    method: usize,
    points: &[[f32; 3]],
    threads: usize,
    kernel: &Kernel<3>,
    st: &mut SearchState,
) -> SearchRun {
    let h = 2.0 * SPACING;
    let h2 = h * h;
    let n = points.len();
    st.sums.clear();
    st.sums.resize(n, 0.0);
    st.counts.clear();
    st.counts.resize(n, 0);
    match method {
        0 | 1 => {
            let start = Instant::now();
            let [x, y, z] = &st.soa;
            st.grid.rebuild([x, y, z], h).expect("finite points");
            for axis in 0..3 {
                st.sorted[axis].resize(n, 0.0);
                st.grid
                    .reorder_into(&st.soa[axis], &mut st.sorted[axis])
                    .expect("same length");
            }
            let build = start.elapsed();
            let [x, y, z] = &st.sorted;
            let sorted = [x.as_slice(), y, z];
            let grid = &st.grid;
            let start = Instant::now();
            if method == 0 {
                // The widest lanes this CPU runs (as the `grid` bench's headline row).
                fused_density(grid, kernel, sorted, &mut st.sums);
                let pass = start.elapsed();
                // Pairs from a separate, untimed count (the fused pass has no lists).
                count_pairs(grid, sorted, &mut st.counts);
                return finish(build, pass, &st.sums, &st.counts);
            } else {
                grid.neighbour_list(sorted, &mut st.list).expect("list");
                let list = &st.list;
                st.sums
                    .par_iter_mut()
                    .zip(st.counts.par_iter_mut())
                    .enumerate()
                    .with_min_len(256)
                    .for_each(|(i, (s, c))| {
                        let nb = list.neighbours(i);
                        let mut acc = kernel.poly6(0.0);
                        for &j in nb {
                            let j = j as usize;
                            let d = [x[i] - x[j], y[i] - y[j], z[i] - z[j]];
                            acc += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                        }
                        *s = acc;
                        *c = nb.len() as u32;
                    });
            }
            let pass = start.elapsed();
            finish(build, pass, &st.sums, &st.counts)
        }
        2 => {
            let start = Instant::now();
            let positions: Vec<splashsurf_lib::nalgebra::Vector3<f32>> = points
                .iter()
                .map(|p| splashsurf_lib::nalgebra::Vector3::new(p[0], p[1], p[2]))
                .collect();
            let domain = splashsurf_lib::Aabb3d::from_points(&positions);
            let lists = splashsurf_lib::neighborhood_search::search::<i64, f32>(
                &domain,
                &positions,
                h,
                threads > 1,
            );
            let build = start.elapsed();
            let start = Instant::now();
            st.sums
                .par_iter_mut()
                .zip(st.counts.par_iter_mut())
                .enumerate()
                .with_min_len(256)
                .for_each(|(i, (s, c))| {
                    let p = points[i];
                    let mut acc = kernel.poly6(0.0);
                    for &j in &lists[i] {
                        let q = points[j];
                        let d = [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
                        acc += kernel.poly6(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                    }
                    *s = acc;
                    *c = lists[i].len() as u32;
                });
            let pass = start.elapsed();
            drop(black_box(lists));
            finish(build, pass, &st.sums, &st.counts)
        }
        _ => {
            let start = Instant::now();
            let tree: ImmutableKdTree<f32, 3> = if threads > 1 {
                ImmutableKdTree::new_from_slice_parallel(points).expect("tree")
            } else {
                ImmutableKdTree::new_from_slice(points).expect("tree")
            };
            let build = start.elapsed();
            let start = Instant::now();
            st.sums
                .par_iter_mut()
                .zip(st.counts.par_iter_mut())
                .enumerate()
                .with_min_len(256)
                .for_each(|(i, (s, c))| {
                    let mut acc = 0.0;
                    let mut count = 0u32;
                    tree.query(&points[i])
                        .within::<SquaredEuclidean<f32>>(h2)
                        .unsorted()
                        .exclusive_boundaries()
                        .visit(|hit| {
                            acc += kernel.poly6(hit.distance);
                            count += 1;
                        });
                    *s = acc;
                    *c = count - 1; // the point itself
                });
            let pass = start.elapsed();
            drop(black_box(tree));
            finish(build, pass, &st.sums, &st.counts)
        }
    }
}

fn finish(build: Duration, pass: Duration, sums: &[f32], counts: &[u32]) -> SearchRun {
    SearchRun {
        build,
        pass,
        pairs: counts.iter().map(|&c| u64::from(c)).sum(),
        checksum: sums.iter().map(|&s| f64::from(s)).sum(),
    }
}

fn count_pairs(grid: &Grid<3>, sorted: [&[f32]; 3], counts: &mut [u32]) {
    grid.par_for_each_cell(counts, |cell, out| {
        let first = grid.cells()[cell].start as usize;
        for (k, c) in out.iter_mut().enumerate() {
            let i = first + k;
            grid.for_each_neighbour(sorted, i, |j| *c += u32::from(j != i));
        }
    })
    .expect("one count per point");
}

struct SearchRow {
    side: usize,
    threads: usize,
    /// Per method: median build, pass, total (ms).
    medians: Vec<[f64; 3]>,
    pairs: u64,
}

fn search(o: &Options, pools: &[rayon::ThreadPool; 2]) -> Vec<SearchRow> {
    let kernel = Kernel::<3>::new(2.0 * SPACING).expect("h > 0");
    let mut rows = Vec::new();
    for &side in &o.sides {
        let points = jittered_lattice(side);
        let n = points.len();
        let mut st = SearchState {
            grid: Grid::new(),
            soa: std::array::from_fn(|a| points.iter().map(|p| p[a]).collect()),
            sorted: Default::default(),
            list: NeighbourList::new(),
            sums: Vec::new(),
            counts: Vec::new(),
        };
        for (pool, threads) in [(0usize, 1usize), (1, 2)] {
            let p = &pools[pool];
            eprintln!(
                "search: {n} points, {threads} thread(s), {} repetitions",
                o.reps
            );
            // One untimed run of each to grow buffers and check agreement.
            let mut reference: Option<(u64, f64)> = None;
            for (m, name) in METHODS.iter().enumerate() {
                let r = p.install(|| run_method(m, &points, threads, &kernel, &mut st));
                match reference {
                    None => reference = Some((r.pairs, r.checksum)),
                    Some((pairs, checksum)) => {
                        assert_eq!(r.pairs, pairs, "{name} finds other pairs");
                        assert!(
                            ((r.checksum - checksum) / checksum).abs() < 1e-4,
                            "{name}: kernel sums differ ({} vs {checksum})",
                            r.checksum
                        );
                    }
                }
            }
            let mut samples: Vec<[Vec<f64>; 3]> =
                (0..METHODS.len()).map(|_| Default::default()).collect();
            // Round robin: each repetition runs every method once, back to back.
            for rep in 0..o.reps {
                for (m, s) in samples.iter_mut().enumerate() {
                    let r = p.install(|| run_method(m, &points, threads, &kernel, &mut st));
                    s[0].push(ms(r.build));
                    s[1].push(ms(r.pass));
                    s[2].push(ms(r.build + r.pass));
                }
                eprintln!(
                    "  rep {}: {}",
                    rep + 1,
                    samples
                        .iter()
                        .map(|s| format!("{:.1}", s[2].last().copied().unwrap_or(0.0)))
                        .collect::<Vec<_>>()
                        .join(" / ")
                );
            }
            rows.push(SearchRow {
                side,
                threads,
                medians: samples
                    .iter_mut()
                    .map(|s| [median(&mut s[0]), median(&mut s[1]), median(&mut s[2])])
                    .collect(),
                pairs: reference.map_or(0, |r| r.0),
            });
        }
    }
    rows
}

fn print_search(o: &Options, rows: &[SearchRow]) {
    println!();
    println!(
        "### Neighbour search: build + one full pass (poly6 sum over each point's neighbours)"
    );
    println!();
    println!(
        "Jittered lattice (spacing s = {SPACING}, up to s/4 per axis, shuffled order), radius 2s; medians of {} repetitions, methods run round robin",
        o.reps
    );
    println!();
    println!("| points | threads | method | build ms | pass ms | total ms | fastest peer / this |");
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        let peers = r.medians[2..]
            .iter()
            .map(|m| m[2])
            .fold(f64::INFINITY, f64::min);
        for (m, med) in r.medians.iter().enumerate() {
            let ratio = if m < 2 {
                format!("**{:.1}x**", peers / med[2])
            } else {
                format!("{:.2}x", peers / med[2])
            };
            println!(
                "| {} ({}^3) | {} | {} | {} | {} | {} | {} |",
                r.side.pow(3),
                r.side,
                r.threads,
                METHODS[m],
                fmt_ms(med[0]),
                fmt_ms(med[1]),
                fmt_ms(med[2]),
                ratio
            );
        }
    }
    println!();
    for r in rows.iter().filter(|r| r.threads == 1) {
        println!(
            "- {} points: {} pairs within the radius (self excluded), {:.1} per point, the same for every method",
            r.side.pow(3),
            r.pairs,
            r.pairs as f64 / r.side.pow(3) as f64
        );
    }
}

// ---------------------------------------------------------------------------------
// Machine notes and roofline.
// ---------------------------------------------------------------------------------

fn print_machine(rows: &[DamRow]) {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let cpu = pbf_benches::machine::Cpu::this_machine();
    println!();
    println!("### Machine and roofline");
    println!();
    match &cpu {
        Some(cpu) => println!(
            "- CPU: {cpu}, clock {} (from /proc/cpuinfo), AVX-512F {}",
            cpu.mhz.map_or("unknown".into(), |m| format!("{m:.0} MHz")),
            if cpu.avx512f { "present" } else { "absent" }
        ),
        None => println!("- {}", pbf_benches::machine::describe()),
    }
    println!(
        "- pbf's SIMD backend of f32x8 (pbf_kernels::simd_backend()): {}",
        pbf_kernels::simd_backend()
    );
    let Some(cpu) = cpu else {
        return;
    };
    let Some(ghz) = cpu.mhz.map(|m| m / 1e3) else {
        return;
    };
    // Peak single precision per core and cycle, by the CPU's generation
    // (`Cpu::peak_flop_per_cycle`: 64 on Zen 5, 32 on Zen 4).
    let (per_cycle, how) = cpu.peak_flop_per_cycle();
    let peak = cores as f64 * ghz * f64::from(per_cycle);
    println!(
        "- peak single precision: {cores} cores x {ghz:.2} GHz x {per_cycle} FLOP/cycle ({how}) = {peak:.0} GFLOP/s; at the active width ({}): {:.0} GFLOP/s",
        pbf_kernels::simd_backend(),
        peak * width_fraction(per_cycle)
    );
    for r in rows {
        let p = &r.passes;
        if p.steps == 0 || p.constraint_time.is_zero() {
            continue;
        }
        let secs = p.constraint_time.as_secs_f64();
        let n = r.particles as f64;
        let evaluated = p.pairs / secs;
        let useful = n * r.neighbours * p.passes as f64 / secs;
        println!(
            "- roofline, dam break n = {} ({} particles), 2 threads, constraint phase ({} neighbour passes over {} steps, {:.2} ms per step): the lists hold {:.1} pairs per particle (within h(1 + skin), the skin 0.04-0.1 h as the flow allows, as last built by the step's searches and mended; a grid of cells of h would offer about {:.0} candidates); {:.2} G list pairs/s evaluated, {:.2} G pairs within h/s; at ~30 FLOP per pair that is {:.0} GFLOP/s = {:.1}% of the peak ({:.1}% of the active width's)",
            r.n,
            r.particles,
            p.passes,
            p.steps,
            1e3 * secs / p.steps as f64,
            p.pairs / (n * p.passes as f64),
            r.candidates,
            evaluated / 1e9,
            useful / 1e9,
            30.0 * evaluated / 1e9,
            100.0 * 30.0 * evaluated / 1e9 / peak,
            100.0 * 30.0 * evaluated / 1e9 / (peak * width_fraction(per_cycle))
        );
    }
}

/// The share of the peak (`per_cycle` FLOP a core and cycle) that two FMA pipes at
/// the active width of `f32x8` reach: `width / 8` FLOP a cycle (16 for SSE, 32 for
/// AVX), 4 for scalar code.
fn width_fraction(per_cycle: u32) -> f64 {
    let reach = match pbf_kernels::simd_backend() {
        b if b.contains("avx") => 32.0,
        b if b.contains("sse") => 16.0,
        _ => 4.0,
    };
    (reach / f64::from(per_cycle)).min(1.0)
}

fn main() {
    let o = match Options::parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let pools = [pool(1), pool(2)];
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    println!(
        "pbf peers harness, arguments: {}",
        if args.is_empty() {
            "(defaults)".to_string()
        } else {
            args.join(" ")
        }
    );
    let dam_rows = if o.dam {
        dam_break(&o, &pools)
    } else {
        Vec::new()
    };
    let search_rows = if o.search {
        search(&o, &pools)
    } else {
        Vec::new()
    };
    if o.dam {
        print_dam(&o, &dam_rows);
    }
    if o.search {
        print_search(&o, &search_rows);
    }
    print_machine(&dam_rows);
}
