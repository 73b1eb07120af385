//! What a scene holds: the `[domain]`, its `[[collider]]`s with the fields each shape
//! takes, `[[block]]`s of fluid and `[[emitter]]`s.

use pbf_solver::{ColliderKind, Shape};
use serde::{Deserialize, Serialize};

use super::vector;

/// `[domain]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct DomainSpec {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub friction: Option<f64>,
    pub restitution: Option<f64>,
    pub wall: Option<WallSpec>,
    /// Which axes are periodic, one flag an axis (`Domain::with_periodic`).
    pub periodic: Option<Vec<bool>>,
    /// The velocity of each face, one `[lo face, hi face]` pair of vectors an axis
    /// (`Domain::with_wall_velocity`): a no-slip face sliding along itself.
    pub wall_velocity: Option<Vec<[Vec<f64>; 2]>>,
}

/// `wall = "free-slip" | "no-slip"` for every face of the domain, or one pair
/// `[lo face, hi face]` per axis: [`pbf_solver::Wall`].
///
/// ```
/// use pbf_cli::scene::{WallName, WallSpec};
/// #[derive(serde::Deserialize)]
/// struct T { wall: WallSpec }
/// let t: T = toml::from_str("wall = \"no-slip\"").unwrap();
/// assert_eq!(t.wall, WallSpec::All(WallName::NoSlip));
/// let t: T = toml::from_str("wall = [[\"free-slip\", \"free-slip\"], [\"no-slip\", \"no-slip\"]]").unwrap();
/// assert_eq!(t.wall, WallSpec::PerFace(vec![[WallName::FreeSlip; 2], [WallName::NoSlip; 2]]));
/// assert!(toml::from_str::<T>("wall = \"sticky\"").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "\"free-slip\", \"no-slip\", or one [lo, hi] pair of them per axis"
)]
pub enum WallSpec {
    /// One condition for every face.
    All(WallName),
    /// `[lo face, hi face]` for each axis.
    PerFace(Vec<[WallName; 2]>),
}

/// `"free-slip"` or `"no-slip"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[allow(missing_docs)]
pub enum WallName {
    FreeSlip,
    NoSlip,
}

impl WallName {
    /// The solver's [`Wall`](pbf_solver::Wall).
    pub fn wall(self) -> pbf_solver::Wall {
        match self {
            WallName::FreeSlip => pbf_solver::Wall::FreeSlip,
            WallName::NoSlip => pbf_solver::Wall::NoSlip,
        }
    }
}

impl WallSpec {
    /// The condition of every face, `[axis][0]` at `lo`, `[axis][1]` at `hi` (the
    /// length of a per-face list is checked with the scene's dimension).
    pub fn walls<const D: usize>(&self) -> [[pbf_solver::Wall; 2]; D] {
        core::array::from_fn(|a| match self {
            WallSpec::All(w) => [w.wall(); 2],
            WallSpec::PerFace(faces) => faces[a].map(WallName::wall),
        })
    }
}

/// The `shape` of a collider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ShapeName {
    Plane,
    Box,
    Sphere,
    Capsule,
    Cylinder,
}

impl ShapeName {
    pub(crate) fn name(self) -> &'static str {
        match self {
            ShapeName::Plane => "plane",
            ShapeName::Box => "box",
            ShapeName::Sphere => "sphere",
            ShapeName::Capsule => "capsule",
            ShapeName::Cylinder => "cylinder",
        }
    }

    /// The fields this shape takes, vectors first.
    pub(super) fn fields(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            ShapeName::Plane => (&["point", "normal"], &[]),
            ShapeName::Box => (&["center", "half_extents"], &[]),
            ShapeName::Sphere => (&["center"], &["radius"]),
            ShapeName::Capsule => (&["a", "b"], &["radius"]),
            ShapeName::Cylinder => (&["base"], &["radius", "height"]),
        }
    }
}

/// `[[collider]]`: a shape with the fields it takes (see [`pbf_solver::Shape`]), an
/// optional `container` making it hollow, friction and restitution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ColliderSpec {
    pub shape: ShapeName,
    pub point: Option<Vec<f64>>,
    pub normal: Option<Vec<f64>>,
    pub center: Option<Vec<f64>>,
    pub half_extents: Option<Vec<f64>>,
    pub a: Option<Vec<f64>>,
    pub b: Option<Vec<f64>>,
    pub base: Option<Vec<f64>>,
    pub radius: Option<f64>,
    pub height: Option<f64>,
    pub container: Option<ContainerSpec>,
    pub friction: Option<f64>,
    pub restitution: Option<f64>,
    /// `"free-slip"` (the default) or `"no-slip"` (needs a viscosity).
    pub wall: Option<WallName>,
}

/// The names of every shape's vector fields, in the order scene files list them.
pub(crate) const VECTOR_FIELDS: [&str; 7] = [
    "point",
    "normal",
    "center",
    "half_extents",
    "a",
    "b",
    "base",
];

impl ColliderSpec {
    pub(crate) fn vector_field(&self, name: &str) -> Option<&Vec<f64>> {
        match name {
            "point" => self.point.as_ref(),
            "normal" => self.normal.as_ref(),
            "center" => self.center.as_ref(),
            "half_extents" => self.half_extents.as_ref(),
            "a" => self.a.as_ref(),
            "b" => self.b.as_ref(),
            "base" => self.base.as_ref(),
            _ => None,
        }
    }

    pub(super) fn scalar_field(&self, name: &str) -> Option<f64> {
        match name {
            "radius" => self.radius,
            "height" => self.height,
            _ => None,
        }
    }

    /// The solver's shape, its fields read off this collider (the checks have made
    /// sure that the shape's fields are given).
    pub(super) fn shape<const D: usize>(&self) -> Shape<D> {
        let v = |name: &str| {
            self.vector_field(name)
                .map(|v| vector::<D>(v))
                .unwrap_or([0.0; D])
        };
        let x = |name: &str| self.scalar_field(name).unwrap_or(0.0) as f32;
        match self.shape {
            ShapeName::Plane => Shape::Plane {
                point: v("point"),
                normal: v("normal"),
            },
            ShapeName::Box => Shape::Box {
                center: v("center"),
                half_extents: v("half_extents"),
            },
            ShapeName::Sphere => Shape::Sphere {
                center: v("center"),
                radius: x("radius"),
            },
            ShapeName::Capsule => Shape::Capsule {
                a: v("a"),
                b: v("b"),
                radius: x("radius"),
            },
            ShapeName::Cylinder => Shape::Cylinder {
                base: v("base"),
                radius: x("radius"),
                height: x("height"),
            },
        }
    }

    /// Solid, or a hollow container.
    pub(super) fn kind(&self) -> ColliderKind {
        match &self.container {
            None => ColliderKind::Solid,
            Some(k) => ColliderKind::Container {
                wall_thickness: k.wall_thickness as f32,
                open_top: k.open_top,
            },
        }
    }
}

/// `container = { wall_thickness, open_top }`: see [`pbf_solver::ColliderKind::Container`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ContainerSpec {
    pub wall_thickness: f64,
    #[serde(default)]
    pub open_top: bool,
}

/// `[[block]]`: a box filled with fluid on a lattice at the rest spacing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BlockSpec {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub velocity: Option<Vec<f64>>,
}

/// `[[emitter]]`: see [`pbf_solver::Emitter::new`]; `start` defaults to 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct EmitterSpec {
    pub origin: Vec<f64>,
    pub direction: Vec<f64>,
    pub speed: f64,
    pub radius: f64,
    pub start: Option<f64>,
    pub stop: f64,
}
