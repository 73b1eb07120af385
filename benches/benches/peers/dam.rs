//! The dam break against `salva3d`: both sides on the same particles and frames, and
//! one density estimator for both.

use nalgebra::Vector3;
use pbf_grid::Grid;
use pbf_kernels::Kernel;
use pbf_solver::{Acceleration, Collider, ColliderKind, Domain, Iterations, Params, Shape, Solver};
use rayon::prelude::*;
use salva3d::LiquidWorld;
use salva3d::kernel::{CubicSplineKernel, Kernel as SalvaKernel};
use salva3d::object::interaction_groups::InteractionGroups;
use salva3d::object::{Boundary, Fluid};
use salva3d::solver::DFSPHSolver;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{
    DENSITY_LIMIT, FRAME, GRAVITY, H, Options, RADIUS, RHO0, SPACING, WALL, fmt_ms, median, ms,
};

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

pub(crate) struct DamRow {
    n: usize,
    particles: usize,
    pbf: SideStats,
    salva: SideStats,
    passes: PbfPasses,
    candidates: f64,
    neighbours: f64,
}

pub(crate) fn dam_break(o: &Options, pools: &[rayon::ThreadPool; 2]) -> Vec<DamRow> {
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

pub(crate) fn print_dam(o: &Options, rows: &[DamRow]) {
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
// Machine notes and roofline.
// ---------------------------------------------------------------------------------

pub(crate) fn print_machine(rows: &[DamRow]) {
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
