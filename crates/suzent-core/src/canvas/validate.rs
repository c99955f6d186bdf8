//! The rules of a surface, checked on the JSON the model wrote so that every error names the
//! JSON path of the fault (`components[1].component.Row.children.explicitList[2]: ...`).
//!
//! Two steps: [`validate_components`] turns the raw `components` array into typed entries
//! (known component names, the right property types, unique ids); [`validate_surface`] checks
//! the surface after a render or update was merged into it (root and children exist, no cycles,
//! bindings are JSON Pointers, templates bind arrays, images are `data:` URLs, size limits).

use super::pointer::{self, type_name};
use super::{BoundValue, Children, Component, ComponentEntry, Surface};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// Largest serialized surface (components and data model, `data:` image URLs not counted), in
/// bytes: 256 KiB.
pub const MAX_SURFACE_BYTES: usize = 256 * 1024;
/// Most components in one surface.
pub const MAX_COMPONENTS: usize = 500;
/// Deepest component tree, counted in components from the root (a lone root is 1).
pub const MAX_DEPTH: usize = 32;
/// Largest image, in bytes of the decoded file: 2 MiB.
pub const MAX_IMAGE_BYTES: usize = 2 * 1024 * 1024;
/// Largest total of the `data:` image URLs of one surface, in bytes of URL text: 8 MiB.
pub const MAX_INLINED_IMAGE_BYTES: usize = 8 * 1024 * 1024;

/// Most errors reported at once (the rest are summarised).
const MAX_REPORTED: usize = 20;

/// One fault in a surface: where (a JSON path into the tool's arguments, like
/// `components[3].component`) and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CanvasError {
    /// JSON path of the fault in the `render_ui` arguments (`components[0].id`, `root`,
    /// `data_updates[1].path`); a component not given in this call is named
    /// `component "id"`.
    pub path: String,
    /// What is wrong, written for the model.
    pub message: String,
}

impl CanvasError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        CanvasError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Every fault found (at least one), in the order found. Displayed one per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanvasErrors(pub Vec<CanvasError>);

impl std::fmt::Display for CanvasErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().take(MAX_REPORTED).enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        if self.0.len() > MAX_REPORTED {
            write!(f, "\n... and {} more errors", self.0.len() - MAX_REPORTED)?;
        }
        Ok(())
    }
}

impl std::error::Error for CanvasErrors {}

impl From<CanvasError> for CanvasErrors {
    fn from(e: CanvasError) -> Self {
        CanvasErrors(vec![e])
    }
}

/// One data model change of `render_ui` (`data_updates`): set `value` at the JSON Pointer `path`
/// (missing objects are created; `-` appends to an array; `""` replaces the whole model, which
/// must then be an object).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataUpdate {
    /// JSON Pointer (RFC 6901) into the data model, e.g. `/progress/value`.
    pub path: String,
    /// The new value (any JSON).
    pub value: Value,
}

/// Applies `updates` in order; errors name `data_updates[i].path`. On error the model may be
/// partly updated: callers work on a copy.
pub fn apply_data_updates(
    model: &mut Map<String, Value>,
    updates: &[DataUpdate],
) -> Result<(), CanvasErrors> {
    let mut errors = Vec::new();
    for (i, u) in updates.iter().enumerate() {
        if let Err(e) = pointer::pointer_set(model, &u.path, u.value.clone()) {
            errors.push(CanvasError::new(
                format!("data_updates[{i}].path"),
                e.to_string(),
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CanvasErrors(errors))
    }
}

/// What an `Image` url names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageSource {
    /// A `data:image/...` URL, usable as is.
    DataUrl,
    /// A path to read from the workspace (relative, `/workspace/...` or absolute).
    File(String),
    /// Refused, with the reason (remote URLs, other schemes, malformed `data:` URLs).
    Refused(String),
}

/// Classifies an `Image` url literal: a `data:image/<type>` URL, a remote URL (refused: the
/// canvas makes no remote fetches), another scheme (refused), or a file path.
pub fn classify_image_url(url: &str) -> ImageSource {
    let lower = url.trim().to_ascii_lowercase();
    if lower.starts_with("data:") {
        return if is_image_data_url(url) {
            ImageSource::DataUrl
        } else {
            ImageSource::Refused(
                "a data: URL must be an image (data:image/png;base64,...)".to_string(),
            )
        };
    }
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("//") {
        return ImageSource::Refused(format!(
            "{url:?} is a remote URL; no remote fetches: give a data: URL or a workspace file path"
        ));
    }
    if let Some(colon) = lower.find(':') {
        let scheme = &lower[..colon];
        // `C:\...` is a Windows path, not a scheme.
        let windows_drive = scheme.len() == 1 && scheme.chars().all(|c| c.is_ascii_alphabetic());
        if !windows_drive
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return ImageSource::Refused(format!(
                "{url:?} has the scheme \"{scheme}:\"; only data: URLs and workspace file paths are shown"
            ));
        }
    }
    if url.trim().is_empty() {
        return ImageSource::Refused("the url is empty".to_string());
    }
    ImageSource::File(url.to_string())
}

