//! The label lint: every place where a policy relies on a default label, named, so that a policy
//! author sees what Cordon assumed. The defaults are safe (a forgotten sink blocks, it does not
//! leak), but a default that blocks the work is as much a bug in the policy as one that leaks.
//!
//! - A tool parameter without `@label(param = ..)` gets the default sink: public, vouched for by
//!   the user. Only the plan's own literals, host facts and the user's data may go there.
//! - A tool without `@label(returns = ..)` returns data secret to the user and vouched for by no
//!   one (labels are closed by default).
//! - A tool without parameters and without `@label(pc = ..)`: the decision to call it gets the
//!   default sink.

use cordon_syntax::ast::{ItemKind, Module, Tool};
use cordon_syntax::{Code, Diagnostic};

/// The `implicit-label` warnings for the tools of `policies`, in source order.
pub fn label_defaults(policies: &[Module]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for module in policies {
        for item in &module.items {
            let ItemKind::Capability { name, tools } = &item.kind else { continue };
            for tool in tools {
                lint_tool(&name.name, tool, &mut out);
            }
        }
    }
    out
}

fn lint_tool(capability: &str, tool: &Tool, out: &mut Vec<Diagnostic>) {
    let keys: Vec<&str> = tool
        .annotations
        .iter()
        .filter(|a| a.name.name == "label")
        .flat_map(|a| a.args.iter().filter_map(|arg| arg.key.as_ref().map(|k| k.name.as_str())))
        .collect();
    let name = format!("{capability}.{}", tool.name.name);
    for p in &tool.params {
        if !keys.contains(&p.name.name.as_str()) {
            out.push(
                Diagnostic::warning(
                    Code::ImplicitLabel,
                    p.name.span,
                    format!("the parameter `{}` of `{name}` has no sink", p.name.name),
                )
                .with_primary_label("gets the default sink: public, vouched for by the user")
                .with_help(format!("say where it may go: `@label({} = ..)`", p.name.name)),
            );
        }
    }
    if tool.params.is_empty() && !keys.contains(&"pc") {
        out.push(
            Diagnostic::warning(Code::ImplicitLabel, tool.name.span, format!("`{name}` has no decision sink"))
                .with_primary_label("the decision to call it gets the default sink: public, vouched for by the user")
                .with_help("say who may decide to call it: `@label(pc = ..)`"),
        );
    }
    let returns_data = tool
        .ret
        .as_ref()
        .is_some_and(|r| !matches!(&r.kind, cordon_syntax::ast::TypeExprKind::Tuple(ts) if ts.is_empty()));
    if returns_data && !keys.contains(&"returns") {
        out.push(
            Diagnostic::warning(Code::ImplicitLabel, tool.name.span, format!("`{name}` has no `returns` label"))
                .with_primary_label("its results get the closed default: secret to the user, vouched for by no one")
                .with_help("say whose the result is: `@label(returns = ..)`"),
        );
    }
}
