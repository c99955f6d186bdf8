//! The canvas (issue 8): surfaces the agent renders with `render_ui` and the user acts on.
//!
//! The format is the open A2UI v0.8 message format (google/A2UI): a surface is an adjacency
//! list of components (`{"id": "x", "component": {"Text": {...}}}`) plus a JSON data model that
//! components bind to through [`BoundValue`]s (JSON Pointers, RFC 6901). Our catalog,
//! [`CATALOG_ID`], is the v0.8 standard catalog plus a few Suzent extensions (`Heading`,
//! `Stack`, `Badge`, `Progress`, `Table`, `HtmlFrame`). A button press comes back as a
//! [`SurfaceAction`], A2UI's `userAction`.
//!
//! The rules every surface obeys (known components, existing children and root, JSON Pointer
//! bindings, no cycles, size limits) live here ([`validate_components`],
//! [`validate_surface`], [`apply_data_updates`]) so the tool, the runtime and the UI agree on
//! them; this module does no I/O.

mod a2ui;
mod pointer;
mod validate;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use pointer::{PointerError, pointer_get, pointer_set};
pub use validate::{
    CanvasError, CanvasErrors, DataUpdate, ImageSource, MAX_COMPONENTS, MAX_DEPTH, MAX_IMAGE_BYTES,
    MAX_INLINED_IMAGE_BYTES, MAX_SURFACE_BYTES, apply_data_updates, classify_image_url,
    validate_components, validate_surface,
};

/// The A2UI catalog id of Suzent's component set (sent in `beginRendering`).
pub const CATALOG_ID: &str = "suzent:canvas/v1";

/// A value a component shows: a literal, a binding to the surface data model, or both (A2UI
/// v0.8 `BoundValue`). With `path` and a literal, the literal initialises the data model at
/// `path` when nothing is there yet. `path` is a JSON Pointer (RFC 6901, `/user/name`); inside a
/// template a relative path (`name`, no leading `/`) resolves against the current element.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BoundValue {
    /// A literal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal_string: Option<String>,
    /// A literal number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal_number: Option<f64>,
    /// A literal boolean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal_boolean: Option<bool>,
    /// A literal list of strings (A2UI v0.8 `literalArray`, used by `MultipleChoice.selections`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal_array: Option<Vec<String>>,
    /// A JSON Pointer into the data model (`/form/name`), or a path relative to the template
    /// element (`name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl BoundValue {
    /// A literal string.
    pub fn string(s: impl Into<String>) -> Self {
        BoundValue {
            literal_string: Some(s.into()),
            ..Default::default()
        }
    }

    /// A binding to a data model path.
    pub fn path(p: impl Into<String>) -> Self {
        BoundValue {
            path: Some(p.into()),
            ..Default::default()
        }
    }

    /// The literal as a JSON value, if one is set.
    pub fn literal(&self) -> Option<Value> {
        if let Some(s) = &self.literal_string {
            return Some(Value::String(s.clone()));
        }
        if let Some(n) = self.literal_number {
            return serde_json::Number::from_f64(n).map(Value::Number);
        }
        if let Some(b) = self.literal_boolean {
            return Some(Value::Bool(b));
        }
        self.literal_array
            .as_ref()
            .map(|a| Value::Array(a.iter().cloned().map(Value::String).collect()))
    }
}

/// Template children: `componentId` rendered once per element of the array at `dataBinding`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Template {
    /// The component rendered for each element.
    pub component_id: String,
    /// JSON Pointer of an array in the data model (relative inside an outer template).
    pub data_binding: String,
}

/// The children of a container (A2UI v0.8): a fixed list of ids or a template over an array.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Children {
    /// The ids of the children, in order.
    ExplicitList(Vec<String>),
    /// One child per array element.
    Template(Template),
}

/// One entry of an action's context: a key and the value sent under it.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionContextEntry {
    /// The key in the submitted context.
    pub key: String,
    /// The value, usually bound to an input's path so the typed value is sent.
    pub value: BoundValue,
}

/// What a button sends back (A2UI v0.8 `action`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Action {
    /// The action name the agent receives (`submit`).
    pub name: String,
    /// Values resolved by the client when the button is pressed.
    #[serde(default)]
    pub context: Vec<ActionContextEntry>,
}

/// Text style of a `Text` component.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TextUsageHint {
    /// Heading level 1.
    H1,
    /// Heading level 2.
    H2,
    /// Heading level 3.
    H3,
    /// Heading level 4.
    H4,
    /// Heading level 5.
    H5,
    /// Small caption text.
    Caption,
    /// Body text (the default).
    Body,
}

