//! What the interpreter computes: tables of small programs and the value each prints, or the
//! code of the run-time error it ends with. Each table's programs are checked first (so they
//! are ones the checker accepts); the last table runs programs the checker would refuse, to show
//! the run-time guards on their own.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod common;

use common::{Source, ending, no_tools, run};

/// Runs every `(program, expected)` row and reports all the rows that disagree at once.
fn assert_table(rows: &[(&str, &str)], compile: impl Fn(&Source) -> cordon_runtime::Program) {
    let mut wrong = Vec::new();
    for (plan, expected) in rows {
        let program = compile(&Source::new(None, plan));
        let got = ending(&run(&program, &mut no_tools()));
        if got != *expected {
            wrong.push(format!("{plan}\n    expected {expected}\n    got      {got}"));
        }
    }
    assert!(wrong.is_empty(), "{} of {} programs disagree:\n{}", wrong.len(), rows.len(), wrong.join("\n"));
}

fn assert_checked(rows: &[(&str, &str)]) {
    assert_table(rows, Source::checked);
}

#[test]
fn integer_and_float_arithmetic_computes_exact_results() {
    assert_checked(&[
        ("1 + 2 * 3", "7"),
        ("(1 + 2) * 3", "9"),
        ("10 - 20", "-10"),
        ("7 / 2", "3"),
        ("-7 / 2", "-3"),
        ("7 % 3", "1"),
        ("-7 % 3", "-1"),
        ("-(3)", "-3"),
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775807 - 1", "-9223372036854775808"),
        ("1.5 + 2.25", "3.75"),
        ("1.0 / 4.0", "0.25"),
        ("7.5 % 2.0", "1.5"),
        ("abs(-4)", "4"),
        ("min(3, -2)", "-2"),
        ("max(3, -2)", "3"),
        ("2.5.max(1.5)", "2.5"),
        ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3 && 1 != 2 && 2 == 2", "true"),
        ("!(1 < 2) || false", "false"),
        ("1.5 < 2.5", "true"),
    ]);
}

