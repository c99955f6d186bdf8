//! The canvas rules (issue 8): each kind of invalid surface is refused with an error naming the
//! JSON path of the fault; a valid tree of every component kind passes.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use suzent_core::{
    CanvasErrors, Component, DataUpdate, ImageSource, MAX_COMPONENTS, MAX_DEPTH, Surface,
    SurfaceTarget, apply_data_updates, classify_image_url, validate_components, validate_surface,
};

/// Validates `components` (raw JSON array) with `root` and `data` like a first render does;
/// returns the error lines, or an empty list when the surface is valid.
fn check(components: Value, root: &str, data: Value) -> Vec<String> {
    match build(components, root, data) {
        Ok(_) => Vec::new(),
        Err(e) => e.0.iter().map(ToString::to_string).collect(),
    }
}

fn build(components: Value, root: &str, data: Value) -> Result<Surface, CanvasErrors> {
    let raw = components.as_array().cloned().unwrap_or_default();
    let entries = validate_components(&raw)?;
    let given: Vec<String> = entries.iter().map(|c| c.id.clone()).collect();
    let now = chrono::Utc::now();
    let surface = Surface {
        chat_id: "chat".into(),
        surface_id: "s".into(),
        target: SurfaceTarget::Canvas,
        title: None,
        root: root.into(),
        components: entries,
        data_model: data.as_object().cloned().unwrap_or_default(),
        version: 1,
        tool_call_id: None,
        created_at: now,
        updated_at: now,
    };
    validate_surface(&surface, &given)?;
    Ok(surface)
}

fn text(id: &str, s: &str) -> Value {
    json!({"id": id, "component": {"Text": {"text": {"literalString": s}}}})
}

#[test]
fn an_unknown_component_names_its_index_and_the_known_ones() {
    let errors = check(
        json!([text("a", "x"), {"id": "f", "component": {"Foo": {}}}]),
        "a",
        json!({}),
    );
    assert_eq!(
        errors,
        [format!(
            "components[1].component: unknown component \"Foo\" (known: {})",
            Component::NAMES.join(", ")
        )]
    );
}

#[test]
fn a_property_of_the_wrong_type_names_its_path() {
    let errors = check(
        json!([{"id": "h", "component": {"Heading": {"text": {"literalString": "T"}, "level": "big"}}}]),
        "h",
        json!({}),
    );
    assert_eq!(
        errors,
        ["components[0].component.Heading.level: invalid type: string \"big\", expected u8"]
    );
    let errors = check(
        json!([{"id": "t", "component": {"Text": {"text": {"literalString": "T"}, "colour": "red"}}}]),
        "t",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.Text.colour: unknown field `colour`, expected `text` or `usageHint`"
        ]
    );
}

#[test]
fn a_missing_child_names_the_reference() {
    let errors = check(
        json!([
            text("a", "A"),
            {"id": "row", "component": {"Row": {"children": {"explicitList": ["a", "a", "btn"]}}}}
        ]),
        "row",
        json!({}),
    );
    assert_eq!(
        errors,
        ["components[1].component.Row.children.explicitList[2]: no component with id \"btn\""]
    );
    let errors = check(
        json!([
            {"id": "b", "component": {"Button": {"child": "label", "action": {"name": "go"}}}}
        ]),
        "b",
        json!({}),
    );
    assert_eq!(
        errors,
        ["components[0].component.Button.child: no component with id \"label\""]
    );
}

#[test]
fn a_missing_root_is_refused() {
    assert_eq!(
        check(json!([text("a", "A")]), "main", json!({})),
        ["root: no component with id \"main\""]
    );
}

#[test]
fn a_binding_path_must_be_a_json_pointer_outside_templates() {
    let errors = check(
        json!([{"id": "t", "component": {"Text": {"text": {"path": "name"}}}}]),
        "t",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.Text.text.path: \"name\" is not a JSON Pointer (must start with \"/\")"
        ]
    );
    let errors = check(
        json!([{"id": "t", "component": {"Text": {"text": {"path": "/a~2b"}}}}]),
        "t",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.Text.text.path: \"/a~2b\" is not a valid JSON Pointer (\"~\" must be followed by 0 or 1)"
        ]
    );
}

#[test]
fn a_bound_value_needs_a_literal_of_its_kind_or_a_path() {
    let errors = check(
        json!([
            {"id": "c", "component": {"CheckBox": {
                "label": {"literalString": "Agree"},
                "value": {"literalString": "yes"}
            }}},
            {"id": "t", "component": {"Text": {"text": {}}}},
            {"id": "col", "component": {"Column": {"children": {"explicitList": ["c", "t"]}}}}
        ]),
        "col",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.CheckBox.value: expected literalBoolean, found literalString",
            "components[1].component.Text.text: needs literalString or a path",
        ]
    );
}

