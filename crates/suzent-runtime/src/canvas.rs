//! The canvas service (issue 8): the [`CanvasHost`] that `render_ui` writes through, and the
//! API the desktop app uses to show surfaces, send a button press back to the agent and close a
//! surface.
//!
//! Every change is stored (with a `surface_history` row) before its event is sent. A button
//! press is checked against the stored surface, its bound values are written into the surface's
//! data model (so the form keeps them), and a message goes to the owning chat through the
//! durable inbox: the dispatcher delivers it in place to a running turn, or starts a turn.

use crate::chats::ChatService;
use crate::error::RuntimeError;
use crate::event_bus::Events;
use crate::inbox::InboxService;
use async_trait::async_trait;
use serde_json::{Map, Value};
use std::sync::Arc;
use suzent_core::{
    AgentEvent, Component, Surface, SurfaceAction, SurfaceChange, SurfaceChangeKind,
    SurfaceHistoryEntry, new_id, pointer_set, validate_surface,
};
use suzent_store::{InboxMessage, NewInboxMessage, Store, StoreError};
use suzent_tools::CanvasHost;

/// Sender of canvas actions in the inbox (and in the transcript's inbox header).
pub const CANVAS_SENDER: &str = "canvas";
/// Inbox kind of a canvas action.
pub const CANVAS_ACTION_KIND: &str = "canvas_action";
/// Largest submitted context, in bytes of JSON.
pub const MAX_ACTION_CONTEXT_BYTES: usize = 64 * 1024;
/// Attempts of a user action against surfaces changed concurrently (by a render).
const ACTION_RETRIES: usize = 3;

/// Stores surfaces, then announces them.
#[derive(Debug)]
struct Canvas {
    store: Store,
    events: Events,
}

#[async_trait]
impl CanvasHost for Canvas {
    async fn load_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Option<Surface>, String> {
        self.store
            .get_surface(chat_id, surface_id)
            .await
            .map_err(|e| e.to_string())
    }

    async fn save_surface(&self, surface: &Surface, change: &SurfaceChange) -> Result<(), String> {
        self.store
            .save_surface(surface, change)
            .await
            .map_err(|e| e.to_string())?;
        self.events.emit(AgentEvent::SurfaceUpdated {
            chat_id: surface.chat_id.clone(),
            surface: surface.clone(),
        });
        Ok(())
    }

    async fn delete_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
        change: &SurfaceChange,
    ) -> Result<bool, String> {
        let deleted = self
            .store
            .delete_surface(chat_id, surface_id, change)
            .await
            .map_err(|e| e.to_string())?;
        if deleted.is_some() {
            self.events.emit(AgentEvent::SurfaceDeleted {
                chat_id: chat_id.to_string(),
                surface_id: surface_id.to_string(),
            });
        }
        Ok(deleted.is_some())
    }
}

/// The inbox text of a user action, e.g. `[canvas] action "submit" on surface "signup"
/// (button "submit-btn"): {"agree":true,"name":"Ada"}`.
pub fn action_text(action: &SurfaceAction) -> String {
    format!(
        "[canvas] action {:?} on surface {:?} (button {:?}): {}",
        action.name,
        action.surface_id,
        action.source_component_id,
        sorted_keys(&Value::Object(action.context.clone()))
    )
}

/// `value` with the keys of every object in sorted order, so the text is the same whatever order
/// the context arrived in (and whether serde_json keeps insertion order: suzent-llama turns
/// `preserve_order` on for the whole build).
fn sorted_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted_keys(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}

fn invalid(field: &str, message: String) -> RuntimeError {
    RuntimeError::InvalidInput {
        field: field.to_string(),
        message,
    }
}

/// Surfaces of every chat: what `render_ui` draws, what the user does with it.
pub(crate) struct CanvasService {
    store: Store,
    events: Events,
    chats: Arc<ChatService>,
    inbox: Arc<InboxService>,
}

impl CanvasService {
    /// The service; button presses go to the owning chat through `inbox`.
    pub(crate) fn new(
        store: Store,
        events: Events,
        chats: Arc<ChatService>,
        inbox: Arc<InboxService>,
    ) -> CanvasService {
        CanvasService {
            store,
            events,
            chats,
            inbox,
        }
    }

    /// The canvas a tool context gets (`render_ui`).
    pub(crate) fn host(&self) -> Arc<dyn CanvasHost> {
        Arc::new(Canvas {
            store: self.store.clone(),
            events: self.events.clone(),
        })
    }

