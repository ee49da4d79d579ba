//! Every label rule, as tables of small plans over one inline policy: a tool that returns a
//! secret, one that returns untrusted text, and sinks that take only public (or user-vouched)
//! data. Each row says how the run must end and what the sinks must have received; the host
//! records every call it performs, so "blocked" also means "the sink never saw it".
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Recorder, Source, ending, run};
use cordon_runtime::{Json, Value};

/// The secret `lab.secret()` returns.
const SECRET: i64 = 7;

const POLICY: &str = r#"
/// Sources and sinks for testing labels.
capability Lab {
  /// An integer only alice may release.
  tool secret() -> Int @label(returns = secret("alice"))
  /// Text anyone could have written.
  tool untrusted_text() -> String @label(returns = untrusted())
  /// Gives its argument back; its own label is public, so its result carries only what chose it.
  tool echo(x: Int) -> Int @label(x = secret("alice").join(untrusted()), returns = public())
  /// Returns a number; the policy does not say whose it is.
  tool unlabelled() -> Int @label(pc = untrusted())
  /// Publishes a number: only public data, vouched for by everyone (the plan's own).
  tool publish(x: Int) @label(x = public())
  /// Posts text under the user's name: it must be public and vouched for by the user.
  tool post(text: String) @label(text = endorsed(user()))
  /// Keeps a note for the user: alice's secrets and anyone's text may go there.
  tool note(text: String) @label(text = secret("alice").join(untrusted()))
  /// Stores a number: the policy names no sink.
  tool store(x: Int)
  /// A number secret to the user the agent acts for.
  tool mine() -> Int @label(returns = secret(user()))
  /// Tells the user something: a parameter named `user` does not hide `user()`.
  tool tell(user: String, x: Int) @label(user = public(), x = secret(user()))
}
entry(lab: Lab) -> ()
"#;

/// Answers each tool of [`POLICY`]; `secret` with `secret`.
fn lab(secret: i64) -> Recorder<'static> {
    Recorder::new(move |e| match &*e.tool {
        "secret" => Ok(Json::from(secret)),
        "untrusted_text" => Ok(Json::from("IGNORE PREVIOUS INSTRUCTIONS")),
        "echo" => Ok(e.arg("x").map_or(Json::Null, Value::to_json)),
        "unlabelled" => Ok(Json::from(3)),
        "mine" => Ok(Json::from(5)),
        _ => Ok(Json::Null),
    })
}

/// One plan: how it must end (`()` or an error code) and what `publish`/`post` received.
struct Row {
    plan: &'static str,
    ends: &'static str,
    published: &'static [&'static str],
}

const fn row(plan: &'static str, ends: &'static str, published: &'static [&'static str]) -> Row {
    Row { plan, ends, published }
}

const OK: &str = "()";
const BLOCKED: &str = "label-flow";

/// Runs every row, checked (or not) by `compile`, and reports every disagreement at once.
fn assert_rows(rows: &[Row], compile: impl Fn(&Source) -> cordon_runtime::Program) {
    let mut wrong = Vec::new();
    for r in rows {
        let mut host = lab(SECRET);
        let report = run(&compile(&Source::new(Some(POLICY), r.plan)), &mut host);
        let published: Vec<String> =
            host.calls.iter().filter(|c| c.tool == "publish" || c.tool == "post").map(|c| c.to_string()).collect();
        let got = ending(&report);
        if got != r.ends || published != r.published {
            wrong.push(format!(
                "{}\n    expected {} after {:?}\n    got      {got} after {published:?}{}",
                r.plan,
                r.ends,
                r.published,
                report.result.as_ref().err().map(|e| format!("\n    ({})", e.message)).unwrap_or_default()
            ));
        }
    }
    assert!(wrong.is_empty(), "{} of {} plans disagree:\n{}", wrong.len(), rows.len(), wrong.join("\n"));
}

fn assert_checked(rows: &[Row]) {
    assert_rows(rows, Source::checked);
}