#[test]
fn a_template_binds_an_array_with_a_pointer() {
    let item = json!({"id": "item", "component": {"Text": {"text": {"path": "name"}}}});
    // Not a pointer.
    let errors = check(
        json!([item, {"id": "list", "component": {"List": {"children": {"template": {"componentId": "item", "dataBinding": "items"}}}}}]),
        "list",
        json!({"items": []}),
    );
    assert_eq!(
        errors,
        [
            "components[1].component.List.children.template.dataBinding: \"items\" is not a JSON Pointer (must start with \"/\")"
        ]
    );
    // Not an array.
    let errors = check(
        json!([item, {"id": "list", "component": {"List": {"children": {"template": {"componentId": "item", "dataBinding": "/items"}}}}}]),
        "list",
        json!({"items": {"a": 1}}),
    );
    assert_eq!(
        errors,
        [
            "components[1].component.List.children.template.dataBinding: \"/items\" is an object in the data model, not an array"
        ]
    );
    // The template component must exist.
    let errors = check(
        json!([{"id": "list", "component": {"List": {"children": {"template": {"componentId": "row", "dataBinding": "/items"}}}}}]),
        "list",
        json!({"items": []}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.List.children.template.componentId: no component with id \"row\""
        ]
    );
    // Relative paths are fine inside the template.
    assert_eq!(
        check(
            json!([item, {"id": "list", "component": {"List": {"children": {"template": {"componentId": "item", "dataBinding": "/items"}}}}}]),
            "list",
            json!({"items": [{"name": "a"}]}),
        ),
        Vec::<String>::new()
    );
}

#[test]
fn duplicate_ids_name_both_entries() {
    assert_eq!(
        check(
            json!([text("a", "1"), text("b", "2"), text("a", "3")]),
            "a",
            json!({})
        ),
        ["components[2].id: duplicate id \"a\" (also components[0].id)"]
    );
}

#[test]
fn a_cycle_is_named_at_the_reference_that_closes_it() {
    let errors = check(
        json!([
            {"id": "a", "component": {"Column": {"children": {"explicitList": ["b"]}}}},
            {"id": "b", "component": {"Card": {"child": "c"}}},
            {"id": "c", "component": {"Row": {"children": {"explicitList": ["a"]}}}}
        ]),
        "a",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[2].component.Row.children.explicitList[0]: \"a\" -> \"b\" -> \"c\" -> \"a\" forms a cycle"
        ]
    );
}

#[test]
fn too_many_components_are_refused() {
    let many: Vec<Value> = (0..=MAX_COMPONENTS)
        .map(|i| text(&format!("t{i}"), "x"))
        .collect();
    assert_eq!(
        check(Value::Array(many), "t0", json!({})),
        ["components: the surface has 501 components; the limit is 500"]
    );
}

#[test]
fn a_tree_deeper_than_the_limit_is_refused() {
    let mut comps = vec![text("leaf", "x")];
    let mut child = "leaf".to_string();
    for i in 0..MAX_DEPTH {
        let id = format!("card{i}");
        comps.push(json!({"id": id, "component": {"Card": {"child": child}}}));
        child = id;
    }
    assert_eq!(
        check(Value::Array(comps.clone()), &child, json!({})),
        ["root: the component tree is 33 levels deep; the limit is 32"]
    );
    // One level less passes.
    assert_eq!(
        check(Value::Array(comps), "card30", json!({})),
        Vec::<String>::new()
    );
}

#[test]
fn an_oversized_surface_is_refused() {
    let big = "x".repeat(300 * 1024);
    let errors = check(json!([text("t", "hi")]), "t", json!({"blob": big}));
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("surface: the surface is 307")
            && errors[0].ends_with("; the limit is 262144 bytes"),
        "{}",
        errors[0]
    );
}

