//! The solver: answer cache, routing of queries to Z3, and the time limit.
//!
//! A query is decided by asserting its hypotheses and the negated goal and asking Z3 for a model:
//! `unsat` means the implication is valid, a model is a counterexample.
//!
//! Speed comes from three choices, each measured (`cargo bench -p cordon-smt --bench solver`):
//!
//! - **One incremental Z3 solver per logic and thread, kept for the life of the thread**, with
//!   each query between `push` and `pop`. The first check on a fresh Z3 solver costs
//!   milliseconds; later checks on an incremental one cost a tenth of a millisecond or so. The
//!   pool is per thread because Z3 objects belong to the thread that made them; every
//!   [`Solver`] on the thread shares it, so making a [`Solver`] per program costs nothing.
//! - **A logic chosen from the theories the query uses** (`QF_SLIA` for the usual linear
//!   integers, strings, uninterpreted functions and sorts; real or nonlinear arithmetic get
//!   their own). Z3's default configuration costs about twice as much per check as a solver made
//!   for the logic, and each extra solver costs milliseconds to set up.
//! - **A resource limit first, the clock only when needed.** Linear queries are first run under
//!   a `rlimit` (a deterministic count of solver steps) that small queries never reach; a query
//!   that exhausts it is run again under the clock. Nonlinear queries, whose steps Z3 counts too
//!   coarsely for that, go straight to the clock.
//! - **The clock is ours.** Z3 4.8's own `timeout` arms a timer thread on every check and, on a
//!   loaded machine, loses it: a check under a 1 ms limit was seen still running after ten
//!   minutes. A check under the clock runs beside a watchdog thread that interrupts the thread's
//!   Z3 context at the deadline, and again every few milliseconds until Z3 returns, so no check
//!   outlives its limit by more than Z3 takes to notice an interrupt.
//!
//! Z3's parameters are set once, when a session's solver is made, and are only `rlimit`; each
//! limit gets its own session rather than one session switching between them.
//! Care is due: with Z3 4.8.12, merely setting `smt.random_seed` on an incremental solver (it
//! made checks three times faster) let facts from popped scopes leak into later queries, which
//! were then "proved". The brute-force property test in `tests/solver.rs` catches that within a
//! few dozen queries; run it after changing anything here.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use z3::{Params, SatResult};

use crate::counterexample;
use crate::encode::{Encoder, Internal};
use crate::sortcheck::{self, Theories, WellSorted};
use crate::{Answer, Query, Term};

/// The time limit [`Solver::default`] uses, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u32 = 5_000;

/// Solver steps (Z3's `rlimit`) a linear query may take before it is run again under the timer.
/// A typical refinement query takes well under a thousand. The longest this many steps took in
/// our measurements was about 25 ms, on queries built to be hard.
const FAST_RLIMIT: u32 = 10_000;

/// Below this time limit the resource-limited first attempt is skipped: it could take a
/// noticeable part of the limit on its own.
const FAST_PATH_MIN_TIMEOUT_MS: u32 = 200;

/// Decides [`Query`] values with Z3, caching answers by query.
///
/// A `Solver` holds only its settings, cache and counters. The Z3 solvers it uses belong to the
/// thread and are shared by every `Solver` on it, so making a `Solver` is cheap (the first query
/// on a thread pays some milliseconds of Z3 setup) and a `Solver` may move between threads.
#[derive(Clone)]
pub struct Solver {
    timeout_ms: u32,
    cache: HashMap<Query, Answer>,
    stats: SolverStats,
}

/// The most answers one [`Solver`] keeps. Repeated queries come close together (the same
/// obligation in a loop's body, a branch checked twice), so a cache of the latest few thousand
/// answers gets almost every hit a cache of all of them would.
const MAX_CACHED: usize = 4096;

thread_local! {
    /// This thread's incremental Z3 solvers, one per logic and limit, shared by every [`Solver`]
    /// on the thread. The first check on a new Z3 solver costs milliseconds; later ones do not.
    static SESSIONS: RefCell<HashMap<(Logic, Limit), Session>> = RefCell::new(HashMap::new());
}

/// Counters for one [`Solver`], since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolverStats {
    /// Calls to [`Solver::check`].
    pub queries: u64,
    /// Queries answered from the cache.
    pub cache_hits: u64,
    /// Queries that were handed to Z3 (not answered by the cache, the sort check, or because the
    /// goal is `true` or one of the hypotheses).
    pub solver_calls: u64,
    /// The hypotheses of the queries handed to Z3, summed.
    pub hypotheses: u64,
}

