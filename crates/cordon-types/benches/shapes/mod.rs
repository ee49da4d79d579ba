//! Generated plans of the shapes whose checking time must grow linearly with their length (issue
//! 10), shared by the `check` benchmark, the regression guard in `tests/scaling.rs` and the
//! `shapes` example.
//!
//! Each generator returns a plan of exactly the requested number of lines (at least a small
//! minimum), accepted by the checker, where every line or block adds refinement obligations:
//!
//! - [`session`]: one linear GitHub session threaded through a tool call per line
//!   (`policies/github.cord`), every call needing the session untainted;
//! - [`session_branches`]: the session threaded through an `if` per line whose branches both
//!   call a tool on it, so every `if` joins the branches' linear states with one more (used up)
//!   linear value in scope than the last;
//! - [`let_chain`]: a chain of `let`s, each proving a refinement that depends on the chain so far;
//! - [`branches`]: sequential `if`s on the same variable, each branch calling a refined function;
//! - [`blocks`]: the bench-style program: blocks of lets, guarded calls, indexes and matches;
//! - [`modular`]: a chain of values whose remainders are passed where they must be positive,
//!   which follows from the remainder's bounds once the sign of what was divided is known (the
//!   bounds' fast path reads that implication); every line's facts are connected to all before
//!   it, so an obligation that carried every connected fact would grow with the plan;
//! - [`running_sum`]: a running sum whose every `let` is refined by a bound that follows from
//!   the line before and a parameter;
//! - [`disjunctive`]: like [`modular`], but each value is passed where it must be positive or
//!   far below zero: a disjunction, which only the solver proves, so every line is a query to Z3.

// Each user of this module uses some of it.
#![allow(dead_code)]

/// The policy the [`session`] plans are checked against.
pub const GITHUB: &str = include_str!("../../../../policies/github.cord");