/// How a row or column spreads its children along its main axis (CSS `justify-content`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Distribution {
    /// Packed at the start.
    Start,
    /// Centered.
    Center,
    /// Packed at the end.
    End,
    /// First and last at the edges, equal space between.
    SpaceBetween,
    /// Equal space around each child.
    SpaceAround,
    /// Equal space between and at the edges.
    SpaceEvenly,
}

/// How a row or column aligns its children across its main axis (CSS `align-items`).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Alignment {
    /// At the start.
    Start,
    /// Centered.
    Center,
    /// At the end.
    End,
    /// Stretched to fill.
    Stretch,
}

/// Direction of a `List`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ListDirection {
    /// Top to bottom (the default).
    Vertical,
    /// Left to right.
    Horizontal,
}

/// Orientation of a `Divider`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Axis {
    /// A horizontal line (the default).
    Horizontal,
    /// A vertical line.
    Vertical,
}

/// Kind of input of a `TextField`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TextFieldType {
    /// One line (the default).
    ShortText,
    /// Several lines.
    LongText,
    /// A number.
    Number,
    /// A date (`YYYY-MM-DD`).
    Date,
    /// A password-style hidden input.
    Obscured,
}

/// Color of a `Badge`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum BadgeTone {
    /// Gray (the default).
    Neutral,
    /// Blue.
    Info,
    /// Green.
    Success,
    /// Amber.
    Warning,
    /// Red.
    Danger,
}

/// One tab of a `Tabs` component.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TabItem {
    /// The tab's label.
    pub title: BoundValue,
    /// Id of the component shown when the tab is selected.
    pub child: String,
}

/// One option of a `MultipleChoice`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChoiceOption {
    /// What the user sees.
    pub label: BoundValue,
    /// What is stored in `selections` when chosen.
    pub value: String,
}

/// One column of a `Table`.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TableColumn {
    /// Column header text.
    pub header: String,
    /// Key of the cell value in each row object.
    pub key: String,
}

