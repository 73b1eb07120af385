//! The validation suite behind `pbf validate`.

mod conservation;
mod dam_break;
mod font;
mod hydrostatic;
mod incompressibility;
mod plot;
mod report;
mod splash;
mod stability;
mod viscosity;

pub use conservation::{
    EnergyTrace, MomentumTrace, ScaleInvariance, energy_in_a_closed_box, momentum_without_walls,
    scale_invariance,
};
pub use dam_break::{
    DamBreakSpec, Deviation, EXPERIMENT_WIDTH, FRONT_DEPTH, FrontCurve, MARTIN_MOYCE_CSV,
    REFINEMENT_DENSITY_ERROR, RITTER_FRONT_SPEED, ReferencePoint, WATER_VISCOSITY, deviation,
    front_by_depth, late_front_speed, martin_moyce, run_dam_break, water_viscosity,
};
pub use hydrostatic::{
    HYDROSTATIC_TOLERANCE, HydrostaticRun, HydrostaticSpec, SETTLED_ENERGY, hydrostatic_column,
};
pub use incompressibility::{ColumnResult, ColumnSpec, run_column};
pub use report::{Part, ValidateOptions, ValidationReport, validate};
pub use splash::{
    SPLASH_CONVERGED, SPLASH_CUBE_SIDE, SPLASH_DURATION, SPLASH_GRAVITY, SPLASH_ITERATIONS,
    SPLASH_RIM, SPLASH_STEP_SPEED, SplashRun, SplashSpec, run_splash, splash_settles,
};
pub use stability::{
    ENERGY_TOLERANCE, GLASS_HEIGHT, MAX_DENSITY_ERROR, MAX_EXTRA_SETTLE, SPACING, StabilityCell,
    StabilityResult, StabilityTiming, UNSTABLE_SPEED_OVER_H, run_stability_cell, stability_grid,
};
pub use viscosity::{
    COUETTE_TIMES, COUETTE_TOLERANCE, CouetteRun, DECAY_TOLERANCE, POISEUILLE_TOLERANCE,
    PoiseuilleRun, ShearDecay, couette, poiseuille, shear_decay,
};