fn is_image_data_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("data:image/") && lower.contains(',')
}

/// Turns the raw `components` argument into typed entries. Errors name
/// `components[i]...`: not an object, a missing or empty `id`, an unknown component name (with
/// the known ones), a property of the wrong type or unknown, a duplicate id.
pub fn validate_components(raw: &[Value]) -> Result<Vec<ComponentEntry>, CanvasErrors> {
    let mut errors = Vec::new();
    let mut out = Vec::with_capacity(raw.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, v) in raw.iter().enumerate() {
        let at = format!("components[{i}]");
        let Value::Object(entry) = v else {
            errors.push(CanvasError::new(
                at,
                format!(
                    "expected an object {{\"id\": ..., \"component\": {{\"Text\": {{...}}}}}}, found {}",
                    type_name(v)
                ),
            ));
            continue;
        };
        for key in entry.keys() {
            if key != "id" && key != "component" {
                errors.push(CanvasError::new(
                    format!("{at}.{key}"),
                    "unknown field (a component entry has `id` and `component`)",
                ));
            }
        }
        let id = match entry.get("id") {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(Value::String(_)) => {
                errors.push(CanvasError::new(format!("{at}.id"), "the id is empty"));
                None
            }
            Some(other) => {
                errors.push(CanvasError::new(
                    format!("{at}.id"),
                    format!("expected a string, found {}", type_name(other)),
                ));
                None
            }
            None => {
                errors.push(CanvasError::new(format!("{at}.id"), "missing"));
                None
            }
        };
        if let Some(id) = &id {
            if let Some(first) = seen.get(id) {
                errors.push(CanvasError::new(
                    format!("{at}.id"),
                    format!("duplicate id {id:?} (also components[{first}].id)"),
                ));
            } else {
                seen.insert(id.clone(), i);
            }
        }
        let component = parse_component(entry.get("component"), &format!("{at}.component"));
        match (id, component) {
            (Some(id), Ok(component)) => out.push(ComponentEntry { id, component }),
            (_, Err(e)) => errors.push(e),
            (None, Ok(_)) => {}
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(CanvasErrors(errors))
    }
}

fn known_list() -> String {
    Component::NAMES.join(", ")
}

fn parse_component(v: Option<&Value>, at: &str) -> Result<Component, CanvasError> {
    let Some(v) = v else {
        return Err(CanvasError::new(
            at,
            format!("missing (give one of: {})", known_list()),
        ));
    };
    let Value::Object(map) = v else {
        return Err(CanvasError::new(
            at,
            format!(
                "expected an object with one component name as key, like {{\"Text\": {{...}}}}, found {}",
                type_name(v)
            ),
        ));
    };
    let mut keys = map.keys();
    let (Some(name), None) = (keys.next(), keys.next()) else {
        let names: Vec<&str> = map.keys().map(String::as_str).collect();
        return Err(CanvasError::new(
            at,
            format!(
                "expected exactly one component name as key, found {} ({})",
                names.len(),
                names.join(", ")
            ),
        ));
    };
    if !Component::NAMES.contains(&name.as_str()) {
        return Err(CanvasError::new(
            at,
            format!("unknown component {name:?} (known: {})", known_list()),
        ));
    }
    serde_path_to_error::deserialize::<_, Component>(v).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let path = if path.is_empty() || path == "." {
            at.to_string()
        } else {
            format!("{at}.{path}")
        };
        CanvasError::new(path, message)
    })
}

/// What kind of literal a bound property holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Number,
    Boolean,
    Array,
    /// Action context: any literal.
    Any,
}