/// A component of the `suzent:canvas/v1` catalog. Serialized externally tagged with the
/// PascalCase name as key (`{"Text": {"text": {...}}}`), as in A2UI v0.8.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub enum Component {
    /// Markdown text.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The text (Markdown).
        text: BoundValue,
        /// Style: `h1`..`h5`, `caption`, `body` (default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage_hint: Option<TextUsageHint>,
    },
    /// An image. Stored as a `data:` URL (workspace files are inlined by `render_ui`; remote
    /// URLs are refused).
    #[serde(rename_all = "camelCase")]
    Image {
        /// `data:` URL, or (in `render_ui` arguments) a workspace file path.
        url: BoundValue,
        /// Text alternative for screen readers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alt_text: Option<String>,
    },
    /// Children side by side.
    #[serde(rename_all = "camelCase")]
    Row {
        /// The children.
        children: Children,
        /// Main-axis spacing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        distribution: Option<Distribution>,
        /// Cross-axis alignment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alignment: Option<Alignment>,
    },
    /// Children stacked vertically.
    #[serde(rename_all = "camelCase")]
    Column {
        /// The children.
        children: Children,
        /// Main-axis spacing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        distribution: Option<Distribution>,
        /// Cross-axis alignment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alignment: Option<Alignment>,
    },
    /// A scrollable list.
    #[serde(rename_all = "camelCase")]
    List {
        /// The items.
        children: Children,
        /// `vertical` (default) or `horizontal`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<ListDirection>,
    },
    /// A framed card around one child.
    #[serde(rename_all = "camelCase")]
    Card {
        /// Id of the content.
        child: String,
    },
    /// Tabs, one child visible at a time.
    #[serde(rename_all = "camelCase")]
    Tabs {
        /// The tabs in order.
        tab_items: Vec<TabItem>,
    },
    /// A separator line.
    #[serde(rename_all = "camelCase")]
    Divider {
        /// `horizontal` (default) or `vertical`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        axis: Option<Axis>,
    },
    /// A button that sends an action to the agent.
    #[serde(rename_all = "camelCase")]
    Button {
        /// Id of the label component (usually a `Text`).
        child: String,
        /// What a press sends.
        action: Action,
        /// Emphasized style.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        primary: Option<bool>,
    },
    /// A text input; what the user types is written to `text.path`.
    #[serde(rename_all = "camelCase")]
    TextField {
        /// The label.
        label: BoundValue,
        /// The value (bind it to a path so the typed text is kept and can be sent).
        text: BoundValue,
        /// Kind of input (default `shortText`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text_field_type: Option<TextFieldType>,
    },
    /// A checkbox; its state is written to `value.path`.
    #[serde(rename_all = "camelCase")]
    CheckBox {
        /// The label.
        label: BoundValue,
        /// The checked state (a boolean).
        value: BoundValue,
    },
    /// Choice among options; the chosen values (strings) are written to `selections.path`.
    #[serde(rename_all = "camelCase")]
    MultipleChoice {
        /// The selected option values (a list of strings).
        selections: BoundValue,
        /// The options.
        options: Vec<ChoiceOption>,
        /// At most this many selections (1 = a single choice).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_allowed_selections: Option<u32>,
    },
    /// A numeric slider; its value is written to `value.path`.
    #[serde(rename_all = "camelCase")]
    Slider {
        /// The value (a number).
        value: BoundValue,
        /// Lowest value (default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_value: Option<f64>,
        /// Highest value (default 100).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_value: Option<f64>,
    },
    /// A date and/or time input; the ISO 8601 value is written to `value.path`.
    #[serde(rename_all = "camelCase")]
    DateTimeInput {
        /// The value (ISO 8601 string).
        value: BoundValue,
        /// Offer a date (default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        enable_date: Option<bool>,
        /// Offer a time (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        enable_time: Option<bool>,
    },
    /// Suzent extension: a heading of level 1 to 6.
    #[serde(rename_all = "camelCase")]
    Heading {
        /// The heading text (plain).
        text: BoundValue,
        /// 1 (largest) to 6.
        level: u8,
    },
    /// Suzent extension: children overlaid on each other (first at the bottom).
    #[serde(rename_all = "camelCase")]
    Stack {
        /// The layers.
        children: Children,
    },
    /// Suzent extension: a small status label.
    #[serde(rename_all = "camelCase")]
    Badge {
        /// The label.
        text: BoundValue,
        /// Color (default `neutral`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tone: Option<BadgeTone>,
    },
    /// Suzent extension: a progress bar.
    #[serde(rename_all = "camelCase")]
    Progress {
        /// Current value, from 0 to `max`.
        value: BoundValue,
        /// The value of a full bar (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
        /// Text shown with the bar.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<BoundValue>,
    },
    /// Suzent extension: a table of rows (objects) from the data model.
    #[serde(rename_all = "camelCase")]
    Table {
        /// The columns: header text and the row key shown under it.
        columns: Vec<TableColumn>,
        /// The rows: a binding to an array of objects.
        rows: BoundValue,
    },
    /// Suzent extension: HTML in a sandboxed frame (no scripts, no network, no access to the
    /// app; only inline styles and `data:` images).
    #[serde(rename_all = "camelCase")]
    HtmlFrame {
        /// The HTML document or fragment.
        html: BoundValue,
        /// Frame height in CSS pixels (default 300).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        height: Option<u32>,
        /// Accessible title of the frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

impl Component {
    /// Every component name of the catalog, in documentation order.
    pub const NAMES: [&'static str; 20] = [
        "Text",
        "Heading",
        "Image",
        "Row",
        "Column",
        "Stack",
        "List",
        "Card",
        "Tabs",
        "Divider",
        "Badge",
        "Progress",
        "Table",
        "Button",
        "TextField",
        "CheckBox",
        "MultipleChoice",
        "Slider",
        "DateTimeInput",
        "HtmlFrame",
    ];

    /// The component's catalog name (`Text`, `Button`).
    pub fn name(&self) -> &'static str {
        match self {
            Component::Text { .. } => "Text",
            Component::Image { .. } => "Image",
            Component::Row { .. } => "Row",
            Component::Column { .. } => "Column",
            Component::List { .. } => "List",
            Component::Card { .. } => "Card",
            Component::Tabs { .. } => "Tabs",
            Component::Divider { .. } => "Divider",
            Component::Button { .. } => "Button",
            Component::TextField { .. } => "TextField",
            Component::CheckBox { .. } => "CheckBox",
            Component::MultipleChoice { .. } => "MultipleChoice",
            Component::Slider { .. } => "Slider",
            Component::DateTimeInput { .. } => "DateTimeInput",
            Component::Heading { .. } => "Heading",
            Component::Stack { .. } => "Stack",
            Component::Badge { .. } => "Badge",
            Component::Progress { .. } => "Progress",
            Component::Table { .. } => "Table",
            Component::HtmlFrame { .. } => "HtmlFrame",
        }
    }
}

