//! `render_ui` (issue 8): shows structured UI on the chat's canvas or inline in the chat, in
//! the A2UI v0.8 format (see [`suzent_core::Component`] for the catalog). The surface rules
//! live in `suzent_core` (validation with JSON paths); this tool merges a call into the stored
//! surface, inlines workspace images as `data:` URLs and hands the result to the
//! [`CanvasHost`](crate::hosts::CanvasHost).

use super::blocking;
use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use crate::virtual_paths::{display_path, to_host_path};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::PathBuf;
use suzent_core::{
    CanvasErrors, Component, ComponentEntry, DataUpdate, ImageSource, MAX_IMAGE_BYTES, Surface,
    SurfaceChange, SurfaceChangeKind, SurfaceTarget, apply_data_updates, classify_image_url,
    validate_components, validate_surface,
};
use suzent_permissions::ToolAccess;

/// Longest surface id, in bytes.
pub const MAX_SURFACE_ID_LEN: usize = 64;

/// What `render_ui` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RenderAction {
    /// Create the surface, or update it: components are upserted by id, `data_model` replaces
    /// the model, then `data_updates` apply.
    Render,
    /// Change only the data model (`data_model` and/or `data_updates`).
    UpdateData,
    /// Remove the surface (its history is kept).
    Delete,
}

/// Arguments of `render_ui`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenderUiArgs {
    /// `render` (create or update), `update_data` (data model only) or `delete`.
    pub action: RenderAction,
    /// Id of the surface in this chat (letters, digits, `-`, `_`, `.`; at most 64), e.g.
    /// `signup`.
    pub surface_id: String,
    /// `canvas` (side panel, the default for new surfaces) or `inline` (in the chat, after this
    /// call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<SurfaceTarget>,
    /// Title shown above the surface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Id of the root component (required when creating).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Components to add or replace (by id): `{"id": "t", "component": {"Text": {"text":
    /// {"literalString": "Hi"}}}}`. Containers list child ids (`children: {"explicitList":
    /// [...]}` or a `template` over an array); inputs bind values with JSON Pointers
    /// (`{"path": "/form/name"}`). Image urls: `data:` URLs or workspace file paths (inlined);
    /// no remote URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<ComponentEntry>>")]
    pub components: Option<Vec<Value>>,
    /// Replaces the whole data model (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_model: Option<Map<String, Value>>,
    /// Values to set at JSON Pointers, applied in order after `data_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_updates: Option<Vec<DataUpdate>>,
}

/// Shows structured UI (A2UI components and a data model) to the user.
#[derive(Debug)]
pub struct RenderUiTool {
    spec: ToolSpec,
}

impl RenderUiTool {
    /// The tool.
    pub fn new() -> Self {
        let mut spec = Self::declared();
        compact_schema(&mut spec.parameters);
        Self { spec }
    }

    fn declared() -> ToolSpec {
        ToolSpec::new::<RenderUiArgs>(
            "render_ui",
            "RenderUiTool",
            "canvas",
            "Render UI",
            "Show structured UI to the user (A2UI v0.8 components): cards, tables, forms, \
                 progress. action='render' creates or updates the surface surface_id: give \
                 root and components (a flat list of {id, component}; containers refer to \
                 children by id) and a data_model that components bind to with JSON Pointers. \
                 target='canvas' (side panel, default) or 'inline' (in the chat). \
                 action='update_data' changes only data (data_updates [{path, value}] or \
                 data_model), e.g. to advance a Progress. action='delete' removes it. When the \
                 user presses a Button you receive a message `[canvas] action \"name\" on \
                 surface ...` with the button's context values.",
        )
    }
}