impl Kind {
    fn literal_field(self) -> &'static str {
        match self {
            Kind::String => "literalString",
            Kind::Number => "literalNumber",
            Kind::Boolean => "literalBoolean",
            Kind::Array => "literalArray",
            Kind::Any => "a literal",
        }
    }
}

/// A reference from a component to another component id.
struct Edge<'a> {
    /// JSON path of the reference.
    path: String,
    /// The id referred to.
    target: &'a str,
    /// Through a template (the target is rendered per array element).
    template: bool,
}

/// A bound value of a component and where it sits.
struct Binding<'a> {
    path: String,
    value: &'a BoundValue,
    kind: Kind,
}

/// The references and bindings of one component, with JSON paths under `at`.
fn parts<'a>(c: &'a Component, at: &str) -> (Vec<Edge<'a>>, Vec<Binding<'a>>) {
    let name = c.name();
    let base = format!("{at}.component.{name}");
    let mut edges = Vec::new();
    let mut binds = Vec::new();
    let mut bind = |field: &str, value: &'a BoundValue, kind: Kind| {
        binds.push(Binding {
            path: format!("{base}.{field}"),
            value,
            kind,
        })
    };
    let children = |children: &'a Children, edges: &mut Vec<Edge<'a>>| match children {
        Children::ExplicitList(ids) => {
            for (k, id) in ids.iter().enumerate() {
                edges.push(Edge {
                    path: format!("{base}.children.explicitList[{k}]"),
                    target: id,
                    template: false,
                });
            }
        }
        Children::Template(t) => edges.push(Edge {
            path: format!("{base}.children.template.componentId"),
            target: &t.component_id,
            template: true,
        }),
    };
    match c {
        Component::Text { text, .. } => bind("text", text, Kind::String),
        Component::Heading { text, .. } => bind("text", text, Kind::String),
        Component::Badge { text, .. } => bind("text", text, Kind::String),
        Component::Image { url, .. } => bind("url", url, Kind::String),
        Component::Row { children: ch, .. }
        | Component::Column { children: ch, .. }
        | Component::List { children: ch, .. }
        | Component::Stack { children: ch } => children(ch, &mut edges),
        Component::Card { child } => edges.push(Edge {
            path: format!("{base}.child"),
            target: child,
            template: false,
        }),
        Component::Tabs { tab_items } => {
            for (k, tab) in tab_items.iter().enumerate() {
                bind(&format!("tabItems[{k}].title"), &tab.title, Kind::String);
                edges.push(Edge {
                    path: format!("{base}.tabItems[{k}].child"),
                    target: &tab.child,
                    template: false,
                });
            }
        }
        Component::Divider { .. } => {}
        Component::Button { child, action, .. } => {
            edges.push(Edge {
                path: format!("{base}.child"),
                target: child,
                template: false,
            });
            for (k, entry) in action.context.iter().enumerate() {
                bind(
                    &format!("action.context[{k}].value"),
                    &entry.value,
                    Kind::Any,
                );
            }
        }
        Component::TextField { label, text, .. } => {
            bind("label", label, Kind::String);
            bind("text", text, Kind::String);
        }
        Component::CheckBox { label, value } => {
            bind("label", label, Kind::String);
            bind("value", value, Kind::Boolean);
        }
        Component::MultipleChoice {
            selections,
            options,
            ..
        } => {
            bind("selections", selections, Kind::Array);
            for (k, o) in options.iter().enumerate() {
                bind(&format!("options[{k}].label"), &o.label, Kind::String);
            }
        }
        Component::Slider { value, .. } => bind("value", value, Kind::Number),
        Component::DateTimeInput { value, .. } => bind("value", value, Kind::String),
        Component::Progress { value, label, .. } => {
            bind("value", value, Kind::Number);
            if let Some(label) = label {
                bind("label", label, Kind::String);
            }
        }
        Component::Table { rows, .. } => bind("rows", rows, Kind::Array),
        Component::HtmlFrame { html, .. } => bind("html", html, Kind::String),
    }
    (edges, binds)
}

