//! The Z3 backend, query by query: each test states hypotheses, a goal and the expected answer.
#![allow(clippy::unwrap_used, clippy::panic)]

use cordon_smt::{Answer, FuncDecl, Query, Solver, SolverStats, Sort, Term};

// ---- building terms -------------------------------------------------------------------------

fn int(name: &str) -> Term {
    Term::Var(name.into(), Sort::Int)
}
fn boolean(name: &str) -> Term {
    Term::Var(name.into(), Sort::Bool)
}
fn real(name: &str) -> Term {
    Term::Var(name.into(), Sort::Real)
}
fn string(name: &str) -> Term {
    Term::Var(name.into(), Sort::String)
}
fn named(name: &str, sort: &str) -> Term {
    Term::Var(name.into(), Sort::Named(sort.into()))
}
fn n(i: i64) -> Term {
    Term::Int(i)
}
fn s(text: &str) -> Term {
    Term::Str(text.into())
}
fn b(t: Term) -> Box<Term> {
    Box::new(t)
}
fn eq(a: Term, c: Term) -> Term {
    Term::Eq(b(a), b(c))
}
fn ne(a: Term, c: Term) -> Term {
    not(eq(a, c))
}
fn lt(a: Term, c: Term) -> Term {
    Term::Lt(b(a), b(c))
}
fn le(a: Term, c: Term) -> Term {
    Term::Le(b(a), b(c))
}
fn gt(a: Term, c: Term) -> Term {
    lt(c, a)
}
fn not(a: Term) -> Term {
    Term::Not(b(a))
}
fn implies(a: Term, c: Term) -> Term {
    Term::Implies(b(a), b(c))
}
fn add(args: Vec<Term>) -> Term {
    Term::Add(args)
}
fn sub(a: Term, c: Term) -> Term {
    Term::Sub(b(a), b(c))
}
fn mul(a: Term, c: Term) -> Term {
    Term::Mul(b(a), b(c))
}
fn len(a: Term) -> Term {
    Term::StrLen(b(a))
}
fn concat(args: Vec<Term>) -> Term {
    Term::StrConcat(args)
}
fn app(f: &str, args: Vec<Term>) -> Term {
    Term::App(f.into(), args)
}
fn func(name: &str, params: Vec<Sort>, ret: Sort) -> FuncDecl {
    FuncDecl { name: name.into(), params, ret }
}
fn repo() -> Sort {
    Sort::Named("Repo".into())
}
fn session() -> Sort {
    Sort::Named("Session".into())
}

fn query(hypotheses: Vec<Term>, goal: Term) -> Query {
    Query { funcs: vec![], hypotheses, goal }
}
fn query_with(funcs: Vec<FuncDecl>, hypotheses: Vec<Term>, goal: Term) -> Query {
    Query { funcs, hypotheses, goal }
}

// ---- checking answers -----------------------------------------------------------------------

const TIMEOUT_MS: u32 = 10_000;

fn answer(q: &Query) -> Answer {
    Solver::new(TIMEOUT_MS).check(q)
}

#[track_caller]
fn valid(q: Query) {
    assert_eq!(answer(&q), Answer::Valid, "query: {q:?}");
}

/// Asserts the query is invalid and returns its counterexample as a map.
#[track_caller]
fn invalid(q: Query) -> Vec<(String, String)> {
    match answer(&q) {
        Answer::Invalid { counterexample } => {
            let mut sorted = counterexample.clone();
            sorted.sort();
            assert_eq!(sorted, counterexample, "counterexample not sorted by name");
            counterexample
        }
        other => panic!("expected Invalid, got {other:?} for {q:?}"),
    }
}

#[track_caller]
fn value<'a>(cx: &'a [(String, String)], name: &str) -> &'a str {
    cx.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no `{name}` in {cx:?}"))
}

#[track_caller]
fn names(cx: &[(String, String)]) -> Vec<&str> {
    cx.iter().map(|(k, _)| k.as_str()).collect()
}

#[track_caller]
fn ill_sorted(q: Query, why: &str) {
    match answer(&q) {
        Answer::Unknown { reason } => {
            assert!(reason.starts_with("ill-sorted query: "), "{reason}");
            assert!(reason.contains(why), "expected {why:?} in {reason:?}");
        }
        other => panic!("expected an ill-sorted rejection, got {other:?}"),
    }
}

// ---- integers and booleans ------------------------------------------------------------------

#[test]
fn integer_implications() {
    valid(query(vec![gt(int("x"), n(0))], le(n(1), int("x"))));
    valid(query(vec![le(n(0), int("i")), lt(int("i"), int("n"))], le(add(vec![int("i"), n(1)]), int("n"))));
    valid(query(vec![eq(int("y"), mul(n(3), int("x"))), gt(int("x"), n(2))], gt(int("y"), n(8))));
    valid(query(vec![], eq(sub(int("x"), int("x")), n(0))));
    valid(query(vec![eq(Term::Neg(b(int("x"))), n(4))], eq(int("x"), n(-4))));

    let cx = invalid(query(vec![le(n(0), int("x"))], gt(int("x"), n(0))));
    assert_eq!(cx, vec![("x".to_owned(), "0".to_owned())]);

    let cx = invalid(query(vec![lt(int("x"), n(-2)), lt(n(-4), int("x"))], eq(int("x"), n(7))));
    assert_eq!(value(&cx, "x"), "-3");
}

#[test]
fn boolean_implications() {
    valid(query(vec![boolean("p"), implies(boolean("p"), boolean("q"))], boolean("q")));
    valid(query(vec![Term::Or(vec![boolean("p"), boolean("q")]), not(boolean("p"))], boolean("q")));
    valid(query(vec![Term::Bool(false)], eq(n(1), n(2))));
    valid(query(vec![], Term::And(vec![])));
    valid(query(vec![], not(Term::Or(vec![]))));
    valid(query(
        vec![eq(int("y"), Term::Ite(b(boolean("c")), b(n(1)), b(n(2))))],
        Term::And(vec![le(n(1), int("y")), le(int("y"), n(2))]),
    ));

    let cx = invalid(query(vec![Term::Or(vec![boolean("p"), boolean("q")])], boolean("p")));
    assert_eq!(cx, vec![("p".to_owned(), "false".to_owned()), ("q".to_owned(), "true".to_owned())]);
}