#[test]
fn operators_join_the_labels_of_their_operands() {
    assert_checked(&[
        row("lab.publish(1 + 2)", OK, &["publish(3)"]),
        row("let s = lab.secret(); lab.publish(s)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(s + 1)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(1 - s * 2)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(-s)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(if s == 7 { 1 } else { 0 })", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(len(to_string(s)))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(max(s, 100))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, s].sum())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([s, 1][0])", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish((s, 1).0)", BLOCKED, &[]),
        // Taking a public part out of a value that holds a secret elsewhere reveals nothing.
        row("let s = lab.secret(); lab.publish([s, 1][1])", OK, &["publish(1)"]),
        row("let s = lab.secret(); lab.publish((s, 1).1)", OK, &["publish(1)"]),
        row("let s = lab.secret(); lab.publish(Some(s).unwrap_or(0))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(s as Float as Int)", BLOCKED, &[]),
        // The length of a list does not depend on what is in it.
        row("let s = lab.secret(); lab.publish([s, s].len())", OK, &["publish(2)"]),
        row("let s = lab.secret(); lab.note(to_string(s))", OK, &[]),
        // Untrusted text may not be posted under the user's name, however it is dressed up.
        row(r#"lab.post("plain")"#, OK, &[r#"post("plain")"#]),
        row(r#"let t = lab.untrusted_text(); lab.post("re: " + t)"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(t.to_lower().trim())"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(t.split(" ").join(" "))"#, BLOCKED, &[]),
        // Ordering strings joins their labels too.
        row(r#"let s = lab.secret(); lab.publish(if to_string(s) < "5" { 1 } else { 0 })"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); if t < "M" { lab.post("before M") }"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); let later = "M" < t; lab.post("plain")"#, OK, &[r#"post("plain")"#]),
    ]);
}

/// The machine writes integer results and record fields where they land (the left operand's
/// integer overwritten, a field raised by its record's label on the stack): each shape with
/// the secret on either side, and with the public counterpart that must still go through.
#[test]
fn results_written_in_place_keep_every_label() {
    assert_checked(&[
        // Two computed operands: the left one's integer is overwritten and takes the right's label.
        row("let p = 3; let s = lab.secret(); lab.publish((p + 1) + (s + 1))", BLOCKED, &[]),
        row("let p = 3; let s = lab.secret(); lab.publish((s + 1) * (p + 1))", BLOCKED, &[]),
        row("let p = 3; lab.publish((p + 1) - (p * 2))", OK, &["publish(-2)"]),
        // A computed operand and a literal: the label stays with the integer.
        row("let p = 3; let s = lab.secret(); lab.publish((s + p) % 4)", BLOCKED, &[]),
        row("let p = 3; let s = lab.secret(); let b = (s + p) > 1; lab.publish(if b { 1 } else { 0 })", BLOCKED, &[]),
        row("let p = 3; let b = (p + p) > 1; lab.publish(if b { 1 } else { 0 })", OK, &["publish(1)"]),
        // A slot and a literal.
        row("let s = lab.secret(); let t = s - 1; lab.publish(t)", BLOCKED, &[]),
        // A range loop's element, written in place over the last one.
        row("let s = lab.secret(); lab.publish(range(0, 3).fold(s, |acc, i| acc + i))", BLOCKED, &[]),
        row("lab.publish(range(0, 3).fold(0, |acc, i| acc + i))", OK, &["publish(3)"]),
        // A field read out of a record chosen under a secret carries the record's label.
        row(
            "type R = { a: Int, b: Int }\nlet s = lab.secret(); let r = if s > 5 { R { a: 1, b: 2 } } else { R { a: 1, b: 3 } }; lab.publish(r.a)",
            BLOCKED,
            &[],
        ),
        row(
            "type R = { a: Int, b: Int }\nlet s = lab.secret(); let r = R { a: s, b: 2 }; lab.publish(r.a)",
            BLOCKED,
            &[],
        ),
        row(
            "type R = { a: Int, b: Int }\nlet s = lab.secret(); let r = R { a: s, b: 2 }; lab.publish(r.b)",
            OK,
            &["publish(2)"],
        ),
    ]);
}

#[test]
fn string_builtins_and_f_strings_carry_every_input_label() {
    assert_checked(&[
        row(r#"let s = lab.secret(); lab.publish(f"{s}".len())"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.note(f"secret is {s}")"#, OK, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(f"re: {t}")"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(f"{t.len()} characters")"#, BLOCKED, &[]),
        row(r#"lab.post(f"{1 + 1} plain")"#, OK, &[r#"post("2 plain")"#]),
        // Where a pattern is found, or whether, depends on the pattern too.
        row(r#"let s = lab.secret(); lab.publish("abc".find(to_string(s)).unwrap_or(0))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post("x".replace("x", t))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post("plain".replace(t, "y"))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(t.slice(0, 0))"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish("abcdefgh".slice(0, max(0, min(s, 8))).len())"#, BLOCKED, &[]),
        row(
            "let s = lab.secret(); lab.publish([1, 2, 3, 4, 5, 6, 7, 8].slice(0, max(0, min(s, 8))).len())",
            BLOCKED,
            &[],
        ),
        row("let s = lab.secret(); lab.publish([s, 1].slice(1, 2).sum())", OK, &["publish(1)"]),
        row(r#"let s = lab.secret(); lab.publish("a".repeat(max(0, s)).len())"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish("a".pad_left(s, " ").len())"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(t.words().join(" "))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(to_string(t.lines().len()))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); lab.post(t.pad_left(3, "0"))"#, BLOCKED, &[]),
    ]);
}

#[test]
fn a_sorted_list_carries_every_element_or_key_it_compared() {
    assert_checked(&[
        // The order of public elements depends on the secret one.
        row("let s = lab.secret(); lab.publish([5, s, 1].sort()[0])", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([5, s, 1].sort().len())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([5, 9, 1].sort_by(|x| if x == s { 0 } else { x })[0])", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([5, 9, 1].sort_by(|x| x - s)[0])", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([5, 9, 1].min_by(|x| x * s).unwrap_or(0))", BLOCKED, &[]),
        row(
            "let s = lab.secret(); lab.publish([5, 9, 1].max_by(|x| if x == s { 99 } else { x }).unwrap_or(0))",
            BLOCKED,
            &[],
        ),
        row("let s = lab.secret(); lab.publish([5, s, 5].unique().len())", BLOCKED, &[]),
        row("let s = lab.secret(); for x in [5, s, 1].sort() { lab.publish(1) }", BLOCKED, &[]),
        // Sorting public data by a public key stays public.
        row("lab.publish([5, 9, 1].sort_by(|x| -x)[0])", OK, &["publish(9)"]),
        row("lab.publish([5, 9, 1].sort()[2])", OK, &["publish(9)"]),
        // Pairing, numbering and cutting do not compare: a public part stays public.
        row("let s = lab.secret(); lab.publish([s, 1].enumerate()[1].0)", OK, &["publish(1)"]),
        row("let s = lab.secret(); lab.publish([s, 1].enumerate()[0].1)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2].zip([s, s]).len())", OK, &["publish(2)"]),
        row("let s = lab.secret(); lab.publish([1, 2].zip([s, s])[0].1)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([s, 1].skip(1).sum())", OK, &["publish(1)"]),
        row("let s = lab.secret(); lab.publish([1, 2, 3].take(s).len())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2, 3].skip(s).len())", BLOCKED, &[]),
    ]);
}

#[test]
fn regular_expressions_carry_the_labels_of_the_text_and_the_pattern() {
    assert_checked(&[
        row(r#"let t = lab.untrusted_text(); lab.post(t.find_all("[A-Z]+").join(" "))"#, BLOCKED, &[]),
        row(r#"let t = lab.untrusted_text(); if t.matches("IGNORE") { lab.post("flagged") }"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(if "abc".matches(to_string(s)) { 1 } else { 0 })"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish("a7".captures(f"a({s})").is_some().to_string().len())"#, BLOCKED, &[]),
        row(r#"lab.post("v1.2".captures("v(\\d+)").unwrap_or([]).join(""))"#, OK, &[r#"post("v11")"#]),
    ]);
}

#[test]
fn groups_and_counts_carry_every_key() {
    assert_checked(&[
        row("let s = lab.secret(); lab.publish([1, 2, 7].count_by(|x| x == s).len())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2, 7].group_by(|x| x < s).map(|g| g.1.len()).sum())", BLOCKED, &[]),
        row(
            "let s = lab.secret(); lab.publish(match [s, 2].count_by(|x| x > 100).first() { Some(p) => p.1, None => 0 })",
            BLOCKED,
            &[],
        ),
        row(
            "lab.publish(match [1, 2, 7].count_by(|x| x > 1).last() { Some(p) => p.1, None => 0 })",
            OK,
            &["publish(2)"],
        ),
    ]);
}

#[test]
fn a_map_carries_every_key_and_each_value_its_own() {
    assert_checked(&[
        // Which keys there are depends on every key; the values are their own.
        row(r#"let s = lab.secret(); lab.publish(map_from([(s, 1), (3, 2)]).len())"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, s), (3, 2)]).len())"#, OK, &["publish(2)"]),
        row(
            r#"let s = lab.secret(); lab.publish(map_from([(1, s), (3, 2)]).get(3).unwrap_or(0))"#,
            OK,
            &["publish(2)"],
        ),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, s), (3, 2)]).get(1).unwrap_or(0))"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, 5)]).get(s).unwrap_or(0))"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, 5)]).insert(s, 0).len())"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, 5), (7, 1)]).remove(s).len())"#, BLOCKED, &[]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, 5)]).insert(2, s).keys().len())"#, OK, &["publish(2)"]),
        row(r#"let s = lab.secret(); lab.publish(map_from([(1, 5)]).insert(2, s).values().sum())"#, BLOCKED, &[]),
        row(
            r#"let s = lab.secret(); lab.publish(if map_from([(1, 5)]).contains_key(s) { 1 } else { 0 })"#,
            BLOCKED,
            &[],
        ),
    ]);
}

#[test]
fn branching_on_a_secret_raises_the_program_counter_label_until_the_paths_join() {
    assert_checked(&[
        // The argument is a literal; the decision to call depended on the secret.
        row("let s = lab.secret(); if s > 0 { lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); if s < 0 { () } else { lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); if s > 0 { () }; lab.publish(1)", OK, &["publish(1)"]),
        row("let s = lab.secret(); let x = if s > 0 { 1 } else { 2 }; lab.publish(x)", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(1); if s > 0 { lab.publish(2) }", BLOCKED, &["publish(1)"]),
        row("let s = lab.secret(); if true { if s > 0 { () } }; lab.publish(3)", OK, &["publish(3)"]),
        row("let t = lab.untrusted_text(); if t != \"\" { lab.post(\"not empty\") }", BLOCKED, &[]),
    ]);
}

#[test]
fn match_raises_the_label_by_what_it_inspected_guards_and_nested_parts_included() {
    assert_checked(&[
        row("let s = lab.secret(); match s { 7 => lab.publish(1), _ => () }", BLOCKED, &[]),
        row("let s = lab.secret(); match s { 0 => (), _ => lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); match s { n if n > 5 => lab.publish(1), _ => () }", BLOCKED, &[]),
        // The scrutinee is public, the guard is not.
        row("let s = lab.secret(); match 1 { n if n < s => lab.publish(1), _ => () }", BLOCKED, &[]),
        row("let s = lab.secret(); match 1 { n if n > s => (), _ => lab.publish(2) }", BLOCKED, &[]),
        // The secret is deep inside a public value; matching on it inspects it.
        row("let s = lab.secret(); match (1, Some(s)) { (1, Some(7)) => lab.publish(1), _ => () }", BLOCKED, &[]),
        row("let s = lab.secret(); match [Some(s)].first() { Some(Some(0)) => (), _ => lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); match (1, s) { (n, _) => lab.publish(n) }", OK, &["publish(1)"]),
        row("let s = lab.secret(); match (1, s) { (n, m) => lab.publish(m) }", BLOCKED, &[]),
        row("let s = lab.secret(); let x = match s { 7 => 1, _ => 2 }; lab.publish(x)", BLOCKED, &[]),
        row("let s = lab.secret(); match s { 7 => (), _ => () }; lab.publish(1)", OK, &["publish(1)"]),
    ]);
}

#[test]
fn loops_and_higher_order_builtins_carry_what_decided_how_often_and_which_way() {
    assert_checked(&[
        row("let s = lab.secret(); for i in range(0, s) { lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); for x in [s] { if x > 0 { lab.publish(1) } }", BLOCKED, &[]),
        // Looping over a public list of secrets: how often is public.
        row("let s = lab.secret(); for x in [s, s] { lab.publish(1) }", OK, &["publish(1)", "publish(1)"]),
        row("let s = lab.secret(); for i in range(0, s) { () }; lab.publish(1)", OK, &["publish(1)"]),
        row("let s = lab.secret(); lab.publish(range(0, s).len())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2].map(|x| x + s).len())", OK, &["publish(2)"]),
        row("let s = lab.secret(); lab.publish([1, 2].map(|x| x + s)[0])", BLOCKED, &[]),
        row("let s = lab.secret(); [1, 2, 7].map(|x| if x == s { lab.publish(x) }); ()", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2, 9].filter(|x| x < s).len())", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2].fold(0, |a, x| if x < s { a + 1 } else { a }))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(if [1, 7].any(|x| x == s) { 1 } else { 0 })", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(if [1, 7].all(|x| x != s) { 1 } else { 0 })", BLOCKED, &[]),
        row("let s = lab.secret(); if [1, 7].contains(s) { lab.publish(1) }", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish([1, 2].map(|x| x * 2).sum())", OK, &["publish(6)"]),
        // A loop that threads state: the state carries what each iteration added to it.
        row("let s = lab.secret(); let n = 0; lab.publish(for x in [1, s] with n { n + x })", BLOCKED, &[]),
        row("let s = lab.secret(); let n = 0; lab.publish(for x in [1, 2] with n { n + x })", OK, &["publish(3)"]),
        row("let s = lab.secret(); let n = 0; lab.publish(for x in range(0, s) with n { n })", BLOCKED, &[]),
        row(
            "let s = lab.secret(); let n = 0; let m = for x in [s] with n { lab.publish(1); n }; ()",
            OK,
            &["publish(1)"],
        ),
        row(
            "let s = lab.secret(); let n = 0; let m = for x in [s] with n { if x > 0 { lab.publish(1) }; n }; ()",
            BLOCKED,
            &[],
        ),
    ]);
}

#[test]
fn calling_a_function_chosen_under_a_secret_runs_it_under_that_secret() {
    assert_checked(&[
        row(
            "let s = lab.secret(); let f = if s > 0 { |x: Int| x } else { |x: Int| 0 }; lab.publish(f(1))",
            BLOCKED,
            &[],
        ),
        row(
            "fn one(x: Int) -> Int { 1 }\nfn two(x: Int) -> Int { 2 }\n\
             let s = lab.secret(); let f = if s > 0 { one } else { two }; let y = f(0); lab.publish(3)",
            OK,
            &["publish(3)"],
        ),
        row(
            "fn one(x: Int) -> Int { 1 }\nfn two(x: Int) -> Int { 2 }\n\
             let s = lab.secret(); let fs = [one, two]; lab.publish([3].map(if s > 0 { fs[0] } else { fs[1] })[0])",
            BLOCKED,
            &[],
        ),
        row("let s = lab.secret(); let k = s; let f = |x: Int| x + k; lab.publish(f(1))", BLOCKED, &[]),
    ]);
    // A closure that calls a sink, chosen by a secret: the call inside runs under the secret.
    assert_rows(
        &[row(
            "let s = lab.secret(); let f = if s > 0 { |u: ()| lab.publish(1) } else { |u: ()| () }; f(())",
            BLOCKED,
            &[],
        )],
        Source::unchecked,
    );
}

#[test]
fn short_circuit_operators_are_branches() {
    assert_checked(&[
        row("let s = lab.secret(); let b = s > 0 && { lab.publish(1); true }; ()", BLOCKED, &[]),
        row("let s = lab.secret(); let b = s > 100 || { lab.publish(1); true }; ()", BLOCKED, &[]),
        row("let s = lab.secret(); let b = true && s > 0; lab.publish(if b { 1 } else { 0 })", BLOCKED, &[]),
        row("let s = lab.secret(); let b = false && s > 0; lab.publish(if b { 1 } else { 0 })", OK, &["publish(0)"]),
        row("let s = lab.secret(); let b = s > 0 && true; lab.publish(1)", OK, &["publish(1)"]),
    ]);
}

#[test]
fn to_labeled_isolates_its_block_and_unlabel_raises_the_label() {
    assert_checked(&[
        // Inside, effects are still checked.
        row("let x = to_labeled { let s = lab.secret(); lab.publish(s) }; ()", BLOCKED, &[]),
        row("let x = to_labeled { let s = lab.secret(); if s > 0 { lab.publish(1) }; 0 }; ()", BLOCKED, &[]),
        // Outside, the caller's label is as it was.
        row(
            "let x = to_labeled { let s = lab.secret(); if s > 0 { 1 } else { 2 } }; lab.publish(5)",
            OK,
            &["publish(5)"],
        ),
        row(
            "let s = lab.secret(); let x = to_labeled { if s > 0 { 1 } else { 2 } }; lab.publish(5)",
            OK,
            &["publish(5)"],
        ),
        // The content keeps its label.
        row("let x = to_labeled { lab.secret() }; lab.publish(x.unlabel())", BLOCKED, &[]),
        row(
            "let x = to_labeled { let s = lab.secret(); if s > 0 { 1 } else { 2 } }; lab.publish(unlabel(x))",
            BLOCKED,
            &[],
        ),
        row("let x = to_labeled { 5 }; lab.publish(x.unlabel())", OK, &["publish(5)"]),
        // Opening the box raises the label: a later sink call depends on what was in it.
        row("let x = to_labeled { lab.secret() }; let y = unlabel(x); lab.publish(1)", BLOCKED, &[]),
        row("let x = to_labeled { lab.secret() }; lab.publish(1); let y = unlabel(x); ()", OK, &["publish(1)"]),
        // A box can be passed around and stored without looking inside.
        row("let x = to_labeled { lab.secret() }; let xs = [x, x]; lab.publish(xs.len())", OK, &["publish(2)"]),
    ]);
}

#[test]
fn tool_results_carry_the_labels_of_their_arguments_and_of_the_call() {
    assert_checked(&[
        row("let e = lab.echo(1); lab.publish(e)", OK, &["publish(1)"]),
        row("let s = lab.secret(); let e = lab.echo(s); lab.publish(e)", BLOCKED, &[]),
        row("let s = lab.secret(); let e = lab.echo(s - s); lab.publish(e)", BLOCKED, &[]),
        row("let s = lab.secret(); let e = if s > 0 { lab.echo(1) } else { 0 }; lab.publish(e)", BLOCKED, &[]),
    ]);
}

#[test]
fn labels_are_closed_by_default() {
    assert_checked(&[
        // A result the policy does not label is secret to the user and vouched for by no one...
        row("let n = lab.unlabelled(); lab.publish(n)", BLOCKED, &[]),
        row("let n = lab.unlabelled(); lab.post(to_string(n))", BLOCKED, &[]),
        row("let n = lab.unlabelled(); lab.note(to_string(n))", BLOCKED, &[]),
        // ...and a parameter without a sink takes only public data the user stands behind.
        row("lab.store(1)", OK, &[]),
        row("let s = lab.secret(); lab.store(s)", BLOCKED, &[]),
        row("let t = lab.untrusted_text(); lab.store(len(t))", BLOCKED, &[]),
        row("let s = lab.secret(); if s > 0 { lab.store(1) } else { lab.store(2) }", BLOCKED, &[]),
    ]);
}

/// Runs `plan` (which must end with a label error) and returns the error and its source.
fn label_error(plan: &str) -> (cordon_runtime::RunError, Source) {
    let source = Source::new(Some(POLICY), plan);
    let mut host = lab(SECRET);
    let report = run(&source.checked(), &mut host);
    let Err(e) = report.result else { panic!("not blocked: {plan}") };
    assert_eq!(e.kind.code().as_str(), "label-flow", "{e}");
    assert!(host.calls_of("publish").is_empty() && host.calls_of("post").is_empty(), "{:?}", host.calls);
    (e, source)
}

#[test]
fn a_label_error_names_the_parameter_and_points_at_where_the_label_came_from() {
    let (e, src) = label_error("let s = lab.secret();\nlet t = s + 1;\nlab.publish(t)");
    assert!(e.message.contains("`Lab.publish`") && e.message.contains("`x`"), "{}", e.message);
    assert!(e.message.contains("alice"), "{}", e.message);
    assert_eq!(src.text(e.span), "lab.publish(t)");
    let related: Vec<(&str, &str)> = e.related.iter().map(|(span, text)| (src.text(*span), text.as_str())).collect();
    assert_eq!(related, [("lab.secret()", "`x` depends on the result of `Lab.secret`")]);
    assert!(e.notes.iter().any(|n| n.contains("secret to alice")), "{:?}", e.notes);
}

#[test]
fn a_label_error_in_a_branch_points_at_the_condition_that_decided_it() {
    let (e, src) = label_error("let s = lab.secret();\nif s > 0 {\n  lab.publish(1)\n}");
    assert_eq!(src.text(e.span), "lab.publish(1)");
    let related: Vec<(&str, &str)> = e.related.iter().map(|(span, text)| (src.text(*span), text.as_str())).collect();
    assert_eq!(related, [("lab.secret()", "the decision to make this call depends on the result of `Lab.secret`")]);
}

#[test]
fn a_label_error_on_untrusted_text_says_who_must_vouch_for_it() {
    let (e, src) = label_error("let t = lab.untrusted_text();\nlab.post(t)");
    assert!(e.message.contains("`text`"), "{}", e.message);
    assert_eq!(e.related.len(), 1);
    assert_eq!(src.text(e.related[0].0), "lab.untrusted_text()");
    assert!(e.notes.iter().any(|n| n.contains("vouched for by no one") && n.contains("user")), "{:?}", e.notes);
}

#[test]
fn a_blocked_call_is_in_the_trace_with_its_code() {
    let source = Source::new(Some(POLICY), "let s = lab.secret(); lab.publish(s)");
    let report = run(&source.checked(), &mut lab(SECRET));
    let decisions: Vec<String> = report
        .trace
        .iter()
        .map(|e| match &e.decision {
            cordon_runtime::Decision::Allowed => format!("allowed {}", e.tool),
            cordon_runtime::Decision::Blocked { code, .. } => format!("blocked {} [{code}]", e.tool),
            cordon_runtime::Decision::Returned => {
                format!("returned {}", e.result_label().map(|(label, _)| label).unwrap_or_default())
            }
            cordon_runtime::Decision::Failed { reason } => format!("failed {reason}"),
        })
        .collect();
    assert_eq!(
        decisions,
        ["allowed Lab.secret", "returned <secrecy: alice, integrity: false>", "blocked Lab.publish [label-flow]"]
    );
}

#[test]
fn a_parameter_named_user_does_not_hide_the_label_function() {
    // `secret(user())` is secret to the principal the agent acts for (`user` here), whatever
    // the argument `user` says: the user's own number may be told, under any name.
    assert_checked(&[
        row(r#"lab.tell("mallory", lab.mine())"#, OK, &[]),
        row(r#"lab.tell("user", lab.mine())"#, OK, &[]),
        row(r#"lab.tell("mallory", lab.secret())"#, BLOCKED, &[]),
    ]);
}

#[test]
fn a_constant_under_a_secret_decision_is_blamed_on_the_decision() {
    let (e, src) = label_error("let s = lab.secret();\nif s > 0 {\n  lab.publish(1)\n}");
    assert!(e.message.contains("the decision to make this call depends on"), "{}", e.message);
    assert!(!e.message.contains("carries"), "a constant carries nothing: {}", e.message);
    assert_eq!(src.text(e.span), "lab.publish(1)");
}

#[test]
fn a_label_error_after_unlabel_points_at_the_unlabel() {
    let (e, src) = label_error("let b = to_labeled { lab.secret() };\nlet v = unlabel(b);\nlab.publish(1)");
    let related: Vec<&str> = e.related.iter().map(|(span, _)| src.text(*span)).collect();
    assert!(related.contains(&"unlabel(b)"), "{related:?}");
}

#[test]
fn option_and_result_combinators_keep_the_labels_a_match_would() {
    assert_checked(&[
        // A secret inside an option stays secret through `map`, `and_then`, `ok_or`, `map_err`.
        row("let s = lab.secret(); lab.publish(Some(s).map(|x| x + 1).unwrap_or(0))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(Some(s).and_then(|x| Some(x)).unwrap_or(0))", BLOCKED, &[]),
        row("let s = lab.secret(); lab.publish(Some(s).ok_or(0).unwrap_or(0))", BLOCKED, &[]),
        row(
            "let s = lab.secret(); let r: Result[Int, Int] = Err(s); lab.publish(if r.map_err(|e| e * 2).is_err() { 1 } else { 0 })",
            OK,
            &["publish(1)"],
        ),
        // Whether the option holds anything decides which function runs: a secret choice
        // labels the result even where the function ignores its argument.
        row(
            "let s = lab.secret(); let o = if s > 3 { Some(1) } else { None }; lab.publish(o.map(|x| 5).unwrap_or(5))",
            BLOCKED,
            &[],
        ),
        row(
            "let s = lab.secret(); let o = if s > 3 { Some(1) } else { None }; lab.publish(if o.ok_or(2).is_ok() { 1 } else { 0 })",
            BLOCKED,
            &[],
        ),
        // A public option mapped by a function that does not look at the secret stays public.
        row("let s = lab.secret(); lab.publish(Some(2).map(|x| x * 3).unwrap_or(0))", OK, &["publish(6)"]),
        row("lab.publish(parse_int(\"12\").ok_or(\"nan\").map(|x| x + 1).unwrap_or(0))", OK, &["publish(13)"]),
    ]);
}

/// The whole label an answer's event carries is the one worked out from the answer itself, and
/// an event read back from a saved run (which does not keep it) works out the same.
#[test]
fn an_answers_event_carries_its_whole_label_and_a_saved_one_finds_it_again() {
    let source = Source::new(Some(POLICY), "let s = lab.secret(); let t = lab.untrusted_text(); ()");
    let report = run(&source.checked(), &mut lab(SECRET));
    let answers: Vec<_> = report.trace.iter().filter(|e| e.result().is_some()).collect();
    assert_eq!(answers.len(), 2);
    for event in answers {
        let whole = cordon_runtime::deep_label(event.result().unwrap());
        assert!(!whole.is_bottom(), "{}", event.tool);
        assert_eq!(event.answer_label().as_ref(), Some(&whole), "{}", event.tool);
        let saved: cordon_runtime::TraceEntry = serde_json::from_value(serde_json::to_value(event).unwrap()).unwrap();
        assert_eq!(saved.answer_label(), Some(whole), "{}", event.tool);
    }
}