/// Checks a surface after a render or update was merged into it. `given` lists the ids of the
/// components given in this call, in argument order: errors in them are named
/// `components[i]...`, errors in components kept from earlier renders `component "id"...`.
pub fn validate_surface(surface: &Surface, given: &[String]) -> Result<(), CanvasErrors> {
    let mut errors = Vec::new();
    let origin = |id: &str| -> String {
        given.iter().position(|g| g == id).map_or_else(
            || format!("component {id:?}"),
            |i| format!("components[{i}]"),
        )
    };
    if surface.components.len() > MAX_COMPONENTS {
        errors.push(CanvasError::new(
            "components",
            format!(
                "the surface has {} components; the limit is {MAX_COMPONENTS}",
                surface.components.len()
            ),
        ));
        return Err(CanvasErrors(errors));
    }
    let by_id: HashMap<&str, &ComponentEntry> = surface
        .components
        .iter()
        .map(|c| (c.id.as_str(), c))
        .collect();
    let mut graph: HashMap<&str, Vec<Edge<'_>>> = HashMap::new();
    let mut bindings: HashMap<&str, Vec<Binding<'_>>> = HashMap::new();
    for c in &surface.components {
        let at = origin(&c.id);
        let (edges, binds) = parts(&c.component, &at);
        for e in &edges {
            if !by_id.contains_key(e.target) {
                errors.push(CanvasError::new(
                    e.path.clone(),
                    format!("no component with id {:?}", e.target),
                ));
            }
        }
        check_properties(&c.component, &at, &mut errors);
        graph.insert(c.id.as_str(), edges);
        bindings.insert(c.id.as_str(), binds);
    }
    if !by_id.contains_key(surface.root.as_str()) {
        errors.push(CanvasError::new(
            "root",
            format!("no component with id {:?}", surface.root),
        ));
    }
    if let Some(e) = find_cycle(&surface.components, &graph) {
        errors.push(e);
    } else if by_id.contains_key(surface.root.as_str()) {
        let depth = tree_depth(&surface.root, &graph);
        if depth > MAX_DEPTH {
            errors.push(CanvasError::new(
                "root",
                format!("the component tree is {depth} levels deep; the limit is {MAX_DEPTH}"),
            ));
        }
    }
    // Components reached from the root without passing through a template: relative paths
    // are meaningless there.
    let outside = reachable_outside_templates(&surface.root, &graph);
    for c in &surface.components {
        let in_plain_context = outside.contains(c.id.as_str());
        for b in bindings.get(c.id.as_str()).into_iter().flatten() {
            check_binding(b, in_plain_context, &mut errors);
        }
        if let Some(t) = template_of(&c.component) {
            let at = format!(
                "{}.component.{}.children.template.dataBinding",
                origin(&c.id),
                c.component.name()
            );
            check_template_binding(
                &t.data_binding,
                &at,
                in_plain_context,
                &surface.data_model,
                &mut errors,
            );
        }
    }
    check_images(surface, &origin, &graph, &mut errors);
    check_size(surface, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CanvasErrors(errors))
    }
}

fn template_of(c: &Component) -> Option<&super::Template> {
    match c {
        Component::Row { children, .. }
        | Component::Column { children, .. }
        | Component::List { children, .. }
        | Component::Stack { children } => match children {
            Children::Template(t) => Some(t),
            Children::ExplicitList(_) => None,
        },
        _ => None,
    }
}

/// Range and emptiness rules of individual properties.
fn check_properties(c: &Component, at: &str, errors: &mut Vec<CanvasError>) {
    let base = format!("{at}.component.{}", c.name());
    let mut err = |field: &str, message: String| {
        errors.push(CanvasError::new(format!("{base}.{field}"), message));
    };
    match c {
        Component::Heading { level, .. } if !(1..=6).contains(level) => {
            err("level", format!("{level} is out of range (1 to 6)"));
        }
        Component::Button { action, .. } => {
            if action.name.trim().is_empty() {
                err("action.name", "the action name is empty".into());
            }
            let mut keys = HashSet::new();
            for (k, entry) in action.context.iter().enumerate() {
                if entry.key.trim().is_empty() {
                    err(
                        &format!("action.context[{k}].key"),
                        "the key is empty".into(),
                    );
                } else if !keys.insert(entry.key.as_str()) {
                    err(
                        &format!("action.context[{k}].key"),
                        format!("duplicate key {:?}", entry.key),
                    );
                }
            }
        }
        Component::Tabs { tab_items } if tab_items.is_empty() => {
            err("tabItems", "needs at least one tab".into());
        }
        Component::MultipleChoice {
            options,
            max_allowed_selections,
            ..
        } => {
            if options.is_empty() {
                err("options", "needs at least one option".into());
            }
            if *max_allowed_selections == Some(0) {
                err("maxAllowedSelections", "must be at least 1".into());
            }
        }
        Component::Slider {
            min_value,
            max_value,
            ..
        } => {
            let (lo, hi) = (min_value.unwrap_or(0.0), max_value.unwrap_or(100.0));
            if !lo.is_finite() || !hi.is_finite() || lo >= hi {
                err(
                    "maxValue",
                    format!("the range {lo}..{hi} is empty (minValue must be below maxValue)"),
                );
            }
        }
        Component::Progress { max: Some(m), .. } if !(m.is_finite() && *m > 0.0) => {
            err("max", format!("{m} must be a positive number"));
        }
        Component::Table { columns, .. } if columns.is_empty() => {
            err("columns", "needs at least one column".into());
        }
        Component::HtmlFrame {
            height: Some(h), ..
        } if !(1..=4000).contains(h) => {
            err("height", format!("{h} is out of range (1 to 4000 pixels)"));
        }
        _ => {}
    }
}

