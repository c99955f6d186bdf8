//! Tool schemas as each provider accepts them (public case mcp 1).
//!
//! Every provider gets local `$ref`s inlined and the meta keys (`$schema`, `$defs`,
//! `definitions`, `$id`) dropped. Gemini accepts only a subset of OpenAPI 3 schema: for it the
//! schema is rebuilt from an allow-list of keywords, nullable unions become `nullable: true`.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use super::ProviderKind;

/// Normalized schemas by (provider, tool name), each with the schema it was made from.
type Normalized = HashMap<(ProviderKind, String), (Value, Arc<Value>)>;

static NORMALIZED: LazyLock<Mutex<Normalized>> = LazyLock::new(Mutex::default);

/// At most this many tools' schemas are kept (built-in tools and MCP servers' tools); past it
/// the cache starts over.
const CACHE_LIMIT: usize = 1024;

/// [`normalize_schema`] for the tool `name`, kept for the process: every model request sends
/// every tool's schema, and while a tool's schema is unchanged (checked by equality, which
/// costs far less than resolving `$ref`s and rebuilding the tree) the kept result is reused.
pub fn normalize_tool_schema(name: &str, schema: &Value, provider: ProviderKind) -> Value {
    normalized_tool_schema(name, schema, provider)
        .as_ref()
        .clone()
}

/// [`normalize_tool_schema`], shared rather than copied (a request serializes it in place).
pub(crate) fn normalized_tool_schema(
    name: &str,
    schema: &Value,
    provider: ProviderKind,
) -> Arc<Value> {
    let key = (provider, name.to_string());
    {
        let cache = NORMALIZED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((source, normalized)) = cache.get(&key)
            && source == schema
        {
            return Arc::clone(normalized);
        }
    }
    let normalized = Arc::new(normalize_schema(schema, provider));
    let mut cache = NORMALIZED.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(key, (schema.clone(), Arc::clone(&normalized)));
    normalized
}

/// How many times one `$ref` may be expanded inside itself before it becomes `{"type":"object"}`.
const MAX_RECURSION: usize = 2;
/// How deep `$ref`s may nest at all.
const MAX_REF_DEPTH: usize = 16;

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value is an array of schemas.
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/// Keywords whose value is a map of schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "dependentSchemas"];
/// Keys removed for every provider.
const META_KEYS: &[&str] = &[
    "$schema",
    "$defs",
    "definitions",
    "$id",
    "$comment",
    "$anchor",
];

/// Keywords Gemini's `Schema` accepts.
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "anyOf",
    "propertyOrdering",
];

/// The schema of a tool's arguments as `provider` accepts it. Always an object schema with
/// `type: "object"` and `properties` at the top (empty for a tool without parameters).
pub fn normalize_schema(schema: &Value, provider: ProviderKind) -> Value {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(map) = schema.get(key).and_then(Value::as_object) {
            for (name, def) in map {
                defs.insert(format!("#/{key}/{name}"), def.clone());
            }
        }
    }
    let resolver = Resolver {
        root: schema,
        defs: &defs,
    };
    let mut out = resolver.inline(schema, &mut Vec::new());
    if provider == ProviderKind::Gemini {
        out = gemini(out);
    }
    let mut top = match out {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    top.insert("type".into(), json!("object"));
    if !top.get("properties").is_some_and(Value::is_object) {
        top.insert("properties".into(), Value::Object(Map::new()));
    }
    if provider == ProviderKind::Gemini {
        top.remove("nullable");
    }
    Value::Object(top)
}

struct Resolver<'a> {
    root: &'a Value,
    defs: &'a Map<String, Value>,
}

