//! Typed holes: the sites a checked program lists (what a fill must produce and may name) and
//! the check of fills in their hole's place, as tables: each fill is accepted or rejected with
//! exactly the listed error codes, all in the fill's own file.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use cordon_syntax::{Diagnostic, FileId, SourceMap};
use cordon_types::{
    BindingKind, CheckOptions, Checked, CheckedFill, FillOutcome, HoleBinding, check, check_fill, check_nested_fill,
};

use BindingKind::{Capability, Data, Function, Linear};

const GITHUB: &str = include_str!("../../../policies/github.cord");

/// The user's account `gh` and session `s` are in scope; hole 0 is given the session and must
/// give one back; hole 1 is in the `else` of `n > limit`, is given `n`, and sees the session
/// it was not given.
const GITHUB_PLAN: &str = r#"let limit = 10;
let (n, s) = agent[({n: Int | n >= 0}, Session)]("count the open issues of alice/website", s);
let answer = if n > limit { "many" } else { agent[{t: String | t != ""}]("say how many", n) };
(answer, s)
"#;

const SHELL: &str = "
linear type Session
capability Shell {
  tool close(s: Session) -> String
  tool echo(t: String) -> String
  tool renew(s: Session) -> Session
}
entry(sh: Shell, s: Session) -> (String, Session)
";

/// Hole 0 is in a function that is not given `sh`; hole 2 is in the `then` of `k > 3`; hole 3
/// is given the session and `k + 1`; hole 4 sees the session it was not given.
const SHELL_PLAN: &str = r#"fn above(x: Int) -> Int { agent[{v: Int | v > x}]("a number above x") }
let k = agent[Int]("any number");
let big = if k > 3 { agent[{v: Int | v > 3}]("a number above 3") } else { 4 };
let (msg, s) = agent[(String, Session)]("greet", s, k + 1);
let word = agent[String]("a word");
(msg + word, s)
"#;

/// Arguments that are not plain variables are named by position, apart from the others.
const NAMES_PLAN: &str = r#"let arg1 = 1;
let f = |x: Int| x + 1;
let x = 2;
let x = agent[Int]("add them", arg1 + 1, arg1, f);
x
"#;

/// A checked program and the sources its fills are added to.
struct Program {
    sources: SourceMap,
    checked: Checked,
}

fn program(policy: Option<&str>, plan: &str) -> Program {
    let mut sources = SourceMap::new();
    let policies: Vec<FileId> = policy.map(|p| sources.add("policy.cord", p)).into_iter().collect();
    let plan = sources.add("plan.cord", plan);
    let outcome = check(&sources, &policies, Some(plan), &CheckOptions::default());
    assert!(outcome.accepted(), "{:#?}", outcome.diagnostics);
    Program { sources, checked: outcome.program.expect("an accepted program") }
}

fn github() -> Program {
    program(Some(GITHUB), GITHUB_PLAN)
}

fn shell() -> Program {
    program(Some(SHELL), SHELL_PLAN)
}

impl Program {
    /// Checks `text` as the fill of hole `hole` (of the program, or of `parent`).
    fn fill(&mut self, parent: Option<&CheckedFill>, hole: usize, text: &str) -> (FileId, FillOutcome) {
        let file = self.sources.add("fill.cord", text);
        let options = CheckOptions::default();
        let outcome = match parent {
            None => check_fill(&self.sources, &self.checked, hole, file, &options),
            Some(p) => check_nested_fill(&self.sources, &self.checked, p, hole, file, &options),
        };
        (file, outcome)
    }
}

fn error_codes(diagnostics: &[Diagnostic]) -> Vec<&'static str> {
    diagnostics.iter().filter(|d| d.is_error()).map(|d| d.code.as_str()).collect()
}

/// Checks one fill: exactly `expected` errors (none: accepted), every diagnostic in the fill.
fn expect_fill(
    p: &mut Program,
    parent: Option<&CheckedFill>,
    hole: usize,
    text: &str,
    expected: &[&str],
) -> FillOutcome {
    let (file, outcome) = p.fill(parent, hole, text);
    let codes = error_codes(&outcome.diagnostics);
    assert_eq!(codes, expected, "fill of hole {hole}:\n{text}\n{:#?}", outcome.diagnostics);
    for d in &outcome.diagnostics {
        assert_eq!(d.span().file, file, "a diagnostic outside the fill: {d:#?}");
    }
    assert_eq!(outcome.accepted(), expected.is_empty());
    outcome
}

