#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Canvas surfaces in the store (migration 0005): versioned writes, history kept after a
//! delete, survival across reopening the file, cascade with the chat.

use pretty_assertions::assert_eq;
use serde_json::json;
use suzent_core::{
    BoundValue, Component, ComponentEntry, PermissionMode, Surface, SurfaceChange,
    SurfaceChangeKind, SurfaceTarget,
};
use suzent_store::{NewChat, Store, StoreError};

fn chat(id: &str) -> NewChat {
    NewChat {
        id: id.into(),
        title: "t".into(),
        workspace: "/tmp".into(),
        model: None,
        mode: PermissionMode::Default,
        tools: None,
    }
}

fn surface(chat_id: &str, id: &str, version: u32, text: &str) -> Surface {
    let now = chrono::Utc::now();
    Surface {
        chat_id: chat_id.into(),
        surface_id: id.into(),
        target: SurfaceTarget::Canvas,
        title: Some("T".into()),
        root: "t".into(),
        components: vec![ComponentEntry {
            id: "t".into(),
            component: Component::Text {
                text: BoundValue::string(text),
                usage_hint: None,
            },
        }],
        data_model: json!({"n": version}).as_object().cloned().unwrap(),
        version,
        tool_call_id: Some(format!("call-{version}")),
        created_at: now,
        updated_at: now,
    }
}

fn change(kind: SurfaceChangeKind, call: Option<&str>) -> SurfaceChange {
    SurfaceChange {
        kind,
        tool_call_id: call.map(str::to_string),
        payload: json!({"kind": kind.as_str()}),
    }
}

#[tokio::test]
async fn surfaces_are_versioned_listed_oldest_first_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suzent.db");
    let store = Store::open(&path).await.unwrap();
    store.create_chat(&chat("c1")).await.unwrap();
    let first = surface("c1", "b-form", 1, "one");
    store
        .save_surface(&first, &change(SurfaceChangeKind::Render, Some("call-1")))
        .await
        .unwrap();
    let other = surface("c1", "a-later", 1, "other");
    store
        .save_surface(&other, &change(SurfaceChangeKind::Render, Some("call-x")))
        .await
        .unwrap();
    // Version 1 again, or a version that skips one, is a conflict; nothing changes.
    for bad in [
        surface("c1", "b-form", 1, "dup"),
        surface("c1", "b-form", 3, "skip"),
    ] {
        let err = store
            .save_surface(&bad, &change(SurfaceChangeKind::Render, None))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    }
    let second = surface("c1", "b-form", 2, "two");
    store
        .save_surface(&second, &change(SurfaceChangeKind::UserAction, None))
        .await
        .unwrap();
    store.close().await;

    let store = Store::open(&path).await.unwrap();
    assert_eq!(
        store.get_surface("c1", "b-form").await.unwrap(),
        Some(second.clone())
    );
    let listed = store.list_surfaces("c1").await.unwrap();
    assert_eq!(listed, vec![second, other]);
    assert_eq!(store.get_surface("c1", "nope").await.unwrap(), None);
    assert!(matches!(
        store
            .save_surface(
                &surface("ghost", "s", 1, "x"),
                &change(SurfaceChangeKind::Render, None)
            )
            .await,
        Err(StoreError::NotFound { what: "chat", .. })
    ));
}

#[tokio::test]
async fn history_is_kept_after_delete_and_goes_with_the_chat() {
    let store = Store::open_in_memory().await.unwrap();
    store.create_chat(&chat("c1")).await.unwrap();
    store
        .save_surface(
            &surface("c1", "s", 1, "a"),
            &change(SurfaceChangeKind::Render, Some("call-1")),
        )
        .await
        .unwrap();
    store
        .save_surface(
            &surface("c1", "s", 2, "b"),
            &change(SurfaceChangeKind::UpdateData, Some("call-2")),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .delete_surface("c1", "s", &change(SurfaceChangeKind::Delete, None))
            .await
            .unwrap(),
        Some(2)
    );
    assert_eq!(
        store
            .delete_surface("c1", "s", &change(SurfaceChangeKind::Delete, None))
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.get_surface("c1", "s").await.unwrap(), None);
    // Created again from version 1.
    store
        .save_surface(
            &surface("c1", "s", 1, "again"),
            &change(SurfaceChangeKind::Render, Some("call-3")),
        )
        .await
        .unwrap();
    let history = store.surface_history("c1", "s").await.unwrap();
    let summary: Vec<(u32, SurfaceChangeKind, Option<&str>)> = history
        .iter()
        .map(|h| (h.version, h.kind, h.tool_call_id.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (1, SurfaceChangeKind::Render, Some("call-1")),
            (2, SurfaceChangeKind::UpdateData, Some("call-2")),
            (2, SurfaceChangeKind::Delete, None),
            (1, SurfaceChangeKind::Render, Some("call-3")),
        ]
    );
    assert_eq!(history[1].payload, json!({"kind": "update_data"}));
    assert!(
        history
            .windows(2)
            .all(|w| w[0].id < w[1].id && w[0].created_at < w[1].created_at)
    );
    store.delete_chat("c1").await.unwrap();
    assert_eq!(store.list_surfaces("c1").await.unwrap(), vec![]);
    assert_eq!(store.surface_history("c1", "s").await.unwrap(), vec![]);
}

#[tokio::test]
async fn history_keeps_only_the_newest_changes_per_surface() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("suzent.db")).await.unwrap();
    store.create_chat(&chat("c1")).await.unwrap();
    let limit = suzent_store::SURFACE_HISTORY_LIMIT as u32;
    let total = limit + 25;
    for version in 1..=total {
        let kind = if version == 1 {
            SurfaceChangeKind::Render
        } else {
            SurfaceChangeKind::UpdateData
        };
        store
            .save_surface(&surface("c1", "s", version, "x"), &change(kind, None))
            .await
            .unwrap();
    }
    // Another surface's history is not touched.
    store
        .save_surface(
            &surface("c1", "other", 1, "y"),
            &change(SurfaceChangeKind::Render, None),
        )
        .await
        .unwrap();
    let history = store.surface_history("c1", "s").await.unwrap();
    assert_eq!(history.len(), limit as usize);
    assert_eq!(history.first().unwrap().version, total - limit + 1);
    assert_eq!(history.last().unwrap().version, total);
    assert_eq!(store.surface_history("c1", "other").await.unwrap().len(), 1);
}
