//! What the benchmark's adaptive attacker reads of a policy and of a plan to write variants of
//! it: the tools a policy declares with their parameter types (its effect summary, by the
//! names a plan writes), and where a plan calls a method and what its arguments are (byte
//! ranges, to rewrite). The attacker's rewrites themselves live with the benchmark.

use crate::ast::{Expr, ExprKind, ItemKind};
use crate::print;
use crate::{FileId, parse};

/// A tool a policy declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolSig {
    pub capability: String,
    pub name: String,
    /// Its parameters' types, as the policy writes them.
    pub params: Vec<String>,
}

/// A method call in a plan, `receiver.method(args)`: where the whole call is, where the
/// method's name is, and each argument's byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodCall {
    pub method: String,
    pub at: (usize, usize),
    pub name_at: (usize, usize),
    pub args: Vec<(usize, usize)>,
}

/// Every tool `policy` (a module's text) declares, in order.
pub fn tools(policy: &str) -> Result<Vec<ToolSig>, String> {
    let parsed = parse(FileId(0), policy);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(format!("the policy does not parse: {}", d.message));
    }
    let mut out = Vec::new();
    for item in &parsed.module.items {
        let ItemKind::Capability { name, tools } = &item.kind else { continue };
        for tool in tools {
            let params = tool.params.iter().map(|p| print::type_expr(&p.ty).map_err(|e| format!("{e:?}")));
            out.push(ToolSig {
                capability: name.name.clone(),
                name: tool.name.name.clone(),
                params: params.collect::<Result<_, _>>()?,
            });
        }
    }
    Ok(out)
}

/// Every method call in `plan` (its declarations' bodies and its own), outermost first.
pub fn method_calls(plan: &str) -> Result<Vec<MethodCall>, String> {
    let parsed = parse(FileId(0), plan);
    if let Some(d) = parsed.diagnostics.first() {
        return Err(format!("the plan does not parse: {}", d.message));
    }
    let mut out = Vec::new();
    for item in &parsed.module.items {
        match &item.kind {
            ItemKind::Fn(f) => f.body.for_each_expr(&mut |e| expr(e, &mut out)),
            ItemKind::Const { value, .. } => expr(value, &mut out),
            _ => {}
        }
    }
    parsed.module.body.for_each_expr(&mut |e| expr(e, &mut out));
    Ok(out)
}

fn range(e: &Expr) -> (usize, usize) {
    (e.span.start as usize, e.span.end as usize)
}

/// Every method call in `e`, outermost first.
fn expr(e: &Expr, out: &mut Vec<MethodCall>) {
    if let ExprKind::MethodCall { method, args, .. } = &e.kind {
        let name_at = (method.span.start as usize, method.span.end as usize);
        let ranges = args.iter().map(range).collect();
        out.push(MethodCall { method: method.name.clone(), at: range(e), name_at, args: ranges });
    }
    e.for_each_child(&mut |child| expr(child, out));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_policys_tools_with_their_parameter_types() {
        let policy = "capability Chat {\n  tool send_dm(to: String, text: {t: String | t != \"\"})\n  tool list() -> \
                      List[String]\n}\nentry(chat: Chat) -> String";
        let tools = tools(policy).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].capability, "Chat");
        assert_eq!(tools[0].name, "send_dm");
        assert_eq!(tools[0].params[0], "String");
        assert!(tools[1].params.is_empty());
    }

    #[test]
    fn every_method_call_with_its_arguments_where_they_are_written() {
        let plan = "fn f(x: String) -> String { x.trim() }\nlet s = chat.read(\"a\").map(|m| m.text).join(\"\\n\");\n\
                    chat.send_dm(\"dave\", f(s) + \"!\");\n\"done\"";
        let calls = method_calls(plan).unwrap();
        let names: Vec<&str> = calls.iter().map(|c| c.method.as_str()).collect();
        assert_eq!(names, ["trim", "join", "map", "read", "send_dm"]);
        let send = &calls[4];
        let args: Vec<&str> = send.args.iter().map(|&(a, b)| &plan[a..b]).collect();
        assert_eq!(args, ["\"dave\"", "f(s) + \"!\""]);
        assert_eq!(&plan[send.name_at.0..send.name_at.1], "send_dm");
        assert_eq!(&plan[send.at.0..send.at.1], "chat.send_dm(\"dave\", f(s) + \"!\")");
        assert!(method_calls("let = ;").is_err());
    }
}
