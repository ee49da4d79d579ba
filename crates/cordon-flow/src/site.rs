//! What the analysis says of each place the plan may reach the outside world: a tool call (a
//! [`Site`]: how many times it may be made, under which conditions, each argument's bounds and
//! origins against its sink, and its [`Verdict`]) and a typed hole (a [`HoleReach`]). The
//! analysis records them as it walks the plan; the crate root gathers them into its `Summary`.

use cordon_label::{Release, Tier};
use cordon_syntax::Span;
use serde::Serialize;

use crate::abs::{Bounds, Origins};

/// How many times a call may be made in one run of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Count {
    AtMost(u64),
    /// As many times as a list from elsewhere has elements, or a recursion goes: up to the
    /// run's tool-call limit.
    Unbounded,
}

impl Count {
    /// This many times, each time making `other` calls.
    pub(crate) fn times(self, other: Count) -> Count {
        match (self, other) {
            (Count::AtMost(0), _) | (_, Count::AtMost(0)) => Count::AtMost(0),
            (Count::AtMost(a), Count::AtMost(b)) => a.checked_mul(b).map_or(Count::Unbounded, Count::AtMost),
            _ => Count::Unbounded,
        }
    }

    /// These calls and `other` ones.
    pub(crate) fn plus(self, other: Count) -> Count {
        match (self, other) {
            (Count::AtMost(a), Count::AtMost(b)) => a.checked_add(b).map_or(Count::Unbounded, Count::AtMost),
            _ => Count::Unbounded,
        }
    }

    /// Does `n` calls stay within this count?
    pub fn allows(self, n: u64) -> bool {
        match self {
            Count::AtMost(m) => n <= m,
            Count::Unbounded => true,
        }
    }
}

/// Whether a label flows to its sink, as far as the analysis can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// On every run: its upper bound flows to the sink's lower bound.
    Allowed,
    /// Depends on what the run meets: the run time decides.
    May,
    /// On no run: its lower bound does not flow to the sink's upper bound.
    Must,
}

impl Verdict {
    /// Judged with the releases that need no one's yes: what they let out is not a failure.
    pub(crate) fn of(carried: &Bounds, sink: &Bounds, releases: &[Release]) -> Verdict {
        if carried.hi.released(&sink.lo, releases, false).flows_to(&sink.lo) {
            Verdict::Allowed
        } else if !carried.lo.released(&sink.hi, releases, false).flows_to(&sink.hi) {
            Verdict::Must
        } else {
            Verdict::May
        }
    }

    /// A call reached on several paths: definite only where every path agrees.
    pub(crate) fn either(self, other: Verdict) -> Verdict {
        if self == other { self } else { Verdict::May }
    }
}

/// Where an approval card says the call goes (`@card(destination = ..)`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Destination {
    /// The tool's card names none.
    None,
    /// Fixed by the plan: the same on every run.
    Known(String),
    /// Computed at run time.
    Computed,
}

/// One argument of a call.
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    pub name: String,
    /// The argument's label (with everything inside it that the boundary counts).
    pub carried: Bounds,
    pub origins: Origins,
    /// The parameter's sink.
    pub sink: Bounds,
    /// The argument against its sink.
    pub verdict: Verdict,
    /// The decision to call (the program-counter label) against this parameter's sink.
    pub decision: Verdict,
}

/// A tool call the plan may make.
#[derive(Clone, Debug, Serialize)]
pub struct Site {
    pub capability: String,
    pub tool: String,
    #[serde(skip)]
    pub span: Span,
    pub line: u32,
    /// The conditions it is made under, innermost last, as the source says them.
    pub conditions: Vec<String>,
    pub count: Count,
    pub params: Vec<Param>,
    /// The decision's label (the program-counter label at the call).
    pub pc: Bounds,
    pub decision_sink: Bounds,
    pub decision: Verdict,
    /// The least and the most strict approval tier it may need.
    pub tiers: (Tier, Tier),
    pub destination: Destination,
}

impl Site {
    /// The same call reached again (a function called twice): counts add up, bounds widen.
    pub(crate) fn merge(&mut self, other: Site) {
        self.count = self.count.plus(other.count);
        if self.conditions != other.conditions {
            let common = self.conditions.iter().zip(&other.conditions).take_while(|(a, b)| a == b).count();
            self.conditions.truncate(common);
            self.conditions.push("(reached on several paths)".into());
        }
        for (p, q) in self.params.iter_mut().zip(other.params) {
            p.carried = p.carried.either(&q.carried);
            p.origins = p.origins.union(&q.origins);
            p.sink = p.sink.either(&q.sink);
            p.verdict = p.verdict.either(q.verdict);
            p.decision = p.decision.either(q.decision);
        }
        self.pc = self.pc.either(&other.pc);
        self.decision_sink = self.decision_sink.either(&other.decision_sink);
        self.decision = self.decision.either(other.decision);
        self.tiers = (self.tiers.0.min(other.tiers.0), self.tiers.1.max(other.tiers.1));
        if self.destination != other.destination {
            self.destination = Destination::Computed;
        }
    }

    /// The worst of its arguments' and its decision's verdicts.
    pub fn verdict(&self) -> Verdict {
        self.params.iter().flat_map(|p| [p.verdict, p.decision]).fold(self.decision, Verdict::max)
    }

    /// `GitHub.create_issue`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.capability, self.tool)
    }
}

/// A typed hole: code no one has seen yet, which may call any tool of these capabilities.
#[derive(Clone, Debug, Serialize)]
pub struct HoleReach {
    #[serde(skip)]
    pub span: Span,
    pub line: u32,
    pub capabilities: Vec<String>,
    /// The program-counter label at the hole: what its fill runs under, at least.
    pub pc: Bounds,
}
