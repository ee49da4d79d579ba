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
}