fn binding(name: &str, ty: &str, kind: BindingKind) -> HoleBinding {
    HoleBinding { name: name.into(), ty: ty.into(), kind, undecided: Vec::new() }
}

/// (hole, expected type, bindings, arguments)
type SiteCase<'a> = (usize, &'a str, &'a [(&'a str, &'a str, BindingKind)], &'a [(&'a str, &'a str, BindingKind)]);

fn expect_sites(p: &Program, cases: &[SiteCase<'_>]) {
    let sites = p.checked.holes();
    assert_eq!(sites.len(), cases.len(), "{sites:#?}");
    for (hole, expected, bindings, args) in cases {
        let site = &sites[*hole];
        assert_eq!(site.id, *hole);
        assert_eq!(site.expected, *expected, "hole {hole}");
        // What the measures leave undecided is the business of its own test.
        let shown = |bs: &[HoleBinding]| -> Vec<HoleBinding> {
            bs.iter().map(|b| HoleBinding { undecided: Vec::new(), ..b.clone() }).collect()
        };
        let want: Vec<HoleBinding> = bindings.iter().map(|(n, t, k)| binding(n, t, *k)).collect();
        assert_eq!(shown(&site.bindings), want, "bindings of hole {hole}");
        let want: Vec<HoleBinding> = args.iter().map(|(n, t, k)| binding(n, t, *k)).collect();
        assert_eq!(shown(&site.args), want, "arguments of hole {hole}");
        assert!(p.sources.slice(site.span).starts_with("agent["), "hole {hole}: {:?}", p.sources.slice(site.span));
    }
}

#[test]
fn github_hole_sites() {
    let p = github();
    expect_sites(
        &p,
        &[
            (
                0,
                "({n: Int | n >= 0}, Session)",
                &[("gh", "GitHub", Capability), ("limit", "Int", Data)],
                // A fresh input: the measure's default is known.
                &[("s", "{s: Session | !tainted(s)}", Linear)],
            ),
            (
                1,
                "{t: String | t != \"\"}",
                &[("gh", "GitHub", Capability), ("limit", "Int", Data), ("s", "Session", Linear)],
                &[("n", "{n: Int | n >= 0}", Data)],
            ),
        ],
    );
}

#[test]
fn bindings_show_what_is_known_of_their_measures_in_names_in_scope() {
    // A session a tool gave back: its type names the tool's parameters (`r`, `s`), which the
    // hole cannot see; what the facts decide is shown instead, or that nothing is.
    let plan = r#"match gh.private_repo("plans") {
  Some(r) => if r.private {
    let (text, s2) = gh.read_file(s, r, "a.md");
    agent[(String, Session)]("known tainted", s2)
  } else {
    let (text, s2) = gh.read_file(s, r, "a.md");
    agent[(String, Session)]("known clean", s2)
  },
  None => {
    let (x, s) = agent[(String, Session)]("unknown", s);
    agent[(String, Session)]("after a fill", s)
  },
}
"#;
    let p = program(Some(GITHUB), plan);
    let args: Vec<(String, Vec<String>)> =
        p.checked.holes().iter().map(|site| (site.args[0].ty.clone(), site.args[0].undecided.clone())).collect();
    assert_eq!(
        args,
        [
            ("{s2: Session | tainted(s2)}".to_string(), vec![]),
            ("{s2: Session | !tainted(s2)}".to_string(), vec![]),
            ("{s: Session | !tainted(s)}".to_string(), vec![]),
            ("Session".to_string(), vec!["tainted(s)".to_string()]),
        ]
    );
}

