//! JSON Pointers (RFC 6901) into a surface's data model: parsing, reading and writing.

use serde_json::{Map, Value};

/// Why a JSON Pointer could not be used. The messages are written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// The text does not start with `/` (and is not empty).
    #[error("{0:?} is not a JSON Pointer (must start with \"/\")")]
    NotAPointer(String),
    /// A `~` not followed by `0` or `1`.
    #[error("{0:?} is not a valid JSON Pointer (\"~\" must be followed by 0 or 1)")]
    BadEscape(String),
    /// Writing below a value that is neither an object nor an array.
    #[error("cannot set {pointer:?}: {parent:?} is a {found}, not an object or array")]
    NotAContainer {
        /// The whole pointer.
        pointer: String,
        /// The prefix that holds a scalar.
        parent: String,
        /// JSON type found there.
        found: &'static str,
    },
    /// An array index that is not a number, or past the end (`-` appends).
    #[error(
        "cannot set {pointer:?}: {token:?} is not an index of the array at {parent:?} (length {len}; \"-\" appends)"
    )]
    BadIndex {
        /// The whole pointer.
        pointer: String,
        /// The array's pointer.
        parent: String,
        /// The offending token.
        token: String,
        /// The array's length.
        len: usize,
    },
    /// The empty pointer names the whole model, which must stay an object.
    #[error("the empty pointer \"\" names the whole data model, which must be an object")]
    RootNotObject,
}

/// The reference tokens of a pointer (`/a/b~1c` -> `["a", "b/c"]`); `""` is the whole document.
pub(crate) fn parse(pointer: &str) -> Result<Vec<String>, PointerError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PointerError::NotAPointer(pointer.to_string()));
    };
    rest.split('/')
        .map(|t| unescape(t).ok_or_else(|| PointerError::BadEscape(pointer.to_string())))
        .collect()
}

fn unescape(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Joins a pointer and one more token.
pub(crate) fn join(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", escape(token))
}

/// The value at `pointer` in `model` (`None` when absent or when the pointer is invalid).
pub fn pointer_get<'a>(model: &'a Map<String, Value>, pointer: &str) -> Option<&'a Value> {
    let tokens = parse(pointer).ok()?;
    let (first, rest) = tokens.split_first()?;
    let mut cur = model.get(first)?;
    for t in rest {
        cur = match cur {
            Value::Object(m) => m.get(t)?,
            Value::Array(a) => a.get(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Sets the value at `pointer`, creating missing objects on the way (like A2UI's
/// `dataModelUpdate`). In an array, a token is an index up to the length, or `-` to append.
/// The empty pointer replaces the whole model and needs an object.
pub fn pointer_set(
    model: &mut Map<String, Value>,
    pointer: &str,
    value: Value,
) -> Result<(), PointerError> {
    let tokens = parse(pointer)?;
    let Some((last, parents)) = tokens.split_last() else {
        return match value {
            Value::Object(m) => {
                *model = m;
                Ok(())
            }
            _ => Err(PointerError::RootNotObject),
        };
    };
    let mut root = Value::Object(std::mem::take(model));
    let result = set_below(&mut root, parents, last, value, pointer);
    if let Value::Object(m) = root {
        *model = m;
    }
    result
}

/// Walks `parents` from `root` (creating objects) and sets `last` in the value reached.
fn set_below(
    root: &mut Value,
    parents: &[String],
    last: &str,
    value: Value,
    pointer: &str,
) -> Result<(), PointerError> {
    let mut cur = root;
    let mut prefix = String::new();
    for t in parents {
        cur = child_mut(cur, t, pointer, &prefix)?;
        prefix = join(&prefix, t);
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.to_string(), value);
            Ok(())
        }
        Value::Array(a) => {
            let len = a.len();
            match index(last, len) {
                Some(i) if i == len => {
                    a.push(value);
                    Ok(())
                }
                Some(i) => {
                    a[i] = value;
                    Ok(())
                }
                None => Err(PointerError::BadIndex {
                    pointer: pointer.to_string(),
                    parent: prefix,
                    token: last.to_string(),
                    len,
                }),
            }
        }
        other => Err(PointerError::NotAContainer {
            pointer: pointer.to_string(),
            parent: prefix,
            found: type_name(other),
        }),
    }
}

/// The child of an intermediate value for `pointer_set`, created as an object when missing.
fn child_mut<'a>(
    v: &'a mut Value,
    token: &str,
    pointer: &str,
    prefix: &str,
) -> Result<&'a mut Value, PointerError> {
    match v {
        Value::Object(m) => Ok(m
            .entry(token.to_string())
            .or_insert_with(|| Value::Object(Map::new()))),
        Value::Array(a) => {
            let len = a.len();
            match index(token, len) {
                Some(i) if i == len => {
                    a.push(Value::Object(Map::new()));
                    Ok(&mut a[i])
                }
                Some(i) => Ok(&mut a[i]),
                None => Err(PointerError::BadIndex {
                    pointer: pointer.to_string(),
                    parent: prefix.to_string(),
                    token: token.to_string(),
                    len,
                }),
            }
        }
        other => Err(PointerError::NotAContainer {
            pointer: pointer.to_string(),
            parent: prefix.to_string(),
            found: type_name(other),
        }),
    }
}

/// An array index token: digits without a leading zero, at most `len`; `-` is `len`.
fn index(token: &str, len: usize) -> Option<usize> {
    if token == "-" {
        return Some(len);
    }
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse::<usize>().ok().filter(|i| *i <= len)
}

/// The JSON type of a value, as words for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn model(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn pointers_parse_with_escapes() {
        assert_eq!(parse("/a/b~1c/d~0e").unwrap(), ["a", "b/c", "d~e"]);
        assert_eq!(parse("").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse("name").unwrap_err().to_string(),
            "\"name\" is not a JSON Pointer (must start with \"/\")"
        );
        assert_eq!(
            parse("/a~2").unwrap_err(),
            PointerError::BadEscape("/a~2".into())
        );
    }

    #[test]
    fn set_creates_objects_and_appends_to_arrays() {
        let mut m = model(json!({"items": [1, 2]}));
        pointer_set(&mut m, "/form/name", json!("Ada")).unwrap();
        pointer_set(&mut m, "/items/-", json!(3)).unwrap();
        pointer_set(&mut m, "/items/0", json!(0)).unwrap();
        assert_eq!(
            Value::Object(m.clone()),
            json!({"items": [0, 2, 3], "form": {"name": "Ada"}})
        );
        assert_eq!(pointer_get(&m, "/items/2"), Some(&json!(3)));
        assert_eq!(pointer_get(&m, "/form/name"), Some(&json!("Ada")));
        assert_eq!(pointer_get(&m, "/nope"), None);
    }

    #[test]
    fn set_refuses_scalars_and_far_indexes() {
        let mut m = model(json!({"n": 1, "a": []}));
        assert_eq!(
            pointer_set(&mut m, "/n/x", json!(1))
                .unwrap_err()
                .to_string(),
            "cannot set \"/n/x\": \"/n\" is a number, not an object or array"
        );
        assert_eq!(
            pointer_set(&mut m, "/a/5", json!(1))
                .unwrap_err()
                .to_string(),
            "cannot set \"/a/5\": \"5\" is not an index of the array at \"/a\" (length 0; \"-\" appends)"
        );
        assert_eq!(
            pointer_set(&mut m, "", json!(1)).unwrap_err(),
            PointerError::RootNotObject
        );
        pointer_set(&mut m, "", json!({"x": 1})).unwrap();
        assert_eq!(Value::Object(m), json!({"x": 1}));
    }
}
