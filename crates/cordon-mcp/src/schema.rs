//! What a tool's JSON Schema says beyond the types `cordon mcp import` reads from it.

use serde_json::{Map, Value as Json};

/// The schema of what a tool's output wraps, where its output schema is an object whose one
/// property, required, is `result`: how the Python SDK describes structured content that is
/// not an object (`{"result": [1, 2, 3]}`). `None` for any other schema.
pub fn wrapped_result(schema: &Map<String, Json>) -> Option<&Json> {
    let properties = schema.get("properties")?.as_object()?;
    let required = schema.get("required")?.as_array()?;
    let only_result = properties.len() == 1 && required.len() == 1 && required[0] == "result";
    only_result.then(|| properties.get("result")).flatten()
}

/// Why a `$ref` was not followed.
#[derive(Debug, PartialEq, Eq)]
pub enum Unresolved {
    /// It names another document (or is not a string): Cordon follows only `#...` refs.
    NotLocal,
    /// It points at nothing in the schema.
    Missing,
}

/// What the local `$ref` of a schema points at in `root`, the tool's whole schema: a JSON
/// Pointer after the `#` (`#/$defs/TimeResult`, `#/definitions/Item`, `#` for the root), and
/// the definition's name when it is one of `$defs` or `definitions`. Percent-escapes in the
/// pointer are not decoded (a name that needs them is missing).
pub fn resolve<'a>(root: &'a Json, reference: &Json) -> Result<(&'a Json, Option<String>), Unresolved> {
    let pointer = reference.as_str().and_then(|r| r.strip_prefix('#')).ok_or(Unresolved::NotLocal)?;
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return Err(Unresolved::NotLocal); // an anchor (`#name`), which Cordon does not follow
    }
    let target = root.pointer(pointer).ok_or(Unresolved::Missing)?;
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    let name = match segments.as_slice() {
        ["$defs" | "definitions", name] => Some(name.replace("~1", "/").replace("~0", "~")),
        _ => None,
    };
    Ok((target, name))
}

/// The schema a nullable schema allows besides `null`: `anyOf` or `oneOf` of it and
/// `{"type": "null"}`, in either order. `None` for any other schema.
pub fn nullable(schema: &Json) -> Option<&Json> {
    let is_null = |s: &Json| s.get("type").and_then(Json::as_str) == Some("null");
    let options = schema.get("anyOf").or_else(|| schema.get("oneOf"))?.as_array()?;
    match options.as_slice() {
        [a, b] if is_null(b) && !is_null(a) => Some(a),
        [a, b] if is_null(a) && !is_null(b) => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(json: Json) -> Map<String, Json> {
        json.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn only_a_lone_required_result_is_a_wrapper() {
        let wrapped = object(serde_json::json!({
            "type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]
        }));
        assert_eq!(wrapped_result(&wrapped), Some(&serde_json::json!({"type": "array"})));
        let optional = object(serde_json::json!({"type": "object", "properties": {"result": {}}}));
        assert_eq!(wrapped_result(&optional), None);
        let more = object(serde_json::json!({
            "type": "object", "properties": {"result": {}, "count": {}}, "required": ["result"]
        }));
        assert_eq!(wrapped_result(&more), None);
        let other = object(serde_json::json!({"type": "object", "properties": {"value": {}}, "required": ["value"]}));
        assert_eq!(wrapped_result(&other), None);
    }

    #[test]
    fn only_local_refs_resolve() {
        let root = serde_json::json!({"$defs": {"A": {"type": "string"}, "a/b": {}}, "definitions": {"B": {}}});
        let a = resolve(&root, &Json::from("#/$defs/A")).map(|(t, n)| (t.clone(), n));
        assert_eq!(a, Ok((serde_json::json!({"type": "string"}), Some("A".to_string()))));
        assert_eq!(resolve(&root, &Json::from("#/definitions/B")).map(|(_, n)| n), Ok(Some("B".to_string())));
        assert_eq!(resolve(&root, &Json::from("#/$defs/a~1b")).map(|(_, n)| n), Ok(Some("a/b".to_string())));
        assert_eq!(resolve(&root, &Json::from("#")).map(|(t, n)| (t == &root, n)), Ok((true, None)));
        assert_eq!(resolve(&root, &Json::from("#/$defs/C")), Err(Unresolved::Missing));
        assert_eq!(resolve(&root, &Json::from("other.json#/$defs/A")), Err(Unresolved::NotLocal));
        assert_eq!(resolve(&root, &Json::from("#A")), Err(Unresolved::NotLocal));
        assert_eq!(resolve(&root, &Json::from(3)), Err(Unresolved::NotLocal));
    }

    #[test]
    fn a_union_with_null_is_nullable() {
        let int = serde_json::json!({"type": "integer"});
        let none = serde_json::json!({"type": "null"});
        for key in ["anyOf", "oneOf"] {
            assert_eq!(nullable(&serde_json::json!({key: [int, none]})), Some(&int));
            assert_eq!(nullable(&serde_json::json!({key: [none, int]})), Some(&int));
            assert_eq!(nullable(&serde_json::json!({key: [none, none]})), None);
            assert_eq!(nullable(&serde_json::json!({key: [int, int]})), None);
            assert_eq!(nullable(&serde_json::json!({key: [int, none, int]})), None);
        }
    }
}