/// A shape: its name, its generator and whether it needs the GitHub policy.
pub type Shape = (&'static str, fn(usize) -> String, bool);

/// The shapes.
pub const SHAPES: [Shape; 8] = [
    ("session", session, true),
    ("session_branches", session_branches, true),
    ("let_chain", let_chain, false),
    ("branches", branches, false),
    ("blocks", blocks, false),
    ("modular", modular, false),
    ("running_sum", running_sum, false),
    ("disjunctive", disjunctive, false),
];

/// A plan of `lines` lines (at least 9): a public repository found, then a tool call per line on
/// one session, alternating between opening an issue, commenting on the last one and listing the
/// issues; every call but the listing needs `!tainted(s)`, which holds because the repository
/// is not private.
pub fn session(lines: usize) -> String {
    in_public_repo(lines, "i0", |k, p| match k % 3 {
        0 => format!("let (i{k}, s{k}) = gh.create_issue(s{p}, r, \"title {k}\", \"body\");"),
        1 => format!("let (i{k}, s{k}) = (i{p}, gh.comment(s{p}, r, i{p}, \"comment {k}\"));"),
        _ => format!("let (l{k}, s{k}) = gh.list_issues(s{p}, r); let i{k} = i{p};"),
    })
}

/// A plan of `lines` lines (at least 9): like [`session`], but each line after the first is an
/// `if` on the first issue whose branches both comment on it with the session, the result
/// annotated untainted (so each branch proves it, and the next line knows it).
pub fn session_branches(lines: usize) -> String {
    in_public_repo(lines, "i", |k, p| {
        format!(
            "let s{k}: {{t: Session | !tainted(t)}} = if i.number > {k} {{ gh.comment(s{p}, r, i, \"below {k}\") }} else {{ gh.comment(s{p}, r, i, \"at least {k}\") }};"
        )
    })
}

/// What the session shapes share: a plan of `lines` lines (at least 9) that finds a public
/// repository `r`, opens a first issue (named `first`) with the session `s`, and then has
/// `line(k, k - 1)` for each later line `k`, which makes the session `s{k}` from `s{k - 1}`.
fn in_public_repo(lines: usize, first: &str, line: impl Fn(usize, usize) -> String) -> String {
    let calls = lines.saturating_sub(8).max(1);
    let mut out = String::from(
        "match gh.repo(\"alice\", \"website\") {\n  Some(r) => if r.private {\n    (\"private\", s)\n  } else {\n",
    );
    out.push_str(&format!("    let ({first}, s0) = gh.create_issue(s, r, \"first\", \"body\");\n"));
    for k in 1..calls {
        out.push_str(&format!("    {}\n", line(k, k - 1)));
    }
    out.push_str(&format!("    (\"done\", s{})\n  }},\n  None => (\"none\", s),\n}}\n", calls - 1));
    out
}

/// A plan of `lines` lines (at least 4): a function whose body is a chain of `let`s, each
/// refined with a bound that follows from the one before.
pub fn let_chain(lines: usize) -> String {
    let lets = lines.saturating_sub(4).max(1);
    let mut out = String::from("fn chain(x0: {v: Int | v >= 0}) -> Int {\n");
    for k in 1..=lets {
        out.push_str(&format!("  let x{k}: {{v: Int | v >= {k} && v > x{p}}} = x{p} + 1;\n", p = k - 1));
    }
    out.push_str(&format!("  x{lets}\n}}\nchain(3)\n"));
    out
}

/// A plan of `lines` lines (at least 5): a function whose body is a sequence of `if`s on its
/// parameter, each branch calling a function whose parameter is refined by the `if`'s guard.
pub fn branches(lines: usize) -> String {
    let ifs = lines.saturating_sub(5).max(1);
    let mut out = String::from("fn pos(v: {v: Int | v > 0}) -> Int { v }\nfn steps(x: Int) -> Int {\n");
    for k in 1..=ifs {
        out.push_str(&format!("  let y{k} = if x > {k} {{ pos(x - {k}) }} else {{ {k} }};\n"));
    }
    out.push_str(&format!("  y{ifs}\n}}\nsteps(7)\n"));
    out
}

/// Functions the generated blocks call: each has a refined parameter or result.
const BLOCKS_HEADER: &str = "\
fn safe_div(x: Int, d: {v: Int | v != 0}) -> Int { x / d }
fn bucket(n: {n: Int | n >= 0}) -> String { if n < 10 { \"small\" } else { \"large\" } }
enum Size { Small, Large(Int) }
";

/// One block: lets, an if-guarded call of a refined function, a guarded list index and a
/// match; every name is numbered so that no two solver queries are alike.
fn block(i: usize) -> String {
    format!(
        "\
let a{i} = {i} * 3 + 1;
let b{i} = a{i} - {i};
let q{i} = if b{i} != 0 {{ safe_div(a{i} * 7, b{i}) }} else {{ 0 }};
let xs{i} = [a{i}, b{i}, q{i}];
let y{i} = if xs{i}.len() > 2 {{ xs{i}[2] }} else {{ 0 }};
let l{i} = if y{i} >= 0 {{ bucket(y{i}) }} else {{ \"negative\" }};
let s{i} = if y{i} > 100 {{ Size::Large(y{i}) }} else {{ Size::Small }};
let m{i} = match s{i} {{
  Size::Small => q{i} + l{i}.len(),
  Size::Large(v) => v + a{i},
}};
"
    )
}

/// The bench-style plan of exactly `lines` lines (at least 14): blocks of [`block`], padding
/// lets and the result.
pub fn blocks(lines: usize) -> String {
    let mut out = BLOCKS_HEADER.to_string();
    let mut count = BLOCKS_HEADER.lines().count();
    let block_lines = block(0).lines().count();
    let mut n = 0;
    // Keep one line for the result.
    while n == 0 || count + block_lines < lines {
        out.push_str(&block(n));
        count += block_lines;
        n += 1;
    }
    let mut pad = 0;
    while count + 1 < lines {
        out.push_str(&format!("let pad{pad} = m{} + {pad};\n", n - 1));
        count += 1;
        pad += 1;
    }
    out.push_str(&format!("m{}\n", n - 1));
    out
}

/// A plan of `lines` lines (at least 6): a function whose body is a chain of values, each one
/// more than the last, and on each line the value's remainder by 4, passed (plus one) to a
/// function that needs it positive where the value is not negative. `x >= 0` and the
/// remainder's definition (`x == 4 * q + r`, `x >= 0 ==> 0 <= r < 4`) prove it, which the fast
/// path cannot combine; and the `if` constrains `x`, so each definition links its line's facts
/// to the line before.
pub fn modular(lines: usize) -> String {
    remainders(lines, "v > 0")
}

/// The chain of [`modular`], each remainder (plus one) passed to a function whose parameter is
/// refined by `needs`.
fn remainders(lines: usize, needs: &str) -> String {
    let steps = lines.saturating_sub(5).max(1);
    let mut out = format!("fn callee(v: {{v: Int | {needs}}}) -> Int {{ v }}\nfn walk(x0: Int) -> Int {{\n");
    for k in 1..=steps {
        let p = k - 1;
        out.push_str(&format!(
            "  let x{k} = x{p} + 1; let r{k} = x{k} % 4; let p{k} = if x{k} >= 0 {{ callee(r{k} + 1) }} else {{ 0 }};\n"
        ));
    }
    out.push_str(&format!("  p{steps}\n}}\nwalk(5)\n"));
    out
}

/// A plan of `lines` lines (at least 5): a function adding its parameter `d` (at least 1) to a
/// running sum, each step refined to be at least its number. Each bound follows from the step
/// before's and `d`'s, which only the solver proves, and every step mentions `d`.
pub fn running_sum(lines: usize) -> String {
    let steps = lines.saturating_sub(4).max(1);
    let mut out = String::from("fn run(x0: {v: Int | v >= 0}, d: {v: Int | v >= 1}) -> Int {\n");
    for k in 1..=steps {
        out.push_str(&format!("  let x{k}: {{v: Int | v >= {k}}} = x{p} + d;\n", p = k - 1));
    }
    out.push_str(&format!("  x{steps}\n}}\nrun(0, 2)\n"));
    out
}

/// A plan of `lines` lines (at least 6): like [`modular`], each remainder passed to a function
/// whose parameter must be positive or below -100, a disjunction the bounds' fast path does not
/// read: every line is a query to Z3, its facts connected to every line before.
pub fn disjunctive(lines: usize) -> String {
    remainders(lines, "v > 0 || v < -100")
}