/// Shrinks the argument schema, which every request of a chat with the tool carries and in
/// which providers inline each `$ref` (BoundValue appears ~35 times): drops the descriptions
/// of BoundValue's fields (the type's own description says it all) and turns enums of
/// documented constants into plain `enum` lists.
fn compact_schema(schema: &mut Value) {
    let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
        return;
    };
    for (name, def) in defs.iter_mut() {
        let Value::Object(def) = def else { continue };
        if name == "BoundValue" {
            def.insert(
                "description".into(),
                Value::String(
                    "A value: one literal (literalString, literalNumber, literalBoolean or \
                     literalArray of strings) and/or a path: a JSON Pointer into the data model \
                     (`/form/name`; inside a template a relative path like `name`). With both, \
                     the literal initialises the path."
                        .into(),
                ),
            );
            if let Some(Value::Object(props)) = def.get_mut("properties") {
                for prop in props.values_mut() {
                    if let Value::Object(p) = prop {
                        p.remove("description");
                        p.remove("format");
                        // `["string", "null"]` -> `"string"`: absent means not given.
                        if let Some(Value::Array(types)) = p.get("type")
                            && let [t, Value::String(null)] = types.as_slice()
                            && null == "null"
                        {
                            let t = t.clone();
                            p.insert("type".into(), t);
                        }
                    }
                }
            }
        }
        let consts: Option<Vec<Value>> =
            def.get("oneOf")
                .and_then(Value::as_array)
                .and_then(|variants| {
                    variants
                        .iter()
                        .map(|v| {
                            v.get("const")
                                .filter(|_| v.get("type") == Some(&Value::String("string".into())))
                                .cloned()
                        })
                        .collect()
                });
        if let Some(values) = consts {
            def.remove("oneOf");
            def.insert("type".into(), Value::String("string".into()));
            def.insert("enum".into(), Value::Array(values));
        }
    }
}

impl Default for RenderUiTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl TypedTool for RenderUiTool {
    type Args = RenderUiArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Reading a workspace image is a read of that file (decided like `read_file`); without
    /// image files the call only changes the app's own UI.
    fn access(&self, args: &RenderUiArgs, ctx: &ToolContext) -> Result<ToolAccess, ToolError> {
        let files = image_files(args);
        if files.is_empty() {
            return Ok(ToolAccess::Other);
        }
        let paths = files
            .iter()
            .map(|(_, p)| to_host_path(p, ctx))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ToolAccess::Read(paths))
    }

    async fn call(&self, args: RenderUiArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        let host = ctx.canvas.as_ref().ok_or_else(|| {
            ToolError::Failed("the canvas is not available in this session".into())
        })?;
        check_surface_id(&args.surface_id)?;
        let id = args.surface_id.clone();
        let change = |kind| SurfaceChange {
            kind,
            tool_call_id: ctx.tool_call_id.clone(),
            payload: serde_json::to_value(&args).unwrap_or(Value::Null),
        };
        match args.action {
            RenderAction::Delete => {
                refuse_fields(
                    &args,
                    &[
                        "target",
                        "title",
                        "root",
                        "components",
                        "data_model",
                        "data_updates",
                    ],
                    "delete",
                )?;
                let deleted = host
                    .delete_surface(&ctx.chat_id, &id, &change(SurfaceChangeKind::Delete))
                    .await
                    .map_err(ToolError::Failed)?;
                if deleted {
                    Ok(format!("deleted surface {id:?}"))
                } else {
                    Err(ToolError::Failed(format!(
                        "there is no surface {id:?} in this chat"
                    )))
                }
            }
            RenderAction::UpdateData => {
                refuse_fields(
                    &args,
                    &["target", "title", "root", "components"],
                    "update_data",
                )?;
                if args.data_model.is_none() && args.data_updates.is_none() {
                    return Err(ToolError::InvalidArguments(
                        "action 'update_data' needs data_updates or data_model".into(),
                    ));
                }
                let existing = host
                    .load_surface(&ctx.chat_id, &id)
                    .await
                    .map_err(ToolError::Failed)?
                    .ok_or_else(|| {
                        ToolError::Failed(format!(
                            "there is no surface {id:?} in this chat; create it with action 'render'"
                        ))
                    })?;
                let surface = merge(Some(existing), &args, Vec::new(), ctx)?;
                validate_surface(&surface, &[]).map_err(invalid)?;
                host.save_surface(&surface, &change(SurfaceChangeKind::UpdateData))
                    .await
                    .map_err(ToolError::Failed)?;
                let n = args.data_updates.as_ref().map_or(0, Vec::len);
                Ok(format!(
                    "updated the data of surface {id:?} v{} ({})",
                    surface.version,
                    if args.data_model.is_some() {
                        format!("data model replaced, {n} updates")
                    } else {
                        format!("{n} update{}", if n == 1 { "" } else { "s" })
                    }
                ))
            }
            RenderAction::Render => {
                let raw = args.components.clone().unwrap_or_default();
                let mut entries = validate_components(&raw).map_err(invalid)?;
                inline_images(&mut entries, ctx).await?;
                let existing = host
                    .load_surface(&ctx.chat_id, &id)
                    .await
                    .map_err(ToolError::Failed)?;
                if existing.is_none() && args.root.is_none() {
                    return Err(ToolError::InvalidArguments(format!(
                        "field `root`: required when creating a surface (there is no surface {id:?} yet)"
                    )));
                }
                let given: Vec<String> = entries.iter().map(|c| c.id.clone()).collect();
                let surface = merge(existing, &args, entries, ctx)?;
                validate_surface(&surface, &given).map_err(invalid)?;
                host.save_surface(&surface, &change(SurfaceChangeKind::Render))
                    .await
                    .map_err(ToolError::Failed)?;
                Ok(format!(
                    "rendered surface {id:?} v{} {} ({} component{})",
                    surface.version,
                    match surface.target {
                        SurfaceTarget::Canvas => "on the canvas",
                        SurfaceTarget::Inline => "inline in the chat",
                    },
                    surface.components.len(),
                    if surface.components.len() == 1 {
                        ""
                    } else {
                        "s"
                    }
                ))
            }
        }
    }
}