    /// The chat's live surfaces, oldest first.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub(crate) async fn surfaces(&self, chat_id: &str) -> Result<Vec<Surface>, RuntimeError> {
        self.chats.get(chat_id).await?;
        Ok(self.store.list_surfaces(chat_id).await?)
    }

    /// Every recorded change of a surface (renders, data updates, user actions, deletes),
    /// oldest first; kept after the surface is deleted.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub(crate) async fn surface_history(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<Vec<SurfaceHistoryEntry>, RuntimeError> {
        self.chats.get(chat_id).await?;
        Ok(self.store.surface_history(chat_id, surface_id).await?)
    }

    /// Closes a surface for the user: deletes it (history kept) and announces
    /// `surface_deleted`. Returns `false` when the chat has no such surface.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`], [`RuntimeError::Store`].
    pub(crate) async fn delete_surface(
        &self,
        chat_id: &str,
        surface_id: &str,
    ) -> Result<bool, RuntimeError> {
        self.chats.get(chat_id).await?;
        let change = SurfaceChange {
            kind: SurfaceChangeKind::Delete,
            tool_call_id: None,
            payload: Value::Object(Map::new()),
        };
        let deleted = self
            .store
            .delete_surface(chat_id, surface_id, &change)
            .await?;
        if deleted.is_some() {
            self.events.emit(AgentEvent::SurfaceDeleted {
                chat_id: chat_id.to_string(),
                surface_id: surface_id.to_string(),
            });
        }
        Ok(deleted.is_some())
    }

    /// Sends a button press to the agent that owns the surface (A2UI `userAction`).
    ///
    /// The surface must exist and `action.sourceComponentId` must be a Button whose action
    /// is `action.name`; `action.context` may only hold keys of that button's context and at
    /// most [`MAX_ACTION_CONTEXT_BYTES`] of JSON. Values of context entries bound to an
    /// absolute path are written into the surface's data model (a new version, announced with
    /// `surface_updated`, recorded as a `user_action`); then a message whose text shows what
    /// was sent ([`action_text`]) is queued in the durable inbox of the chat, from
    /// [`CANVAS_SENDER`]. The dispatcher delivers it in place to a running turn, or starts a
    /// turn of the idle chat. Returns the queued message.
    ///
    /// Errors: [`RuntimeError::ChatNotFound`]; [`RuntimeError::InvalidInput`] naming
    /// `action.surfaceId`, `action.sourceComponentId`, `action.name` or `action.context`;
    /// [`RuntimeError::Store`].
    pub(crate) async fn submit_action(
        &self,
        chat_id: &str,
        action: SurfaceAction,
    ) -> Result<InboxMessage, RuntimeError> {
        self.chats.get(chat_id).await?;
        let size = serde_json::to_string(&action.context).map_or(0, |s| s.len());
        if size > MAX_ACTION_CONTEXT_BYTES {
            return Err(invalid(
                "action.context",
                format!(
                    "the submitted values are {size} bytes of JSON; the limit is {MAX_ACTION_CONTEXT_BYTES}"
                ),
            ));
        }
        let mut attempt = 0;
        let surface = loop {
            attempt += 1;
            let current = self
                .store
                .get_surface(chat_id, &action.surface_id)
                .await?
                .ok_or_else(|| {
                    invalid(
                        "action.surfaceId",
                        format!(
                            "chat '{chat_id}' has no surface '{}' (it may have been deleted)",
                            action.surface_id
                        ),
                    )
                })?;
            let updated = apply_action(current, &action)?;
            // The written values must keep the surface valid (size limit, image urls).
            validate_surface(&updated, &[]).map_err(|e| {
                invalid(
                    "action.context",
                    format!("the submitted values would make the surface invalid: {e}"),
                )
            })?;
            let change = SurfaceChange {
                kind: SurfaceChangeKind::UserAction,
                tool_call_id: None,
                payload: serde_json::to_value(&action).unwrap_or(Value::Null),
            };
            match self.store.save_surface(&updated, &change).await {
                Ok(()) => break updated,
                Err(StoreError::Conflict { .. }) if attempt < ACTION_RETRIES => continue,
                Err(e) => return Err(e.into()),
            }
        };
        self.events.emit(AgentEvent::SurfaceUpdated {
            chat_id: chat_id.to_string(),
            surface: surface.clone(),
        });
        self.inbox
            .enqueue(NewInboxMessage {
                id: format!("canvas:{}", new_id()),
                target: chat_id.to_string(),
                sender: CANVAS_SENDER.to_string(),
                kind: CANVAS_ACTION_KIND.to_string(),
                text: action_text(&action),
            })
            .await
    }
}

