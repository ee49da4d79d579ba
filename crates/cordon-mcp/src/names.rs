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

/// A Cordon identifier for an MCP name: ASCII letters and digits kept (case too), each run of
/// other characters a `_` (`get-sum` → `get_sum`, `includeImage` stays, `café` → `caf`), `_`
/// first if it starts with a digit, `unnamed` if nothing is left.
pub fn identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_matches('_');
    match out.chars().next() {
        None => "unnamed".to_string(),
        Some(c) if c.is_ascii_digit() => format!("_{out}"),
        Some(_) => out.to_string(),
    }
}

/// The keys of `@label` that are not parameters: a parameter of either name could not be labelled.
const LABEL_KEYS: &[&str] = &["pc", "returns"];

/// The name a plan uses for an MCP name, as `cordon mcp import` writes it and results are
/// read: its [`identifier`], with a `_` after it if that is a keyword (`type` → `type_`) or a
/// key of `@label` of its own (`pc` → `pc_`).
pub fn cordon_name(name: &str) -> String {
    let id = identifier(name);
    let reserved = cordon_syntax::lexer::TokenKind::keyword(&id).is_some() || LABEL_KEYS.contains(&id.as_str());
    if reserved { format!("{id}_") } else { id }
}

/// The one name of `candidates` that `wanted` names: exactly; else the one whose
/// [`cordon_name`] it is; else the one with its normal form. `Err` lists the candidates when
/// several match at the first step that matches any.
pub fn find<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> Result<Option<&'a str>, Vec<&'a str>> {
    if let Some(exact) = candidates.clone().into_iter().find(|c| *c == wanted) {
        return Ok(Some(exact));
    }
    let n = normal(wanted);
    let steps: [&dyn Fn(&str) -> bool; 2] = [&|c| cordon_name(c) == wanted, &|c| normal(c) == n];
    for matches in steps {
        let same: Vec<&str> = candidates.clone().into_iter().filter(|c| matches(c)).collect();
        match same.as_slice() {
            [] => continue,
            [one] => return Ok(Some(one)),
            _ => return Err(same),
        }
    }
    Ok(None)
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
        assert_eq!(identifier("includeImage"), "includeImage");
        assert_eq!(find("get_sum", ["echo", "get-sum"]), Ok(Some("get-sum")));
        assert_eq!(find("messageType", ["messageType"]), Ok(Some("messageType")));
        assert_eq!(find("message_type", ["messageType"]), Ok(Some("messageType")));
        assert_eq!(find("x", ["a-x", "b"]), Ok(None));
        // What import writes binds back: `a-b` is `a_b`, `aB` itself.
        assert_eq!(find("a_b", ["a-b", "aB"]), Ok(Some("a-b")));
        assert_eq!(find("aB", ["a-b", "aB"]), Ok(Some("aB")));
        assert_eq!(find("a_b", ["a-b", "a.b"]), Err(vec!["a-b", "a.b"]));
        assert_eq!(find("A_B", ["a-b", "aB"]), Err(vec!["a-b", "aB"]));
        assert_eq!(cordon_name("type"), "type_");
        assert_eq!(cordon_name("returns"), "returns_");
        assert_eq!(identifier("café-crème"), "caf_cr_me");
        assert_eq!(identifier("é"), "unnamed");
        assert_eq!(find("type_", ["type", "kind"]), Ok(Some("type")));
    }
}
