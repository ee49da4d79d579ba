//! What a refinement query costs.
//!
//! `cargo bench -p cordon-smt --bench solver`
//!
//! - `query/*`: one typical query (nine hypotheses over integers, a list-length function, a string
//!   length) on a warm [`Solver`] with its cache cleared each time, so Z3 decides it every time.
//! - `program/*`: the ten queries of a 50-line program, the way the type checker sends them.
//! - `strategy/*`: the typical query driven through the `z3` crate directly in the ways we tried,
//!   to show why [`Solver`] works the way it does: a fresh Z3 solver per query, or one incremental
//!   solver (`push`/`pop`) with Z3's default logic or `QF_SLIA`, limited by the `timeout` timer or
//!   by `rlimit` steps.

#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;

use cordon_smt::{Answer, FuncDecl, Query, Solver, Sort, Term};
use criterion::{Criterion, criterion_group, criterion_main};

fn int(name: &str) -> Term {
    Term::Var(name.into(), Sort::Int)
}
fn b(t: Term) -> Box<Term> {
    Box::new(t)
}
fn le(a: Term, c: Term) -> Term {
    Term::Le(b(a), b(c))
}
fn lt(a: Term, c: Term) -> Term {
    Term::Lt(b(a), b(c))
}
fn eq(a: Term, c: Term) -> Term {
    Term::Eq(b(a), b(c))
}
fn list() -> Term {
    Term::Var("xs".into(), Sort::Named("List".into()))
}
fn len_xs() -> Term {
    Term::App("len".into(), vec![list()])
}
fn str_len() -> Term {
    Term::StrLen(b(Term::Var("s".into(), Sort::String)))
}

/// The type checker declares every function it knows of in every query, used or not.
fn declarations() -> Vec<FuncDecl> {
    let f = |name: &str, params: Vec<Sort>, ret: Sort| FuncDecl { name: name.into(), params, ret };
    let named = |n: &str| Sort::Named(n.into());
    vec![
        f("len", vec![named("List")], Sort::Int),
        f("tainted", vec![named("Session")], Sort::Bool),
        f("Repo.name", vec![named("Repo")], Sort::String),
        f("Repo.owner", vec![named("Repo")], Sort::String),
        f("Repo.private", vec![named("Repo")], Sort::Bool),
        f("Issue.id", vec![named("Issue")], Sort::Int),
    ]
}

/// `0 <= i < n = len(xs) <= 100, j = i + 1, k = 2j, len(s) >= 1, 0 < x <= len(s)` implies
/// `j <= n + slack`: valid for `slack >= 0`, invalid below.
fn typical(slack: i64) -> Query {
    Query {
        funcs: declarations(),
        hypotheses: vec![
            le(Term::Int(0), int("i")),
            lt(int("i"), int("n")),
            eq(int("n"), len_xs()),
            le(len_xs(), Term::Int(100)),
            eq(int("j"), Term::Add(vec![int("i"), Term::Int(1)])),
            eq(int("k"), Term::Mul(b(Term::Int(2)), b(int("j")))),
            le(Term::Int(1), str_len()),
            lt(Term::Int(0), int("x")),
            le(int("x"), str_len()),
        ],
        goal: le(int("j"), Term::Add(vec![int("n"), Term::Int(slack)])),
    }
}

/// The same query without the string: integers and one function only.
fn typical_ints_only(slack: i64) -> Query {
    let mut q = typical(slack);
    q.hypotheses.retain(|h| !format!("{h:?}").contains("StrLen"));
    q
}

/// Ten queries of the kind a 50-line program produces: bounds checks, a measure, a string.
fn program() -> Vec<Query> {
    let session = |n: &str| Term::Var(n.into(), Sort::Named("Session".into()));
    let mut queries = vec![typical(0), typical(3), typical_ints_only(0), typical_ints_only(1)];
    for bound in 1..=4 {
        queries.push(Query {
            funcs: declarations(),
            hypotheses: vec![le(Term::Int(0), int("i")), lt(int("i"), Term::Int(bound * 10))],
            goal: lt(int("i"), Term::Int(bound * 10 + 1)),
        });
    }
    queries.push(Query {
        funcs: declarations(),
        hypotheses: vec![
            Term::Not(b(Term::App("tainted".into(), vec![session("s")]))),
            eq(
                Term::App("tainted".into(), vec![session("s2")]),
                Term::Or(vec![
                    Term::Var("private".into(), Sort::Bool),
                    Term::App("tainted".into(), vec![session("s")]),
                ]),
            ),
            Term::Not(b(Term::Var("private".into(), Sort::Bool))),
        ],
        goal: Term::Not(b(Term::App("tainted".into(), vec![session("s2")]))),
    });
    queries.push(Query {
        funcs: declarations(),
        hypotheses: vec![Term::Not(b(eq(Term::Var("t".into(), Sort::String), Term::Str(String::new()))))],
        goal: lt(Term::Int(0), Term::StrLen(b(Term::Var("t".into(), Sort::String)))),
    });
    queries
}

