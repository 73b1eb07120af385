//! Positions in a scene file: key paths (`collider[0].radius`), the byte span of the
//! entry a path names, the path at a byte offset, and byte offsets as line and column.

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A table key.
    Key(String),
    /// An index into an array (of tables).
    Index(usize),
}

/// A path from the document root to an entry: `solver.time_step`, `collider[2].radius`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyPath(pub(crate) Vec<Segment>);

impl KeyPath {
    /// The document root.
    pub(crate) fn root() -> Self {
        Self(Vec::new())
    }

    /// This path followed by `key`.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Segment::Key(key.to_owned()));
        p
    }

    /// This path followed by `[index]`.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Segment::Index(index));
        p
    }

    /// Whether this is the root.
    pub(crate) fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Key(k) if i == 0 => f.write_str(k)?,
                Segment::Key(k) => write!(f, ".{k}")?,
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// The spans of a parsed document, for error positions.
pub(crate) struct Spans<'a> {
    text: &'a str,
    root: Option<Spanned<DeTable<'a>>>,
}

impl<'a> Spans<'a> {
    /// Parses `text` for its spans (a document that does not parse has none).
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            root: DeTable::parse(text).ok(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn line_column(&self, offset: usize) -> (usize, usize) {
        line_column(self.text, offset)
    }

    /// The span of the entry `path` names: the key for a table entry, the element for
    /// an array index. Where the path is not in the file (a missing field), the span of
    /// its nearest ancestor that is; the start of the file for the root.
    pub(crate) fn locate(&self, path: &KeyPath) -> Range<usize> {
        self.walk(path).0
    }

    /// The span of the value `path` names, for an error about that value (`-1` in
    /// `radius = -1`): the value itself when it is a number, string, boolean or array,
    /// else what [`locate`](Self::locate) gives (a table's key, a missing field's
    /// ancestor).
    pub(crate) fn locate_value(&self, path: &KeyPath) -> Range<usize> {
        match self.walk(path) {
            (_, Some(value)) if !matches!(value.get_ref(), DeValue::Table(_)) => value.span(),
            (span, _) => span,
        }
    }

    /// The span [`locate`](Self::locate) gives, and the value at `path` when the whole
    /// path is in the file.
    fn walk(&self, path: &KeyPath) -> (Range<usize>, Option<&Spanned<DeValue<'a>>>) {
        let Some(root) = &self.root else {
            return (0..0, None);
        };
        let mut best = 0..0;
        let mut table: Option<&DeTable<'a>> = Some(root.get_ref());
        let mut value: Option<&Spanned<DeValue<'a>>> = None;
        for segment in &path.0 {
            match segment {
                Segment::Key(k) => {
                    let Some(t) = table else {
                        return (best, None);
                    };
                    let Some((key, v)) = t.iter().find(|(key, _)| key.get_ref() == k) else {
                        return (best, None);
                    };
                    best = key.span();
                    value = Some(v);
                }
                Segment::Index(i) => {
                    let Some(DeValue::Array(a)) = value.map(|v| v.get_ref()) else {
                        return (best, None);
                    };
                    let Some(element) = a.get(*i) else {
                        return (best, None);
                    };
                    best = element.span();
                    value = Some(element);
                }
            }
            table = match value.map(|v| v.get_ref()) {
                Some(DeValue::Table(t)) => Some(t),
                _ => None,
            };
        }
        (best, value)
    }

    /// The key path of the table whose value has the span `span` (a `[table]` header
    /// or an inline `{ ... }`): where the toml crate puts a missing field's error. The
    /// root for a span at the start of the file that no table has.
    pub(crate) fn table_at(&self, span: Range<usize>) -> Option<KeyPath> {
        let root = self.root.as_ref()?;
        let mut found = None;
        find_table(root.get_ref(), &KeyPath::root(), &span, &mut found);
        found.or_else(|| (span.start == 0).then(KeyPath::root))
    }

    /// The key path of the innermost entry whose key or value contains `offset`.
    pub(crate) fn path_at(&self, offset: usize) -> Option<KeyPath> {
        let root = self.root.as_ref()?;
        let mut found = None;
        search_table(root.get_ref(), &KeyPath::root(), offset, &mut found);
        found.map(|(path, _)| path)
    }
}

fn find_table(
    table: &DeTable<'_>,
    path: &KeyPath,
    span: &Range<usize>,
    found: &mut Option<KeyPath>,
) {
    for (key, value) in table.iter() {
        find_table_in(value, &path.key(key.get_ref()), span, found);
    }
}

fn find_table_in(
    value: &Spanned<DeValue<'_>>,
    path: &KeyPath,
    span: &Range<usize>,
    found: &mut Option<KeyPath>,
) {
    match value.get_ref() {
        DeValue::Table(t) => {
            if value.span() == *span && found.is_none() {
                *found = Some(path.clone());
            }
            find_table(t, path, span, found);
        }
        DeValue::Array(a) => {
            for (i, element) in a.iter().enumerate() {
                find_table_in(element, &path.index(i), span, found);
            }
        }
        _ => {}
    }
}

fn contains(span: &Range<usize>, offset: usize) -> bool {
    span.start <= offset && offset < span.end.max(span.start + 1)
}

/// Records in `found` the deepest path (longest, then narrowest span) containing `offset`.
fn consider(
    path: KeyPath,
    span: Range<usize>,
    offset: usize,
    found: &mut Option<(KeyPath, usize)>,
) {
    if !contains(&span, offset) {
        return;
    }
    let width = span.end - span.start;
    let better = match found {
        None => true,
        Some((p, w)) => path.0.len() > p.0.len() || (path.0.len() == p.0.len() && width < *w),
    };
    if better {
        *found = Some((path, width));
    }
}

fn search_table(
    table: &DeTable<'_>,
    path: &KeyPath,
    offset: usize,
    found: &mut Option<(KeyPath, usize)>,
) {
    for (key, value) in table.iter() {
        let here = path.key(key.get_ref());
        consider(here.clone(), key.span(), offset, found);
        search_value(value, &here, offset, found);
    }
}

fn search_value(
    value: &Spanned<DeValue<'_>>,
    path: &KeyPath,
    offset: usize,
    found: &mut Option<(KeyPath, usize)>,
) {
    match value.get_ref() {
        DeValue::Table(t) => search_table(t, path, offset, found),
        DeValue::Array(a) => {
            for (i, element) in a.iter().enumerate() {
                match element.get_ref() {
                    DeValue::Table(_) => search_value(element, &path.index(i), offset, found),
                    _ => consider(path.clone(), element.span(), offset, found),
                }
            }
        }
        _ => consider(path.clone(), value.span(), offset, found),
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "dimension = 3\n[solver]\nspacing = 0.05\ntime_step = -1.0\n\n[[collider]]\nshape = \"sphere\"\nradius = 2.0\n\n[[collider]]\nshape = \"box\"\nradius = -1.0\n";

    #[test]
    fn line_and_column_count_from_one() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é=\nx", 2), (1, 2));
        assert_eq!(line_column("ab", 99), (1, 3));
    }

    #[test]
    fn paths_are_located_at_their_keys() {
        let spans = Spans::new(DOC);
        let at = |p: &KeyPath| spans.line_column(spans.locate(p).start);
        let solver = KeyPath::root().key("solver");
        assert_eq!(at(&solver.key("time_step")), (4, 1));
        let second = KeyPath::root().key("collider").index(1);
        assert_eq!(at(&second.key("radius")), (12, 1));
        assert_eq!(second.key("radius").to_string(), "collider[1].radius");
        // A missing key falls back to its table.
        let missing = at(&second.key("center"));
        assert!(missing.0 >= 10 && missing.0 <= 12, "{missing:?}");
    }

    #[test]
    fn values_are_located_at_the_value() {
        let spans = Spans::new(DOC);
        let at = |p: &KeyPath| spans.line_column(spans.locate_value(p).start);
        let solver = KeyPath::root().key("solver");
        assert_eq!(at(&solver.key("time_step")), (4, 13));
        let second = KeyPath::root().key("collider").index(1);
        assert_eq!(at(&second.key("radius")), (12, 10));
        // A table and a missing key: as `locate`.
        assert_eq!(spans.locate_value(&solver), spans.locate(&solver));
        let missing = second.key("center");
        assert_eq!(spans.locate_value(&missing), spans.locate(&missing));
    }

    #[test]
    fn tables_are_found_where_their_value_starts() {
        let doc = "a = 1\n[solver]\nx = { y = 2 }\n";
        let spans = Spans::new(doc);
        let span = |needle: &str| {
            let start = doc.find(needle).expect("in doc");
            start..start + needle.len()
        };
        let path = |span| spans.table_at(span).map(|p| p.to_string());
        assert_eq!(path(span("[solver]")).as_deref(), Some("solver"));
        assert_eq!(path(span("{ y = 2 }")).as_deref(), Some("solver.x"));
        assert_eq!(path(0..0).as_deref(), Some(""));
        assert_eq!(path(span("1")), None);
    }

    #[test]
    fn the_path_at_an_offset_is_the_innermost_entry() {
        let spans = Spans::new(DOC);
        let offset = DOC.find("-1.0\n").expect("in doc");
        assert_eq!(
            spans.path_at(offset).map(|p| p.to_string()).as_deref(),
            Some("solver.time_step")
        );
        let offset = DOC.rfind("-1.0").expect("in doc");
        assert_eq!(
            spans.path_at(offset).map(|p| p.to_string()).as_deref(),
            Some("collider[1].radius")
        );
    }
}
