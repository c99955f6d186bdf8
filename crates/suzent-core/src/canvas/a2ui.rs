//! Export of a surface as A2UI v0.8 server-to-client messages (the portable form).
//!
//! v0.8 `dataModelUpdate.contents` is a list of `{key, valueString | valueNumber | valueBoolean
//! | valueMap}` where a `valueMap` holds one level of such entries. Deeper objects are sent as
//! further `dataModelUpdate`s whose `path` points at them; arrays are sent as maps keyed by
//! index (`"0"`, `"1"`...). JSON `null` has no v0.8 form and is left out.

use super::{CATALOG_ID, Surface, pointer};
use serde_json::{Map, Value, json};

pub(super) fn messages(surface: &Surface) -> Vec<Value> {
    let mut out = vec![json!({
        "surfaceUpdate": {
            "surfaceId": surface.surface_id,
            "components": surface.components,
        }
    })];
    let mut members: Vec<(String, &Value)> = surface
        .data_model
        .iter()
        .map(|(k, v)| (k.clone(), v))
        .collect();
    members.sort_by(|a, b| a.0.cmp(&b.0));
    data_updates(&surface.surface_id, "", members, &mut out);
    out.push(json!({
        "beginRendering": {
            "surfaceId": surface.surface_id,
            "root": surface.root,
            "catalogId": CATALOG_ID,
        }
    }));
    out
}

/// The members of a container: an object's entries sorted by key (the export is the same
/// whatever order the map keeps), or an array's elements keyed by index.
fn members(v: &Value) -> Option<Vec<(String, &Value)>> {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, &Value)> =
                m.iter().map(|(k, v)| (k.clone(), v)).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Some(entries)
        }
        Value::Array(a) => Some(
            a.iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
        ),
        _ => None,
    }
}

/// A `{key, valueX}` entry for a scalar; `None` for containers and null.
fn scalar_entry(key: &str, v: &Value) -> Option<Value> {
    let mut e = Map::new();
    e.insert("key".into(), Value::String(key.to_string()));
    match v {
        Value::String(s) => e.insert("valueString".into(), Value::String(s.clone())),
        Value::Number(n) => e.insert("valueNumber".into(), Value::Number(n.clone())),
        Value::Bool(b) => e.insert("valueBoolean".into(), Value::Bool(*b)),
        _ => return None,
    };
    Some(Value::Object(e))
}

/// One `dataModelUpdate` for the container at `path`, then one per container two levels down.
fn data_updates(
    surface_id: &str,
    path: &str,
    members_here: Vec<(String, &Value)>,
    out: &mut Vec<Value>,
) {
    let mut contents = Vec::new();
    let mut deeper = Vec::new();
    for (key, value) in members_here {
        if let Some(entry) = scalar_entry(&key, value) {
            contents.push(entry);
            continue;
        }
        let Some(children) = members(value) else {
            continue; // null
        };
        let child_path = pointer::join(path, &key);
        let mut map = Vec::new();
        for (ck, cv) in children {
            if let Some(entry) = scalar_entry(&ck, cv) {
                map.push(entry);
            } else if let Some(grand) = members(cv) {
                deeper.push((pointer::join(&child_path, &ck), grand));
            }
        }
        contents.push(json!({"key": key, "valueMap": map}));
    }
    let mut update = Map::new();
    update.insert("surfaceId".into(), Value::String(surface_id.to_string()));
    if !path.is_empty() {
        update.insert("path".into(), Value::String(path.to_string()));
    }
    update.insert("contents".into(), Value::Array(contents));
    out.push(json!({ "dataModelUpdate": update }));
    for (p, m) in deeper {
        data_updates(surface_id, &p, m, out);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::canvas::{BoundValue, Component, ComponentEntry, Surface, SurfaceTarget};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_surface_exports_as_v08_messages() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let data = json!({
            "title": "Hi",
            "n": 2,
            "ok": true,
            "gone": null,
            "form": {"name": "Ada", "address": {"city": "London"}},
            "rows": [{"a": 1}]
        });
        let surface = Surface {
            chat_id: "c".into(),
            surface_id: "s".into(),
            target: SurfaceTarget::Canvas,
            title: None,
            root: "t".into(),
            components: vec![ComponentEntry {
                id: "t".into(),
                component: Component::Text {
                    text: BoundValue::path("/title"),
                    usage_hint: None,
                },
            }],
            data_model: data.as_object().cloned().unwrap(),
            version: 1,
            tool_call_id: None,
            created_at: now,
            updated_at: now,
        };
        assert_eq!(
            surface.to_a2ui_messages(),
            vec![
                json!({"surfaceUpdate": {"surfaceId": "s", "components": [
                    {"id": "t", "component": {"Text": {"text": {"path": "/title"}}}}
                ]}}),
                json!({"dataModelUpdate": {"surfaceId": "s", "contents": [
                    {"key": "form", "valueMap": [{"key": "name", "valueString": "Ada"}]},
                    {"key": "n", "valueNumber": 2},
                    {"key": "ok", "valueBoolean": true},
                    {"key": "rows", "valueMap": []},
                    {"key": "title", "valueString": "Hi"},
                ]}}),
                json!({"dataModelUpdate": {"surfaceId": "s", "path": "/form/address", "contents": [
                    {"key": "city", "valueString": "London"}
                ]}}),
                json!({"dataModelUpdate": {"surfaceId": "s", "path": "/rows/0", "contents": [
                    {"key": "a", "valueNumber": 1}
                ]}}),
                json!({"beginRendering": {"surfaceId": "s", "root": "t", "catalogId": "suzent:canvas/v1"}}),
            ]
        );
    }
}