fn invalid(e: CanvasErrors) -> ToolError {
    ToolError::InvalidArguments(format!("the surface was not changed:\n{e}"))
}

/// A surface id is a short token the UI can use in element ids.
fn check_surface_id(id: &str) -> Result<(), ToolError> {
    let ok = !id.is_empty()
        && id.len() <= MAX_SURFACE_ID_LEN
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ToolError::InvalidArguments(format!(
            "field `surface_id`: {id:?} must be 1 to {MAX_SURFACE_ID_LEN} letters, digits, '-', '_' or '.'"
        )))
    }
}

/// Refuses fields the action does not use, so the model learns they were ignored.
fn refuse_fields(args: &RenderUiArgs, fields: &[&str], action: &str) -> Result<(), ToolError> {
    for field in fields {
        let given = match *field {
            "target" => args.target.is_some(),
            "title" => args.title.is_some(),
            "root" => args.root.is_some(),
            "components" => args.components.is_some(),
            "data_model" => args.data_model.is_some(),
            "data_updates" => args.data_updates.is_some(),
            _ => false,
        };
        if given {
            return Err(ToolError::InvalidArguments(format!(
                "field `{field}`: not used with action '{action}'"
            )));
        }
    }
    Ok(())
}

/// The surface after this call: components upserted by id (new ones appended in order), the
/// data model replaced when given, then the data updates applied, the version bumped.
fn merge(
    existing: Option<Surface>,
    args: &RenderUiArgs,
    entries: Vec<ComponentEntry>,
    ctx: &ToolContext,
) -> Result<Surface, ToolError> {
    let now = chrono::Utc::now();
    let mut surface = match existing {
        Some(mut s) => {
            s.version = s.version.saturating_add(1);
            s.updated_at = now;
            s
        }
        None => Surface {
            chat_id: ctx.chat_id.clone(),
            surface_id: args.surface_id.clone(),
            target: SurfaceTarget::Canvas,
            title: None,
            root: String::new(),
            components: Vec::new(),
            data_model: Map::new(),
            version: 1,
            tool_call_id: None,
            created_at: now,
            updated_at: now,
        },
    };
    surface.tool_call_id = ctx.tool_call_id.clone().or(surface.tool_call_id);
    if let Some(t) = args.target {
        surface.target = t;
    }
    if let Some(t) = &args.title {
        surface.title = Some(t.clone()).filter(|t| !t.trim().is_empty());
    }
    if let Some(r) = &args.root {
        surface.root = r.clone();
    }
    for entry in entries {
        match surface.components.iter_mut().find(|c| c.id == entry.id) {
            Some(slot) => *slot = entry,
            None => surface.components.push(entry),
        }
    }
    if let Some(m) = &args.data_model {
        surface.data_model = m.clone();
    }
    if let Some(updates) = &args.data_updates {
        apply_data_updates(&mut surface.data_model, updates).map_err(invalid)?;
    }
    Ok(surface)
}

