//! The `[solver]` table: its fields, the words-or-numbers among them, and the
//! [`pbf_solver::ParamsBuilder`] it fills.

use pbf_solver::{Acceleration, Backend, Iterations, Params, ParamsBuilder, Relaxation};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::vector;

/// `[solver]`: every field but `spacing` is optional and defaults as in
/// [`pbf_solver::Params::builder`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)] // The fields are the builder's, documented there.
pub struct SolverSpec {
    pub spacing: f64,
    pub kernel_radius_rel: Option<f64>,
    pub rest_density: Option<f64>,
    pub time_step: Option<f64>,
    /// A fixed number of constraint iterations per step (exclusive with `adaptive`).
    pub iterations: Option<u32>,
    /// Adaptive iteration count (exclusive with `iterations`).
    pub adaptive: Option<AdaptiveSpec>,
    pub gravity: Option<Vec<f64>>,
    pub cfm_rel: Option<f64>,
    pub s_corr_k: Option<f64>,
    pub s_corr_n: Option<u32>,
    pub s_corr_dq_rel: Option<f64>,
    pub xsph_c: Option<f64>,
    pub xsph_period: Option<XsphPeriodSpec>,
    pub vorticity_rel: Option<f64>,
    /// Kinematic viscosity in m^2/s.
    pub viscosity: Option<f64>,
    pub unilateral: Option<bool>,
    pub relaxation: Option<RelaxationSpec>,
    pub backend: Option<BackendName>,
    pub acceleration: Option<AccelerationName>,
    pub coarse_correction: Option<bool>,
    pub keep_lists: Option<bool>,
}

impl SolverSpec {
    /// The parameters' builder with every field the table gives set; pbf-solver checks
    /// the values when it builds.
    pub(super) fn builder<const D: usize>(&self) -> ParamsBuilder<D> {
        let s = self;
        let mut b = Params::<D>::builder(s.spacing as f32);
        if let Some(v) = s.kernel_radius_rel {
            b = b.kernel_radius_rel(v as f32);
        }
        if let Some(v) = s.rest_density {
            b = b.rest_density(v as f32);
        }
        if let Some(v) = s.time_step {
            b = b.time_step(v as f32);
        }
        if let Some(n) = s.iterations {
            b = b.iterations(Iterations::Fixed(n));
        }
        if let Some(a) = &s.adaptive {
            b = b.iterations(Iterations::Adaptive {
                max_density_error_percent: a.max_density_error_percent as f32,
                min: a.min,
                max: a.max,
            });
        }
        if let Some(g) = &s.gravity {
            b = b.gravity(vector(g));
        }
        if let Some(v) = s.cfm_rel {
            b = b.cfm_rel(v as f32);
        }
        if let Some(v) = s.s_corr_k {
            b = b.s_corr_k(v as f32);
        }
        if let Some(v) = s.s_corr_n {
            b = b.s_corr_n(v);
        }
        if let Some(v) = s.s_corr_dq_rel {
            b = b.s_corr_dq_rel(v as f32);
        }
        if let Some(v) = s.xsph_c {
            b = b.xsph_c(v as f32);
        }
        if let Some(v) = s.xsph_period {
            b = b.xsph_period(match v {
                XsphPeriodSpec::Step => None,
                XsphPeriodSpec::Seconds(t) => Some(t as f32),
            });
        }
        if let Some(v) = s.vorticity_rel {
            b = b.vorticity_rel(v as f32);
        }
        if let Some(v) = s.viscosity {
            b = b.viscosity(v as f32);
        }
        if let Some(v) = s.unilateral {
            b = b.unilateral(v);
        }
        if let Some(v) = s.relaxation {
            b = b.relaxation(match v {
                RelaxationSpec::Auto => Relaxation::Auto,
                RelaxationSpec::Fixed(w) => Relaxation::Fixed(w as f32),
            });
        }
        if let Some(v) = s.acceleration {
            b = b.acceleration(match v {
                AccelerationName::None => Acceleration::None,
                AccelerationName::Chebyshev => Acceleration::Chebyshev,
            });
        }
        if let Some(v) = s.coarse_correction {
            b = b.coarse_correction(v);
        }
        if let Some(v) = s.keep_lists {
            b = b.keep_lists(v);
        }
        if let Some(v) = s.backend {
            b = b.backend(match v {
                BackendName::Lanes => Backend::Lanes,
                BackendName::Lanes8 => Backend::Lanes8,
                BackendName::Scalar => Backend::Scalar,
            });
        }
        b
    }
}

