//! `render_ui` over real files: merging calls into a surface, workspace images inlined as
//! `data:` URLs (and refused outside the workspace), errors naming JSON paths, and what the
//! permission engine is told. The host is an in-memory map standing in for the runtime's
//! SQLite-backed one (tested in suzent-runtime's `canvas` tests).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use async_trait::async_trait;
use common::Env;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use suzent_core::{Surface, SurfaceChange, SurfaceChangeKind};
use suzent_permissions::ToolAccess;
use suzent_tools::{CanvasHost, ToolError, default_registry};

#[derive(Debug, Default)]
struct MemoryCanvas {
    surfaces: Mutex<HashMap<String, Surface>>,
    changes: Mutex<Vec<SurfaceChange>>,
}

#[async_trait]
impl CanvasHost for MemoryCanvas {
    async fn load_surface(&self, _: &str, surface_id: &str) -> Result<Option<Surface>, String> {
        Ok(self.surfaces.lock().unwrap().get(surface_id).cloned())
    }
    async fn save_surface(&self, surface: &Surface, change: &SurfaceChange) -> Result<(), String> {
        self.surfaces
            .lock()
            .unwrap()
            .insert(surface.surface_id.clone(), surface.clone());
        self.changes.lock().unwrap().push(change.clone());
        Ok(())
    }
    async fn delete_surface(
        &self,
        _: &str,
        surface_id: &str,
        change: &SurfaceChange,
    ) -> Result<bool, String> {
        self.changes.lock().unwrap().push(change.clone());
        Ok(self.surfaces.lock().unwrap().remove(surface_id).is_some())
    }
}

fn env_with_canvas() -> (Env, Arc<MemoryCanvas>) {
    let mut env = Env::new();
    let canvas = Arc::new(MemoryCanvas::default());
    env.ctx.canvas = Some(canvas.clone());
    env.ctx.tool_call_id = Some("call-1".into());
    (env, canvas)
}

fn message(r: Result<String, ToolError>) -> String {
    match r {
        Err(ToolError::Failed(m)) | Err(ToolError::InvalidArguments(m)) => m,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn surface(canvas: &MemoryCanvas, id: &str) -> Surface {
    canvas.surfaces.lock().unwrap().get(id).cloned().unwrap()
}

/// A 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89,
];

#[tokio::test]
async fn render_creates_then_upserts_and_update_data_moves_a_progress() {
    let (env, canvas) = env_with_canvas();
    let out = env
        .call(
            "render_ui",
            json!({
                "action": "render", "surface_id": "job", "title": "Import",
                "root": "col",
                "components": [
                    {"id": "col", "component": {"Column": {"children": {"explicitList": ["t", "p"]}}}},
                    {"id": "t", "component": {"Text": {"text": {"literalString": "Working"}}}},
                    {"id": "p", "component": {"Progress": {"value": {"path": "/done"}}}}
                ],
                "data_model": {"done": 0.1}
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        "rendered surface \"job\" v1 on the canvas (3 components)"
    );
    // Replace one component, add one; the others stay.
    let out = env
        .call(
            "render_ui",
            json!({
                "action": "render", "surface_id": "job", "target": "inline",
                "components": [
                    {"id": "t", "component": {"Text": {"text": {"literalString": "Almost"}}}},
                    {"id": "b", "component": {"Badge": {"text": {"literalString": "beta"}}}}
                ]
            }),
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        "rendered surface \"job\" v2 inline in the chat (4 components)"
    );
    let out = env
        .call(
            "render_ui",
            json!({"action": "update_data", "surface_id": "job",
                   "data_updates": [{"path": "/done", "value": 0.9}]}),
        )
        .await
        .unwrap();
    assert_eq!(out, "updated the data of surface \"job\" v3 (1 update)");
    let s = surface(&canvas, "job");
    let ids: Vec<&str> = s.components.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["col", "t", "p", "b"]);
    assert_eq!(
        serde_json::to_value(&s.components[1].component).unwrap(),
        json!({"Text": {"text": {"literalString": "Almost"}}})
    );
    assert_eq!(Value::Object(s.data_model.clone()), json!({"done": 0.9}));
    assert_eq!((s.version, s.title.as_deref()), (3, Some("Import")));
    assert_eq!(s.tool_call_id.as_deref(), Some("call-1"));
    let kinds: Vec<SurfaceChangeKind> = canvas
        .changes
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            SurfaceChangeKind::Render,
            SurfaceChangeKind::Render,
            SurfaceChangeKind::UpdateData
        ]
    );
    // Delete, then deleting again says there is none.
    assert_eq!(
        env.call(
            "render_ui",
            json!({"action": "delete", "surface_id": "job"})
        )
        .await
        .unwrap(),
        "deleted surface \"job\""
    );
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "delete", "surface_id": "job"})
            )
            .await
        ),
        "there is no surface \"job\" in this chat"
    );
}