#[test]
fn shell_hole_sites() {
    let p = shell();
    let outer: &[(&str, &str, BindingKind)] = &[("sh", "Shell", Capability), ("s", "Session", Linear)];
    expect_sites(
        &p,
        &[
            (0, "{v: Int | v > x}", &[("x", "Int", Data)], &[]),
            (1, "Int", outer, &[]),
            (2, "{v: Int | v > 3}", &[("sh", "Shell", Capability), ("s", "Session", Linear), ("k", "Int", Data)], &[]),
            (
                3,
                "(String, Session)",
                &[("sh", "Shell", Capability), ("k", "Int", Data), ("big", "Int", Data)],
                &[("s", "Session", Linear), ("arg2", "Int", Data)],
            ),
            (
                4,
                "String",
                &[
                    ("sh", "Shell", Capability),
                    ("k", "Int", Data),
                    ("big", "Int", Data),
                    ("msg", "String", Data),
                    ("s", "Session", Linear),
                ],
                &[],
            ),
        ],
    );
}

#[test]
fn argument_names_and_shadowing() {
    let p = program(None, NAMES_PLAN);
    expect_sites(
        &p,
        &[(
            0,
            "Int",
            &[("x", "Int", Data)],
            &[("arg1_", "Int", Data), ("arg1", "Int", Data), ("f", "fn(Int) -> Int", Function)],
        )],
    );
}

const COUNT_ISSUES: &str = r#"match gh.repo("alice", "website") {
  Some(r) => {
    let (issues, s) = gh.list_issues(s, r);
    (issues.filter(|i| i.open).len(), s)
  },
  None => (0, s),
}"#;

const USE_SESSION_TWICE: &str = r#"match gh.repo("alice", "website") {
  Some(r) => {
    let (issues, s2) = gh.list_issues(s, r);
    (issues.len(), s)
  },
  None => (0, s),
}"#;