impl Resolver<'_> {
    /// Copies `node` with local refs inlined and meta keys dropped, walking only schema positions
    /// (a property named `$id` or `default` is kept).
    fn inline(&self, node: &Value, stack: &mut Vec<String>) -> Value {
        let Value::Object(map) = node else {
            return node.clone(); // `true`/`false` schemas.
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let target = if reference == "#" {
                Some(self.root)
            } else {
                self.lookup(reference)
            };
            let recursion = stack.iter().filter(|r| *r == reference).count();
            let mut resolved = match target {
                Some(target) if recursion < MAX_RECURSION && stack.len() < MAX_REF_DEPTH => {
                    stack.push(reference.to_string());
                    let resolved = self.inline(target, stack);
                    stack.pop();
                    match resolved {
                        Value::Object(map) => map,
                        _ => Map::new(),
                    }
                }
                // Too deep, recursive beyond the limit, remote or dangling.
                _ => match json!({"type": "object"}) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                },
            };
            // Keys beside `$ref` (a description, say) win over the definition's.
            for (key, value) in map {
                if key == "$ref" || META_KEYS.contains(&key.as_str()) {
                    continue;
                }
                resolved.insert(key.clone(), self.child(key, value, stack));
            }
            if reference == "#" {
                // The root's own meta keys.
                for key in META_KEYS {
                    resolved.remove(*key);
                }
            }
            return Value::Object(resolved);
        }
        let mut out = Map::new();
        for (key, value) in map {
            if META_KEYS.contains(&key.as_str()) {
                continue;
            }
            out.insert(key.clone(), self.child(key, value, stack));
        }
        Value::Object(out)
    }

    /// The value of keyword `key`, recursing where it holds schemas.
    fn child(&self, key: &str, value: &Value, stack: &mut Vec<String>) -> Value {
        if SCHEMA_MAP_KEYWORDS.contains(&key)
            && let Value::Object(map) = value
        {
            return Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.inline(v, stack)))
                    .collect(),
            );
        }
        if SCHEMA_ARRAY_KEYWORDS.contains(&key)
            && let Value::Array(items) = value
        {
            return Value::Array(items.iter().map(|v| self.inline(v, stack)).collect());
        }
        if SCHEMA_KEYWORDS.contains(&key) && value.is_object() {
            return self.inline(value, stack);
        }
        value.clone()
    }

    fn lookup(&self, reference: &str) -> Option<&Value> {
        if let Some(found) = self.defs.get(reference) {
            return Some(found);
        }
        // Any other local JSON pointer.
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }
}