#[test]
fn strings_count_characters_and_compare_by_content() {
    assert_checked(&[
        (r#""ab" + "cd""#, r#""abcd""#),
        // A literal on either side joins the other operand, shared or not, without changing it.
        (r#""item" + 7.to_string() + "!""#, r#""item7!""#),
        (r#"let s = "x"; let t = s + "y"; let u = "w" + s; [s, t, u]"#, r#"["x", "xy", "wx"]"#),
        (r#"["a", "b"].map(|s: String| "<" + s + ">").join("")"#, r#""<a><b>""#),
        (r#"len("héllo")"#, "5"),
        (r#""日本語".len()"#, "3"),
        (r#""".is_empty()"#, "true"),
        (r#""hello".contains("ell")"#, "true"),
        (r#""hello".starts_with("he") && "hello".ends_with("lo")"#, "true"),
        (r#""MiXed".to_upper() + "MiXed".to_lower()"#, r#""MIXEDmixed""#),
        (r#""  pad  ".trim()"#, r#""pad""#),
        (r#""a,b,,c".split(",")"#, r#"["a", "b", "", "c"]"#),
        (r#""abc".split("")"#, r#"["a", "b", "c"]"#),
        (r#"["x", "y", "z"].join("-")"#, r#""x-y-z""#),
        (r#"to_string(-12) + to_string(true) + to_string(1.5)"#, r#""-12true1.5""#),
        (r#"parse_int(" 42 ")"#, "Some(42)"),
        (r#"parse_int("4x2")"#, "None"),
        (r#""a\n\"q\"""#, r#""a\n\"q\"""#),
        (r#"concat("ab", "cd")"#, r#""abcd""#),
        // Strings are ordered character by character, by Unicode scalar value; a prefix
        // comes first.
        (r#""a" < "b" && "abc" < "abd" && "ab" < "abc" && "b" > "abc""#, "true"),
        (r#""Z" < "a" && "z" < "\u{e9}" && "\u{e9}" < "\u{65e5}" && "\u{ff}" < "\u{100}""#, "true"),
        (r#""" <= "" && "" >= "" && !("" < "") && "b" >= "a" && "a" <= "a""#, "true"),
    ]);
}

#[test]
fn string_builtins_work_on_characters_not_bytes() {
    assert_checked(&[
        (r#""hello".find("l")"#, "Some(2)"),
        (r#""héllo wörld".find("w")"#, "Some(6)"),
        (r#""abc".find("")"#, "Some(0)"),
        (r#""abc".find("x")"#, "None"),
        (r#""a-b-c".replace("-", "+")"#, r#""a+b+c""#),
        (r#""ab".replace("", ".")"#, r#"".a.b.""#),
        (r#""日本日本".replace("本", "")"#, r#""日日""#),
        (r#""héllo".slice(1, 4)"#, r#""éll""#),
        (r#""héllo".slice(5, 5)"#, r#""""#),
        (r#""日本語".slice(0, 3)"#, r#""日本語""#),
        (r#"let s = "abcdef"; if s.len() >= 3 { s.slice(s.len() - 3, s.len()) } else { s }"#, r#""def""#),
        ("[1, 2, 3, 4].slice(1, 3)", "[2, 3]"),
        (r#""a\nb\r\nc\n".lines()"#, r#"["a", "b", "c"]"#),
        (r#""  two  words\t here ".words()"#, r#"["two", "words", "here"]"#),
        (r#""".words()"#, "[]"),
        (r#""ab".repeat(3)"#, r#""ababab""#),
        (r#""ab".repeat(0)"#, r#""""#),
        (r#""7".pad_left(3, "0")"#, r#""007""#),
        (r#""é".pad_right(3, "·")"#, r#""é··""#),
        (r#""long".pad_left(2, " ")"#, r#""long""#),
        (r#""long".pad_left(-5, " ")"#, r#""long""#),
        // f-strings: each `{expr}` is the expression's `to_string`; `{{` and `}}` are braces.
        (r#"let n = 3; let repo = "cordon"; f"{n} open issues in {repo}""#, r#""3 open issues in cordon""#),
        (r#"f"{1 + 2}{true}{1.5}""#, r#""3true1.5""#),
        (r#"f"{{literal}} {"nested"}""#, r#""{literal} nested""#),
        (r#"f"""#, r#""""#),
        (r#"f"plain""#, r#""plain""#),
        (r#"let xs = ["a", "b"]; f"[{xs.join(", ")}] {f"{xs.len()}"}""#, r#""[a, b] 2""#),
        (r#"f"{ {let x = 2; x * 2} }é\n""#, r#""4é\n""#),
    ]);
    assert_table(
        &[
            (r#""abc".slice(2, 1)"#, "out-of-range"),
            (r#""abc".slice(-1, 2)"#, "out-of-range"),
            (r#""日本".slice(0, 3)"#, "out-of-range"),
            ("[1, 2].slice(0, 9223372036854775807)", "out-of-range"),
            (r#""ab".repeat(-1)"#, "out-of-range"),
            (r#""ab".pad_left(5, "")"#, "out-of-range"),
            (r#""ab".pad_left(5, "xy")"#, "out-of-range"),
        ],
        Source::unchecked,
    );
}

#[test]
fn list_builtins_compute_what_their_names_say() {
    assert_checked(&[
        ("[1, 2, 3].len()", "3"),
        ("let xs: List[Int] = []; xs.is_empty()", "true"),
        ("[1, 2, 3][1]", "2"),
        ("[1, 2, 3].get(2)", "Some(3)"),
        ("[1, 2, 3].get(3)", "None"),
        ("[1, 2, 3].get(-1)", "None"),
        ("[1, 2].push(3)", "[1, 2, 3]"),
        ("let xs = [1]; let ys = xs.push(2); xs", "[1]"),
        ("[1, 2].concat([3])", "[1, 2, 3]"),
        ("[1, 2, 3].contains(2)", "true"),
        ("[1, 2, 3].map(|x| x * 10)", "[10, 20, 30]"),
        ("[1, 2, 3, 4].filter(|x| x % 2 == 0)", "[2, 4]"),
        (r#"[1, 2, 3].fold("", |acc, x| acc + to_string(x))"#, r#""123""#),
        ("[1, 2, 3].fold(0, |acc, x| acc * 10 + x)", "123"),
        ("[1, 2, 3].any(|x| x > 2)", "true"),
        ("[1, 2, 3].all(|x| x > 2)", "false"),
        ("let xs: List[Int] = []; xs.all(|x| x > 2)", "true"),
        ("[4, 5, 6].sum()", "15"),
        ("[1, 2, 3].reverse()", "[3, 2, 1]"),
        ("range(2, 5)", "[2, 3, 4]"),
        ("range(5, 2)", "[]"),
        ("[7, 8].first()", "Some(7)"),
        ("[7, 8].last()", "Some(8)"),
        ("let xs: List[Int] = []; xs.first()", "None"),
        ("[[1, 2], [3]].map(|xs| xs.sum())", "[3, 3]"),
        ("let total = 0; for x in [1, 2, 3] { let t = total + x; }; total", "0"),
        ("[(1, \"a\"), (2, \"b\")].map(|p| p.1)", r#"["a", "b"]"#),
        // A closure `map` runs in place in its list loop: its `let`s, the names around it, a
        // closure inside it, and the same closure on an Option.
        ("let k = 3; [1, 2].map(|x| { let y = x * k; [y, y + 1].map(|z| z + x) })", "[[4, 5], [8, 9]]"),
        ("let x = 100; [1, 2].map(|x| x + 1).map(|y| y + x)", "[102, 103]"),
        ("Some(2).map(|x| x * 10)", "Some(20)"),
    ]);
}

#[test]
fn collection_builtins_sort_pair_and_cut_lists() {
    assert_checked(&[
        ("[3, 1, 2].sort()", "[1, 2, 3]"),
        (r#"["b", "é", "a", "B"].sort()"#, r#"["B", "a", "b", "é"]"#),
        ("[(2, \"b\"), (1, \"z\"), (2, \"a\")].sort()", r#"[(1, "z"), (2, "a"), (2, "b")]"#),
        ("[2.5, -1.0, 0.5].sort()", "[-1.0, 0.5, 2.5]"),
        ("[true, false].sort()", "[false, true]"),
        // Stable: equal keys keep their order.
        (r#"["bb", "a", "cc", "d"].sort_by(|s| s.len())"#, r#"["a", "d", "bb", "cc"]"#),
        (r#"["bb", "a", "cc", "d"].sort_by(|s| -s.len())"#, r#"["bb", "cc", "a", "d"]"#),
        ("[5, -3, 5, 0].sort_by(|x| x * 0)", "[5, -3, 5, 0]"),
        ("[5, -3, 9223372036854775807, 0].sort_by(|x| x)", "[-3, 0, 5, 9223372036854775807]"),
        (r#"["bb", "a", "cc", "d"].min_by(|s| s.len())"#, r#"Some("a")"#),
        (r#"["bb", "a", "cc", "d"].max_by(|s| s.len())"#, r#"Some("bb")"#),
        ("let xs: List[Int] = []; xs.max_by(|x| x)", "None"),
        ("let xs: List[Int] = []; xs.sort()", "[]"),
        ("[3, 1, 3, 2, 1].unique()", "[3, 1, 2]"),
        (r#"["a", "b"].enumerate()"#, r#"[(0, "a"), (1, "b")]"#),
        (r#"[1, 2, 3].zip(["a", "b"])"#, r#"[(1, "a"), (2, "b")]"#),
        ("[1, 2, 3].take(2)", "[1, 2]"),
        ("[1, 2, 3].take(9)", "[1, 2, 3]"),
        ("[1, 2, 3].take(-1)", "[]"),
        ("[1, 2, 3].skip(2)", "[3]"),
        ("[1, 2, 3].skip(9)", "[]"),
        ("[1, 2, 3].skip(-4)", "[1, 2, 3]"),
        ("[5, 3, 4].sort().take(2).sum()", "7"),
    ]);
    assert_table(
        &[
            ("[[1], [2]].sort()", "runtime-type-error"),
            ("[1, 2].sort_by(|x| [x])", "runtime-type-error"),
            ("[(1, 2)].unique()", "[(1, 2)]"),
        ],
        Source::unchecked,
    );
}

#[test]
fn regular_expressions_match_in_linear_time_and_refuse_bad_patterns() {
    assert_checked(&[
        (r#""ann@example.com".matches("^[a-z]+@example\\.com$")"#, "true"),
        (r#""ann@example.com.evil".matches("^[a-z]+@example\\.com$")"#, "false"),
        (r#""a1 b22 c333".find_all("[0-9]+")"#, r#"["1", "22", "333"]"#),
        (r#""no digits".find_all("[0-9]+")"#, "[]"),
        (r#""日本 語".find_all("\\w+")"#, r#"["日本", "語"]"#),
        (r#""2024-05-06".captures("(\\d+)-(\\d+)-(\\d+)")"#, r#"Some(["2024-05-06", "2024", "05", "06"])"#),
        (r#""x".captures("(a)?x")"#, r#"Some(["x", ""])"#),
        (r#""x".captures("y")"#, "None"),
        // A pattern that backtracking engines take exponential time on.
        (r#""aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches("^(a+)+$")"#, "false"),
    ]);
    assert_table(
        &[
            (r#"let p = "("; "x".matches(p)"#, "invalid-pattern"),
            (r#"let p = "(a)\\1"; "aa".matches(p)"#, "invalid-pattern"),
            (r#"let p = "a".repeat(1001); "a".matches(p)"#, "invalid-pattern"),
            (r#"let p = "\\w{1000}".repeat(3); "a".find_all(p)"#, "invalid-pattern"),
        ],
        Source::checked,
    );
}

#[test]
fn group_by_and_count_by_keep_first_appearance_order() {
    assert_checked(&[
        (
            r#"["ann", "al", "bob", "cy", "dan"].group_by(|n| n.len())"#,
            r#"[(3, ["ann", "bob", "dan"]), (2, ["al", "cy"])]"#,
        ),
        (r#"["ann", "al", "bob"].group_by(|n| n.starts_with("a"))"#, r#"[(true, ["ann", "al"]), (false, ["bob"])]"#),
        ("[3, 1, 3, 3, 2].count_by(|x| x)", "[(3, 3), (1, 1), (2, 1)]"),
        ("[1, 2, 3, 4].count_by(|x| x % 2 == 0)", "[(false, 2), (true, 2)]"),
        ("let xs: List[Int] = []; xs.group_by(|x| x)", "[]"),
    ]);
}

#[test]
fn maps_are_persistent_and_ordered_by_key() {
    assert_checked(&[
        (r#"let m = map_from([("b", 2), ("a", 1), ("b", 3)]); m.entries()"#, r#"[("a", 1), ("b", 3)]"#),
        (
            r#"let m = map_from([("b", 2), ("a", 1)]); (m.get("a"), m.get("z"), m.len(), m.contains_key("b"))"#,
            "(Some(1), None, 2, true)",
        ),
        (
            r#"let m = map_from([("b", 2)]); let n = m.insert("a", 0).insert("b", 5); (m.entries(), n.entries())"#,
            r#"([("b", 2)], [("a", 0), ("b", 5)])"#,
        ),
        (
            r#"let m = map_from([(1, "x"), (2, "y")]); (m.remove(1).keys(), m.remove(9).values(), m.keys())"#,
            r#"([2], ["x", "y"], [1, 2])"#,
        ),
        (r#"let m: Map[String, Int] = map_from(["a", "b", "a"].count_by(|w| w)); m.get("a").unwrap_or(0)"#, "2"),
        (r#"let xs: List[(String, Int)] = []; let m = map_from(xs); (m.is_empty(), m.len())"#, "(true, 0)"),
        (r#"map_from([((2, "b"), 1), ((1, "z"), 2)]).keys()"#, r#"[(1, "z"), (2, "b")]"#),
        (r#"map_from([(1, 2)]) == map_from([(1, 3)]).insert(1, 2)"#, "true"),
        (r#"map_from([("b", 2), ("a", 1)])"#, r#"map_from([("a", 1), ("b", 2)])"#),
    ]);
}

#[test]
fn options_and_results_are_ordinary_enums() {
    assert_checked(&[
        ("let none: Option[Int] = None; Some(1).is_some() && none.is_none()", "true"),
        ("let r: Result[Int, String] = Ok(1); r.is_ok()", "true"),
        (r#"let r: Result[Int, String] = Err("no"); r.is_err()"#, "true"),
        ("Some(4).unwrap_or(0)", "4"),
        ("let o: Option[Int] = None; o.unwrap_or(9)", "9"),
        (r#"let r: Result[Int, String] = Err("bad"); match r { Ok(n) => n, Err(e) => len(e) }"#, "3"),
    ]);
}

#[test]
fn records_tuples_and_enums_build_and_take_apart() {
    assert_checked(&[
        ("type P = { x: Int, y: Int }\nlet p = P { x: 1, y: 2 }; p.x + p.y", "3"),
        ("type P = { x: Int, y: Int }\nP { y: 2, x: 1 } == P { x: 1, y: 2 }", "true"),
        ("let t = (1, \"a\", true); t.1", r#""a""#),
        ("let (a, b) = (1, 2); a - b", "-1"),
        ("(1,)", "(1,)"),
        ("enum Shape { Dot, Rect(Int, Int) }\nShape::Rect(2, 3)", "Shape::Rect(2, 3)"),
        (
            "enum Shape { Dot, Rect(Int, Int) }\n\
             fn area(s: Shape) -> Int { match s { Shape::Dot => 0, Shape::Rect(w, h) => w * h } }\n\
             area(Shape::Rect(2, 3)) + area(Shape::Dot)",
            "6",
        ),
        ("type P = { x: Int }\nP { x: 1 } == P { x: 1 }", "true"),
        ("[1, 2] == [1, 2] && (1, \"a\") != (1, \"b\")", "true"),
        ("enum E { A(Int), B }\nE::A(1) == E::A(1) && E::A(1) != E::B", "true"),
    ]);
}

#[test]
fn match_tries_arms_in_order_with_guards_and_nested_patterns() {
    assert_checked(&[
        (r#"match 3 { 1 => "one", n if n > 2 => "big", _ => "other" }"#, r#""big""#),
        (r#"match 2 { 1 => "one", n if n > 2 => "big", _ => "other" }"#, r#""other""#),
        (r#"match "b" { "a" => 1, "b" => 2, _ => 3 }"#, "2"),
        ("match true { true => 1, false => 0 }", "1"),
        ("match (1, Some(2)) { (1, Some(n)) if n > 5 => 0, (1, Some(n)) => n, _ => -1 }", "2"),
        ("match Some(Some(4)) { Some(Some(n)) => n, Some(None) => 0, None => -1 }", "4"),
        ("match Some((1, 2)) { Some((a, b)) => a + b, None => 0 }", "3"),
        (
            "enum Expr { Num(Int), Neg(Expr), Add(Expr, Expr) }\n\
             fn eval(e: Expr) -> Int { match e { Expr::Num(n) => n, Expr::Neg(x) => 0 - eval(x), \
             Expr::Add(a, b) => eval(a) + eval(b) } }\n\
             eval(Expr::Add(Expr::Num(5), Expr::Neg(Expr::Num(2))))",
            "3",
        ),
        ("match () { () => 1 }", "1"),
        ("let x = match 1 { _ => 5 }; x", "5"),
    ]);
}

#[test]
fn if_and_for_and_blocks_have_the_documented_values() {
    assert_checked(&[
        (r#"let x = 0; if x > 0 { "pos" } else if x == 0 { "zero" } else { "neg" }"#, r#""zero""#),
        ("if false { () }", "()"),
        ("for x in [1, 2] { let y = x; }", "()"),
        ("{ let a = 1; let b = a + 1; b * 2 }", "4"),
        ("let x = 1; let x = x + 1; x", "2"),
        ("{ 1; 2 }", "2"),
    ]);
}

#[test]
fn closures_capture_values_and_functions_recurse() {
    assert_checked(&[
        ("let k = 10; let add = |x: Int| x + k; add(5)", "15"),
        ("let k = 10; let add = |x: Int| x + k; let k = 0; add(5)", "15"),
        ("fn adder(k: Int) -> fn(Int) -> Int { |x: Int| x + k }\nadder(3)(4)", "7"),
        ("let twice = |f: fn(Int) -> Int, x: Int| f(f(x)); twice(|x: Int| x * 3, 2)", "18"),
        ("fn inc(x: Int) -> Int { x + 1 }\n[1, 2].map(inc)", "[2, 3]"),
        ("fn fact(n: Int) -> Int { if n <= 1 { 1 } else { n * fact(n - 1) } }\nfact(20)", "2432902008176640000"),
        (
            "fn even(n: Int) -> Bool { if n == 0 { true } else { odd(n - 1) } }\n\
             fn odd(n: Int) -> Bool { if n == 0 { false } else { even(n - 1) } }\n\
             even(10) && odd(7)",
            "true",
        ),
        ("fn sq(x: Int) -> Int { x * x }\n3.sq()", "9"),
        ("let a = 1; let f = || { let g = |y: Int| y + a; g(1) }; f()", "2"),
        ("let fs = [|x: Int| x + 1, |x: Int| x * 2]; fs.map(|f| f(5))", "[6, 10]"),
    ]);
}

#[test]
fn constants_are_computed_once_on_first_use() {
    assert_checked(&[
        ("const A: Int = 2;\nconst B: Int = A * 3;\nB + A", "8"),
        ("const XS: List[Int] = [1, 2, 3];\nfn total() -> Int { XS.sum() }\ntotal() + total()", "12"),
        ("const GREETING: String = \"hi\";\nGREETING + \"!\"", r#""hi!""#),
    ]);
}

#[test]
fn casts_convert_between_int_and_float_and_refuse_what_does_not_fit() {
    assert_checked(&[
        ("3 as Float", "3.0"),
        ("3.9 as Int", "3"),
        ("-3.9 as Int", "-3"),
        ("(1 as Float) / 2.0", "0.5"),
        ("1e300 as Int", "arithmetic-error"),
        ("(0.0 / 0.0) as Int", "arithmetic-error"),
        ("(1.0 / 0.0) as Int", "arithmetic-error"),
        ("9223372036854775807.0 as Int", "arithmetic-error"),
        ("-9223372036854775808.0 as Int", "-9223372036854775808"),
    ]);
}

#[test]
fn integer_overflow_ends_the_run_instead_of_wrapping() {
    assert_checked(&[
        ("9223372036854775807 + 1", "arithmetic-error"),
        ("let m = -9223372036854775807 - 1; m - 1", "arithmetic-error"),
        ("4611686018427387904 * 2", "arithmetic-error"),
        ("let m = -9223372036854775807 - 1; -m", "arithmetic-error"),
        ("let m = -9223372036854775807 - 1; abs(m)", "arithmetic-error"),
        ("let m = -9223372036854775807 - 1; m / -1", "arithmetic-error"),
        ("let m = -9223372036854775807 - 1; m % -1", "arithmetic-error"),
        ("[9223372036854775807, 1].sum()", "arithmetic-error"),
        ("[9223372036854775807, 1].fold(0, |a, x| a + x)", "arithmetic-error"),
    ]);
}

#[test]
fn division_and_remainder_by_zero_end_the_run() {
    assert_checked(&[
        ("fn d(x: Int, y: Int) -> Int { if y == 0 { 0 } else { x / y } }\nd(1, 0)", "0"),
        ("let xs = [0]; let y = xs.sum(); if y != 0 { 1 / y } else { -1 }", "-1"),
        ("1.0 / 0.0", "inf"),
    ]);
    // The checker needs a proof that the divisor is not zero; without it, the run stops.
    assert_table(
        &[
            ("let z = [0].sum(); 1 / z", "arithmetic-error"),
            ("let z = [0].sum(); 1 % z", "arithmetic-error"),
            ("let z = [0].sum(); 0 / z", "arithmetic-error"),
        ],
        Source::unchecked,
    );
}

#[test]
fn out_of_range_indexes_end_the_run() {
    assert_checked(&[
        ("let xs = [1, 2]; let i = 1; if i < xs.len() && i >= 0 { xs[i] } else { -1 }", "2"),
        ("let xs = [1, 2]; let i = 5; if i < xs.len() && i >= 0 { xs[i] } else { -1 }", "-1"),
    ]);
    assert_table(
        &[
            ("[1, 2][2]", "out-of-range"),
            ("[1, 2][-1]", "out-of-range"),
            ("let xs: List[Int] = []; xs[0]", "out-of-range"),
            ("[1, 2][9223372036854775807]", "out-of-range"),
        ],
        Source::unchecked,
    );
}

#[test]
fn a_constant_that_depends_on_itself_ends_with_a_cycle_error_not_a_hang() {
    let rows = [
        ("const A: Int = f();\nfn f() -> Int { A + 1 }\nA", "constant-cycle"),
        ("const A: Int = B;\nconst B: Int = A;\nA", "constant-cycle"),
        ("const A: Int = g(2);\nfn g(n: Int) -> Int { if n == 0 { A } else { g(n - 1) } }\nA + 1", "constant-cycle"),
    ];
    // Whether or not the checker notices the cycle, the run must end with `constant-cycle`.
    assert_table(&rows, Source::unchecked);
}

#[test]
fn code_the_checker_would_refuse_fails_cleanly_at_run_time() {
    assert_table(
        &[
            ("1 + true", "runtime-type-error"),
            (r#"1 + "a""#, "runtime-type-error"),
            (r#""a" + 1"#, "runtime-type-error"),
            (r#""a" - "b""#, "runtime-type-error"),
            ("let f = 3; f(1)", "runtime-type-error"),
            ("let f = |x: Int| x; f(1, 2)", "runtime-type-error"),
            ("if 1 { 2 } else { 3 }", "runtime-type-error"),
            ("match 5 { 1 => 1 }", "runtime-type-error"),
            ("(1, 2).5", "runtime-type-error"),
            ("type P = { x: Int }\nP { x: 1 }.y", "runtime-type-error"),
            ("for x in 5 { () }", "runtime-type-error"),
            ("[1].map(|x| x)(1)", "runtime-type-error"),
            ("[1, 2].filter(|x| x)", "runtime-type-error"),
            ("[1, 2].any(|x| 1)", "runtime-type-error"),
            ("len(5)", "runtime-type-error"),
            ("unlabel(5)", "runtime-type-error"),
            ("\"x\" as Int", "runtime-type-error"),
            ("agent[Int](\"count\")", "hole-unfilled"),
        ],
        Source::unchecked,
    );
}

#[test]
fn decimals_are_exact_and_stop_rather_than_round() {
    assert_checked(&[
        ("0.1d + 0.2d", "0.3d"),
        ("0.1d + 0.2d == 0.3d", "true"),
        ("1000.00d - 0.01d", "999.99d"),
        ("12.50d * 3d", "37.50d"),
        ("1.50d * 2.0d", "3.000d"),
        ("0.0000000000000010d * 0.0000000000010d", "0.000000000000000000000000001d"),
        ("10d / 4d", "2.5d"),
        ("-(2.5d)", "-2.5d"),
        ("1000.00d == 1000d", "true"),
        ("1000.01d > 1000.00d", "true"),
        ("(7 as Decimal) / 2d", "3.5d"),
        ("to_string(12.50d)", r#""12.50""#),
        (r#"parse_decimal(" 12.50 ")"#, "Some(12.50d)"),
        (r#"parse_decimal("1e3")"#, "None"),
        (r#"parse_decimal("0.1.2")"#, "None"),
        (r#"parse_decimal("")"#, "None"),
        (r#"parse_decimal("79228162514264337593543950336")"#, "None"),
        ("round(2.345d, 2)", "2.35d"),
        ("round(-2.345d, 2)", "-2.35d"),
        ("div_round(100d, 3d, 2)", "33.33d"),
        ("div_round(2d, 3d, 0)", "1d"),
        ("[2.5d, 0.25d, 10d].sort()", "[0.25d, 2.5d, 10d]"),
        ("[1.5d, 2d].fold(0d, |t, x| t + x)", "3.5d"),
        ("abs(-1.5d).max(1d)", "1.5d"),
        ("f\"{1.50d} EUR\"", r#""1.50 EUR""#),
        // Overflow, inexact quotients and bad places end the run; nothing is rounded silently.
        ("79228162514264337593543950335d + 1d", "arithmetic-error"),
        ("-79228162514264337593543950335d - 1d", "arithmetic-error"),
        ("79228162514264337593543950334d + 0.5d", "arithmetic-error"),
        ("79228162514264337593543950335d * 2d", "arithmetic-error"),
        ("0.0000000000000000000000000001d * 0.1d", "arithmetic-error"),
        ("1d / 3d", "arithmetic-error"),
        ("round(1.5d, -1)", "arithmetic-error"),
        ("round(1.5d, 29)", "arithmetic-error"),
        ("div_round(1d, 3d, 100)", "arithmetic-error"),
        ("div_round(1d, 0d, 2)", "arithmetic-error"),
    ]);
    // The checker needs a proof that a divisor is not zero; without it, the run stops.
    assert_table(
        &[("let z = [0d].fold(0d, |t, x| t + x); 1d / z", "arithmetic-error"), ("1.5d % 1d", "runtime-type-error")],
        Source::unchecked,
    );
}

#[test]
fn option_and_result_combinators_work_like_the_match_they_stand_for() {
    assert_checked(&[
        ("Some(2).map(|x| x * 10)", "Some(20)"),
        ("let o: Option[Int] = None; o.map(|x| x + 1)", "None"),
        ("let r: Result[Int, String] = Ok(2); r.map(|x| x + 1)", "Ok(3)"),
        (r#"let r: Result[Int, String] = Err("bad"); r.map(|x| x + 1)"#, r#"Err("bad")"#),
        (r#"let r: Result[Int, String] = Err("bad"); r.map_err(|e| len(e))"#, "Err(3)"),
        ("let r: Result[Int, String] = Ok(2); r.map_err(|e| len(e))", "Ok(2)"),
        ("Some(4).and_then(|x| if x > 3 { Some(x * 2) } else { None })", "Some(8)"),
        ("Some(1).and_then(|x| if x > 3 { Some(x * 2) } else { None })", "None"),
        (r#"let r: Result[Int, String] = Ok(1); r.and_then(|x| if x > 0 { Ok(x * 2) } else { Err("neg") })"#, "Ok(2)"),
        (
            r#"let r: Result[Int, String] = Err("e"); r.and_then(|x| if x > 0 { Ok(x * 2) } else { Err("neg") })"#,
            r#"Err("e")"#,
        ),
        (r#"parse_int("12").ok_or("not a number")"#, "Ok(12)"),
        (r#"parse_int("x").ok_or("not a number")"#, r#"Err("not a number")"#),
        (r#"parse_decimal("2.50").map(|d| d * 2d).unwrap_or(0d)"#, "5.00d"),
        ("[1, 2].map(|x| x * 2)", "[2, 4]"),
        ("let xs: List[Int] = []; xs.map(|x| x * 2)", "[]"),
        ("[Some(1), None].map(|o| o.map(|x| x + 1))", "[Some(2), None]"),
    ]);
    // Unchecked, a combinator on something else ends the run cleanly.
    assert_table(
        &[
            ("5.map(|x| x)", "runtime-type-error"),
            ("and_then(5, |x| x)", "runtime-type-error"),
            ("map_err([1], |x| x)", "runtime-type-error"),
            ("ok_or([1], 2)", "runtime-type-error"),
        ],
        Source::unchecked,
    );
}

#[test]
fn a_loop_invariant_changes_nothing_at_run_time() {
    assert_checked(&[
        ("let n = 0; for x in [1, -2, 3] with n: {v: Int | v >= 0} { if x > 0 { n + x } else { n } }", "4"),
        ("let n = 5; let xs: List[Int] = []; for x in xs with n: {v: Int | v >= 0} { n + 1 }", "5"),
    ]);
}