/// A bound value: a literal of the right kind or a path, and a path that is a JSON Pointer
/// (or, inside a template, a relative path).
fn check_binding(b: &Binding<'_>, in_plain_context: bool, errors: &mut Vec<CanvasError>) {
    let v = b.value;
    let mut literals = Vec::new();
    if v.literal_string.is_some() {
        literals.push(Kind::String);
    }
    if v.literal_number.is_some() {
        literals.push(Kind::Number);
    }
    if v.literal_boolean.is_some() {
        literals.push(Kind::Boolean);
    }
    if v.literal_array.is_some() {
        literals.push(Kind::Array);
    }
    if literals.len() > 1 {
        let names: Vec<&str> = literals.iter().map(|k| k.literal_field()).collect();
        errors.push(CanvasError::new(
            b.path.clone(),
            format!("has {}; give one literal", names.join(" and ")),
        ));
    } else if let Some(found) = literals.first() {
        if b.kind != Kind::Any && *found != b.kind {
            errors.push(CanvasError::new(
                b.path.clone(),
                format!(
                    "expected {}, found {}",
                    b.kind.literal_field(),
                    found.literal_field()
                ),
            ));
        }
    } else if v.path.is_none() {
        errors.push(CanvasError::new(
            b.path.clone(),
            format!(
                "needs {} or a path",
                if b.kind == Kind::Any {
                    "a literal"
                } else {
                    b.kind.literal_field()
                }
            ),
        ));
    }
    if let Some(p) = &v.path {
        let at = format!("{}.path", b.path);
        check_path(p, &at, in_plain_context, errors);
    }
}

fn check_path(p: &str, at: &str, in_plain_context: bool, errors: &mut Vec<CanvasError>) {
    if p.starts_with('/') {
        if let Err(e) = pointer::parse(p) {
            errors.push(CanvasError::new(at, e.to_string()));
        }
    } else if in_plain_context || p.is_empty() {
        errors.push(CanvasError::new(
            at,
            format!("{p:?} is not a JSON Pointer (must start with \"/\")"),
        ));
    } else if let Err(e) = pointer::parse(&format!("/{p}")) {
        errors.push(CanvasError::new(at, e.to_string()));
    }
}

fn check_template_binding(
    binding: &str,
    at: &str,
    in_plain_context: bool,
    model: &Map<String, Value>,
    errors: &mut Vec<CanvasError>,
) {
    let before = errors.len();
    check_path(binding, at, in_plain_context, errors);
    if errors.len() > before || !binding.starts_with('/') {
        return;
    }
    match pointer::pointer_get(model, binding) {
        None | Some(Value::Array(_)) => {}
        Some(other) => errors.push(CanvasError::new(
            at,
            format!(
                "{binding:?} is a{} {} in the data model, not an array",
                if type_name(other) == "object" {
                    "n"
                } else {
                    ""
                },
                type_name(other)
            ),
        )),
    }
}