/// Rebuilds an inlined schema in the subset Gemini accepts.
fn gemini(node: Value) -> Value {
    let Value::Object(mut map) = node else {
        // `true` (anything) has no Gemini form; leave it unconstrained-ish.
        return json!({});
    };

    // `oneOf` is treated as `anyOf`; a single-element `allOf` is merged in.
    if let Some(one_of) = map.remove("oneOf") {
        map.entry("anyOf").or_insert(one_of);
    }
    // Longer `allOf`s have no Gemini form and are dropped.
    if let Some(Value::Array(mut all_of)) = map.remove("allOf")
        && all_of.len() == 1
        && let Some(Value::Object(inner)) = all_of.pop()
    {
        for (k, v) in inner {
            map.entry(k).or_insert(v);
        }
    }
    if let Some(value) = map.remove("const") {
        map.entry("enum").or_insert(json!([value]));
    }

    let mut nullable = map
        .get("nullable")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    // `anyOf: [X, {type: null}]` -> X, nullable.
    if let Some(Value::Array(variants)) = map.remove("anyOf") {
        let (nulls, mut rest): (Vec<Value>, Vec<Value>) =
            variants.into_iter().partition(is_null_schema);
        if !nulls.is_empty() {
            nullable = true;
        }
        if rest.len() == 1 {
            if let Some(Value::Object(inner)) = rest.pop() {
                for (k, v) in inner {
                    // The outer description (schemars puts it beside anyOf) wins.
                    map.entry(k).or_insert(v);
                }
            }
        } else if !rest.is_empty() {
            map.insert(
                "anyOf".into(),
                Value::Array(rest.into_iter().map(gemini).collect()),
            );
        }
    }

    // `type: [X, "null"]` -> X, nullable; several non-null types -> anyOf.
    if let Some(Value::Array(types)) = map.get("type").cloned() {
        let mut named: Vec<String> = types
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if named.iter().any(|t| t == "null") {
            nullable = true;
            named.retain(|t| t != "null");
        }
        match named.len() {
            0 => {
                map.remove("type");
            }
            1 => {
                map.insert("type".into(), json!(named[0]));
            }
            _ => {
                map.remove("type");
                map.insert(
                    "anyOf".into(),
                    Value::Array(named.iter().map(|t| json!({"type": t})).collect()),
                );
            }
        }
    }
    if map.get("type").and_then(Value::as_str) == Some("null") {
        map.remove("type");
        nullable = true;
    }

    let mut out = Map::new();
    for (key, value) in map {
        if !GEMINI_KEYS.contains(&key.as_str()) {
            continue;
        }
        match key.as_str() {
            "format" => {
                if matches!(value.as_str(), Some("enum") | Some("date-time")) {
                    out.insert(key, value);
                }
            }
            "properties" => {
                if let Value::Object(props) = value {
                    let props: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k, gemini(v))).collect();
                    if !props.is_empty() {
                        out.insert(key, Value::Object(props));
                    }
                }
            }
            "items" => match value {
                Value::Object(_) => {
                    out.insert(key, gemini(value));
                }
                // Tuple `items`: the first element's schema.
                Value::Array(mut items) if !items.is_empty() => {
                    out.insert(key, gemini(items.remove(0)));
                }
                _ => {}
            },
            "anyOf" => {
                out.insert(key, value);
            }
            "enum" => {
                // Gemini enums are strings.
                if let Value::Array(values) = &value {
                    if values.iter().all(Value::is_string) {
                        out.insert(key, value);
                    } else if values.iter().all(|v| v.is_string() || v.is_null()) {
                        nullable = true;
                        out.insert(
                            key,
                            Value::Array(
                                values.iter().filter(|v| v.is_string()).cloned().collect(),
                            ),
                        );
                    }
                }
            }
            _ => {
                out.insert(key, value);
            }
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), json!("string"));
    }
    // `required` may only name declared properties.
    if let Some(Value::Array(required)) = out.get("required").cloned() {
        let declared = out.get("properties").and_then(Value::as_object);
        let kept: Vec<Value> = required
            .into_iter()
            .filter(|name| {
                name.as_str()
                    .is_some_and(|n| declared.is_some_and(|props| props.contains_key(n)))
            })
            .collect();
        if kept.is_empty() {
            out.remove("required");
        } else {
            out.insert("required".into(), Value::Array(kept));
        }
    }
    if nullable {
        out.insert("nullable".into(), json!(true));
    }
    Value::Object(out)
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
        || schema
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.len() == 1 && e[0].is_null())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schemars-style schema (public case mcp 1).
    fn sample() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "SearchArgs",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "query": {"type": "string", "description": "What to look for", "default": ""},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0},
                "filter": {
                    "anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}],
                    "description": "Optional filter"
                },
                "node": {"$ref": "#/$defs/Node"}
            },
            "required": ["query"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "kind": {"type": "string", "enum": ["file", "dir"]},
                        "since": {"type": "string", "format": "date-time"}
                    }
                },
                "Node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                    }
                }
            }
        })
    }

    fn text(v: &Value) -> String {
        v.to_string()
    }

    #[test]
    fn a_kept_schema_is_reused_only_while_the_tool_s_schema_is_unchanged() {
        // A name of this test's own: the cache is shared by the process.
        let name = "cache_test_search";
        for kind in [ProviderKind::OpenAi, ProviderKind::Gemini] {
            let first = normalize_tool_schema(name, &sample(), kind);
            assert_eq!(first, normalize_schema(&sample(), kind));
            assert_eq!(normalize_tool_schema(name, &sample(), kind), first);
        }
        // The same tool with another schema (an MCP server updated its tool) is normalized anew.
        let mut changed = sample();
        changed["properties"]["query"]["description"] = json!("Changed");
        let out = normalize_tool_schema(name, &changed, ProviderKind::OpenAi);
        assert_eq!(out, normalize_schema(&changed, ProviderKind::OpenAi));
        assert_eq!(out["properties"]["query"]["description"], "Changed");
        // Each provider keeps its own form.
        assert_ne!(
            normalize_tool_schema(name, &changed, ProviderKind::Gemini),
            out
        );
    }

    #[test]
    fn gemini_schema_has_no_refs_defs_unions_or_additional_properties() {
        let out = normalize_schema(&sample(), ProviderKind::Gemini);
        let s = text(&out);
        for banned in [
            "$ref",
            "$defs",
            "$schema",
            "additionalProperties",
            "anyOf",
            "\"title\"",
            "default",
            "uint32",
        ] {
            assert!(!s.contains(banned), "{banned} in {s}");
        }
        assert_eq!(out["type"], json!("object"));
        assert_eq!(
            out["properties"]["limit"],
            json!({"type": "integer", "minimum": 0, "nullable": true})
        );
        let filter = &out["properties"]["filter"];
        assert_eq!(filter["nullable"], json!(true));
        assert_eq!(filter["description"], json!("Optional filter"));
        assert_eq!(filter["properties"]["since"]["format"], json!("date-time"));
        assert_eq!(filter["properties"]["kind"]["enum"], json!(["file", "dir"]));
        assert_eq!(out["required"], json!(["query"]));
    }

    #[test]
    fn recursive_refs_stop_at_the_depth_limit() {
        let out = normalize_schema(&sample(), ProviderKind::Gemini);
        let node = &out["properties"]["node"];
        assert_eq!(node["properties"]["name"]["type"], json!("string"));
        let mut depth = 0;
        let mut cur = node.clone();
        while let Some(next) = cur
            .get("properties")
            .and_then(|p| p.get("children"))
            .map(|c| c["items"].clone())
        {
            depth += 1;
            cur = next;
        }
        assert!((1..=MAX_RECURSION).contains(&depth), "depth {depth}");
        assert_eq!(cur, json!({"type": "object"}));
    }

    #[test]
    fn openai_and_anthropic_keep_unions_but_lose_refs_and_meta() {
        for kind in [
            ProviderKind::OpenAi,
            ProviderKind::Anthropic,
            ProviderKind::Ollama,
        ] {
            let out = normalize_schema(&sample(), kind);
            let s = text(&out);
            for banned in ["$ref", "$defs", "$schema"] {
                assert!(!s.contains(banned), "{banned} in {s}");
            }
            assert_eq!(
                out["properties"]["filter"]["anyOf"][1],
                json!({"type": "null"})
            );
            assert_eq!(
                out["properties"]["filter"]["anyOf"][0]["properties"]["kind"]["type"],
                json!("string")
            );
            assert_eq!(
                out["properties"]["limit"]["type"],
                json!(["integer", "null"])
            );
            assert_eq!(out["additionalProperties"], json!(false));
        }
    }

    #[test]
    fn tools_without_parameters_get_an_empty_object_schema() {
        for kind in ProviderKind::ALL {
            assert_eq!(
                normalize_schema(&Value::Null, kind),
                json!({"type": "object", "properties": {}})
            );
            assert_eq!(
                normalize_schema(&json!({}), kind),
                json!({"type": "object", "properties": {}})
            );
        }
    }

    #[test]
    fn properties_named_like_keywords_survive() {
        let schema = json!({
            "type": "object",
            "properties": {"$id": {"type": "string"}, "default": {"type": "string"}, "title": {"type": "string"}}
        });
        let out = normalize_schema(&schema, ProviderKind::Gemini);
        let props = out["properties"].as_object().map(|p| p.len());
        assert_eq!(props, Some(3));
    }

    #[test]
    fn definitions_refs_and_sibling_descriptions_are_inlined() {
        let schema = json!({
            "type": "object",
            "properties": {"mode": {"$ref": "#/definitions/Mode", "description": "How"}},
            "definitions": {"Mode": {"type": "string", "enum": ["a", "b"], "description": "old"}}
        });
        let out = normalize_schema(&schema, ProviderKind::OpenAi);
        assert_eq!(
            out["properties"]["mode"],
            json!({"type": "string", "enum": ["a", "b"], "description": "How"})
        );
        assert!(out.get("definitions").is_none());
    }
}