fn query(c: &mut Criterion) {
    let mut group = c.benchmark_group("query");
    for (name, q, valid) in [
        ("valid", typical(0), true),
        ("invalid", typical(-1), false),
        ("valid_ints_only", typical_ints_only(0), true),
        ("invalid_ints_only", typical_ints_only(-1), false),
    ] {
        let mut solver = Solver::new(5_000);
        assert_eq!(solver.check(&q) == Answer::Valid, valid);
        group.bench_function(name, |bench| {
            bench.iter(|| {
                solver.clear_cache();
                black_box(solver.check(black_box(&q)))
            });
        });
    }
    let mut solver = Solver::new(5_000);
    let q = typical(0);
    solver.check(&q);
    group.bench_function("cached", |bench| bench.iter(|| black_box(solver.check(black_box(&q)))));
    group.finish();
}

fn whole_program(c: &mut Criterion) {
    let queries = program();
    let mut group = c.benchmark_group("program");
    group.bench_function("10_queries_warm_solver", |bench| {
        let mut solver = Solver::new(5_000);
        bench.iter(|| {
            solver.clear_cache();
            for q in &queries {
                black_box(solver.check(q));
            }
        });
    });
    group.bench_function("10_queries_new_solver", |bench| {
        bench.iter(|| {
            let mut solver = Solver::new(5_000);
            for q in &queries {
                black_box(solver.check(q));
            }
        });
    });
    group.finish();
}

/// [`typical`] built with the `z3` crate directly: the hypotheses and the negated goal.
fn z3_typical(slack: i64) -> Vec<z3::ast::Bool> {
    use z3::ast::{Dynamic, Int};
    use z3::{FuncDecl as Z3Func, Sort as Z3Sort, Symbol};
    let list = Z3Sort::uninterpreted(Symbol::String("List".into()));
    let len = Z3Func::new(Symbol::Int(1), &[&list], &Z3Sort::int());
    let v = |i: u32| Int::new_const(Symbol::Int(2 * i + 2));
    let (i, n, j, k, x) = (v(0), v(1), v(2), v(3), v(4));
    let xs = Dynamic::new_const(Symbol::Int(0), &list);
    let s = z3::ast::String::new_const(Symbol::Int(12));
    let len_xs = len.apply(&[&xs]).as_int().unwrap();
    vec![
        Int::from_i64(0).le(&i),
        i.lt(&n),
        n.eq(&len_xs),
        len_xs.le(Int::from_i64(100)),
        j.eq(Int::add(&[&i, &Int::from_i64(1)])),
        k.eq(Int::mul(&[&Int::from_i64(2), &j])),
        Int::from_i64(1).le(s.length()),
        Int::from_i64(0).lt(&x),
        x.le(s.length()),
        j.le(Int::add(&[&n, &Int::from_i64(slack)])).not(),
    ]
}

fn params(timeout_ms: Option<u32>, rlimit: Option<u32>) -> z3::Params {
    let mut p = z3::Params::new();
    if let Some(ms) = timeout_ms {
        p.set_u32("timeout", ms);
    }
    if let Some(steps) = rlimit {
        p.set_u32("rlimit", steps);
    }
    p
}

fn decide_once(solver: &z3::Solver, slack: i64) -> z3::SatResult {
    for f in z3_typical(slack) {
        solver.assert(&f);
    }
    let result = solver.check();
    if result == z3::SatResult::Sat {
        black_box(solver.get_model());
    }
    result
}

fn strategies(c: &mut Criterion) {
    let mut group = c.benchmark_group("strategy");
    for (name, slack) in [("valid", 0), ("invalid", -1)] {
        group.bench_function(format!("fresh_solver_per_query/{name}"), |bench| {
            bench.iter(|| {
                let solver = z3::Solver::new();
                solver.set_params(&params(Some(5_000), None));
                decide_once(&solver, slack)
            });
        });
        group.bench_function(format!("fresh_qf_slia_solver_per_query/{name}"), |bench| {
            bench.iter(|| {
                let solver = z3::Solver::new_for_logic("QF_SLIA").unwrap();
                solver.set_params(&params(Some(5_000), None));
                decide_once(&solver, slack)
            });
        });
        let incremental = [
            ("incremental_default_logic_timeout", None, Some(5_000), None),
            ("incremental_qf_slia_timeout", Some("QF_SLIA"), Some(5_000), None),
            ("incremental_qf_slia_rlimit", Some("QF_SLIA"), None, Some(10_000)),
        ];
        for (strategy, logic, timeout, rlimit) in incremental {
            let solver = match logic {
                Some(logic) => z3::Solver::new_for_logic(logic).unwrap(),
                None => z3::Solver::new(),
            };
            solver.set_params(&params(timeout, rlimit));
            group.bench_function(format!("{strategy}/{name}"), |bench| {
                bench.iter(|| {
                    solver.push();
                    let result = decide_once(&solver, slack);
                    solver.pop(1);
                    result
                });
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = query, whole_program, strategies
}
criterion_main!(benches);