/// The first cycle found, named at the reference that closes it.
fn find_cycle(
    components: &[ComponentEntry],
    graph: &HashMap<&str, Vec<Edge<'_>>>,
) -> Option<CanvasError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    fn visit<'a>(
        id: &'a str,
        graph: &'a HashMap<&str, Vec<Edge<'a>>>,
        marks: &mut HashMap<&'a str, Mark>,
        stack: &mut Vec<&'a str>,
    ) -> Option<CanvasError> {
        marks.insert(id, Mark::Visiting);
        stack.push(id);
        for e in graph.get(id).into_iter().flatten() {
            match marks.get(e.target) {
                Some(Mark::Visiting) => {
                    let start = stack.iter().position(|s| *s == e.target).unwrap_or(0);
                    let mut ring: Vec<String> =
                        stack[start..].iter().map(|s| format!("{s:?}")).collect();
                    ring.push(format!("{:?}", e.target));
                    return Some(CanvasError::new(
                        e.path.clone(),
                        format!("{} forms a cycle", ring.join(" -> ")),
                    ));
                }
                Some(Mark::Done) => {}
                None if graph.contains_key(e.target) => {
                    if let Some(err) = visit(e.target, graph, marks, stack) {
                        return Some(err);
                    }
                }
                None => {}
            }
        }
        stack.pop();
        marks.insert(id, Mark::Done);
        None
    }
    let mut marks = HashMap::new();
    for c in components {
        if !marks.contains_key(c.id.as_str()) {
            let mut stack = Vec::new();
            if let Some(e) = visit(c.id.as_str(), graph, &mut marks, &mut stack) {
                return Some(e);
            }
        }
    }
    None
}

/// Components on the longest path from `root` (the graph has no cycle).
fn tree_depth(root: &str, graph: &HashMap<&str, Vec<Edge<'_>>>) -> usize {
    fn depth<'a>(
        id: &'a str,
        graph: &'a HashMap<&str, Vec<Edge<'a>>>,
        memo: &mut HashMap<&'a str, usize>,
    ) -> usize {
        if let Some(d) = memo.get(id) {
            return *d;
        }
        let mut deepest = 0;
        for e in graph.get(id).into_iter().flatten() {
            if graph.contains_key(e.target) {
                deepest = deepest.max(depth(e.target, graph, memo));
            }
        }
        memo.insert(id, deepest + 1);
        deepest + 1
    }
    depth(root, graph, &mut HashMap::new())
}

fn reachable_outside_templates<'a>(
    root: &'a str,
    graph: &'a HashMap<&str, Vec<Edge<'a>>>,
) -> HashSet<&'a str> {
    let mut seen = HashSet::new();
    let mut todo = vec![root];
    while let Some(id) = todo.pop() {
        if !graph.contains_key(id) || !seen.insert(id) {
            continue;
        }
        for e in graph.get(id).into_iter().flatten() {
            if !e.template {
                todo.push(e.target);
            }
        }
    }
    seen
}

/// Images: literal urls must be `data:image/` URLs (the tool has inlined workspace files by
/// now), bound urls must hold one in the data model (checked for absolute paths and for
/// relative paths under a template bound to an absolute array), each within
/// [`MAX_IMAGE_BYTES`] and all within [`MAX_INLINED_IMAGE_BYTES`].
fn check_images(
    surface: &Surface,
    origin: &dyn Fn(&str) -> String,
    graph: &HashMap<&str, Vec<Edge<'_>>>,
    errors: &mut Vec<CanvasError>,
) {
    let mut total = 0usize;
    let mut check_url = |url: &str, at: String, errors: &mut Vec<CanvasError>| {
        match classify_image_url(url) {
            ImageSource::DataUrl => {
                let decoded = url.len().saturating_sub(url.find(',').unwrap_or(0)) / 4 * 3;
                if decoded > MAX_IMAGE_BYTES {
                    errors.push(CanvasError::new(
                        at,
                        format!(
                            "the image is about {decoded} bytes; the limit is {MAX_IMAGE_BYTES} bytes"
                        ),
                    ));
                }
                total += url.len();
            }
            ImageSource::File(p) => errors.push(CanvasError::new(
                at,
                format!("{p:?} is not a data: URL (workspace files are only read from literalString urls)"),
            )),
            ImageSource::Refused(why) => errors.push(CanvasError::new(at, why)),
        }
    };
    // Relative url paths: resolved against every element of each enclosing template's array
    // when that template binds an absolute path.
    let mut template_elements: HashMap<&str, Vec<(&Value, String)>> = HashMap::new();
    for c in &surface.components {
        let Some(t) = template_of(&c.component) else {
            continue;
        };
        let Some(Value::Array(items)) = pointer::pointer_get(&surface.data_model, &t.data_binding)
        else {
            continue;
        };
        for member in subtree_without_templates(&t.component_id, graph) {
            let entry = template_elements.entry(member).or_default();
            for (k, item) in items.iter().enumerate() {
                entry.push((item, format!("{}/{k}", t.data_binding)));
            }
        }
    }
    for c in &surface.components {
        let Component::Image { url, .. } = &c.component else {
            continue;
        };
        let at = format!("{}.component.Image.url", origin(&c.id));
        if let Some(s) = &url.literal_string {
            check_url(s, format!("{at}.literalString"), errors);
        }
        let Some(p) = &url.path else {
            continue;
        };
        if p.starts_with('/') {
            if let Some(v) = pointer::pointer_get(&surface.data_model, p) {
                check_bound_url(v, p, &at, errors, &mut check_url);
            }
        } else if let Some(elements) = template_elements.get(c.id.as_str()) {
            for (item, item_path) in elements {
                let Ok(tokens) = pointer::parse(&format!("/{p}")) else {
                    continue;
                };
                let mut cur = Some(*item);
                for t in &tokens {
                    cur = match cur {
                        Some(Value::Object(m)) => m.get(t),
                        Some(Value::Array(a)) => t.parse::<usize>().ok().and_then(|i| a.get(i)),
                        _ => None,
                    };
                }
                if let Some(v) = cur {
                    check_bound_url(v, &format!("{item_path}/{p}"), &at, errors, &mut check_url);
                }
            }
        }
    }
    if total > MAX_INLINED_IMAGE_BYTES {
        errors.push(CanvasError::new(
            "components",
            format!(
                "the surface's images take {total} bytes as data: URLs; the limit is {MAX_INLINED_IMAGE_BYTES} bytes"
            ),
        ));
    }
}