#[test]
fn trivial_goals_do_not_reach_z3() {
    let mut solver = Solver::new(TIMEOUT_MS);
    assert_eq!(solver.check(&query(vec![gt(int("x"), n(0))], gt(int("x"), n(0)))), Answer::Valid);
    assert_eq!(solver.check(&query(vec![], Term::Bool(true))), Answer::Valid);
    assert_eq!(solver.stats(), SolverStats { queries: 2, cache_hits: 0, solver_calls: 0, hypotheses: 0 });
}

// ---- integers are mathematical ---------------------------------------------------------------

#[test]
fn i64_extremes() {
    valid(query(vec![eq(int("x"), n(i64::MIN))], lt(int("x"), n(0))));
    valid(query(vec![eq(int("x"), n(i64::MAX))], gt(add(vec![int("x"), n(1)]), int("x"))));
    valid(query(vec![eq(int("x"), n(i64::MIN))], lt(sub(int("x"), n(1)), n(i64::MIN))));
    valid(query(vec![], eq(add(vec![n(i64::MAX), n(i64::MAX)]), mul(n(2), n(i64::MAX)))));

    let cx = invalid(query(vec![], ne(int("x"), n(i64::MIN))));
    assert_eq!(value(&cx, "x"), i64::MIN.to_string());

    // A counterexample below i64::MIN is printed in full.
    let cx =
        invalid(query(vec![lt(int("x"), n(i64::MIN)), lt(n(i64::MIN), add(vec![int("x"), n(2)]))], Term::Bool(false)));
    assert_eq!(value(&cx, "x"), (i128::from(i64::MIN) - 1).to_string());
}

// ---- reals ----------------------------------------------------------------------------------

fn rational(text: &str) -> (i128, i128) {
    match text.split_once('/') {
        Some((num, den)) => (num.parse().unwrap(), den.parse().unwrap()),
        None => (text.parse().unwrap(), 1),
    }
}

#[test]
fn real_implications() {
    let half = Term::real(1, 2);
    valid(query(vec![gt(real("x"), half.clone())], gt(real("x"), Term::real(0, 1))));
    valid(query(vec![], eq(add(vec![Term::real(1, 3), Term::real(1, 6)]), half.clone())));
    valid(query(vec![], eq(Term::real(1, -2), Term::real(-1, 2))));
    valid(query(
        vec![],
        eq(Term::real(i64::MIN.into(), -1), add(vec![Term::real(i64::MAX.into(), 1), Term::real(1, 1)])),
    ));
    valid(query(
        vec![],
        eq(
            Term::real(i64::MIN.into(), 1),
            mul(Term::real(-1, 1), add(vec![Term::real(i64::MAX.into(), 1), Term::real(1, 1)])),
        ),
    ));
    // Reals are dense: no integer-style rounding.
    let cx = invalid(query(vec![lt(Term::real(0, 1), real("x"))], le(Term::real(1, 2), real("x"))));
    let (num, den) = rational(value(&cx, "x"));
    assert!(0 < num && 2 * num < den, "x = {num}/{den}");
    // Integers and reals side by side.
    valid(query(vec![lt(int("i"), n(3)), lt(real("r"), Term::real(3, 1))], Term::And(vec![le(int("i"), n(2))])));
    // Decimals: a 96-bit numerator over 10^28, exactly; 1000.01 is not <= 1000.00.
    let max = (1i128 << 96) - 1;
    let tiny = Term::real(1, 10i128.pow(28));
    valid(query(vec![], lt(Term::real(max - 1, 10i128.pow(28)), Term::real(max, 10i128.pow(28)))));
    valid(query(vec![gt(real("r"), Term::real(0, 1))], le(tiny.clone(), add(vec![real("r"), tiny]))));
    valid(query(vec![le(real("a"), Term::real(100_000, 100))], le(real("a"), Term::real(100_001, 100))));
    invalid(query(vec![le(real("a"), Term::real(100_001, 100))], le(real("a"), Term::real(100_000, 100))));
}

// ---- strings --------------------------------------------------------------------------------

#[test]
fn string_equality_and_length() {
    valid(query(vec![eq(string("s"), s("abc"))], eq(len(string("s")), n(3))));
    valid(query(vec![ne(string("s"), s(""))], gt(len(string("s")), n(0))));
    valid(query(vec![eq(string("s"), concat(vec![string("t"), s("x")]))], gt(len(string("s")), len(string("t")))));
    valid(query(vec![eq(string("s"), string("t"))], eq(len(string("s")), len(string("t")))));
    valid(query(vec![], eq(concat(vec![]), s(""))));
    valid(query(vec![], eq(concat(vec![s("ab"), s("c")]), s("abc"))));
    valid(query(vec![], ne(s("a"), s("b"))));

    let cx = invalid(query(vec![eq(len(string("s")), n(2))], eq(string("s"), s("ab"))));
    let shown = value(&cx, "s");
    assert!(shown.starts_with('"') && shown.ends_with('"') && shown != "\"ab\"", "s = {shown}");
    assert_eq!(shown.chars().count(), 4, "s = {shown}");
}

#[test]
fn string_lengths_count_characters() {
    valid(query(vec![eq(string("s"), s("é🦀"))], eq(len(string("s")), n(2))));
    valid(query(vec![eq(string("s"), s("a\0b\n"))], eq(len(string("s")), n(4))));
    // Z3 reads `\u{..}` escapes; a backslash in Cordon text is just a backslash.
    valid(query(vec![eq(string("s"), s("\\u{41}"))], eq(len(string("s")), n(6))));
    valid(query(vec![], ne(s("\\u{41}"), s("A"))));
    // Above U+2FFFF (tag characters, as in flag emoji): beyond Z3 4.8's alphabet, still one each.
    valid(query(vec![eq(string("s"), s("\u{E0067}\u{E0062}"))], eq(len(string("s")), n(2))));
    valid(query(vec![], ne(s("\u{E0067}"), s("\u{10FFFF}"))));
}