/// The workspace files named by Image url literals in the call: (component index, path).
fn image_files(args: &RenderUiArgs) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, c) in args.components.iter().flatten().enumerate() {
        let url = c
            .get("component")
            .and_then(|c| c.get("Image"))
            .and_then(|img| img.get("url"))
            .and_then(|u| u.get("literalString"))
            .and_then(Value::as_str);
        if let Some(url) = url
            && let ImageSource::File(p) = classify_image_url(url)
        {
            out.push((i, p));
        }
    }
    out
}

/// Replaces workspace file urls of Image components with `data:` URLs. The files must be under
/// the workspace root (checked with symlinks resolved, like the file tools), images, and at most
/// [`MAX_IMAGE_BYTES`].
async fn inline_images(entries: &mut [ComponentEntry], ctx: &ToolContext) -> Result<(), ToolError> {
    for (i, entry) in entries.iter_mut().enumerate() {
        let Component::Image { url, .. } = &mut entry.component else {
            continue;
        };
        let Some(literal) = &url.literal_string else {
            continue;
        };
        let ImageSource::File(given) = classify_image_url(literal) else {
            continue;
        };
        let at = format!("components[{i}].component.Image.url.literalString");
        let fail = |m: String| ToolError::InvalidArguments(format!("{at}: {m}"));
        let resolved = crate::virtual_paths::check_read_path(&given, ctx).map_err(|e| match e {
            ToolError::Failed(m) => fail(m),
            other => other,
        })?;
        if !resolved.starts_with(&ctx.workspace_root) {
            return Err(fail(format!(
                "{} is outside the workspace; images are read from the workspace only",
                display_path(&resolved, ctx)
            )));
        }
        let shown = display_path(&resolved, ctx);
        let data_url = blocking(move || read_image(resolved, &shown))
            .await
            .map_err(|e| fail(e.to_string()))?;
        url.literal_string = Some(data_url);
    }
    Ok(())
}

/// Reads an image file into a `data:` URL.
fn read_image(path: PathBuf, shown: &str) -> Result<String, ToolError> {
    use base64::Engine as _;
    use std::io::Read;
    let file = std::fs::File::open(&path).map_err(|e| super::io_failed("read", shown, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| super::io_failed("read", shown, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{shown} is a directory, not an image"
        )));
    }
    let limit = u64::try_from(MAX_IMAGE_BYTES).unwrap_or(u64::MAX);
    if meta.len() > limit {
        return Err(ToolError::Failed(format!(
            "{shown} is {} bytes; images are limited to {MAX_IMAGE_BYTES} bytes",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| super::io_failed("read", shown, &e))?;
    let mime = image_mime(&bytes, &path).ok_or_else(|| {
        ToolError::Failed(format!(
            "{shown} is not an image (png, jpeg, gif, webp, bmp, ico, avif or svg)"
        ))
    })?;
    Ok(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bytes)
    ))
}

/// The MIME type of an image, from its first bytes (or the `.svg` extension for SVG text).
fn image_mime(bytes: &[u8], path: &std::path::Path) -> Option<&'static str> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    if starts(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if starts(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && starts(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        Some("image/webp")
    } else if starts(b"BM") {
        Some("image/bmp")
    } else if starts(&[0, 0, 1, 0]) {
        Some("image/x-icon")
    } else if bytes.get(4..12) == Some(b"ftypavif") {
        Some("image/avif")
    } else if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
        && std::str::from_utf8(bytes).is_ok_and(|t| t.contains("<svg"))
    {
        Some("image/svg+xml")
    } else {
        None
    }
}