fn check_bound_url(
    v: &Value,
    model_path: &str,
    at: &str,
    errors: &mut Vec<CanvasError>,
    check_url: &mut dyn FnMut(&str, String, &mut Vec<CanvasError>),
) {
    match v {
        Value::String(s) if s.is_empty() => {}
        Value::String(s) => {
            let before = errors.len();
            check_url(s, format!("{at}.path"), errors);
            for e in errors.iter_mut().skip(before) {
                e.message = format!("the data model value at {model_path:?}: {}", e.message);
            }
        }
        Value::Null => {}
        other => errors.push(CanvasError::new(
            format!("{at}.path"),
            format!(
                "the data model value at {model_path:?} is a {}, not a data: URL string",
                type_name(other)
            ),
        )),
    }
}

/// `start` and what it reaches without entering a nested template.
fn subtree_without_templates<'a>(
    start: &'a str,
    graph: &'a HashMap<&str, Vec<Edge<'a>>>,
) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        if !graph.contains_key(id) || !seen.insert(id) {
            continue;
        }
        out.push(id);
        for e in graph.get(id).into_iter().flatten() {
            if !e.template {
                todo.push(e.target);
            }
        }
    }
    out
}

/// Serialized size of components and data model, with `data:` image URLs not counted.
fn check_size(surface: &Surface, errors: &mut Vec<CanvasError>) {
    let components: usize = surface
        .components
        .iter()
        .map(|c| {
            let json = serde_json::to_string(c).map(|s| s.len()).unwrap_or(0);
            let image = match &c.component {
                Component::Image { url, .. } => url
                    .literal_string
                    .as_deref()
                    .filter(|u| is_image_data_url(u))
                    .map_or(0, str::len),
                _ => 0,
            };
            json.saturating_sub(image)
        })
        .sum();
    let mut images_in_model = 0usize;
    count_data_urls(
        &Value::Object(surface.data_model.clone()),
        &mut images_in_model,
    );
    let model = serde_json::to_string(&surface.data_model)
        .map(|s| s.len())
        .unwrap_or(0)
        .saturating_sub(images_in_model);
    let size = components + model;
    if size > MAX_SURFACE_BYTES {
        errors.push(CanvasError::new(
            "surface",
            format!(
                "the surface is {size} bytes serialized ({components} of components, {model} of data model; data: images not counted); the limit is {MAX_SURFACE_BYTES} bytes"
            ),
        ));
    }
}

fn count_data_urls(v: &Value, total: &mut usize) {
    match v {
        Value::String(s) if is_image_data_url(s) => *total += s.len(),
        Value::Array(a) => a.iter().for_each(|v| count_data_urls(v, total)),
        Value::Object(m) => m.values().for_each(|v| count_data_urls(v, total)),
        _ => {}
    }
}