#[test]
fn remote_and_foreign_image_urls_are_refused() {
    let image =
        |url: &str| json!([{"id": "i", "component": {"Image": {"url": {"literalString": url}}}}]);
    assert_eq!(
        check(image("https://example.com/cat.png"), "i", json!({})),
        [
            "components[0].component.Image.url.literalString: \"https://example.com/cat.png\" is a remote URL; no remote fetches: give a data: URL or a workspace file path"
        ]
    );
    assert_eq!(
        check(image("javascript:alert(1)"), "i", json!({})),
        [
            "components[0].component.Image.url.literalString: \"javascript:alert(1)\" has the scheme \"javascript:\"; only data: URLs and workspace file paths are shown"
        ]
    );
    assert_eq!(
        check(image("data:text/html,<b>x</b>"), "i", json!({})),
        [
            "components[0].component.Image.url.literalString: a data: URL must be an image (data:image/png;base64,...)"
        ]
    );
    // A bound url is checked in the data model, also through a template.
    let bound = json!([{"id": "i", "component": {"Image": {"url": {"path": "/pic"}}}}]);
    assert_eq!(
        check(bound, "i", json!({"pic": "http://x/y.png"})),
        [
            "components[0].component.Image.url.path: the data model value at \"/pic\": \"http://x/y.png\" is a remote URL; no remote fetches: give a data: URL or a workspace file path"
        ]
    );
    let gallery = json!([
        {"id": "i", "component": {"Image": {"url": {"path": "src"}}}},
        {"id": "g", "component": {"Row": {"children": {"template": {"componentId": "i", "dataBinding": "/pics"}}}}}
    ]);
    assert_eq!(
        check(
            gallery,
            "g",
            json!({"pics": [{"src": "data:image/png;base64,AAAA"}, {"src": "//cdn/x.png"}]})
        ),
        [
            "components[0].component.Image.url.path: the data model value at \"/pics/1/src\": \"//cdn/x.png\" is a remote URL; no remote fetches: give a data: URL or a workspace file path"
        ]
    );
    assert_eq!(
        classify_image_url("img/cat.png"),
        ImageSource::File("img/cat.png".into())
    );
    assert_eq!(
        classify_image_url("C:\\pics\\cat.png"),
        ImageSource::File("C:\\pics\\cat.png".into())
    );
}