impl Solver {
    /// A solver whose queries give up after `timeout_ms` milliseconds (`0`: never).
    ///
    /// When the limit is 200 ms or more, a linear query first runs under a fixed budget of solver
    /// steps (tens of milliseconds at worst) and only then, if it needs more, under the clock.
    pub fn new(timeout_ms: u32) -> Solver {
        Solver { timeout_ms, cache: HashMap::new(), stats: SolverStats::default() }
    }

    /// Is `query.hypotheses ⇒ query.goal` valid? Answers are cached by query.
    pub fn check(&mut self, query: &Query) -> Answer {
        self.stats.queries += 1;
        if let Some(answer) = self.cache.get(query) {
            self.stats.cache_hits += 1;
            return answer.clone();
        }
        let answer = self.decide(query);
        // The cache is bounded: a plan of many lines asks as many different queries, and keeping
        // every one would make its memory grow with them. Full, it starts again.
        if self.cache.len() >= MAX_CACHED {
            self.cache.clear();
        }
        self.cache.insert(query.clone(), answer.clone());
        answer
    }

    pub fn stats(&self) -> SolverStats {
        self.stats
    }

    /// Forgets every cached answer (the counters are kept).
    pub fn clear_cache(&mut self) {
        self.cache.clear();
    }

    fn decide(&mut self, query: &Query) -> Answer {
        let ws = match sortcheck::check(query) {
            Ok(ws) => ws,
            Err(why) => return Answer::Unknown { reason: format!("ill-sorted query: {why}") },
        };
        if trivially_valid(query) {
            return Answer::Valid;
        }
        self.stats.solver_calls += 1;
        self.stats.hypotheses += query.hypotheses.len() as u64;
        decide(&ws, self.timeout_ms).unwrap_or_else(|reason| Answer::Unknown { reason })
    }
}

impl Default for Solver {
    fn default() -> Solver {
        Solver::new(DEFAULT_TIMEOUT_MS)
    }
}

impl fmt::Debug for Solver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Solver")
            .field("timeout_ms", &self.timeout_ms)
            .field("cached_answers", &self.cache.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// The goal is `true` or literally one of the hypotheses: no need to ask Z3.
fn trivially_valid(query: &Query) -> bool {
    query.goal == Term::Bool(true) || query.hypotheses.contains(&query.goal)
}

/// Decides a well-sorted query: under the step limit first if it is linear and the time limit
/// allows, then (if that was not enough) under the clock.
fn decide(ws: &WellSorted<'_>, timeout_ms: u32) -> Result<Answer, Internal> {
    let logic = Logic::of(ws.theories);
    if timeout_ms == 0 {
        return with_session(logic, Limit::None, |s| s.decide(ws));
    }
    // Z3 does not bound the work of nonlinear arithmetic by `rlimit` reliably (a query allowed
    // 50 000 steps ran for 16 s), so those queries go straight to the clock.
    let start = Instant::now();
    if !ws.theories.nonlinear && timeout_ms >= FAST_PATH_MIN_TIMEOUT_MS {
        let answer = with_session(logic, Limit::Steps(FAST_RLIMIT), |s| s.decide(ws))?;
        if !matches!(answer, Answer::Unknown { .. }) {
            return Ok(answer);
        }
    }
    Ok(match within(Duration::from_millis(timeout_ms.into()), logic, ws)? {
        Answer::Unknown { reason } if start.elapsed() >= Duration::from_millis(timeout_ms.into()) => {
            Answer::Unknown { reason: format!("timeout after {timeout_ms} ms (z3: {reason})") }
        }
        answer => answer,
    })
}

/// How often the watchdog interrupts Z3 again once a check is past its deadline.
const INTERRUPT_AGAIN: Duration = Duration::from_millis(5);

/// Decides `ws` under the clock: on a thread of its own, with a fresh Z3 context, beside a
/// watchdog that interrupts that context once `limit` has passed and again every
/// [`INTERRUPT_AGAIN`] until Z3 returns (an interrupt that lands before Z3 looks for one is not
/// the end of it). An interrupted check is `unknown` whatever Z3 answered, and its context is
/// dropped with its thread: an interrupted Z3 4.8 was seen to answer `sat` with a model that
/// breaks the hypotheses, and to give wrong answers on that context afterwards.
fn within(limit: Duration, logic: Logic, ws: &WellSorted<'_>) -> Result<Answer, Internal> {
    std::thread::scope(|scope| {
        let checker = scope.spawn(|| {
            let context = z3::Context::thread_local();
            let handle = context.handle();
            // The clock starts once the solver is made, as Z3's own timer would.
            let mut session = Session::new(logic, Limit::None);
            let interrupted = AtomicBool::new(false);
            let answer = std::thread::scope(|inner| {
                let (done, finished) = mpsc::channel::<()>();
                let interrupted = &interrupted;
                inner.spawn(move || {
                    let mut wait = limit;
                    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(wait) {
                        interrupted.store(true, Ordering::SeqCst);
                        handle.interrupt();
                        wait = INTERRUPT_AGAIN;
                    }
                });
                let answer = session.decide(ws);
                drop(done);
                answer
            });
            match interrupted.load(Ordering::SeqCst) {
                true => Ok(Answer::Unknown { reason: "interrupted".to_owned() }),
                false => answer,
            }
        });
        checker.join().unwrap_or_else(|_| Err("internal error: the solver's thread panicked".to_owned()))
    })
}

/// Runs `f` on this thread's session for `logic` and `limit`, making the session if need be.
fn with_session<T>(logic: Logic, limit: Limit, mut f: impl FnMut(&mut Session) -> T) -> T {
    // The pool is out of reach only while the thread is being torn down; a throwaway session
    // does then.
    let pooled = SESSIONS.try_with(|cell| {
        let mut sessions = cell.try_borrow_mut().ok()?;
        let session = sessions.entry((logic, limit)).or_insert_with(|| Session::new(logic, limit));
        if session.checks >= SESSION_CHECKS || session.gave_up {
            *session = Session::new(logic, limit);
        }
        session.checks += 1;
        Some(f(session))
    });
    match pooled {
        Ok(Some(result)) => result,
        _ => f(&mut Session::new(logic, limit)),
    }
}

/// The Z3 logics queries are routed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Logic {
    UfLra,
    UfLira,
    UfNia,
    UfNra,
    UfNira,
    /// Linear integers, strings, uninterpreted functions and sorts: the common case. Integer
    /// queries without strings go here too rather than to a `QF_UFLIA` solver: a process then
    /// sets up one Z3 solver instead of two (`cordon check` on a 50-line plan: 21 ms instead of
    /// 32 ms), and each check costs no more.
    Slia,
}

