//! How Cordon names meet MCP names. An MCP tool or property may be called `get-sum`,
//! `read_text_file` or `includeImage`; a Cordon identifier is `get_sum`, `read_text_file`,
//! `include_image` or `includeImage`. Both sides are compared in one normal form (lower case
//! words joined by `_`), and a name that two of the server's names share is ambiguous, never
//! guessed.

/// `getSum`, `get-sum`, `get.sum`, `GET_SUM` → `get_sum`.
pub fn normal(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.extend(c.to_lowercase());
            prev_lower = false;
        } else if c.is_alphanumeric() {
            out.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out.trim_matches('_').to_string()
}

/// A Cordon identifier for an MCP name: its normal form, made a valid identifier (`_` first if
/// it starts with a digit; `tool` if nothing is left).
pub fn identifier(name: &str) -> String {
    let n = normal(name);
    match n.chars().next() {
        None => "unnamed".to_string(),
        Some(c) if c.is_ascii_digit() => format!("_{n}"),
        Some(_) => n,
    }
}

/// The one name of `candidates` that `wanted` names: exactly, else in normal form. `Err` lists
/// the candidates when two share the normal form.
pub fn find<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> Result<Option<&'a str>, Vec<&'a str>> {
    if let Some(exact) = candidates.clone().into_iter().find(|c| *c == wanted) {
        return Ok(Some(exact));
    }
    let n = normal(wanted);
    let same: Vec<&str> = candidates.into_iter().filter(|c| normal(c) == n).collect();
    match same.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        _ => Err(same),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_meet_in_one_normal_form() {
        assert_eq!(normal("get-sum"), "get_sum");
        assert_eq!(normal("includeImage"), "include_image");
        assert_eq!(normal("read_text_file"), "read_text_file");
        assert_eq!(normal("GET.Sum--x"), "get_sum_x");
        assert_eq!(identifier("3d-print"), "_3d_print");
        assert_eq!(identifier("--"), "unnamed");
        assert_eq!(find("get_sum", ["echo", "get-sum"]), Ok(Some("get-sum")));
        assert_eq!(find("messageType", ["messageType"]), Ok(Some("messageType")));
        assert_eq!(find("x", ["a-x", "b"]), Ok(None));
        assert_eq!(find("a_b", ["a-b", "aB"]), Err(vec!["a-b", "aB"]));
    }
}