#[test]
fn a_bad_data_update_path_names_its_index() {
    let mut model = json!({"n": 1}).as_object().cloned().unwrap_or_default();
    let updates = vec![
        DataUpdate {
            path: "/progress".into(),
            value: json!(0.5),
        },
        DataUpdate {
            path: "progress".into(),
            value: json!(1),
        },
        DataUpdate {
            path: "/n/deeper".into(),
            value: json!(1),
        },
    ];
    let errors: Vec<String> = apply_data_updates(&mut model, &updates)
        .err()
        .map(|e| e.0.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    assert_eq!(
        errors,
        [
            "data_updates[1].path: \"progress\" is not a JSON Pointer (must start with \"/\")",
            "data_updates[2].path: cannot set \"/n/deeper\": \"/n\" is a number, not an object or array",
        ]
    );
    assert_eq!(model.get("progress"), Some(&json!(0.5)));
}

#[test]
fn property_ranges_are_checked() {
    let errors = check(
        json!([
            {"id": "h", "component": {"Heading": {"text": {"literalString": "T"}, "level": 7}}},
            {"id": "s", "component": {"Slider": {"value": {"path": "/v"}, "minValue": 5, "maxValue": 5}}},
            {"id": "p", "component": {"Progress": {"value": {"literalNumber": 1}, "max": 0}}},
            {"id": "b", "component": {"Button": {"child": "h", "action": {"name": " ", "context": []}}}},
            {"id": "col", "component": {"Column": {"children": {"explicitList": ["h", "s", "p", "b"]}}}}
        ]),
        "col",
        json!({}),
    );
    assert_eq!(
        errors,
        [
            "components[0].component.Heading.level: 7 is out of range (1 to 6)",
            "components[1].component.Slider.maxValue: the range 5..5 is empty (minValue must be below maxValue)",
            "components[2].component.Progress.max: 0 must be a positive number",
            "components[3].component.Button.action.name: the action name is empty",
        ]
    );
}

/// A form with every component kind of the catalog; it must validate and round-trip.
#[test]
fn a_tree_with_every_component_kind_is_valid() {
    let components = json!([
        {"id": "root", "component": {"Column": {"children": {"explicitList": [
            "title", "intro", "img", "tabs", "stack", "divider", "badge", "progress", "table",
            "list", "name", "agree", "plan", "slider", "when", "frame", "submit"
        ]}, "distribution": "start", "alignment": "stretch"}}},
        {"id": "title", "component": {"Heading": {"text": {"literalString": "Sign up"}, "level": 1}}},
        {"id": "intro", "component": {"Text": {"text": {"literalString": "**Welcome**"}, "usageHint": "body"}}},
        {"id": "img", "component": {"Image": {"url": {"literalString": "data:image/png;base64,iVBORw0KGgo="}, "altText": "logo"}}},
        {"id": "tabs", "component": {"Tabs": {"tabItems": [
            {"title": {"literalString": "One"}, "child": "card"},
            {"title": {"literalString": "Two"}, "child": "row"}
        ]}}},
        {"id": "card", "component": {"Card": {"child": "cardText"}}},
        {"id": "cardText", "component": {"Text": {"text": {"path": "/note"}, "usageHint": "caption"}}},
        {"id": "row", "component": {"Row": {"children": {"explicitList": ["cardText"]}, "distribution": "spaceBetween", "alignment": "center"}}},
        {"id": "stack", "component": {"Stack": {"children": {"explicitList": ["badge"]}}}},
        {"id": "divider", "component": {"Divider": {"axis": "horizontal"}}},
        {"id": "badge", "component": {"Badge": {"text": {"literalString": "new"}, "tone": "info"}}},
        {"id": "progress", "component": {"Progress": {"value": {"path": "/progress"}, "max": 1.0, "label": {"literalString": "Done"}}}},
        {"id": "table", "component": {"Table": {"columns": [{"header": "Name", "key": "name"}], "rows": {"path": "/people"}}}},
        {"id": "list", "component": {"List": {"children": {"template": {"componentId": "person", "dataBinding": "/people"}}, "direction": "vertical"}}},
        {"id": "person", "component": {"Text": {"text": {"path": "name"}}}},
        {"id": "name", "component": {"TextField": {"label": {"literalString": "Name"}, "text": {"path": "/form/name"}, "textFieldType": "shortText"}}},
        {"id": "agree", "component": {"CheckBox": {"label": {"literalString": "I agree"}, "value": {"path": "/form/agree", "literalBoolean": false}}}},
        {"id": "plan", "component": {"MultipleChoice": {"selections": {"path": "/form/plan", "literalArray": ["free"]}, "options": [
            {"label": {"literalString": "Free"}, "value": "free"},
            {"label": {"literalString": "Pro"}, "value": "pro"}
        ], "maxAllowedSelections": 1}}},
        {"id": "slider", "component": {"Slider": {"value": {"path": "/form/seats"}, "minValue": 1.0, "maxValue": 10.0}}},
        {"id": "when", "component": {"DateTimeInput": {"value": {"path": "/form/start"}, "enableDate": true, "enableTime": false}}},
        {"id": "frame", "component": {"HtmlFrame": {"html": {"literalString": "<p style='color:red'>hi</p>"}, "height": 120, "title": "Preview"}}},
        {"id": "submitLabel", "component": {"Text": {"text": {"literalString": "Submit"}}}},
        {"id": "submit", "component": {"Button": {"child": "submitLabel", "primary": true, "action": {"name": "submit", "context": [
            {"key": "name", "value": {"path": "/form/name"}},
            {"key": "agree", "value": {"path": "/form/agree"}},
            {"key": "source", "value": {"literalString": "canvas"}}
        ]}}}}
    ]);
    let data = json!({"note": "hello", "progress": 0.25, "people": [{"name": "Ada"}], "form": {}});
    let surface = build(components.clone(), "root", data).unwrap_or_else(|e| panic!("{e}"));
    let names: std::collections::BTreeSet<&str> = surface
        .components
        .iter()
        .map(|c| c.component.name())
        .collect();
    assert_eq!(names.len(), Component::NAMES.len(), "{names:?}");
    // Typed entries serialize back to the JSON the model wrote.
    assert_eq!(
        serde_json::to_value(&surface.components).unwrap_or_default(),
        components
    );
}

#[test]
fn surface_events_and_actions_have_the_wire_shape() {
    let surface =
        build(json!([text("t", "hi")]), "t", json!({"n": 1})).unwrap_or_else(|e| panic!("{e}"));
    let ev = serde_json::to_value(suzent_core::AgentEvent::SurfaceUpdated {
        chat_id: "chat".into(),
        surface,
    })
    .unwrap_or_default();
    assert_eq!(ev["name"], "surface_updated");
    assert_eq!(ev["value"]["chatId"], "chat");
    assert_eq!(ev["value"]["surface"]["surfaceId"], "s");
    assert_eq!(ev["value"]["surface"]["target"], "canvas");
    assert_eq!(ev["value"]["surface"]["dataModel"], json!({"n": 1}));
    assert_eq!(ev["value"]["surface"]["version"], 1);
    let ev = serde_json::to_value(suzent_core::AgentEvent::SurfaceDeleted {
        chat_id: "chat".into(),
        surface_id: "s".into(),
    })
    .unwrap_or_default();
    assert_eq!(
        ev,
        json!({"name": "surface_deleted", "value": {"chatId": "chat", "surfaceId": "s"}})
    );
    let action: suzent_core::SurfaceAction = serde_json::from_value(json!({
        "surfaceId": "s", "name": "submit", "sourceComponentId": "b", "context": {"x": 1}
    }))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(action.context["x"], json!(1));
}