impl Logic {
    fn of(t: Theories) -> Logic {
        match (t.strings, t.nonlinear, t.ints, t.reals) {
            (true, ..) | (false, false, _, false) => Logic::Slia,
            (false, false, false, true) => Logic::UfLra,
            (false, false, true, true) => Logic::UfLira,
            (false, true, _, false) => Logic::UfNia,
            (false, true, false, true) => Logic::UfNra,
            (false, true, true, true) => Logic::UfNira,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Logic::UfLra => "QF_UFLRA",
            Logic::UfLira => "QF_AUFLIRA",
            Logic::UfNia => "QF_UFNIA",
            Logic::UfNra => "QF_UFNRA",
            Logic::UfNira => "QF_AUFNIRA",
            Logic::Slia => "QF_SLIA",
        }
    }
}

/// How a session's checks are bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Limit {
    None,
    /// Z3's `rlimit`: a count of solver steps, the same on every run.
    Steps(u32),
}

/// A long-lived incremental Z3 solver for one logic and limit; each query runs in its own scope.
struct Session {
    solver: z3::Solver,
    /// Checks made on it so far.
    checks: u32,
    /// Whether a check gave up (its step limit reached, or Z3 unsure): such a solver is never
    /// asked again. Z3 4.8.12's incremental solver, asked on after two checks that ran out of
    /// steps, crashed the process (a segmentation fault inside `Z3_solver_check`, in the
    /// conformance corpus, at the 38th check of the session).
    gave_up: bool,
}

/// Checks a session makes before it is replaced by a fresh one. Z3 4.8.12's incremental solver
/// was seen to crash the process (a segmentation fault inside `Z3_solver_check`, on a trivial
/// query about a GitHub session) at its 2,622nd push/check/pop round, every time, in `cordon
/// bench --mode adaptive --policy-off`; with a fresh solver every 2,000 checks the same run
/// ends cleanly. A fresh one every 500 keeps a margin, for a set-up cost of about 10 ms per 500
/// checks.
const SESSION_CHECKS: u32 = 500;

impl Session {
    fn new(logic: Logic, limit: Limit) -> Session {
        let solver = z3::Solver::new_for_logic(logic.name()).unwrap_or_default();
        let Limit::Steps(steps) = limit else {
            return Session { solver, checks: 0, gave_up: false };
        };
        let mut params = Params::new();
        params.set_u32("rlimit", steps);
        solver.set_params(&params);
        Session { solver, checks: 0, gave_up: false }
    }