/// The surface after a user action: checked against the button, bound values written, next
/// version.
fn apply_action(mut surface: Surface, action: &SurfaceAction) -> Result<Surface, RuntimeError> {
    let source = &action.source_component_id;
    let entry = surface.component(source).ok_or_else(|| {
        invalid(
            "action.sourceComponentId",
            format!(
                "surface '{}' has no component '{source}'",
                action.surface_id
            ),
        )
    })?;
    let Component::Button {
        action: declared, ..
    } = &entry.component
    else {
        return Err(invalid(
            "action.sourceComponentId",
            format!(
                "component '{source}' of surface '{}' is a {}, not a Button",
                action.surface_id,
                entry.component.name()
            ),
        ));
    };
    if declared.name != action.name {
        return Err(invalid(
            "action.name",
            format!(
                "button '{source}' sends the action '{}', not '{}'",
                declared.name, action.name
            ),
        ));
    }
    let mut writes = Vec::new();
    for (key, value) in &action.context {
        let Some(entry) = declared.context.iter().find(|e| &e.key == key) else {
            let keys: Vec<&str> = declared.context.iter().map(|e| e.key.as_str()).collect();
            return Err(invalid(
                "action.context",
                format!(
                    "key '{key}' is not in the context of button '{source}' (its keys: {})",
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                ),
            ));
        };
        // Relative paths (a button inside a template) name an element the server cannot
        // know; literals are not bound. Both are only sent.
        if let Some(path) = entry.value.path.as_deref().filter(|p| p.starts_with('/')) {
            writes.push((path.to_string(), value.clone()));
        }
    }
    for (path, value) in writes {
        pointer_set(&mut surface.data_model, &path, value)
            .map_err(|e| invalid("action.context", e.to_string()))?;
    }
    surface.version = surface.version.saturating_add(1);
    surface.updated_at = chrono::Utc::now();
    Ok(surface)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use suzent_core::Config;
    use suzent_store::ChatRecord;
    use suzent_tools::{RenderUiTool, Tool};

    /// A form with a name field and a button that sends it.
    fn form() -> Value {
        json!({
            "action": "render",
            "surface_id": "signup",
            "title": "Sign up",
            "root": "form",
            "components": [
                {"id": "form", "component": {"Column": {"children": {"explicitList": ["name", "submit-btn"]}}}},
                {"id": "name", "component": {"TextField": {"label": {"literalString": "Name"}, "text": {"path": "/form/name"}}}},
                {"id": "submit-label", "component": {"Text": {"text": {"literalString": "Submit"}}}},
                {"id": "submit-btn", "component": {"Button": {"child": "submit-label", "action": {"name": "submit", "context": [
                    {"key": "name", "value": {"path": "/form/name"}}
                ]}}}}
            ],
            "data_model": {"form": {"name": ""}}
        })
    }

    fn submit(context: Value) -> SurfaceAction {
        SurfaceAction {
            surface_id: "signup".into(),
            name: "submit".into(),
            source_component_id: "submit-btn".into(),
            context: context.as_object().cloned().unwrap(),
        }
    }

    /// A chat with the form rendered through `render_ui` on `canvas`'s host.
    async fn rendered(s: &TestServices, canvas: &CanvasService) -> ChatRecord {
        let chat = s.chat().await;
        let mut ctx = s.tool_context(&chat);
        ctx.canvas = Some(canvas.host());
        RenderUiTool::new().call(form(), &ctx).await.unwrap();
        chat
    }

    #[tokio::test]
    async fn a_button_press_writes_its_value_into_the_surface_and_queues_it_for_the_chat()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let canvas = s.canvas();
        let chat = rendered(&s, &canvas).await;
        let before = canvas.surfaces(&chat.id).await?;
        let action = submit(json!({"name": "Ada"}));
        let queued = canvas.submit_action(&chat.id, action.clone()).await?;
        assert_eq!(
            (
                queued.target.as_str(),
                queued.sender.as_str(),
                queued.kind.as_str(),
                queued.text.clone()
            ),
            (
                chat.id.as_str(),
                CANVAS_SENDER,
                CANVAS_ACTION_KIND,
                action_text(&action)
            )
        );
        assert_eq!(s.inbox.list(Some(&chat.id)).await?, vec![queued]);
        let after = canvas.surfaces(&chat.id).await?;
        assert_eq!(
            after
                .iter()
                .map(|x| (x.version, Value::Object(x.data_model.clone())))
                .collect::<Vec<_>>(),
            vec![(before[0].version + 1, json!({"form": {"name": "Ada"}}))]
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_press_with_a_key_the_button_does_not_send_is_refused_and_nothing_is_queued()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let canvas = s.canvas();
        let chat = rendered(&s, &canvas).await;
        let before = canvas.surfaces(&chat.id).await?;
        let err = canvas
            .submit_action(&chat.id, submit(json!({"password": "hunter2"})))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, RuntimeError::InvalidInput { field, .. } if field == "action.context"),
            "{err}"
        );
        assert_eq!(s.inbox.list(Some(&chat.id)).await?, Vec::new());
        assert_eq!(canvas.surfaces(&chat.id).await?, before);
        Ok(())
    }

    #[tokio::test]
    async fn a_closed_surface_is_gone_but_its_history_is_kept() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let canvas = s.canvas();
        let chat = rendered(&s, &canvas).await;
        let mut events = s.events.subscribe();
        assert!(canvas.delete_surface(&chat.id, "signup").await?);
        assert!(!canvas.delete_surface(&chat.id, "signup").await?);
        assert_eq!(canvas.surfaces(&chat.id).await?, Vec::new());
        let kinds: Vec<SurfaceChangeKind> = canvas
            .surface_history(&chat.id, "signup")
            .await?
            .into_iter()
            .map(|h| h.kind)
            .collect();
        assert_eq!(
            kinds,
            vec![SurfaceChangeKind::Render, SurfaceChangeKind::Delete]
        );
        match events.try_recv()? {
            AgentEvent::SurfaceDeleted {
                chat_id,
                surface_id,
            } => assert_eq!((chat_id, surface_id.as_str()), (chat.id.clone(), "signup")),
            other => panic!("expected surface_deleted, got {other:?}"),
        }
        assert!(events.try_recv().is_err(), "one event for one delete");
        Ok(())
    }
}