#[test]
fn github_fills() {
    let mut p = github();
    let cases: &[(usize, &str, &[&str])] = &[
        // A tool called on the capability in scope, with the session it was given.
        (0, COUNT_ISSUES, &[]),
        (0, r#"("three", s)"#, &["type-mismatch"]),
        (0, "(0 - 1, s)", &["refinement-unproven"]),
        (0, "(count_open_issues(), s)", &["undefined-name"]),
        (0, USE_SESSION_TWICE, &["linear-unused", "linear-reused"]),
        (0, "capability Evil {\n  tool steal() -> Int\n}\n(0, s)", &["host-declaration-in-plan"]),
        (0, "linear type Token\n(0, s)", &["host-declaration-in-plan"]),
        (0, "(0, s", &["syntax-error"]),
        // Hole 1 is given `n`.
        (1, r#""there are " + to_string(n)"#, &[]),
        (1, r#""""#, &["refinement-unproven"]),
        (1, "n", &["type-mismatch"]),
        // A hole's type holds no capability, so no fill returns one.
        (1, "gh", &["type-mismatch"]),
        // The session is in scope but was not given to the hole (and the one the tool gives
        // back is then dropped).
        (1, USE_SESSION_NOT_GIVEN, &["linear-unused", "linear-captured"]),
    ];
    for (hole, text, expected) in cases {
        expect_fill(&mut p, None, *hole, text, expected);
    }
}

const USE_SESSION_NOT_GIVEN: &str = r#"match gh.repo("alice", "website") {
  Some(r) => {
    let (text, s2) = gh.read_file(s, r, "README.md");
    "README: " + text
  },
  None => "none",
}"#;

#[test]
fn shell_fills() {
    let mut p = shell();
    let cases: &[(usize, &str, &[&str])] = &[
        // In `above(x)`: the refinement names the parameter; `sh` is not in its scope.
        (0, "x + 1", &[]),
        (0, "x", &["refinement-unproven"]),
        (0, "let t = sh.echo(\"hi\");\nx + 1", &["undefined-name"]),
        // Declarations of a fill are checked like a plan's.
        (1, "fn twice(a: Int) -> Int { a * 2 }\ntwice(21)", &[]),
        (1, "type Pair = { a: Int, b: Int }\nlet p = Pair { a: 1, b: 2 };\np.a + p.b", &[]),
        (1, "fn above(x: Int) -> Int { x }\n1", &["duplicate-definition"]),
        (1, "fn shout(t: String) -> String { sh.echo(t) }\nlen(shout(\"hi\"))", &["undefined-name"]),
        (1, "fn leak(c: Shell) -> Shell { c }\n1", &["capability-escapes"]),
        (1, "let f = |c: Shell| c;\n1", &["capability-escapes"]),
        (1, "k", &["undefined-name"]),
        (1, "sh", &["type-mismatch"]),
        (1, "len(sh.echo(\"four\"))", &[]),
        (1, "", &["type-mismatch"]),
        // Facts of the enclosing `if k > 3`.
        (2, "k", &[]),
        (2, "k - 1", &["refinement-unproven"]),
        (2, "big", &["undefined-name"]),
        // Given the session and `k + 1` (as `arg2`).
        (3, r#"("hi", s)"#, &[]),
        (3, r#"(sh.echo("hi"), s)"#, &[]),
        (3, "let s = sh.renew(s);\n(\"k + 1 = \" + to_string(arg2), s)", &[]),
        (3, "(sh.close(s), s)", &["linear-reused"]),
        (3, "let t = sh.close(s);\n(t, sh.renew(s))", &["linear-reused"]),
        // The session it was given is not given back.
        (3, r#""hi""#, &["linear-unused", "type-mismatch"]),
        // The capture is the one mistake: giving the session back after it is not reported again.
        (3, "let f = |t: String| sh.close(s);\n(\"hi\", s)", &["linear-captured"]),
        // The session is in scope, not given: not usable, even in branches.
        (4, "sh.close(s)", &["linear-captured"]),
        (4, "if k > 0 { sh.close(s) } else { \"no\" }", &["linear-captured"]),
        (4, "sh.echo(msg)", &[]),
    ];
    for (hole, text, expected) in cases {
        expect_fill(&mut p, None, *hole, text, expected);
    }
}

#[test]
fn a_fill_with_syntax_errors_gets_only_those() {
    let mut p = shell();
    let outcome = expect_fill(&mut p, None, 1, "let = ;\nundefined_thing", &["syntax-error"]);
    assert!(outcome.fill.is_none());
}

#[test]
fn a_missing_hole_is_an_error_not_a_panic() {
    let mut p = shell();
    let (_, outcome) = p.fill(None, 99, "1");
    assert_eq!(error_codes(&outcome.diagnostics), ["undefined-name"]);
}

#[test]
fn a_fill_in_a_file_of_the_program_is_refused() {
    let p = shell();
    let plan = FileId(1);
    let outcome = check_fill(&p.sources, &p.checked, 1, plan, &CheckOptions::default());
    assert_eq!(error_codes(&outcome.diagnostics), ["duplicate-definition"]);
}

#[test]
fn a_checked_fill_is_handed_back() {
    let mut p = shell();
    let outcome = expect_fill(&mut p, None, 3, "let s = sh.renew(s);\n(\"hi\", s)", &[]);
    let fill = outcome.fill.expect("a checked fill");
    assert_eq!(fill.hole(), 3);
    assert_eq!(fill.arg_names(), ["s", "arg2"]);
    assert_eq!(fill.module().body.stmts.len(), 1);
    assert!(fill.module().body.tail.is_some());
    assert!(fill.holes().is_empty());
}

#[test]
fn fills_hold_holes_of_their_own() {
    let mut p = shell();
    let outer = expect_fill(&mut p, None, 1, "let base = 40;\nagent[Int](\"a small number\", base) + 1", &[]);
    let outer = outer.fill.expect("a checked fill");
    let sites = outer.holes();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0].expected, "Int");
    let outer_scope = vec![binding("sh", "Shell", Capability), binding("s", "Session", Linear)];
    assert_eq!(sites[0].bindings, outer_scope);
    assert_eq!(sites[0].args, [binding("base", "Int", Data)]);

    let cases: &[(&str, &[&str])] = &[
        ("base + 2", &[]),
        ("\"x\"", &["type-mismatch"]),
        ("len(sh.close(s))", &["linear-captured"]),
        ("k", &["undefined-name"]),
    ];
    for (text, expected) in cases {
        expect_fill(&mut p, Some(&outer), 0, text, expected);
    }

    // Two levels down: the innermost fill sees the middle one's scope.
    let middle =
        expect_fill(&mut p, Some(&outer), 0, "let half = base / 2;\nagent[{v: Int | v > half}](\"more\")", &[]);
    let middle = middle.fill.expect("a checked fill");
    assert_eq!(middle.holes().len(), 1);
    assert_eq!(middle.holes()[0].expected, "{v: Int | v > half}");
    expect_fill(&mut p, Some(&middle), 0, "half + base", &[]);
    expect_fill(&mut p, Some(&middle), 0, "half", &["refinement-unproven"]);
}

#[test]
fn a_hole_in_a_closure_and_a_loop() {
    let plan = r#"let words = ["a", "b"];
let shouted = words.map(|w| agent[String]("shout it", w));
for w in shouted {
  let echoed = sh.echo(agent[String]("say it", w));
}
("done", s)
"#;
    let mut p = program(Some(SHELL), plan);
    expect_sites(
        &p,
        &[
            (
                0,
                "String",
                &[("sh", "Shell", Capability), ("s", "Session", Linear), ("words", "List[String]", Data)],
                &[("w", "String", Data)],
            ),
            (
                1,
                "String",
                &[
                    ("sh", "Shell", Capability),
                    ("s", "Session", Linear),
                    ("words", "List[String]", Data),
                    ("shouted", "List[String]", Data),
                ],
                &[("w", "String", Data)],
            ),
        ],
    );
    expect_fill(&mut p, None, 0, "sh.echo(w)", &[]);
    expect_fill(&mut p, None, 0, "sh.close(s)", &["linear-captured"]);
    expect_fill(&mut p, None, 1, "w + \"!\"", &[]);
    expect_fill(&mut p, None, 1, "let t = sh.renew(s);\n\"x\"", &["linear-unused", "linear-captured"]);
}

#[test]
fn holes_of_policy_functions_come_first() {
    let policy = format!("{SHELL}\nfn lucky() -> Int {{ agent[Int](\"a lucky number\") }}\n");
    let plan = "let f = agent[fn(Int) -> Int](\"a function\");\n(sh.echo(to_string(f(lucky()))), s)\n";
    let mut p = program(Some(&policy), plan);
    expect_sites(
        &p,
        &[(0, "Int", &[], &[]), (1, "fn(Int) -> Int", &[("sh", "Shell", Capability), ("s", "Session", Linear)], &[])],
    );
    // A fill of a policy's hole is checked as model code all the same.
    expect_fill(&mut p, None, 0, "7", &[]);
    expect_fill(&mut p, None, 0, "linear type Token\n7", &["host-declaration-in-plan"]);
    expect_fill(&mut p, None, 0, "sh", &["undefined-name"]);
    // A capability is in scope, so the function the fill makes may use it.
    expect_fill(&mut p, None, 1, "|n: Int| n + 1", &[]);
    expect_fill(&mut p, None, 1, "|n: Int| len(sh.echo(to_string(n)))", &[]);
    expect_fill(&mut p, None, 1, "|n: Int| len(sh.close(s))", &["linear-captured"]);
}

/// A sub-agent given less of the web: a function whose address is refined to one site, and the
/// hole in a function that is not given `http`.
const NARROWER_WEB: &str = r#"type Wiki = {u: String | u.starts_with("https://en.wikipedia.org/wiki/")}
fn research(wiki: fn(Wiki) -> Result[Response, HttpError]) -> String {
  agent[String]("summarise the article on Cordon", wiki)
}
research(|u: Wiki| http.get(u, [], None))
"#;

#[test]
fn a_sub_agent_given_one_site_of_the_web_reaches_only_that_site() {
    let mut p = program(Some(include_str!("../../../policies/http.cord")), NARROWER_WEB);
    let read = r#"match wiki("https://en.wikipedia.org/wiki/Cordon") { Ok(r) => r.body, Err(e) => e.reason }"#;
    expect_fill(&mut p, None, 0, read, &[]);
    // Another site through the function: its parameter's refinement is the narrower list.
    let elsewhere = r#"match wiki("https://api.github.com/user") { Ok(r) => r.body, Err(e) => e.reason }"#;
    expect_fill(&mut p, None, 0, elsewhere, &["refinement-unproven"]);
    // The whole web: not in scope at the hole.
    let whole = r#"match http.get("https://api.github.com/user", [], None) { Ok(r) => r.body, Err(e) => e.reason }"#;
    expect_fill(&mut p, None, 0, whole, &["undefined-name"]);
}