    /// Asserts the query's hypotheses and its negated goal in a fresh scope and reads the answer.
    fn decide(&mut self, ws: &WellSorted<'_>) -> Result<Answer, Internal> {
        let mut encoder = Encoder::new(ws)?;
        let mut formulas = Vec::with_capacity(ws.query.hypotheses.len() + 1);
        for hypothesis in &ws.query.hypotheses {
            formulas.push(encoder.formula(hypothesis)?);
        }
        formulas.push(encoder.formula(&ws.query.goal)?.not());
        self.solver.push();
        for formula in &formulas {
            self.solver.assert(formula);
        }
        let answer = match self.solver.check() {
            SatResult::Unsat => Ok(Answer::Valid),
            SatResult::Sat => match self.solver.get_model() {
                Some(model) => {
                    counterexample::read(&model, ws, &mut encoder).map(|cx| Answer::Invalid { counterexample: cx })
                }
                None => Err("internal error: Z3 gave no model".to_owned()),
            },
            SatResult::Unknown => {
                self.gave_up = true;
                Ok(Answer::Unknown { reason: self.solver.get_reason_unknown().unwrap_or_else(|| "unknown".to_owned()) })
            }
        };
        self.solver.pop(1);
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sort;

    /// A session is replaced by a fresh solver after `SESSION_CHECKS` checks, and the answers
    /// go on (Z3 4.8.12 crashed a long-lived one).
    #[test]
    fn a_session_is_replaced_after_its_checks() {
        let count = || SESSIONS.with(|cell| cell.borrow().get(&(Logic::Slia, Limit::None)).map(|s| s.checks));
        for _ in 0..SESSION_CHECKS {
            with_session(Logic::Slia, Limit::None, |_| ());
        }
        assert_eq!(count(), Some(SESSION_CHECKS));
        with_session(Logic::Slia, Limit::None, |_| ());
        assert_eq!(count(), Some(1), "the session was not replaced");
    }

    /// Seven pigeons in six holes: every `p_i` in `0..6`, all different, is impossible, but only
    /// a search shows it, longer than the step limit allows.
    fn pigeons() -> Query {
        let pigeon = |i: usize| Term::Var(format!("p{i}").into(), Sort::Int);
        let mut hypotheses = Vec::new();
        for i in 0..7 {
            hypotheses.push(Term::Le(Box::new(Term::Int(0)), Box::new(pigeon(i))));
            hypotheses.push(Term::Lt(Box::new(pigeon(i)), Box::new(Term::Int(6))));
            for j in 0..i {
                hypotheses.push(Term::Not(Box::new(Term::Eq(Box::new(pigeon(i)), Box::new(pigeon(j))))));
            }
        }
        Query { funcs: Vec::new(), hypotheses, goal: Term::Bool(false) }
    }

    /// A solver that gave up on a check (its steps ran out) is not asked again: the next check
    /// gets a fresh one (Z3 4.8.12 crashed asked on after such checks), and the answer is still
    /// found, under the clock.
    #[test]
    fn a_session_that_gave_up_is_replaced() {
        let session = || {
            SESSIONS.with(|cell| {
                cell.borrow().get(&(Logic::Slia, Limit::Steps(FAST_RLIMIT))).map(|s| (s.checks, s.gave_up))
            })
        };
        let mut solver = Solver::new(DEFAULT_TIMEOUT_MS);
        assert_eq!(solver.check(&pigeons()), Answer::Valid);
        assert_eq!(session(), Some((1, true)), "the steps ran out");
        with_session(Logic::Slia, Limit::Steps(FAST_RLIMIT), |_| ());
        assert_eq!(session(), Some((1, false)), "the session that gave up was replaced");
    }

    /// However many different queries a solver answers, it keeps at most `MAX_CACHED` answers,
    /// and a repeated query is still answered from the cache.
    #[test]
    fn the_answer_cache_is_bounded() {
        let mut solver = Solver::new(1000);
        let query = |n: i64| Query {
            funcs: Vec::new(),
            hypotheses: vec![Term::Le(Box::new(Term::Int(n)), Box::new(Term::Var("x".into(), Sort::Int)))],
            goal: Term::Bool(true),
        };
        for n in 0..3 * MAX_CACHED as i64 {
            assert_eq!(solver.check(&query(n)), Answer::Valid);
            assert!(solver.cache.len() <= MAX_CACHED, "{} answers kept", solver.cache.len());
        }
        let hits = solver.stats().cache_hits;
        solver.check(&query(3 * MAX_CACHED as i64 - 1));
        assert_eq!(solver.stats().cache_hits, hits + 1);
    }
}
