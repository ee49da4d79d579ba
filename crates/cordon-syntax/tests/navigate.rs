//! What a name stands for, as an editor asks it (`navigate`): each case is a policy and a plan
//! with the cursor marked `$`, and what the name there is, resolved by the language's scoping.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use cordon_syntax::navigate::{Index, Name};
use cordon_syntax::{SourceMap, parse};

const POLICY: &str = "\
/// A repository.
type Repo = { name: String, owner: String @label(public()) }
linear type Session
enum Level { Low, High }
capability GitHub {
  /// Lists them.
  tool list_repos() -> List[Repo] @label(returns = public())
  tool read(s: Session, r: {r: Repo | r.owner == \"a\"}) -> (String, Session)
}
entry(gh: GitHub, s: Session) -> (String, Session)
";

/// What the name at `$` in `plan` is, in words: what it declares or stands for, with the
/// line:column of that declaration in its file.
fn at(plan: &str) -> String {
    let offset = plan.find('$').expect("the cursor") as u32;
    let plan = plan.replacen('$', "", 1);
    let mut sources = SourceMap::new();
    let policy_file = sources.add("policy.cord", POLICY);
    let plan_file = sources.add("plan.cord", plan.clone());
    let policy = parse(policy_file, POLICY).module;
    let plan = parse(plan_file, &plan).module;
    let index = Index::new(&[&policy], Some(&plan));
    let place = |d: &cordon_syntax::navigate::Decl| {
        let file = sources.file(d.name.span.file);
        let (line, col) = file.line_col(d.name.span.start);
        format!("{} {} at {}:{line}:{col}", d.kind.noun(), d.name.name, file.name)
    };
    match index.at(plan_file, offset) {
        None => "nothing".into(),
        Some(Name::Declared(d)) => format!("declares {}", place(d)),
        Some(Name::Used { decl: Some(d), .. }) => place(d),
        Some(Name::Used { id, decl: None, builtin }) => match builtin {
            Some(b) => format!("builtin {}", b.name()),
            None => format!("undeclared {}", id.name),
        },
        Some(Name::Member(m, builtin)) => {
            let receiver: Vec<&str> = m.receiver.iter().map(|r| r.name.as_str()).collect();
            let receiver_decl = m.receiver.first().and_then(|r| index.resolve(plan_file, r.span.start, &r.name, false));
            let from = receiver_decl.map(place).unwrap_or_default();
            format!(
                "member {} of {} ({from}){}",
                m.name.name,
                receiver.join("."),
                if builtin.is_some() { ", or the builtin" } else { "" }
            )
        }
        Some(Name::Of { id, parent }) => {
            format!("{} of {parent}: {}", id.name, index.member(parent, &id.name).map(place).unwrap_or_default())
        }
    }
}

#[test]
fn a_name_is_resolved_by_the_languages_scoping() {
    let cases: &[(&str, &str)] = &[
        // Lets, shadowing, and a let's own value seeing the earlier binding.
        ("let x = 1;\nlet y = x$ + 1;\n(\"\", s)", "let binding x at plan.cord:1:5"),
        ("let x = 1;\nlet x = x$ + 1;\n(\"\", s)", "let binding x at plan.cord:1:5"),
        ("let x = 1;\nlet x = 2;\n(f\"{x$}\", s)", "let binding x at plan.cord:2:5"),
        ("let $x = 1;\n(\"\", s)", "declares let binding x at plan.cord:1:5"),
        ("let (a, b) = (1, 2);\n(to_string(b$), s)", "let binding b at plan.cord:1:9"),
        // The entry's parameters, in the plan's statements but not in its functions.
        ("let rs = gh$.list_repos();\n(\"\", s)", "parameter gh at policy.cord:10:7"),
        ("fn f() -> Int { gh$ }\n(\"\", s)", "undeclared gh"),
        ("let n = 1;\nfn f() -> Int { n$ }\n(\"\", s)", "undeclared n"),
        // Parameters, closures, patterns of `for` and `match`.
        ("fn f(k: Int) -> Int { k$ + 1 }\n(\"\", s)", "parameter k at plan.cord:1:6"),
        ("let ys = [1].map(|v| v$ + 1);\n(\"\", s)", "parameter v at plan.cord:1:19"),
        ("for r in gh.list_repos() { r$.name };\n(\"\", s)", "binding r at plan.cord:1:5"),
        ("match Some(1) { Some(k) => k$, None => 0 };\n(\"\", s)", "binding k at plan.cord:1:22"),
        // Items, types, builtins, members.
        ("fn f() -> Int { 1 }\nlet z = f$();\n(\"\", s)", "function f at plan.cord:1:4"),
        ("let r: Repo$ = Repo { name: \"a\", owner: \"b\" };\n(\"\", s)", "record Repo at policy.cord:2:6"),
        ("let r = Repo { na$me: \"a\", owner: \"b\" };\n(\"\", s)", "name of Repo: field name at policy.cord:2:15"),
        ("let l = Level::Hi$gh;\n(\"\", s)", "High of Level: variant High at policy.cord:4:19"),
        ("let n = len$([1]);\n(\"\", s)", "builtin len"),
        ("let rs = gh.list_$repos();\n(\"\", s)", "member list_repos of gh (parameter gh at policy.cord:10:7)"),
        ("let n = [1].len$();\n(\"\", s)", "member len of  (), or the builtin"),
        ("for r in gh.list_repos() { r.owner$ };\n(\"\", s)", "member owner of r (binding r at plan.cord:1:5)"),
        ("let q = 1;\n// a comment$\n(\"\", s)", "nothing"),
    ];
    let mut failures = Vec::new();
    for (plan, expected) in cases {
        let found = at(plan);
        if found != *expected {
            failures.push(format!("{plan:?}:\n  expected {expected}\n  found    {found}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn members_and_visible_names() {
    let mut sources = SourceMap::new();
    let policy_file = sources.add("policy.cord", POLICY);
    let policy = parse(policy_file, POLICY).module;
    let text = "let a = 1;\nfn g(p: Int) -> Int { p }\nlet b = a;\n(\"\", s)";
    let plan_file = sources.add("plan.cord", text);
    let plan = parse(plan_file, text).module;
    let index = Index::new(&[&policy], Some(&plan));
    let tools: Vec<&str> = index.members("GitHub").iter().map(|d| d.name.name.as_str()).collect();
    assert_eq!(tools, ["list_repos", "read"]);
    let list = index.member("GitHub", "list_repos").unwrap();
    assert_eq!(list.doc.as_deref(), Some("Lists them."));
    assert_eq!(list.type_name.as_deref(), Some("List"));
    assert_eq!(sources.slice(list.head), "tool list_repos() -> List[Repo] @label(returns = public())");
    assert_eq!(
        list.labels.iter().map(|(k, v)| (k.as_deref(), sources.slice(*v))).collect::<Vec<_>>(),
        [(Some("returns"), "public()")]
    );
    let owner = index.member("Repo", "owner").unwrap();
    assert_eq!(sources.slice(owner.head), "owner: String @label(public())");
    // At the plan's last line: its lets, the entry's parameters, then the items, types last.
    let names = |offset: usize| -> Vec<String> {
        index.visible(plan_file, offset as u32).iter().map(|d| d.name.name.clone()).collect()
    };
    assert_eq!(names(text.len() - 2), ["b", "a", "gh", "s", "g", "Repo", "Session", "Level", "GitHub"]);
    // Inside the function: its parameter, and the items.
    assert_eq!(names(text.find("{ p").unwrap() + 2), ["p", "g", "Repo", "Session", "Level", "GitHub"]);
    // The n-th binding of a name is found again by its place among them.
    let plan2 = sources.add("plan2.cord", "let a = 1;\nlet a = a + 1;\na");
    let plan2_module = parse(plan2, &sources.file(plan2).text).module;
    let index2 = Index::new(&[&policy], Some(&plan2_module));
    assert_eq!(index2.locals_named(plan2, "a").len(), 2);
}
