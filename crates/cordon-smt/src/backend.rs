//! The solver: answer cache, routing of queries to Z3, and the time limit.
//!
//! A query is decided by asserting its hypotheses and the negated goal and asking Z3 for a model:
//! `unsat` means the implication is valid, a model is a counterexample.
//!
//! Speed comes from three choices, each measured (see `benches/solver.rs` and the README):
//!
//! - **One incremental Z3 solver per logic and thread, kept for the life of the thread**, with
//!   each query between `push` and `pop`. The first check on a fresh Z3 solver costs
//!   milliseconds; later checks on an incremental one cost a tenth of a millisecond or so. The
//!   pool is per thread because Z3 objects belong to the thread that made them; every
//!   [`Solver`] on the thread shares it, so making a [`Solver`] per program costs nothing.
//! - **A logic chosen from the theories the query uses** (`QF_UFLIA` for the usual integers,
//!   uninterpreted functions and sorts; `QF_SLIA` once strings occur; ...). Z3's default
//!   configuration costs about twice as much per check as a solver made for the logic.
//! - **A resource limit first, the clock only when needed.** Z3 4.8's `timeout` arms a timer
//!   thread on every check, about 50 µs a query. Linear queries are first run under a `rlimit`
//!   (a deterministic count of solver steps) that small queries never reach; a query that
//!   exhausts it is run again under the `timeout`, with the time that is left. Nonlinear
//!   queries, whose steps Z3 counts too coarsely for that, go straight to the timer.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use z3::{Params, SatResult};

use crate::counterexample;
use crate::encode::{Encoder, Internal};
use crate::sortcheck::{self, Theories, WellSorted};
use crate::{Answer, Query, Term};

/// The time limit [`Solver::default`] uses, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u32 = 5_000;

/// Solver steps (Z3's `rlimit`) a linear query may take before it is run again under the timer.
/// A typical refinement query takes well under a thousand; the most this many steps took in our
/// measurements is about 30 ms, on queries built to be hard.
const FAST_RLIMIT: u32 = 10_000;

/// Below this time limit the resource-limited first attempt is skipped: it could take a
/// noticeable part of the limit on its own.
const FAST_PATH_MIN_TIMEOUT_MS: u32 = 200;

/// Decides [`Query`] values with Z3, caching answers by query.
///
/// A `Solver` holds only its settings, cache and counters; the Z3 solvers it uses belong to the
/// thread (see [`SESSIONS`]), so making a `Solver` is cheap and it may move between threads.
pub struct Solver {
    timeout_ms: u32,
    cache: HashMap<Query, Answer>,
    stats: SolverStats,
}

thread_local! {
    /// This thread's incremental Z3 solvers, one per logic, shared by every [`Solver`] on the
    /// thread. The first check on a new Z3 solver costs milliseconds; later ones do not.
    static SESSIONS: RefCell<[Option<Session>; Logic::COUNT]> = RefCell::new(Default::default());
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
}

impl Solver {
    /// A solver whose queries give up after `timeout_ms` milliseconds (`0`: never).
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
        let timeout_ms = self.timeout_ms;
        let logic = Logic::of(ws.theories);
        // Z3 does not bound the work of nonlinear arithmetic by `rlimit` reliably (a query
        // allowed 50 000 steps ran for 16 s), so those queries go straight to the timer.
        let first_attempt = if ws.theories.nonlinear || timeout_ms < FAST_PATH_MIN_TIMEOUT_MS {
            None
        } else {
            Some(Limit::Steps(FAST_RLIMIT))
        };
        let run = |session: &mut Session| {
            session.solver.push();
            let answer = session.decide(&ws, first_attempt, timeout_ms);
            session.solver.pop(1);
            answer.unwrap_or_else(|reason| Answer::Unknown { reason })
        };
        // The pool is out of reach only while the thread is being torn down.
        let pooled = SESSIONS.try_with(|cell| {
            let mut sessions = cell.try_borrow_mut().ok()?;
            let session = sessions.get_mut(logic as usize)?.get_or_insert_with(|| Session::new(logic));
            Some(run(session))
        });
        match pooled {
            Ok(Some(answer)) => answer,
            _ => run(&mut Session::new(logic)),
        }
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

/// The Z3 logics queries are routed to; each gets its own incremental solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Logic {
    /// Integers (or no arithmetic), uninterpreted functions and sorts: the common case.
    UfLia,
    UfLra,
    UfLira,
    UfNia,
    UfNra,
    UfNira,
    /// Anything with strings.
    Slia,
}