/// A component with its id (A2UI v0.8 adjacency-list entry).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ComponentEntry {
    /// Id, unique in the surface; children, templates and `root` refer to it.
    pub id: String,
    /// The component and its properties.
    pub component: Component,
}

/// Where a surface is shown.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SurfaceTarget {
    /// The side panel beside the chat; persists for the chat (the default).
    #[default]
    Canvas,
    /// In the message list, right after the tool call that rendered it.
    Inline,
}

impl SurfaceTarget {
    /// `canvas` or `inline`.
    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceTarget::Canvas => "canvas",
            SurfaceTarget::Inline => "inline",
        }
    }
}

/// A live surface of a chat: its components, data model and where it is shown.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Surface {
    /// The owning chat.
    pub chat_id: String,
    /// Id the agent chose, unique in the chat (`signup`).
    pub surface_id: String,
    /// Canvas panel or inline.
    pub target: SurfaceTarget,
    /// Title shown above the surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Id of the root component.
    pub root: String,
    /// The components (adjacency list), in the order they were first rendered.
    pub components: Vec<ComponentEntry>,
    /// The data model (a JSON object) the bindings point into.
    pub data_model: Map<String, Value>,
    /// 1 when created, +1 per change (render, data update, user action).
    pub version: u32,
    /// The tool call that last rendered or updated it (a user action keeps it): an inline
    /// surface is shown after this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: DateTime<Utc>,
    /// When it last changed (RFC 3339).
    pub updated_at: DateTime<Utc>,
}

impl Surface {
    /// The component with this id.
    pub fn component(&self, id: &str) -> Option<&ComponentEntry> {
        self.components.iter().find(|c| c.id == id)
    }

    /// The surface as A2UI v0.8 server-to-client messages: `surfaceUpdate` (the components),
    /// `dataModelUpdate`s (the data model, one per nested object, in v0.8 `contents` form) and
    /// `beginRendering` (`root`, `catalogId` [`CATALOG_ID`]). Replaying them in a v0.8 client
    /// with our catalog rebuilds the surface.
    pub fn to_a2ui_messages(&self) -> Vec<Value> {
        a2ui::messages(self)
    }
}

/// A user action on a surface (A2UI v0.8 `userAction`): a button was pressed. The client has
/// resolved every `action.context` value against its data model, including what the user typed
/// into bound inputs.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceAction {
    /// The surface.
    pub surface_id: String,
    /// The button's action name.
    pub name: String,
    /// Id of the button pressed.
    pub source_component_id: String,
    /// The resolved context: key -> value.
    #[serde(default)]
    pub context: Map<String, Value>,
}

/// What changed a surface (the kind of a history entry).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SurfaceChangeKind {
    /// `render_ui` with `action: "render"` (created or changed the components).
    Render,
    /// `render_ui` with `action: "update_data"`.
    UpdateData,
    /// Deleted by `render_ui` or by the user.
    Delete,
    /// The user pressed a button (`submit_surface_action`).
    UserAction,
}

impl SurfaceChangeKind {
    /// The snake_case name (`user_action`), as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            SurfaceChangeKind::Render => "render",
            SurfaceChangeKind::UpdateData => "update_data",
            SurfaceChangeKind::Delete => "delete",
            SurfaceChangeKind::UserAction => "user_action",
        }
    }

    /// The kind named by [`as_str`](Self::as_str).
    pub fn parse(s: &str) -> Option<Self> {
        [
            SurfaceChangeKind::Render,
            SurfaceChangeKind::UpdateData,
            SurfaceChangeKind::Delete,
            SurfaceChangeKind::UserAction,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One change of a surface, as the tool or the user asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceChange {
    /// What kind of change.
    pub kind: SurfaceChangeKind,
    /// The `render_ui` call that made it (none for the user's actions and deletes).
    pub tool_call_id: Option<String>,
    /// What was asked: the `render_ui` arguments as the model gave them, or the
    /// [`SurfaceAction`]; `{}` for a delete by the user.
    pub payload: Value,
}

/// A recorded change of a surface (`surface_history`, kept after the surface is deleted).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceHistoryEntry {
    /// Position in the history of all surfaces (increasing).
    pub id: i64,
    /// The owning chat.
    pub chat_id: String,
    /// The surface.
    pub surface_id: String,
    /// The surface's version after the change (for a delete: the last version).
    pub version: u32,
    /// What kind of change.
    pub kind: SurfaceChangeKind,
    /// The `render_ui` call that made it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// What was asked (see [`SurfaceChange::payload`]).
    pub payload: Value,
    /// When it was recorded (RFC 3339).
    pub created_at: DateTime<Utc>,
}
