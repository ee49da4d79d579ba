//! The checked program as later stages read it (`cordon_types::node`): every call and variant
//! of a plan seen as the checker resolved it, where the name alone would mislead (a local or a
//! tool named as a builtin, a function named as a local, `Some` and `None` without their enum),
//! and the declarations and patterns the compiler and the static analysis read.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::SourceMap;
use cordon_syntax::ast::{Expr, Module};
use cordon_types::node::{self, Called, Declaration, Literal, Node, PatternNode, Statement};
use cordon_types::{CheckOptions, Checked, Resolved, check};

const POLICY: &str = "
linear type Session
measure tainted(s: Session) -> Bool = false
measure level(s: Session) -> Int = -3
type Repo = { name: String }
capability Store {
  tool filter(s: Session, q: String) -> (List[Repo], Session)
}
fn double(n: Int) -> Int { n * 2 }
const LIMIT: Int = 3
entry(st: Store, s: Session) -> Session
";

/// The plan: a tool named as a builtin, a local named as a builtin and called, the builtin
/// itself as a method, a policy's function called and as a method, a closure, variants with and
/// without their enum, a cast and patterns of each.
const PLAN: &str = "
enum Shade { Light, Dark(Int) }
let (repos, s) = st.filter(s, \"q\");
let len = |xs: List[Int]| 7;
let a = len([1, 2]);
let b = [1, 2, 3].filter(|x| x > 1);
let c = double(a) + 3.double();
let d = Some(Shade::Dark(c));
let e = match d { Some(Shade::Dark(n)) => n, Some(Shade::Light) => 0, None => -1 };
let f = (e as Int) + range(0, 2).len();
let g = |y: Int| y + agent[Int](\"pick\");
let h: Option[Int] = None;
s
";

/// The program checked, what the checker resolved in it, and its sources.
fn checked() -> (Checked, Resolved, SourceMap) {
    let mut sources = SourceMap::new();
    let policy = sources.add("policy.cord", POLICY);
    let plan = sources.add("plan.cord", PLAN);
    let outcome = check(&sources, &[policy], Some(plan), &CheckOptions::default());
    let Some(checked) = outcome.program else { panic!("rejected: {:?}", outcome.diagnostics) };
    let resolved = checked.resolved().clone();
    (checked, resolved, sources)
}

/// Each call, method call and variant of `module`'s body, in source order, as its view says.
fn calls(module: &Module, resolved: &Resolved, sources: &SourceMap) -> Vec<String> {
    fn walk(e: &Expr, resolved: &Resolved, sources: &SourceMap, out: &mut Vec<String>) {
        let text = |e: &Expr| sources.file(e.span.file).slice(e.span).to_string();
        match resolved.node(e) {
            Node::Call { callee: Called::Function(f), .. } => out.push(format!("function {}", f.name)),
            Node::Call { callee: Called::Builtin(b), .. } => out.push(format!("builtin {b:?}")),
            Node::Call { callee: Called::Measure(m), .. } => out.push(format!("measure {}", m.name)),
            Node::Call { callee: Called::Value(v), .. } => out.push(format!("value {}", text(v))),
            Node::Method { method, otherwise, .. } => out.push(format!("method {} else {otherwise:?}", method.name)),
            Node::Variant { enum_name, name, args } => out.push(format!("variant {enum_name}::{name}/{}", args.len())),
            Node::Cast { target, .. } => out.push(format!("cast to {}", target.unwrap())),
            _ => {}
        }
        e.for_each_child(&mut |child| walk(child, resolved, sources, out));
    }
    let mut out = Vec::new();
    module.body.for_each_expr(&mut |e| walk(e, resolved, sources, &mut out));
    out
}

#[test]
fn each_call_is_what_the_checker_resolved_it_to() {
    let (checked, resolved, sources) = checked();
    let plan = checked.plan().unwrap();
    assert_eq!(
        calls(plan, &resolved, &sources),
        [
            "method filter else Nothing",
            "value len",
            "method filter else Builtin(Filter)",
            "function double",
            "method double else Function(\"double\")",
            "variant Option::Some/1",
            "variant Shade::Dark/1",
            // The call's callee, a path, read alone (the compiler and the analysis never do).
            "variant Shade::Dark/0",
            "cast to Int",
            "method len else Builtin(Len)",
            "builtin Range",
            // `None` alone, a name the view reads as the option's variant.
            "variant Option::None/0",
        ]
    );
}

#[test]
fn patterns_know_the_enum_of_an_unqualified_variant() {
    let (checked, resolved, _) = checked();
    let plan = checked.plan().unwrap();
    let mut seen = Vec::new();
    for statement in node::statements(&plan.body) {
        let Statement::Let { value, .. } = statement else { continue };
        let Node::Match { arms, .. } = resolved.node(value) else { continue };
        for arm in arms {
            match node::pattern(&arm.pat) {
                PatternNode::Variant { enum_name, name, args } => {
                    let inner: Vec<String> = args
                        .iter()
                        .map(|p| match node::pattern(p) {
                            PatternNode::Variant { enum_name, name, .. } => format!("{enum_name:?}::{}", name.name),
                            other => format!("{other:?}"),
                        })
                        .collect();
                    seen.push(format!("{enum_name:?}::{}({})", name.name, inner.join(", ")));
                }
                other => seen.push(format!("{other:?}")),
            }
        }
    }
    assert_eq!(
        seen,
        [
            "Some(\"Option\")::Some(Some(\"Shade\")::Dark)",
            "Some(\"Option\")::Some(Some(\"Shade\")::Light)",
            "Some(\"Option\")::None()"
        ]
    );
}

#[test]
fn declarations_give_functions_constants_and_measures_defaults() {
    let (checked, _, _) = checked();
    let mut seen = Vec::new();
    for item in &checked.policies()[0].items {
        match node::declaration(item) {
            Declaration::Function(f) => seen.push(format!("fn {}", f.name.name)),
            Declaration::Measure { name, of, default } => {
                seen.push(format!("measure {} of {of:?} = {default:?}", name.name))
            }
            Declaration::Capability { name, tools } => {
                seen.push(format!("capability {} ({} tool)", name.name, tools.len()))
            }
            Declaration::Record(name) => seen.push(format!("record {}", name.name)),
            Declaration::Enum(name) => seen.push(format!("enum {}", name.name)),
            Declaration::Const { name, .. } => seen.push(format!("const {}", name.name)),
            Declaration::Other => seen.push("other".into()),
        }
    }
    assert_eq!(
        seen,
        [
            "other",
            "measure tainted of Some(\"Session\") = Some(Bool(false))",
            "measure level of Some(\"Session\") = Some(Int(-3))",
            "record Repo",
            "capability Store (1 tool)",
            "fn double",
            "const LIMIT",
            "other",
        ]
    );
}

#[test]
fn a_closure_captures_at_most_what_its_body_mentions_or_everything_with_a_hole() {
    let (checked, resolved, _) = checked();
    let values: Vec<&Expr> = node::statements(&checked.plan().unwrap().body)
        .filter_map(|s| match s {
            Statement::Let { value, .. } => Some(value),
            Statement::Expr(_) => None,
        })
        .collect();
    let (names, hole) = node::mentions(values[4]);
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort();
    assert_eq!((names, hole), (vec!["a".to_string(), "double".to_string()], false));
    let Node::Closure { body, .. } = resolved.node(values[8]) else { panic!("`g` is a closure") };
    assert_eq!(node::mentions(body), (["y".to_string()].into(), true));
    let Node::Unary { operand, .. } = resolved.node(match resolved.node(values[6]) {
        Node::Match { arms, .. } => &arms[2].body,
        other => panic!("{other:?}"),
    }) else {
        panic!("`-1` is a negation")
    };
    assert_eq!(node::literal(operand), Some(Literal::Int(1)));
}
