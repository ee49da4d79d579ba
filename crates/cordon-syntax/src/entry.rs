//! A program's entry: what a plan is given by its host and gives back. Each environment's policy
//! declares the entry that suits it alone (`entry(gh: GitHub, s: Session) -> (String, Session)`,
//! `entry(chat: Chat) -> String`). A program over several such policies (a run in a GitHub and a
//! chat workspace at once) has one entry made of theirs: every parameter, in the order the
//! policies come, and the result `(String, ..)`: the answer, then everything each entry hands
//! back, in the same order (just `String` when none hands anything back). For that, each entry
//! must return `String` or a tuple that starts with `String`.
//!
//! The checker, the runtime and the CLI all take the entry from [`of`], so they agree.

use crate::ast::{Ident, Item, ItemKind, Module, TypeExpr, TypeExprKind};
use crate::span::Span;

/// The entry of a program whose policies are `policies`: the one declared, the composition of
/// several, or none; and, if something is wrong, where and why (an entry declared twice in one
/// module, entries that cannot be composed). With a problem, the entry is the first one
/// declared, so that what follows is checked against it rather than against nothing.
pub fn of<'m>(policies: impl IntoIterator<Item = &'m Module>) -> (Option<Item>, Option<(Span, String)>) {
    let mut entries: Vec<&Item> = Vec::new();
    let mut problem = None;
    for module in policies {
        let mut declared = module.items.iter().filter(|item| matches!(item.kind, ItemKind::Entry { .. }));
        entries.extend(declared.next());
        if let Some(again) = declared.next() {
            problem = problem.or(Some((again.span, "the entry is already declared in this module".to_string())));
        }
    }
    let first = entries.first().map(|e| (*e).clone());
    match (entries.as_slice(), problem) {
        (_, Some(problem)) => (first, Some(problem)),
        ([] | [_], None) => (first, None),
        (many, None) => match compose(many) {
            Ok(entry) => (Some(entry), None),
            Err(problem) => (first, Some(problem)),
        },
    }
}

fn compose(entries: &[&Item]) -> Result<Item, (Span, String)> {
    let mut params = Vec::new();
    let mut handed_back = Vec::new();
    for item in entries {
        let ItemKind::Entry { params: ps, ret } = &item.kind else { continue };
        for p in ps {
            if params.iter().any(|q: &crate::ast::Param| q.name.name == p.name.name) {
                return Err((p.name.span, format!("two policies' entries both take a `{}`", p.name.name)));
            }
            params.push(p.clone());
        }
        match &ret.kind {
            _ if is_string(ret) => {}
            TypeExprKind::Tuple(items) if items.first().is_some_and(is_string) => {
                handed_back.extend(items.iter().skip(1).cloned());
            }
            _ => {
                let message = "to be composed with another policy's entry, an entry must return `String` or \
                               `(String, ..)`: the answer, then what it hands back";
                return Err((ret.span, message.to_string()));
            }
        }
    }
    let span = entries.first().map_or_else(Span::default, |e| e.span);
    let string =
        TypeExpr { kind: TypeExprKind::Named { name: Ident { name: "String".into(), span }, args: Vec::new() }, span };
    let ret = match handed_back.is_empty() {
        true => string,
        false => TypeExpr { kind: TypeExprKind::Tuple(std::iter::once(string).chain(handed_back).collect()), span },
    };
    Ok(Item { doc: None, kind: ItemKind::Entry { params, ret }, span })
}

fn is_string(t: &TypeExpr) -> bool {
    matches!(&t.kind, TypeExprKind::Named { name, args } if name.name == "String" && args.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly
mod tests {
    use super::*;
    use crate::{SourceMap, parse};

    /// The entry of policies with these sources, written back as text, or the error.
    fn entry(policies: &[&str]) -> Result<String, String> {
        let mut sources = SourceMap::new();
        let modules: Vec<Module> = policies
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let file = sources.add(format!("p{i}.cord"), *text);
                parse(file, text).module
            })
            .collect();
        match of(&modules) {
            (_, Some((_, message))) => Err(message),
            (Some(Item { kind: ItemKind::Entry { params, ret }, .. }), None) => {
                let params: Vec<String> =
                    params.iter().map(|p| format!("{}: {}", p.name.name, sources.slice(p.ty.span))).collect();
                Ok(format!("({}) -> {}", params.join(", "), shown(&ret, &sources)))
            }
            _ => Ok("none".into()),
        }
    }

    fn shown(t: &TypeExpr, sources: &SourceMap) -> String {
        match &t.kind {
            TypeExprKind::Tuple(items) => {
                format!("({})", items.iter().map(|t| shown(t, sources)).collect::<Vec<_>>().join(", "))
            }
            TypeExprKind::Named { name, .. } => name.name.clone(),
            _ => sources.slice(t.span).to_string(),
        }
    }

    const GITHUB: &str =
        "linear type Session\ncapability GitHub {}\nentry(gh: GitHub, s: Session) -> (String, Session)";
    const CHAT: &str = "capability Chat {}\nentry(chat: Chat) -> String";
    const MAIL: &str = "linear type Outbox\ncapability Mail {}\nentry(mail: Mail, o: Outbox) -> (String, Outbox)";

    #[test]
    fn one_entry_is_itself_and_none_is_none() {
        assert_eq!(entry(&[CHAT]).unwrap(), "(chat: Chat) -> String");
        assert_eq!(entry(&["capability Chat {}"]).unwrap(), "none");
    }

    #[test]
    fn entries_compose_in_policy_order_with_everything_handed_back() {
        assert_eq!(entry(&[GITHUB, CHAT]).unwrap(), "(gh: GitHub, s: Session, chat: Chat) -> (String, Session)");
        assert_eq!(entry(&[CHAT, GITHUB]).unwrap(), "(chat: Chat, gh: GitHub, s: Session) -> (String, Session)");
        assert_eq!(
            entry(&[GITHUB, CHAT, MAIL]).unwrap(),
            "(gh: GitHub, s: Session, chat: Chat, mail: Mail, o: Outbox) -> (String, Session, Outbox)"
        );
        assert_eq!(
            entry(&[CHAT, "capability Web {}\nentry(web: Web) -> String"]).unwrap(),
            "(chat: Chat, web: Web) -> String"
        );
    }

    #[test]
    fn entries_that_cannot_compose_say_why() {
        let clash = "capability Other {}\nentry(chat: Other) -> String";
        assert_eq!(entry(&[CHAT, clash]).unwrap_err(), "two policies' entries both take a `chat`");
        let odd = "capability Calc {}\nentry(calc: Calc) -> Int";
        assert!(entry(&[CHAT, odd]).unwrap_err().contains("must return `String` or `(String, ..)`"));
        let twice = "capability Chat {}\nentry(chat: Chat) -> String\nentry(c: Chat) -> String";
        assert_eq!(entry(&[twice]).unwrap_err(), "the entry is already declared in this module");
    }
}
