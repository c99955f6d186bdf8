//! Tool-call arguments made to fit the tool's JSON Schema before anything looks at them.
//!
//! Models often send a JSON *string* holding an array or an object where the schema expects the
//! array or object itself (`"paths": "[\"a\", \"b\"]"`). [`coerce_args`] decodes such a string
//! once, when the field's schema does not accept a string and the string parses as exactly an
//! accepted type; otherwise the call fails with an error naming the field and the expected type.
//! Strings where the schema expects a string stay as sent. It runs before the permission check,
//! so the engine, the audit log and the tool see the same value. Works on any JSON Schema
//! (built-in tools' generated schemas, MCP tools' input schemas): `type` (a name or a list),
//! `anyOf`/`oneOf` of typed schemas, local `$ref`s into `$defs`/`definitions`, and nested
//! `properties` of objects.

use serde_json::{Map, Value};

/// `$ref`s followed for one field before giving up (a schema referring to itself).
const MAX_REFS: usize = 32;

/// Object nesting followed.
const MAX_DEPTH: usize = 32;

/// The arguments with every string that stands where the schema wants an array or an object
/// decoded once. Errors name the field (`field \`paths\`: expected an array, got a string that
/// is not a JSON array`). Arguments that are not an object, and fields the schema does not
/// describe, are returned unchanged (the tool's own validation reports them).
pub fn coerce_args(schema: &Value, args: Value) -> Result<Value, String> {
    coerce_object(schema, schema, args, "", 0)
}

fn coerce_object(
    root: &Value,
    schema: &Value,
    value: Value,
    at: &str,
    depth: usize,
) -> Result<Value, String> {
    let Value::Object(mut map) = value else {
        return Ok(value);
    };
    if depth > MAX_DEPTH {
        return Ok(Value::Object(map));
    }
    let schema = resolve(root, schema);
    let Some(properties) = properties_of(root, schema) else {
        return Ok(Value::Object(map));
    };
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let Some(field_schema) = properties.get(&key) else {
            continue;
        };
        let path = if at.is_empty() {
            key.clone()
        } else {
            format!("{at}.{key}")
        };
        let Some(v) = map.remove(&key) else { continue };
        let v = coerce_value(root, field_schema, v, &path, depth + 1)?;
        map.insert(key, v);
    }
    Ok(Value::Object(map))
}

fn coerce_value(
    root: &Value,
    schema: &Value,
    value: Value,
    at: &str,
    depth: usize,
) -> Result<Value, String> {
    let schema = resolve(root, schema);
    let types = accepted_types(root, schema);
    match value {
        Value::String(text) => {
            // No type information, or a string is fine: leave it.
            if types.is_empty() || types.iter().any(|t| t == "string") {
                return Ok(Value::String(text));
            }
            let structured: Vec<&str> = types
                .iter()
                .map(String::as_str)
                .filter(|t| matches!(*t, "array" | "object"))
                .collect();
            if structured.is_empty() {
                return Ok(Value::String(text));
            }
            let wanted = describe(&structured);
            match serde_json::from_str::<Value>(&text) {
                Ok(decoded @ Value::Array(_)) if structured.contains(&"array") => Ok(decoded),
                Ok(decoded @ Value::Object(_)) if structured.contains(&"object") => Ok(decoded),
                Ok(Value::Null) if types.iter().any(|t| t == "null") => Ok(Value::Null),
                _ => Err(format!(
                    "field `{at}`: expected {wanted}, got a string that is not {}",
                    json_kind(&structured)
                )),
            }
        }
        Value::Object(_) => coerce_object(root, schema, value, at, depth),
        other => Ok(other),
    }
}

/// Follows a local `$ref` (`#/$defs/X`, `#/definitions/X`) chain.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..MAX_REFS {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return schema;
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return schema;
        };
        match root.pointer(pointer) {
            Some(target) => schema = target,
            None => return schema,
        }
    }
    schema
}

/// The `properties` of an object schema, also through `allOf`/`anyOf`/`oneOf` branches.
fn properties_of<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Map<String, Value>> {
    if let Some(p) = schema.get("properties").and_then(Value::as_object) {
        return Some(p);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            for b in branches {
                if let Some(p) = properties_of(root, resolve(root, b)) {
                    return Some(p);
                }
            }
        }
    }
    None
}

/// The type names a schema accepts (`type` as a name or a list, and the types of `anyOf` /
/// `oneOf` branches; a branch without a type accepts anything, so nothing is coerced).
fn accepted_types(root: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(list)) => {
            out.extend(list.iter().filter_map(|t| t.as_str().map(String::from)))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            for b in branches {
                let b = resolve(root, b);
                let types = accepted_types(root, b);
                if types.is_empty() {
                    // An untyped branch (`{}`, `const`, `enum` of strings...): a string may fit.
                    if b.get("const").is_some_and(Value::is_string)
                        || b.get("enum")
                            .and_then(Value::as_array)
                            .is_some_and(|e| e.iter().any(Value::is_string))
                        || b.as_object().is_some_and(|o| o.is_empty())
                    {
                        out.push("string".to_string());
                    }
                    continue;
                }
                out.extend(types);
            }
        }
    }
    if out.is_empty() && (schema.get("properties").is_some()) {
        out.push("object".to_string());
    }
    if out.is_empty() && schema.get("items").is_some() {
        out.push("array".to_string());
    }
    out
}

fn describe(types: &[&str]) -> String {
    match types {
        ["array"] => "an array".to_string(),
        ["object"] => "an object".to_string(),
        _ => "an array or an object".to_string(),
    }
}

fn json_kind(types: &[&str]) -> String {
    match types {
        ["array"] => "a JSON array".to_string(),
        ["object"] => "a JSON object".to_string(),
        _ => "a JSON array or object".to_string(),
    }
}
