//! A policy with its guards taken off, for measuring what they buy (`cordon bench`'s policy-off
//! rows): the same tools, types, refinements and entry, but every tool's `@label` replaced by
//! one that lets anything through (each parameter's sink and the decision's are the top label,
//! what it returns is public) and its `@approval` removed, so no label refuses a call and no
//! card is asked. The source is edited where the annotations are, so whatever else the policy
//! says stays as written.

use crate::ast::{ItemKind, Tool};
use crate::{FileId, parse};

/// The label every sink of an unguarded tool has: secret to no one who could read it, vouched
/// for by no one, so every label flows to it.
const TOP: &str = "readers([]).join(untrusted())";

/// `text` (a policy module) unguarded, or the reason it cannot be (it does not parse).
pub fn unguarded(text: &str) -> Result<String, String> {
    let parsed = parse(FileId(0), text);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(format!("the policy does not parse: {}", d.message));
    }
    // Each edit replaces a byte range; applied from the end so earlier ranges stay valid.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for item in &parsed.module.items {
        let ItemKind::Capability { tools, .. } = &item.kind else { continue };
        for tool in tools {
            edits.extend(tool_edits(tool));
        }
    }
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    let mut out = text.to_string();
    for (start, end, with) in edits {
        out.replace_range(start..end, &with);
    }
    Ok(out)
}

/// The edits that unguard one tool: its `@approval` and `@label` removed, one permissive
/// `@label` put where the first of them was (or after the signature).
fn tool_edits(tool: &Tool) -> Vec<(usize, usize, String)> {
    let guards: Vec<_> =
        tool.annotations.iter().filter(|a| a.name.name == "label" || a.name.name == "approval").collect();
    let mut sinks: Vec<String> = tool.params.iter().map(|p| format!("{} = {TOP}", p.name.name)).collect();
    sinks.push(format!("pc = {TOP}"));
    sinks.push("returns = public()".to_string());
    let label = format!("@label({})", sinks.join(", "));
    let mut edits: Vec<(usize, usize, String)> =
        guards.iter().map(|a| (a.span.start as usize, a.span.end as usize, String::new())).collect();
    match edits.first_mut() {
        Some(first) => first.2 = label,
        None => {
            let end = tool.span.end as usize;
            edits.push((end, end, format!(" {label}")));
        }
    }
    edits
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use super::*;

    #[test]
    fn every_sink_is_opened_and_every_approval_removed() {
        let policy = "capability C {\n  tool send(to: String, text: String)\n    @approval(ask) @card(action = \"send\")\n    @label(to = endorsed(user()), text = secret(user()))\n  tool read() -> String\n}\nentry(c: C) -> String\n";
        let open = unguarded(policy).unwrap();
        assert!(!open.contains("@approval"), "{open}");
        assert!(open.contains("@card(action = \"send\")"), "{open}");
        assert!(open.contains("@label(to = readers([]).join(untrusted()), text = readers([]).join(untrusted()), pc = readers([]).join(untrusted()), returns = public())"), "{open}");
        assert!(
            open.contains("tool read() -> String @label(pc = readers([]).join(untrusted()), returns = public())"),
            "{open}"
        );
        assert!(parse(FileId(0), &open).diagnostics.is_empty(), "{open}");
    }
}
