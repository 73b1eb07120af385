//! The checks serde cannot make: the dimension, array lengths, fields that exclude
//! each other, and the fields each collider shape takes.

use super::objects::ShapeName;
use super::{Scene, VECTOR_FIELDS};
use crate::error::CliError;
use crate::spans::KeyPath;

impl Scene {
    /// Checks what serde cannot: the dimension, array lengths, fields given together
    /// that exclude each other, and the fields each collider shape takes.
    pub(super) fn check_shape(&self) -> Result<(), CliError> {
        let f = &self.file;
        let root = KeyPath::root();
        if f.dimension != 2 && f.dimension != 3 {
            return Err(self.error_at_value(
                &root.key("dimension"),
                format!("must be 2 or 3, not {}", f.dimension),
            ));
        }
        let d = f.dimension as usize;
        let check = |path: KeyPath, v: &[f64]| -> Result<(), CliError> {
            if v.len() == d {
                Ok(())
            } else {
                Err(self.error_at_value(
                    &path,
                    format!("has {} entries, expected {d} (dimension = {d})", v.len()),
                ))
            }
        };
        let solver = root.key("solver");
        if let Some(g) = &f.solver.gravity {
            check(solver.key("gravity"), g)?;
        }
        if f.solver.iterations.is_some() && f.solver.adaptive.is_some() {
            return Err(self.error_at(
                &solver.key("adaptive"),
                "give either `iterations` or `adaptive`, not both",
            ));
        }
        let domain = root.key("domain");
        check(domain.key("lo"), &f.domain.lo)?;
        check(domain.key("hi"), &f.domain.hi)?;
        if let Some(super::objects::WallSpec::PerFace(faces)) = &f.domain.wall
            && faces.len() != d
        {
            return Err(self.error_at_value(
                &domain.key("wall"),
                format!(
                    "has {} [lo, hi] pairs, expected {d} (dimension = {d})",
                    faces.len()
                ),
            ));
        }
        if let Some(periodic) = &f.domain.periodic
            && periodic.len() != d
        {
            return Err(self.error_at_value(
                &domain.key("periodic"),
                format!(
                    "has {} entries, expected {d} (dimension = {d}): one flag an axis",
                    periodic.len()
                ),
            ));
        }
        if let Some(faces) = &f.domain.wall_velocity {
            let here = domain.key("wall_velocity");
            if faces.len() != d {
                return Err(self.error_at_value(
                    &here,
                    format!(
                        "has {} [lo, hi] pairs, expected {d} (dimension = {d})",
                        faces.len()
                    ),
                ));
            }
            for (axis, pair) in faces.iter().enumerate() {
                for (side, v) in pair.iter().enumerate() {
                    check(here.index(axis).index(side), v)?;
                }
            }
        }
        for (i, c) in f.colliders.iter().enumerate() {
            let here = root.key("collider").index(i);
            let (vectors, scalars) = c.shape.fields();
            for name in VECTOR_FIELDS {
                match (c.vector_field(name), vectors.contains(&name)) {
                    (Some(v), true) => check(here.key(name), v)?,
                    (None, true) => {
                        return Err(
                            self.error_at(&here, format!("a {} needs `{name}`", c.shape.name()))
                        );
                    }
                    (Some(_), false) => {
                        return Err(self.error_at(
                            &here.key(name),
                            format!(
                                "a {} takes no `{name}` (it takes {})",
                                c.shape.name(),
                                takes(c.shape)
                            ),
                        ));
                    }
                    (None, false) => {}
                }
            }
            for name in ["radius", "height"] {
                match (c.scalar_field(name), scalars.contains(&name)) {
                    (None, true) => {
                        return Err(
                            self.error_at(&here, format!("a {} needs `{name}`", c.shape.name()))
                        );
                    }
                    (Some(_), false) => {
                        return Err(self.error_at(
                            &here.key(name),
                            format!(
                                "a {} takes no `{name}` (it takes {})",
                                c.shape.name(),
                                takes(c.shape)
                            ),
                        ));
                    }
                    _ => {}
                }
            }
        }
        for (i, b) in f.blocks.iter().enumerate() {
            let here = root.key("block").index(i);
            check(here.key("lo"), &b.lo)?;
            check(here.key("hi"), &b.hi)?;
            if let Some(v) = &b.velocity {
                check(here.key("velocity"), v)?;
            }
        }
        for (i, e) in f.emitters.iter().enumerate() {
            let here = root.key("emitter").index(i);
            check(here.key("origin"), &e.origin)?;
            check(here.key("direction"), &e.direction)?;
        }
        if let Some(run) = &f.run {
            let here = root.key("run");
            if run.steps.is_some() && run.duration.is_some() {
                return Err(self.error_at(
                    &here.key("duration"),
                    "give either `steps` or `duration`, not both",
                ));
            }
            if let Some(d) = run.duration
                && !(d.is_finite() && d >= 0.0)
            {
                return Err(self.error_at_value(
                    &here.key("duration"),
                    format!("{d} is invalid: must be >= 0 and finite"),
                ));
            }
            if run.every == Some(0) {
                return Err(self.error_at_value(&here.key("every"), "must be at least 1"));
            }
        }
        Ok(())
    }
}

/// The fields `shape` takes, quoted, for messages.
fn takes(shape: ShapeName) -> String {
    let (v, s) = shape.fields();
    v.iter()
        .chain(s)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
