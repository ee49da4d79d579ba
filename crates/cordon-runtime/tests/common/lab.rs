//! Random plans over a small lab policy: tools whose results are a secret and an outsider's
//! value, and tools whose parameters have a declared sink, the default one, or none; plans that
//! call them alone and under branches, matches, loops and closures over any value. Shared by
//! the runtime's sink coverage property and the static summary's soundness property
//! (`cordon-flow`), by `#[path]`.

use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

pub const POLICY: &str = r#"
capability Lab {
  tool secret() -> Int @label(returns = secret("alice"))
  tool outsider() -> Int @label(returns = untrusted())
  /// `body` may be anyone's public text; `to` has no sink: the default applies.
  tool send(to: Int, body: Int) @label(body = untrusted())
  /// No parameters: only the decision to call is guarded (by the default).
  tool ping()
  /// No sink at all.
  tool store(x: Int)
}
entry(lab: Lab) -> ()
"#;

/// Int expressions over the secret `s`, the outsider's `o` and the public `p`.
pub fn int(depth: u32) -> BoxedStrategy<String> {
    // Public leaves outweigh the others, so that most plans make some calls before one that
    // would reveal a secret or obey an outsider is refused.
    let leaf = prop_oneof![
        3 => (0i64..4).prop_map(|i| i.to_string()),
        2 => Just("p".into()),
        1 => Just("s".into()),
        1 => Just("o".into()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let e = int(depth - 1);
    prop_oneof![
        leaf.clone(),
        leaf,
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("({a} + {b})")),
        (e.clone(), e.clone(), e.clone()).prop_map(|(c, a, b)| format!("(if {c} > 1 {{ {a} }} else {{ {b} }})")),
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("([{a}, {b}].filter(|x| x > 1).first().unwrap_or(0))")),
        (e.clone(), e.clone()).prop_map(|(a, b)| format!("(match {a} {{ 1 => {b}, _ => 2 }})")),
    ]
    .boxed()
}

/// Statements: calls of every tool, alone and under branches and loops on any value.
pub fn stmts(depth: u32) -> BoxedStrategy<String> {
    let call = prop_oneof![
        (int(2), int(2)).prop_map(|(a, b)| format!("lab.send({a}, {b});")),
        Just("lab.ping();".to_string()),
        int(2).prop_map(|a| format!("lab.store({a});")),
    ];
    if depth == 0 {
        return prop::collection::vec(call, 1..3).prop_map(|s| s.join(" ")).boxed();
    }
    let body = stmts(depth - 1);
    let stmt = prop_oneof![
        call.clone(),
        call,
        (int(1), body.clone(), body.clone()).prop_map(|(c, a, b)| format!("if {c} > 1 {{ {a} }} else {{ {b} }};")),
        (int(1), body.clone()).prop_map(|(n, b)| format!("for i in range(0, min(max({n}, 0), 3)) {{ {b} }};")),
        (int(1), body.clone()).prop_map(|(a, b)| format!("let ys = [{a}, 1].map(|x| {{ {b} x }});")),
        (int(1), body.clone())
            .prop_map(|(a, b)| format!("let t = [{a}, 2].fold(0, |t: Int, x: Int| {{ {b} t + x }});")),
        (int(1), body.clone()).prop_map(|(a, b)| format!("let f = |x: Int| {{ {b} x }}; let y = f({a});")),
        // `unlabel` raises the program-counter label until the branch around it ends.
        (int(1), body).prop_map(|(a, b)| {
            format!("if p > 0 {{ let bx = to_labeled {{ {a} }}; if unlabel(bx) > 1 {{ {b} }}; }};")
        }),
    ];
    prop::collection::vec(stmt, 1..4).prop_map(|s| s.join(" ")).boxed()
}

pub fn plan() -> impl Strategy<Value = String> {
    stmts(2).prop_map(|body| format!("let s = lab.secret(); let o = lab.outsider(); let p = 3;\n{body}\n()"))
}