#[test]
fn string_counterexamples_are_quoted_exactly() {
    for text in ["abc", "", "a\"b", "tab\there", "\\u{41}é", "back\\slash\\", "é🦀", "\u{E0067}x"] {
        let cx = invalid(query(vec![eq(string("s"), s(text))], Term::Bool(false)));
        assert_eq!(value(&cx, "s"), format!("{text:?}"), "for {text:?}");
    }
}

// ---- uninterpreted functions and sorts ---------------------------------------------------------

#[test]
fn measures() {
    let tainted = || func("tainted", vec![session()], Sort::Bool);
    let private = || func("Repo.private", vec![repo()], Sort::Bool);
    let sess = |name| named(name, "Session");

    valid(query_with(
        vec![tainted()],
        vec![not(app("tainted", vec![sess("s")])), eq(sess("s2"), sess("s"))],
        not(app("tainted", vec![sess("s2")])),
    ));
    valid(query_with(
        vec![tainted(), private()],
        vec![
            not(app("tainted", vec![sess("s")])),
            eq(
                app("tainted", vec![sess("s2")]),
                Term::Or(vec![app("Repo.private", vec![named("r", "Repo")]), app("tainted", vec![sess("s")])]),
            ),
            not(app("Repo.private", vec![named("r", "Repo")])),
        ],
        not(app("tainted", vec![sess("s2")])),
    ));

    // Reading a private repo taints the session: the counterexample says why.
    let cx = invalid(query_with(
        vec![tainted(), private()],
        vec![
            not(app("tainted", vec![sess("s")])),
            eq(
                app("tainted", vec![sess("s2")]),
                Term::Or(vec![app("Repo.private", vec![named("r", "Repo")]), app("tainted", vec![sess("s")])]),
            ),
        ],
        not(app("tainted", vec![sess("s2")])),
    ));
    assert_eq!(names(&cx), ["Repo.private(r)", "r", "s", "s2", "tainted(s)", "tainted(s2)"]);
    assert_eq!(value(&cx, "Repo.private(r)"), "true");
    assert_eq!(value(&cx, "tainted(s)"), "false");
    assert_eq!(value(&cx, "tainted(s2)"), "true");
    assert_eq!(value(&cx, "r"), "Repo!val!0");
    assert!(value(&cx, "s").starts_with("Session!val!"));
}

#[test]
fn unused_declarations_change_nothing() {
    let unused = vec![func("Repo.name", vec![repo()], Sort::String), func("w", vec![Sort::Real], Sort::Real)];
    valid(query_with(unused.clone(), vec![gt(int("x"), n(0))], gt(int("x"), n(-1))));
    let cx = invalid(query_with(unused, vec![gt(int("x"), n(0))], gt(int("x"), n(1))));
    assert_eq!(names(&cx), ["x"]);
}