impl Logic {
    const COUNT: usize = 7;

    fn of(t: Theories) -> Logic {
        match (t.strings, t.nonlinear, t.ints, t.reals) {
            (true, ..) => Logic::Slia,
            (false, false, _, false) => Logic::UfLia,
            (false, false, false, true) => Logic::UfLra,
            (false, false, true, true) => Logic::UfLira,
            (false, true, _, false) => Logic::UfNia,
            (false, true, false, true) => Logic::UfNra,
            (false, true, true, true) => Logic::UfNira,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Logic::UfLia => "QF_UFLIA",
            Logic::UfLra => "QF_UFLRA",
            Logic::UfLira => "QF_AUFLIRA",
            Logic::UfNia => "QF_UFNIA",
            Logic::UfNra => "QF_UFNRA",
            Logic::UfNira => "QF_AUFNIRA",
            Logic::Slia => "QF_SLIA",
        }
    }
}

/// How a Z3 solver is currently limited; changing it costs a parameter update, so it is tracked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Limit {
    None,
    Steps(u32),
    Millis(u32),
}

/// A long-lived incremental Z3 solver for one logic.
struct Session {
    solver: z3::Solver,
    limit: Limit,
}

impl Session {
    fn new(logic: Logic) -> Session {
        let solver = z3::Solver::new_for_logic(logic.name()).unwrap_or_default();
        Session { solver, limit: Limit::None }
    }

    fn set_limit(&mut self, limit: Limit) {
        if self.limit == limit {
            return;
        }
        let mut params = Params::new();
        let (rlimit, timeout) = match limit {
            Limit::None => (0, u32::MAX),
            Limit::Steps(steps) => (steps, u32::MAX),
            Limit::Millis(ms) => (0, ms),
        };
        params.set_u32("rlimit", rlimit);
        params.set_u32("timeout", timeout);
        self.solver.set_params(&params);
        self.limit = limit;
    }

    /// Decides one query: first under `first_attempt` if given, then (if that was not enough)
    /// under the clock. The caller has pushed a scope and pops it afterwards.
    fn decide(
        &mut self,
        ws: &WellSorted<'_>,
        first_attempt: Option<Limit>,
        timeout_ms: u32,
    ) -> Result<Answer, Internal> {
        let mut encoder = Encoder::new(ws)?;
        for hypothesis in &ws.query.hypotheses {
            self.solver.assert(encoder.formula(hypothesis)?);
        }
        self.solver.assert(encoder.formula(&ws.query.goal)?.not());

        let start = Instant::now();
        let mut result = SatResult::Unknown;
        if timeout_ms == 0 {
            self.set_limit(Limit::None);
            result = self.solver.check();
        } else {
            if let Some(limit) = first_attempt {
                self.set_limit(limit);
                result = self.solver.check();
            }
            let left = Duration::from_millis(timeout_ms.into()).saturating_sub(start.elapsed());
            if result == SatResult::Unknown && !left.is_zero() {
                // At least 1 ms: a zero timeout would mean none at all.
                let left_ms = u32::try_from(left.as_millis()).unwrap_or(u32::MAX).max(1);
                self.set_limit(Limit::Millis(left_ms));
                result = self.solver.check();
            }
        }

        match result {
            SatResult::Unsat => Ok(Answer::Valid),
            SatResult::Sat => {
                let model = self.solver.get_model().ok_or_else(|| "internal error: Z3 gave no model".to_owned())?;
                Ok(Answer::Invalid { counterexample: counterexample::read(&model, ws, &mut encoder)? })
            }
            SatResult::Unknown => {
                let z3_reason = self.solver.get_reason_unknown().unwrap_or_else(|| "unknown".to_owned());
                let elapsed = start.elapsed();
                let reason = if timeout_ms > 0 && elapsed >= Duration::from_millis(timeout_ms.into()) {
                    format!("timeout after {timeout_ms} ms (z3: {z3_reason})")
                } else {
                    z3_reason
                };
                Ok(Answer::Unknown { reason })
            }
        }
    }
}