#[tokio::test]
async fn invalid_calls_name_the_field_and_leave_the_surface_alone() {
    let (env, canvas) = env_with_canvas();
    let text = json!({"id": "t", "component": {"Text": {"text": {"literalString": "x"}}}});
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "render", "surface_id": "s", "components": [text]})
            )
            .await
        ),
        "field `root`: required when creating a surface (there is no surface \"s\" yet)"
    );
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "render", "surface_id": "a b", "root": "t", "components": [text]})
            )
            .await
        ),
        "field `surface_id`: \"a b\" must be 1 to 64 letters, digits, '-', '_' or '.'"
    );
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "update_data", "surface_id": "s", "data_updates": []})
            )
            .await
        ),
        "there is no surface \"s\" in this chat; create it with action 'render'"
    );
    env.call(
        "render_ui",
        json!({"action": "render", "surface_id": "s", "root": "t", "components": [text]}),
    )
    .await
    .unwrap();
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "render", "surface_id": "s", "root": "main"})
            )
            .await
        ),
        "the surface was not changed:\nroot: no component with id \"main\""
    );
    assert_eq!(
        message(env.call("render_ui", json!({"action": "update_data", "surface_id": "s", "data_updates": [{"path": "x", "value": 1}]})).await),
        "the surface was not changed:\ndata_updates[0].path: \"x\" is not a JSON Pointer (must start with \"/\")"
    );
    assert_eq!(
        message(
            env.call(
                "render_ui",
                json!({"action": "update_data", "surface_id": "s", "root": "t", "data_model": {}})
            )
            .await
        ),
        "field `root`: not used with action 'update_data'"
    );
    assert_eq!(
        message(env.call("render_ui", json!({"action": "render", "surface_id": "s",
            "components": [{"id": "c", "component": {"Card": {"child": "t"}}}, {"id": "t", "component": {"Card": {"child": "c"}}}]})).await),
        "the surface was not changed:\ncomponents[0].component.Card.child: \"t\" -> \"c\" -> \"t\" forms a cycle"
    );
    // A component kept from an earlier render is named by its id: the template item's relative
    // path is wrong once the list becomes an explicit list.
    env.call("render_ui", json!({"action": "render", "surface_id": "s", "root": "list",
        "components": [
            {"id": "item", "component": {"Text": {"text": {"path": "name"}}}},
            {"id": "list", "component": {"List": {"children": {"template": {"componentId": "item", "dataBinding": "/people"}}}}}
        ]}))
        .await
        .unwrap();
    assert_eq!(
        message(env.call("render_ui", json!({"action": "render", "surface_id": "s",
            "components": [{"id": "list", "component": {"List": {"children": {"explicitList": ["item"]}}}}]})).await),
        "the surface was not changed:\ncomponent \"item\".component.Text.text.path: \"name\" is not a JSON Pointer (must start with \"/\")"
    );
    assert_eq!(surface(&canvas, "s").version, 2);
}

#[tokio::test]
async fn a_workspace_image_is_inlined_as_a_data_url() {
    let (env, canvas) = env_with_canvas();
    std::fs::create_dir_all(env.ws().join("img")).unwrap();
    std::fs::write(env.ws().join("img/dot.png"), PNG).unwrap();
    let args = json!({"action": "render", "surface_id": "pic", "root": "i",
        "components": [{"id": "i", "component": {"Image": {"url": {"literalString": "img/dot.png"}, "altText": "a dot"}}}]});
    // The permission engine sees a read of the file, like read_file.
    let tool = default_registry().get("render_ui").unwrap();
    assert_eq!(
        tool.access(&args, &env.ctx).unwrap(),
        ToolAccess::Read(vec![env.ws().join("img/dot.png")])
    );
    assert_eq!(
        tool.access(&json!({"action": "delete", "surface_id": "pic"}), &env.ctx)
            .unwrap(),
        ToolAccess::Other
    );
    env.call("render_ui", args).await.unwrap();
    let s = surface(&canvas, "pic");
    use base64::Engine as _;
    let expected = format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(PNG)
    );
    assert_eq!(
        serde_json::to_value(&s.components[0].component).unwrap(),
        json!({"Image": {"url": {"literalString": expected}, "altText": "a dot"}})
    );
}

#[tokio::test]
async fn images_outside_the_workspace_or_not_images_are_refused() {
    let (env, canvas) = env_with_canvas();
    std::fs::write(env.outside.join("secret.png"), PNG).unwrap();
    std::fs::write(env.ws().join("notes.png"), b"just text").unwrap();
    std::fs::write(env.ctx.shared_dir.join("shared.png"), PNG).unwrap();
    let image = |url: &str| {
        json!({"action": "render", "surface_id": "pic", "root": "i",
            "components": [{"id": "i", "component": {"Image": {"url": {"literalString": url}}}}]})
    };
    let outside = env.outside.join("secret.png").display().to_string();
    let err = message(env.call("render_ui", image(&outside)).await);
    assert!(
        err.starts_with("components[0].component.Image.url.literalString: refused: "),
        "{err}"
    );
    assert_eq!(
        message(env.call("render_ui", image("/shared/shared.png")).await),
        format!(
            "components[0].component.Image.url.literalString: {} is outside the workspace; images are read from the workspace only",
            env.ctx.shared_dir.join("shared.png").display()
        )
    );
    assert_eq!(
        message(env.call("render_ui", image("notes.png")).await),
        "components[0].component.Image.url.literalString: /workspace/notes.png is not an image (png, jpeg, gif, webp, bmp, ico, avif or svg)"
    );
    assert_eq!(
        message(
            env.call("render_ui", image("https://example.com/x.png"))
                .await
        ),
        "the surface was not changed:\ncomponents[0].component.Image.url.literalString: \"https://example.com/x.png\" is a remote URL; no remote fetches: give a data: URL or a workspace file path"
    );
    assert!(canvas.surfaces.lock().unwrap().is_empty());
}

#[tokio::test]
async fn without_a_canvas_the_tool_says_so() {
    let env = Env::new();
    assert_eq!(
        message(
            env.call("render_ui", json!({"action": "delete", "surface_id": "s"}))
                .await
        ),
        "the canvas is not available in this session"
    );
}

#[test]
fn the_argument_schema_comes_from_the_component_types() {
    let tool = default_registry().get("render_ui").unwrap();
    let schema = &tool.spec().parameters;
    assert_eq!(schema["required"], json!(["action", "surface_id"]));
    let text = serde_json::to_string(schema).unwrap();
    for name in suzent_core::Component::NAMES {
        assert!(
            text.contains(&format!("\"{name}\"")),
            "{name} missing from the schema"
        );
    }
}