#[test]
fn list_lengths() {
    let list = Sort::Named("List[Int]".into());
    let xs = || Term::Var("xs".into(), list.clone());
    let len_decl = || func("len", vec![list.clone()], Sort::Int);
    valid(query_with(
        vec![len_decl()],
        vec![le(n(0), int("i")), lt(int("i"), app("len", vec![xs()])), le(app("len", vec![xs()]), n(10))],
        lt(int("i"), n(10)),
    ));
    let cx = invalid(query_with(
        vec![len_decl()],
        vec![le(n(0), int("i")), lt(int("i"), app("len", vec![xs()])), eq(app("len", vec![xs()]), n(4))],
        lt(int("i"), n(3)),
    ));
    assert_eq!(
        cx,
        [("i", "3"), ("len(xs)", "4"), ("xs", "List[Int]!val!0")].map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
}

#[test]
fn uninterpreted_sorts() {
    let f = || func("f", vec![repo()], Sort::Int);
    let x = || named("x", "Repo");
    let y = || named("y", "Repo");
    valid(query_with(vec![f()], vec![eq(x(), y())], eq(app("f", vec![x()]), app("f", vec![y()]))));
    valid(query_with(vec![f()], vec![ne(app("f", vec![x()]), app("f", vec![y()]))], ne(x(), y())));

    let cx = invalid(query(vec![], eq(x(), y())));
    assert_eq!(cx, [("x", "Repo!val!0"), ("y", "Repo!val!1")].map(|(k, v)| (k.to_owned(), v.to_owned())));
}

#[test]
fn counterexamples_show_applications_of_constants_only() {
    let f = || func("f", vec![Sort::Int], Sort::Int);
    let g = || func("g", vec![Sort::Int, Sort::String], Sort::Bool);
    let cx = invalid(query_with(
        vec![f(), g()],
        vec![
            eq(app("f", vec![int("x")]), n(2)),
            eq(app("f", vec![add(vec![int("x"), n(1)])]), n(5)),
            app("g", vec![app("f", vec![n(7)]), s("k")]),
        ],
        Term::Bool(false),
    ));
    // `f(x + 1)` is not shown: its argument is arithmetic, not a constant.
    assert_eq!(names(&cx), ["f(7)", "f(x)", "g(f(7), \"k\")", "x"]);
    assert_eq!(value(&cx, "f(x)"), "2");
    assert_eq!(value(&cx, "g(f(7), \"k\")"), "true");
}

#[test]
fn any_name_is_safe() {
    let odd = ["a b", "k!0", "k!1", "|x|", "with\0nul", "(assert false)", "é"];
    let hypotheses: Vec<Term> = odd.iter().enumerate().map(|(i, name)| eq(int(name), n(i as i64))).collect();
    let cx = invalid(query(hypotheses, Term::Bool(false)));
    let mut expected: Vec<(String, String)> =
        odd.iter().enumerate().map(|(i, name)| (name.to_string(), i.to_string())).collect();
    expected.sort();
    assert_eq!(cx, expected);

    // A constant and a nullary function of the same name are different things.
    let c = func("c", vec![], Sort::Int);
    valid(query_with(
        vec![c.clone()],
        vec![eq(int("c"), n(1)), eq(app("c", vec![]), n(2))],
        ne(int("c"), app("c", vec![])),
    ));
}

// ---- the cache ------------------------------------------------------------------------------

#[test]
fn answers_are_cached_by_query() {
    let mut solver = Solver::new(TIMEOUT_MS);
    let q1 = query(vec![gt(int("x"), n(0))], gt(int("x"), n(-1)));
    let q2 = query(vec![gt(int("x"), n(0))], gt(int("x"), n(1)));
    assert_eq!(solver.check(&q1), Answer::Valid);
    assert_eq!(solver.check(&q1), Answer::Valid);
    assert!(matches!(solver.check(&q2), Answer::Invalid { .. }));
    assert!(matches!(solver.check(&q2), Answer::Invalid { .. }));
    assert_eq!(solver.check(&q1), Answer::Valid);
    assert_eq!(solver.stats(), SolverStats { queries: 5, cache_hits: 3, solver_calls: 2, hypotheses: 2 });

    solver.clear_cache();
    assert_eq!(solver.check(&q1), Answer::Valid);
    assert_eq!(solver.stats(), SolverStats { queries: 6, cache_hits: 3, solver_calls: 3, hypotheses: 3 });
}

#[test]
fn one_solver_answers_many_kinds_of_query() {
    // Each kind of query goes to its own Z3 logic; they must not disturb each other.
    let mut solver = Solver::new(TIMEOUT_MS);
    let queries = [
        (query(vec![gt(int("x"), n(0))], gt(int("x"), n(-1))), true),
        (query(vec![eq(string("s"), s("ab"))], eq(len(string("s")), n(2))), true),
        (query(vec![gt(real("r"), Term::real(1, 2))], gt(real("r"), Term::real(1, 3))), true),
        (query(vec![gt(int("x"), n(1))], gt(mul(int("x"), int("x")), int("x"))), true),
        (query(vec![gt(int("x"), n(0))], gt(int("x"), n(1))), false),
        (query(vec![eq(string("s"), s("ab"))], eq(len(string("s")), n(3))), false),
        (query(vec![eq(string("s"), s("ab")), gt(real("r"), Term::real(1, 2))], gt(real("r"), Term::real(0, 1))), true),
        (query(vec![eq(string("s"), s("ab")), gt(int("x"), n(1))], gt(mul(int("x"), len(string("s"))), n(2))), true),
        (query(vec![gt(int("i"), n(0)), gt(real("r"), Term::real(0, 1))], gt(real("r"), Term::real(1, 1))), false),
    ];
    for round in 0..3 {
        for (q, is_valid) in &queries {
            solver.clear_cache();
            let got = solver.check(q);
            assert_eq!(got == Answer::Valid, *is_valid, "round {round}: {got:?} for {q:?}");
        }
    }
}

#[test]
fn solvers_are_cheap_to_make_and_share_the_thread_s_z3() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Solver>();

    let valid_q = query(vec![gt(int("x"), n(0))], gt(int("x"), n(-1)));
    let invalid_q = query(vec![gt(int("x"), n(0))], gt(int("x"), n(1)));
    let mut patient = Solver::new(TIMEOUT_MS);
    // Below 200 ms every query runs under the clock, in a Z3 solver that has just been
    // interrupted by it: it must still be sound.
    let mut hasty = Solver::new(150);
    for _ in 0..3 {
        assert_eq!(patient.check(&valid_q), Answer::Valid);
        assert!(matches!(hasty.check(&fermat_cubes()), Answer::Unknown { .. }));
        assert_eq!(hasty.check(&valid_q), Answer::Valid);
        assert!(matches!(hasty.check(&invalid_q), Answer::Invalid { .. }));
        assert!(matches!(patient.check(&invalid_q), Answer::Invalid { .. }));
        patient.clear_cache();
        hasty.clear_cache();
    }
    // A solver moved to another thread works there.
    let moved = std::thread::spawn(move || patient.check(&valid_q)).join().unwrap();
    assert_eq!(moved, Answer::Valid);
}

// ---- ill-sorted queries ---------------------------------------------------------------------

#[test]
fn ill_sorted_queries_are_rejected_without_reaching_z3() {
    let f = || func("f", vec![Sort::Int], Sort::Bool);
    ill_sorted(query(vec![], lt(s("a"), s("b"))), "`<` needs Ints or Reals");
    ill_sorted(query(vec![], lt(int("x"), real("y"))), "`<` needs Ints or Reals of one sort, got Int and Real");
    ill_sorted(query(vec![], app("g", vec![int("x")])), "`g` is not declared");
    ill_sorted(query_with(vec![f()], vec![], app("f", vec![])), "`f` takes 1 argument(s) but is applied to 0");
    ill_sorted(query_with(vec![f()], vec![], app("f", vec![s("x")])), "argument 1 of `f` is a String");
    ill_sorted(query(vec![gt(int("x"), n(0))], boolean("x")), "`x` is used both as a Int and as a Bool");
    ill_sorted(query(vec![], eq(int("x"), s("1"))), "`==` compares a Int with a String");
    ill_sorted(query(vec![], eq(named("r", "Repo"), named("t", "Task"))), "`==` compares a Repo with a Task");
    ill_sorted(query(vec![n(1)], Term::Bool(true)), "hypothesis 1 is a Int");
    ill_sorted(query(vec![], add(vec![n(1), n(2)])), "the goal is a Int");
    ill_sorted(query(vec![], eq(add(vec![]), n(0))), "`+` has no operands");
    ill_sorted(query(vec![], eq(add(vec![n(1), Term::real(1, 2)]), n(0))), "`+` needs Ints or Reals of one sort");
    ill_sorted(query(vec![], eq(Term::real(1, 0), Term::real(1, 1))), "zero denominator");
    ill_sorted(query(vec![], eq(Term::real(i128::MIN, 1), Term::real(1, 1))), "out of range");
    ill_sorted(query(vec![], eq(Term::real(1, i128::MIN), Term::real(1, 1))), "out of range");
    ill_sorted(query(vec![], Term::Ite(b(n(1)), b(Term::Bool(true)), b(Term::Bool(false)))), "condition of `if`");
    ill_sorted(query(vec![], eq(Term::Ite(b(boolean("c")), b(n(1)), b(s("x"))), n(1))), "branches of `if`");
    ill_sorted(query(vec![], eq(len(n(3)), n(1))), "`len` needs a String");
    ill_sorted(query(vec![], eq(concat(vec![s("a"), n(1)]), s("a1"))), "`++` needs a String");
    ill_sorted(query(vec![], not(n(0))), "`!` needs a Bool");
    ill_sorted(query(vec![], Term::And(vec![boolean("p"), int("x")])), "`&&` needs a Bool");
    ill_sorted(
        query_with(vec![f(), func("f", vec![Sort::Int], Sort::Int)], vec![], Term::Bool(true)),
        "declared twice with different signatures",
    );
    ill_sorted(query(vec![], eq(named("r", "Re\0po"), named("r", "Re\0po"))), "contains a NUL");
}

