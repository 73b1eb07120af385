//! Errors positioned in the scene file: at a key, at its value, or at the key a
//! rejection of pbf-solver's concerns.

use pbf_solver::CoreError;

use super::Scene;
use crate::error::{CliError, SceneError};
use crate::spans::{KeyPath, Spans};

impl Scene {
    /// An error at the entry `path` names (its key): for a key that conflicts with
    /// another or does not belong where it is.
    pub(crate) fn error_at(&self, path: &KeyPath, message: impl Into<String>) -> CliError {
        let spans = Spans::new(&self.text);
        self.error_at_span(&spans, spans.locate(path), path, message)
    }

    /// An error about the value at `path`: positioned at the value (`-1` in
    /// `radius = -1`), where the entry has one in the file.
    pub(crate) fn error_at_value(&self, path: &KeyPath, message: impl Into<String>) -> CliError {
        let spans = Spans::new(&self.text);
        self.error_at_span(&spans, spans.locate_value(path), path, message)
    }

    fn error_at_span(
        &self,
        spans: &Spans<'_>,
        span: std::ops::Range<usize>,
        path: &KeyPath,
        message: impl Into<String>,
    ) -> CliError {
        let (line, column) = spans.line_column(span.start);
        SceneError {
            path: self.path.clone(),
            line,
            column,
            field: (!path.is_root()).then(|| path.to_string()),
            message: message.into(),
        }
        .into()
    }

    /// Maps an error of pbf-solver back to the key it concerns.
    pub(super) fn core_error(&self, e: CoreError, context: Context) -> CliError {
        let root = KeyPath::root();
        let solver = root.key("solver");
        let (path, message) = match (&e, context) {
            (
                CoreError::InvalidParameter {
                    field,
                    value,
                    reason,
                },
                Context::Solver,
            ) => {
                let path = match *field {
                    "dimension" => root.key("dimension"),
                    "max_density_error_percent" => {
                        solver.key("adaptive").key("max_density_error_percent")
                    }
                    "iterations.min" => solver.key("adaptive").key("min"),
                    "iterations.max" => solver.key("adaptive").key("max"),
                    "iterations" if self.file.solver.adaptive.is_some() => solver.key("adaptive"),
                    other => solver.key(other),
                };
                (path, invalid(*value, reason))
            }
            (
                CoreError::InvalidCollider {
                    field,
                    value,
                    reason,
                    ..
                },
                Context::Solver | Context::Domain,
            ) => {
                let key = field.strip_prefix("domain.").unwrap_or(field);
                (root.key("domain").key(key), invalid(*value, reason))
            }
            (
                CoreError::InvalidCollider {
                    field,
                    value,
                    reason,
                    ..
                },
                Context::Collider(i),
            ) => {
                let here = root.key("collider").index(i);
                let path = match *field {
                    "wall_thickness" => here.key("container").key("wall_thickness"),
                    "kind" => here.key("container"),
                    other => here.key(other),
                };
                (path, invalid(*value, reason))
            }
            (
                CoreError::InvalidEmitter {
                    field,
                    value,
                    reason,
                },
                Context::Emitter(i),
            ) => (
                root.key("emitter").index(i).key(field),
                invalid(*value, reason),
            ),
            (CoreError::InvalidParameter { value, reason, .. }, Context::Block(i)) => (
                root.key("block").index(i).key("hi"),
                format!("the side hi - lo = {} is invalid: {reason}", short(*value)),
            ),
            (CoreError::Kernel(_), _) => (solver.key("spacing"), e.to_string()),
            (_, Context::Block(i)) => (root.key("block").index(i), e.to_string()),
            (_, Context::Collider(i)) => (root.key("collider").index(i), e.to_string()),
            (_, Context::Emitter(i)) => (root.key("emitter").index(i), e.to_string()),
            (_, Context::Domain) => (root.key("domain"), e.to_string()),
            (_, Context::Solver) => (solver, e.to_string()),
        };
        self.error_at_value(&path, message)
    }
}

/// What was being built when pbf-solver returned an error.
#[derive(Debug, Clone, Copy)]
pub(super) enum Context {
    Solver,
    Domain,
    Collider(usize),
    Block(usize),
    Emitter(usize),
}

fn invalid(value: f64, reason: &str) -> String {
    if value.is_nan() {
        reason.to_owned()
    } else {
        // pbf-solver reports f32 values widened to f64: print the f32.
        format!("{} is invalid: {reason}", value as f32)
    }
}

/// A computed value to six decimals, trailing zeros dropped: `-0.2`, not `-0.19999999`.
fn short(value: f64) -> String {
    let s = format!("{value:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}