/// `adaptive = { max_density_error_percent, min, max }`: see
/// [`pbf_solver::Iterations::Adaptive`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AdaptiveSpec {
    pub max_density_error_percent: f64,
    pub min: u32,
    pub max: u32,
}

/// `relaxation = "auto"` or a number: the Jacobi relaxation of the constraint passes,
/// [`pbf_solver::Relaxation`] (the library checks that a number is in `(0, 1]`).
///
/// ```
/// use pbf_cli::scene::RelaxationSpec;
/// #[derive(serde::Deserialize)]
/// struct T { relaxation: RelaxationSpec }
/// let t: T = toml::from_str("relaxation = \"auto\"").unwrap();
/// assert_eq!(t.relaxation, RelaxationSpec::Auto);
/// let t: T = toml::from_str("relaxation = 1").unwrap();
/// assert_eq!(t.relaxation, RelaxationSpec::Fixed(1.0));
/// assert!(toml::from_str::<T>("relaxation = \"none\"").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RelaxationSpec {
    /// `"auto"`: [`pbf_solver::Relaxation::Auto`].
    Auto,
    /// A number: [`pbf_solver::Relaxation::Fixed`].
    Fixed(f64),
}

impl Serialize for RelaxationSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            RelaxationSpec::Auto => serializer.serialize_str("auto"),
            RelaxationSpec::Fixed(w) => serializer.serialize_f64(w),
        }
    }
}

impl<'de> Deserialize<'de> for RelaxationSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match word_or_number(deserializer, "auto", "\"auto\" or a number in (0, 1]")? {
                None => RelaxationSpec::Auto,
                Some(w) => RelaxationSpec::Fixed(w),
            },
        )
    }
}

/// `xsph_period = "step"` or a number of seconds: the time over which `xsph_c` blends,
/// [`pbf_solver::ParamsBuilder::xsph_period`] (the library checks that a number is finite
/// and positive).
///
/// ```
/// use pbf_cli::scene::XsphPeriodSpec;
/// #[derive(serde::Deserialize)]
/// struct T { xsph_period: XsphPeriodSpec }
/// let t: T = toml::from_str("xsph_period = \"step\"").unwrap();
/// assert_eq!(t.xsph_period, XsphPeriodSpec::Step);
/// let t: T = toml::from_str("xsph_period = 0.01").unwrap();
/// assert_eq!(t.xsph_period, XsphPeriodSpec::Seconds(0.01));
/// assert!(toml::from_str::<T>("xsph_period = \"frame\"").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XsphPeriodSpec {
    /// `"step"`: the paper's per-step blend (`None`).
    Step,
    /// A number: the blend `xsph_c` per this many seconds.
    Seconds(f64),
}

impl Serialize for XsphPeriodSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            XsphPeriodSpec::Step => serializer.serialize_str("step"),
            XsphPeriodSpec::Seconds(t) => serializer.serialize_f64(t),
        }
    }
}

impl<'de> Deserialize<'de> for XsphPeriodSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match word_or_number(deserializer, "step", "\"step\" or a number of seconds")? {
                None => XsphPeriodSpec::Step,
                Some(t) => XsphPeriodSpec::Seconds(t),
            },
        )
    }
}

/// A TOML value that is either the string `word` (`None`) or a number.
fn word_or_number<'de, D: Deserializer<'de>>(
    deserializer: D,
    word: &'static str,
    expecting: &'static str,
) -> Result<Option<f64>, D::Error> {
    struct Visitor {
        word: &'static str,
        expecting: &'static str,
    }
    impl serde::de::Visitor<'_> for Visitor {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            if v == self.word {
                Ok(None)
            } else {
                Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
            }
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v as f64))
        }
    }
    deserializer.deserialize_any(Visitor { word, expecting })
}

/// `backend = "lanes" | "lanes8" | "scalar"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendName {
    /// SIMD lanes, the widest the CPU runs (the default).
    Lanes,
    /// Eight SIMD lanes on every CPU (the same results as `lanes`).
    Lanes8,
    /// The scalar reference.
    Scalar,
}

/// `acceleration = "none" | "chebyshev"`: [`pbf_solver::Acceleration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccelerationName {
    /// Plain (relaxed) Jacobi iterations (the default).
    None,
    /// Chebyshev semi-iteration over them.
    Chebyshev,
}