#[test]
fn ill_sorted_answers_are_cached_and_not_counted_as_solver_calls() {
    let mut solver = Solver::new(TIMEOUT_MS);
    let q = query(vec![], lt(s("a"), s("b")));
    assert!(matches!(solver.check(&q), Answer::Unknown { .. }));
    assert!(matches!(solver.check(&q), Answer::Unknown { .. }));
    assert_eq!(solver.stats(), SolverStats { queries: 2, cache_hits: 1, solver_calls: 0, hypotheses: 0 });
}

#[test]
fn identical_duplicate_declarations_are_fine() {
    let f = || func("f", vec![Sort::Int], Sort::Int);
    valid(query_with(vec![f(), f()], vec![eq(app("f", vec![n(1)]), n(2))], lt(n(1), app("f", vec![n(1)]))));
}

/// A chain of `depth` nested terms of one shape, around `x: Int`.
fn nested(shape: usize, depth: usize) -> Query {
    let mut t = int("x");
    for i in 0..depth {
        let i = i as i64;
        t = match shape {
            0 => add(vec![t, n(i)]),
            1 => Term::Ite(b(lt(int("x"), n(i))), b(t), b(n(0))),
            2 => app("f", vec![t]),
            3 => Term::Neg(b(t)),
            4 => sub(t, n(1)),
            _ => mul(n(2), t),
        };
    }
    query_with(vec![func("f", vec![Sort::Int], Sort::Int)], vec![lt(t, n(0))], Term::Bool(false))
}

#[test]
fn terms_nested_up_to_the_limit_work_on_a_small_stack() {
    // Debug builds use a lot of stack per level; 1 MiB is half a test thread's.
    for shape in 0..6 {
        let answer = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || Solver::new(TIMEOUT_MS).check(&nested(shape, 250)))
            .unwrap()
            .join()
            .unwrap();
        assert!(matches!(answer, Answer::Invalid { .. }), "shape {shape}: {answer:?}");
    }
    let mut negations = boolean("p");
    for _ in 0..125 {
        negations = not(not(negations));
    }
    let mut solver = Solver::new(TIMEOUT_MS);
    assert_eq!(solver.check(&query(vec![negations.clone()], boolean("p"))), Answer::Valid);
}

#[test]
fn terms_nested_beyond_the_limit_are_refused() {
    for shape in 0..6 {
        ill_sorted(nested(shape, 300), "nested more than 256 levels");
    }
    let mut negations = boolean("p");
    for _ in 0..300 {
        negations = not(negations);
    }
    ill_sorted(query(vec![], negations), "nested more than 256 levels");
}

// ---- unknown answers ------------------------------------------------------------------------

/// x³ + y³ = z³ has no solution in positive integers (Euler), which Z3 can neither prove nor
/// refute: the answer is `Unknown` however fast the machine is.
fn fermat_cubes() -> Query {
    let cube = |v: &str| mul(int(v), mul(int(v), int(v)));
    query(
        vec![gt(int("x"), n(0)), gt(int("y"), n(0)), gt(int("z"), n(0))],
        ne(add(vec![cube("x"), cube("y")]), cube("z")),
    )
}

#[test]
fn a_hard_query_with_a_tiny_timeout_is_unknown() {
    let mut solver = Solver::new(1);
    let started = std::time::Instant::now();
    match solver.check(&fermat_cubes()) {
        Answer::Unknown { reason } => assert!(!reason.is_empty()),
        other => panic!("expected Unknown, got {other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "took {:?}", started.elapsed());
    // The thread's Z3 is still sound and usable afterwards (with a limit a check can meet: a
    // millisecond is less than a first check on a fresh Z3 solver takes).
    let mut solver = Solver::new(5_000);
    assert_eq!(solver.check(&query(vec![gt(int("x"), n(0))], gt(int("x"), n(-1)))), Answer::Valid);
    assert!(matches!(solver.check(&query(vec![gt(int("x"), n(0))], gt(int("x"), n(1)))), Answer::Invalid { .. }));
}

#[test]
fn a_timeout_is_reported_as_such() {
    let mut solver = Solver::new(300);
    match solver.check(&fermat_cubes()) {
        Answer::Unknown { reason } => {
            assert!(reason.starts_with("timeout after 300 ms") || reason.contains("incomplete"), "{reason}")
        }
        other => panic!("expected Unknown, got {other:?}"),
    }
}

/// Seven pigeons in six holes, as pairwise distinct integers in 1..=6: unsatisfiable, and it takes
/// Z3 more steps than the resource-limited first attempt allows, so this exercises the retry
/// under the clock.
#[test]
fn a_query_beyond_the_first_attempt_is_retried_under_the_timer() {
    let pigeons: Vec<Term> = (0..7).map(|i| int(&format!("p{i}"))).collect();
    let mut hypotheses = Vec::new();
    for p in &pigeons {
        hypotheses.push(le(n(1), p.clone()));
        hypotheses.push(le(p.clone(), n(6)));
    }
    for (i, p) in pigeons.iter().enumerate() {
        for q in &pigeons[i + 1..] {
            hypotheses.push(ne(p.clone(), q.clone()));
        }
    }
    let mut solver = Solver::new(60_000);
    assert_eq!(solver.check(&query(hypotheses, Term::Bool(false))), Answer::Valid);
}

// ---- agreement with brute force -------------------------------------------------------------

mod brute_force {
    use std::cell::Cell;

    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::RngSeed;
    use proptest::test_runner::{TestCaseError, TestRunner};

    /// The seed of every case generated here: the same cases on every run, so a floor met once
    /// is met always (change it, or set `PROPTEST_CASES`, to search elsewhere).
    const SEED: u64 = 0x636f_7264_6f6e;

    /// `x` and `y` range over -3..=3 (the query says so), `p` and `q` over the Booleans.
    const RANGE: std::ops::RangeInclusive<i64> = -3..=3;

    #[derive(Clone, Copy, Debug, Default)]
    struct Env {
        x: i64,
        y: i64,
        p: bool,
        q: bool,
    }

    fn eval_int(t: &Term, env: Env) -> i64 {
        match t {
            Term::Var(name, _) if &**name == "x" => env.x,
            Term::Var(name, _) if &**name == "y" => env.y,
            Term::Int(i) => *i,
            Term::Add(args) => args.iter().map(|a| eval_int(a, env)).sum(),
            Term::Sub(a, c) => eval_int(a, env) - eval_int(c, env),
            Term::Mul(a, c) => eval_int(a, env) * eval_int(c, env),
            Term::Neg(a) => -eval_int(a, env),
            Term::Ite(c, a, e) => {
                if eval_bool(c, env) {
                    eval_int(a, env)
                } else {
                    eval_int(e, env)
                }
            }
            other => panic!("not an int term: {other:?}"),
        }
    }

    fn eval_bool(t: &Term, env: Env) -> bool {
        match t {
            Term::Var(name, _) if &**name == "p" => env.p,
            Term::Var(name, _) if &**name == "q" => env.q,
            Term::Bool(v) => *v,
            Term::Not(a) => !eval_bool(a, env),
            Term::And(args) => args.iter().all(|a| eval_bool(a, env)),
            Term::Or(args) => args.iter().any(|a| eval_bool(a, env)),
            Term::Implies(a, c) => !eval_bool(a, env) || eval_bool(c, env),
            Term::Eq(a, c) => match is_bool(a) {
                true => eval_bool(a, env) == eval_bool(c, env),
                false => eval_int(a, env) == eval_int(c, env),
            },
            Term::Lt(a, c) => eval_int(a, env) < eval_int(c, env),
            Term::Le(a, c) => eval_int(a, env) <= eval_int(c, env),
            Term::Ite(c, a, e) => {
                if eval_bool(c, env) {
                    eval_bool(a, env)
                } else {
                    eval_bool(e, env)
                }
            }
            other => panic!("not a bool term: {other:?}"),
        }
    }

    fn is_bool(t: &Term) -> bool {
        match t {
            Term::Var(_, sort) => *sort == Sort::Bool,
            Term::Int(_) | Term::Add(_) | Term::Sub(..) | Term::Mul(..) | Term::Neg(_) => false,
            Term::Ite(_, a, _) => is_bool(a),
            _ => true,
        }
    }

    fn holds(q: &Query, env: Env) -> bool {
        !q.hypotheses.iter().all(|h| eval_bool(h, env)) || eval_bool(&q.goal, env)
    }

    fn all_envs() -> impl Iterator<Item = Env> {
        RANGE.flat_map(|x| {
            RANGE.flat_map(move |y| {
                [false, true].into_iter().flat_map(move |p| [false, true].into_iter().map(move |q| Env { x, y, p, q }))
            })
        })
    }

    fn env_of(counterexample: &[(String, String)]) -> Env {
        let mut env = Env::default();
        for (name, v) in counterexample {
            match name.as_str() {
                "x" => env.x = v.parse().unwrap(),
                "y" => env.y = v.parse().unwrap(),
                "p" => env.p = v.parse().unwrap(),
                "q" => env.q = v.parse().unwrap(),
                other => panic!("unexpected name {other:?} in {counterexample:?}"),
            }
        }
        env
    }

    fn simple_bool() -> impl Strategy<Value = Term> {
        let atom = prop_oneof![Just(int("x")), Just(int("y")), (-4i64..=4).prop_map(Term::Int)];
        prop_oneof![
            Just(boolean("p")),
            Just(boolean("q")),
            any::<bool>().prop_map(Term::Bool),
            (atom.clone(), atom).prop_map(|(a, c)| lt(a, c)),
        ]
    }

    fn int_term() -> impl Strategy<Value = Term> {
        let leaf = prop_oneof![Just(int("x")), Just(int("y")), (-4i64..=4).prop_map(Term::Int)];
        leaf.prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..=3).prop_map(Term::Add),
                (inner.clone(), inner.clone()).prop_map(|(a, c)| sub(a, c)),
                ((-3i64..=3), inner.clone()).prop_map(|(k, a)| mul(n(k), a)),
                // Nonlinear now and then: still decidable here, though Z3 may say unknown.
                (inner.clone(), inner.clone()).prop_map(|(a, c)| mul(a, c)),
                inner.clone().prop_map(|a| Term::Neg(b(a))),
                (simple_bool(), inner.clone(), inner).prop_map(|(c, a, e)| Term::Ite(b(c), b(a), b(e))),
            ]
        })
    }

    fn bool_term() -> impl Strategy<Value = Term> {
        let leaf = prop_oneof![
            simple_bool(),
            (int_term(), int_term()).prop_map(|(a, c)| lt(a, c)),
            (int_term(), int_term()).prop_map(|(a, c)| le(a, c)),
            (int_term(), int_term()).prop_map(|(a, c)| eq(a, c)),
        ];
        leaf.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(not),
                prop::collection::vec(inner.clone(), 0..=3).prop_map(Term::And),
                prop::collection::vec(inner.clone(), 0..=3).prop_map(Term::Or),
                (inner.clone(), inner.clone()).prop_map(|(a, c)| implies(a, c)),
                (inner.clone(), inner.clone()).prop_map(|(a, c)| eq(a, c)),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, e)| Term::Ite(b(c), b(a), b(e))),
            ]
        })
    }

    fn bounded_query() -> impl Strategy<Value = Query> {
        (prop::collection::vec(bool_term(), 0..=2), bool_term()).prop_map(|(extra, goal)| {
            let mut hypotheses = vec![
                le(n(*RANGE.start()), int("x")),
                le(int("x"), n(*RANGE.end())),
                le(n(*RANGE.start()), int("y")),
                le(int("y"), n(*RANGE.end())),
            ];
            hypotheses.extend(extra);
            query(hypotheses, goal)
        })
    }

    /// Runs `test` on `cases` values of `strategy` as `proptest!` would (shrinking a failure)
    /// and returns how many cases there were and how many `test` counted as decided: a property
    /// that compares only decided answers passes vacuously if the solver decides nothing.
    fn run_counting<S: Strategy>(
        cases: u32,
        strategy: S,
        test: impl Fn(S::Value) -> Result<bool, TestCaseError>,
    ) -> (u32, u32)
    where
        S::Value: std::fmt::Debug,
    {
        let (total, decided) = (Cell::new(0), Cell::new(0));
        let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(cases);
        let config = ProptestConfig {
            failure_persistence: None,
            rng_seed: RngSeed::Fixed(SEED),
            ..ProptestConfig::with_cases(cases)
        };
        let result = TestRunner::new(config).run(&strategy, |value| {
            total.set(total.get() + 1);
            if test(value)? {
                decided.set(decided.get() + 1);
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        (total.get(), decided.get())
    }

    /// Fails unless at least `percent`% of `total` cases were decided.
    fn assert_decided(total: u32, decided: u32, percent: u32) {
        println!("{decided} of {total} queries decided");
        assert!(
            decided * 100 >= percent * total,
            "only {decided} of {total} queries were decided (the floor is {percent}%)"
        );
    }

    #[test]
    fn z3_agrees_with_enumeration() {
        let (total, decided) = run_counting(64, bounded_query(), |q| {
            let valid_by_enumeration = all_envs().all(|env| holds(&q, env));
            match Solver::new(TIMEOUT_MS).check(&q) {
                Answer::Valid => prop_assert!(valid_by_enumeration, "Z3 says valid: {}", q.goal),
                Answer::Invalid { counterexample } => {
                    prop_assert!(!valid_by_enumeration, "Z3 says invalid: {}", q.goal);
                    let env = env_of(&counterexample);
                    prop_assert!(!holds(&q, env), "not a counterexample: {counterexample:?}");
                }
                Answer::Unknown { reason } => {
                    prop_assert!(!reason.starts_with("ill-sorted"), "{reason}");
                    return Ok(false);
                }
            }
            Ok(true)
        });
        // An unknown answer is compared with nothing. The queries are small and bounded, though
        // an occasional nonlinear product may defeat Z3 (64 of 64 were decided when this floor
        // was set): at least 90% must be decided.
        assert_decided(total, decided, 90);
    }

    fn any_sort() -> impl Strategy<Value = Sort> {
        prop_oneof![
            Just(Sort::Bool),
            Just(Sort::Int),
            Just(Sort::Real),
            Just(Sort::String),
            Just(Sort::Named("Repo".into())),
        ]
    }

    /// Any term at all, well-sorted or not.
    fn any_term() -> impl Strategy<Value = Term> {
        let leaf = prop_oneof![
            (prop::sample::select(vec!["a", "b", "c"]), any_sort()).prop_map(|(v, s)| Term::Var(v.into(), s)),
            any::<bool>().prop_map(Term::Bool),
            any::<i64>().prop_map(Term::Int),
            (any::<i128>(), any::<i128>()).prop_map(|(p, q)| Term::real(p, q)),
            ".{0,4}".prop_map(Term::Str),
        ];
        leaf.prop_recursive(4, 32, 3, |inner| {
            let two = (inner.clone(), inner.clone());
            prop_oneof![
                (prop::sample::select(vec!["f", "g", "h"]), prop::collection::vec(inner.clone(), 0..=2))
                    .prop_map(|(f, args)| app(f, args)),
                inner.clone().prop_map(not),
                prop::collection::vec(inner.clone(), 0..=3).prop_map(Term::And),
                prop::collection::vec(inner.clone(), 0..=3).prop_map(Term::Add),
                prop::collection::vec(inner.clone(), 0..=3).prop_map(Term::StrConcat),
                two.clone().prop_map(|(a, c)| eq(a, c)),
                two.clone().prop_map(|(a, c)| lt(a, c)),
                two.clone().prop_map(|(a, c)| mul(a, c)),
                two.prop_map(|(a, c)| sub(a, c)),
                inner.clone().prop_map(len),
                (inner.clone(), inner.clone(), inner).prop_map(|(c, a, e)| Term::Ite(b(c), b(a), b(e))),
            ]
        })
    }

    fn any_query() -> impl Strategy<Value = Query> {
        let decl = (prop::sample::select(vec!["f", "g"]), prop::collection::vec(any_sort(), 0..=2), any_sort())
            .prop_map(|(name, params, ret)| func(name, params, ret));
        (prop::collection::vec(decl, 0..=2), prop::collection::vec(any_term(), 0..=2), any_term())
            .prop_map(|(funcs, hypotheses, goal)| query_with(funcs, hypotheses, goal))
    }

    proptest! {
        #![proptest_config(ProptestConfig { rng_seed: RngSeed::Fixed(SEED), ..ProptestConfig::with_cases(64) })]

        /// Nothing a caller sends makes the solver panic; a query Z3 cannot take is refused.
        #[test]
        fn arbitrary_queries_never_panic(q in any_query()) {
            let mut solver = Solver::new(2_000);
            let first = solver.check(&q);
            prop_assert_eq!(solver.check(&q), first);
        }
    }

    /// A tiny deterministic generator of well-sorted terms over every sort, driven by a seed
    /// that proptest picks.
    struct Gen(u64);

    impl Gen {
        fn below(&mut self, n: usize) -> usize {
            // splitmix64
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }

        fn pick<T: Clone>(&mut self, items: &[T]) -> T {
            items[self.below(items.len())].clone()
        }

        fn sort(&mut self) -> Sort {
            self.pick(&[Sort::Bool, Sort::Int, Sort::Real, Sort::String, repo()])
        }

        fn leaf(&mut self, sort: &Sort) -> Term {
            let prefix = match sort {
                Sort::Bool => "b",
                Sort::Int => "i",
                Sort::Real => "r",
                Sort::String => "s",
                Sort::Named(_) => "repo",
            };
            if self.below(2) == 0 || matches!(sort, Sort::Named(_)) {
                return Term::Var(format!("{prefix}{}", self.below(2)).into(), sort.clone());
            }
            match sort {
                Sort::Bool => Term::Bool(self.below(2) == 0),
                Sort::Int => Term::Int(self.pick(&[0, 1, -1, 2, 7, -30, i64::MAX, i64::MIN])),
                Sort::Real => {
                    let den = self.pick(&[1, 2, -3, 7, i128::from(i64::MAX), 10i128.pow(28), -i128::MAX]);
                    Term::real(
                        self.pick(&[0, 1, -5, i128::from(i64::MIN), (1i128 << 96) - 1, -i128::MAX, i128::MAX]),
                        den,
                    )
                }
                _ => s(self.pick(&["", "a", "ab", "\\u{41}", "é", "\u{E0067}", "\0", "\"", "xyz", "\\"])),
            }
        }

        fn term(&mut self, sort: &Sort, depth: usize) -> Term {
            if depth == 0 || self.below(4) == 0 {
                return self.leaf(sort);
            }
            let d = depth - 1;
            if self.below(8) == 0 {
                let c = self.term(&Sort::Bool, d);
                return Term::Ite(b(c), b(self.term(sort, d)), b(self.term(sort, d)));
            }
            match sort {
                Sort::Bool => match self.below(8) {
                    0 => not(self.term(&Sort::Bool, d)),
                    1 => Term::And((0..self.below(3)).map(|_| self.term(&Sort::Bool, d)).collect()),
                    2 => Term::Or((0..self.below(3)).map(|_| self.term(&Sort::Bool, d)).collect()),
                    3 => implies(self.term(&Sort::Bool, d), self.term(&Sort::Bool, d)),
                    4 => {
                        let sort = self.sort();
                        eq(self.term(&sort, d), self.term(&sort, d))
                    }
                    5 | 6 => {
                        let sort = self.pick(&[Sort::Int, Sort::Real]);
                        let (a, c) = (self.term(&sort, d), self.term(&sort, d));
                        if self.below(2) == 0 { lt(a, c) } else { le(a, c) }
                    }
                    _ => app("private", vec![self.term(&repo(), d)]),
                },
                Sort::Int | Sort::Real => match self.below(7) {
                    0 => add((0..1 + self.below(3)).map(|_| self.term(sort, d)).collect()),
                    1 => sub(self.term(sort, d), self.term(sort, d)),
                    2 => {
                        let k = self.leaf(sort);
                        mul(k, self.term(sort, d))
                    }
                    3 => Term::Neg(b(self.term(sort, d))),
                    4 if *sort == Sort::Int => len(self.term(&Sort::String, d)),
                    5 if *sort == Sort::Int => app("size", vec![self.term(&repo(), d)]),
                    5 => app("weight", vec![self.term(&Sort::Real, d)]),
                    _ => self.leaf(sort),
                },
                Sort::String => match self.below(3) {
                    0 => concat((0..self.below(4)).map(|_| self.term(&Sort::String, d)).collect()),
                    1 => app("name", vec![self.term(&repo(), d)]),
                    _ => self.leaf(sort),
                },
                Sort::Named(_) => app("owner", vec![self.term(&repo(), d)]),
            }
        }
    }

    fn well_sorted_query() -> impl Strategy<Value = Query> {
        (any::<u64>(), 0usize..=3).prop_map(|(seed, hypotheses)| {
            let mut g = Gen(seed);
            let hypotheses = (0..hypotheses).map(|_| g.term(&Sort::Bool, 4)).collect();
            let goal = g.term(&Sort::Bool, 4);
            query_with(
                vec![
                    func("private", vec![repo()], Sort::Bool),
                    func("size", vec![repo()], Sort::Int),
                    func("name", vec![repo()], Sort::String),
                    func("owner", vec![repo()], repo()),
                    func("weight", vec![Sort::Real], Sort::Real),
                ],
                hypotheses,
                goal,
            )
        })
    }

    /// Well-sorted queries over every theory pass the sort check, and the Z3 solvers this
    /// thread has used for every query before give the same verdict as fresh ones.
    #[test]
    fn well_sorted_queries_are_answered() {
        let (total, decided) = run_counting(64, well_sorted_query(), |q| {
            let here = Solver::new(2_000).check(&q);
            if let Answer::Unknown { reason } = &here {
                prop_assert!(!reason.starts_with("ill-sorted"), "{reason}: {q:?}");
            }
            let fresh_q = q.clone();
            let fresh = std::thread::spawn(move || Solver::new(2_000).check(&fresh_q)).join().unwrap();
            let verdict = |a: &Answer| match a {
                Answer::Valid => Some(true),
                Answer::Invalid { .. } => Some(false),
                Answer::Unknown { .. } => None,
            };
            let (Some(a), Some(b)) = (verdict(&here), verdict(&fresh)) else { return Ok(false) };
            prop_assert_eq!(a, b, "{:?} here, {:?} on a fresh thread, for {:?}", here, fresh, q);
            Ok(true)
        });
        // Only queries both solvers decide are compared. Mixed theories under a 2 s limit are
        // sometimes unknown (63 or 64 of 64 were decided when this floor was set): at least 80%
        // must be decided by both.
        assert_decided(total, decided, 80);
    }
}
