//! Runs in the background (`cordon serve`): a queue of runs that workers take under a lease,
//! park at a card that waits for a person, and finish; the answers people give; and the people
//! who may give them (each with a token, kept only as its hash) and their web sessions.
//!
//! A run moves `queued` → `running` → (`waiting` ⇄ `running`) → `done` | `failed`. A worker
//! takes a run with [`crate::Store::claim_run`]: a queued one, a waiting one whose card was
//! answered or whose deadline passed (the answer is then "no", by the deadline), or a running
//! one whose worker's lease ran out (it died). Every later write names the [`Lease`] it holds,
//! and a lease another worker has since taken is refused ([`crate::StoreError::LeaseLost`]): a
//! worker that was thought dead cannot park or finish a run someone else now runs.
//!
//! A parked run, its card and its deadline are written in one transaction: nobody is told of a
//! card before it is stored. An answer is written once, by the principal the card asks, with its
//! audit row in the same transaction; a second answer is refused.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::request::RequestId;

/// A run's number in the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What a queued run runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunKind {
    /// A plan, as its author wrote it.
    Plan,
    /// A request in words, for the configured model.
    Ask,
    /// A plan another agent wrote (`cordon mcp serve`'s calling agent): on a card its own
    /// text is the model's, never the user's.
    AgentPlan,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Plan => "plan",
            RunKind::Ask => "ask",
            RunKind::AgentPlan => "agent-plan",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<RunKind> {
        [RunKind::Plan, RunKind::Ask, RunKind::AgentPlan].into_iter().find(|k| k.as_str() == s)
    }
}

/// Where a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    Queued,
    Running,
    /// Parked at a card until it is answered or its deadline passes.
    Waiting,
    Done,
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Waiting => "waiting",
            RunState::Done => "done",
            RunState::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<RunState> {
        [RunState::Queued, RunState::Running, RunState::Waiting, RunState::Done, RunState::Failed]
            .into_iter()
            .find(|k| k.as_str() == s)
    }

    /// Whether the run has ended.
    pub fn ended(self) -> bool {
        matches!(self, RunState::Done | RunState::Failed)
    }
}

/// A run as it is submitted.
#[derive(Clone, Copy, Debug)]
pub struct NewRun<'a> {
    /// Who submitted it, and whom it acts for: the only one who may answer its cards.
    pub principal: &'a str,
    pub kind: RunKind,
    /// The plan's name (for diagnostics), or the request's.
    pub name: &'a str,
    /// The plan, or the request in words.
    pub text: &'a str,
    /// For a calling agent's run, the clearance it has (`public`, `user`): its report is kept
    /// as that agent may see it too.
    pub clearance: Option<&'a str>,
}

/// A run parked at a card.
#[derive(Clone, Copy, Debug)]
pub struct Parking<'a> {
    /// The request the run is recorded as.
    pub request: RequestId,
    /// The saved run (authenticated by whoever saved it).
    pub saved: &'a [u8],
    /// The card, as JSON, and the seal its saver put on it (a MAC over the run and the card,
    /// checked before it is shown and when it is answered).
    pub card: &'a Value,
    pub seal: &'a str,
    /// When the card stops waiting: an answer after it is refused, and the card counts as
    /// denied (Unix milliseconds).
    pub deadline_ms: i64,
}

/// A person's answer to a run's card, as the server takes it.
#[derive(Clone, Copy, Debug)]
pub struct NewAnswer<'a> {
    /// The seal of the card the person was shown.
    pub seal: &'a str,
    /// Who answers: the run's principal, or the answer is refused.
    pub by: &'a str,
    /// `yes`, `no` or `always`.
    pub answer: &'a str,
    /// A MAC of the answer under the deployment's key: a worker applies a yes only with it, so
    /// whoever can write the store but has not the key cannot approve a card.
    pub mac: &'a str,
}

/// An answer to a run's card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GivenAnswer {
    /// `yes`, `no` or `always`.
    pub answer: String,
    /// Who gave it; `None` when no one did before the deadline (the answer is then `no`).
    pub by: Option<String>,
    pub at_ms: i64,
    /// The answer's MAC, when a person gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
}

/// A run as the queue holds it (without its saved bytes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueuedRun {
    pub id: RunId,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub principal: String,
    pub kind: RunKind,
    pub name: String,
    pub text: String,
    pub state: RunState,
    /// The request it is recorded as, once it started.
    pub request: Option<RequestId>,
    /// While it waits (and after, as it was): the card and its seal, and the deadline.
    pub card: Option<Value>,
    pub seal: Option<String>,
    pub deadline_ms: Option<i64>,
    /// The answer to the card, once given.
    pub answer: Option<GivenAnswer>,
    /// How it ended (the report, as JSON), once it has; a calling agent's run's has the
    /// report as the agent may see it under `for_agent`.
    pub result: Option<Value>,
    /// The clearance of the calling agent whose run it is, if it is one's.
    pub clearance: Option<String>,
}

/// A worker's hold on a run: every write about the run names it, and fails once another worker
/// took the run over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub run: RunId,
    pub owner: String,
    /// Counts the claims of the run: a fencing token.
    pub epoch: i64,
}

/// A run a worker took, with what it needs to go on.
#[derive(Clone, Debug)]
pub struct Claimed {
    pub run: QueuedRun,
    pub lease: Lease,
    /// The saved run, when it was parked (or left running by a worker that died after parking
    /// it once).
    pub saved: Option<Vec<u8>>,
    /// Whether a worker was running it and its lease ran out (the worker died).
    pub resumed_after_crash: bool,
    /// How many effects of its request have an "about to perform" row written after it was
    /// saved (or at all, if it never was): going on from the saved run would make them again.
    pub effects_since_saved: u64,
}

/// Why an answer was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerRefused {
    NoSuchRun,
    /// The card asks someone else.
    NotYours,
    /// The run is not waiting for an answer (it was answered already, or has ended).
    NotWaiting,
    /// The card shown was not the card the run waits on.
    OtherCard,
    /// The deadline passed: the card counts as denied.
    TooLate,
}

impl std::fmt::Display for AnswerRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AnswerRefused::NoSuchRun => "there is no such run",
            AnswerRefused::NotYours => "this card asks someone else",
            AnswerRefused::NotWaiting => "this card is not waiting for an answer (it was answered already)",
            AnswerRefused::OtherCard => "the run waits on another card than the one answered",
            AnswerRefused::TooLate => "the card's deadline passed: it counts as denied",
        })
    }
}

/// A person's sign-in on the web page: who, and the token every form they post must carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebSession {
    pub user: String,
    pub csrf: String,
    pub expires_ms: i64,
}

/// The columns of a stored run, in the order [`RunRow`] takes them.
pub(crate) const RUN_COLUMNS: &str = "id, created_ms, updated_ms, principal, kind, name, text, state, request, card, \
     seal, deadline_ms, answer, answered_by, answered_ms, result, answer_mac, clearance";

/// A stored run as its row holds it, column by column ([`RUN_COLUMNS`]): what each store reads;
/// `QueuedRun::from` makes sense of it, once for every store.
pub(crate) struct RunRow {
    pub id: i64,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub principal: String,
    pub kind: String,
    pub name: String,
    pub text: String,
    pub state: String,
    pub request: Option<i64>,
    pub card: Option<String>,
    pub seal: Option<String>,
    pub deadline_ms: Option<i64>,
    pub answer: Option<String>,
    pub answered_by: Option<String>,
    pub answered_ms: Option<i64>,
    pub result: Option<String>,
    pub answer_mac: Option<String>,
    pub clearance: Option<String>,
}

impl From<RunRow> for QueuedRun {
    fn from(r: RunRow) -> QueuedRun {
        let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
        let answer = r.answer.map(|answer| GivenAnswer {
            answer,
            by: r.answered_by,
            at_ms: r.answered_ms.unwrap_or(0),
            mac: r.answer_mac,
        });
        QueuedRun {
            id: RunId(r.id),
            created_ms: r.created_ms,
            updated_ms: r.updated_ms,
            principal: r.principal,
            // A kind or state this crate does not write is read as the safest: a plan, failed.
            kind: RunKind::parse(&r.kind).unwrap_or(RunKind::Plan),
            name: r.name,
            text: r.text,
            state: RunState::parse(&r.state).unwrap_or(RunState::Failed),
            request: r.request.map(RequestId),
            card: json(r.card),
            seal: r.seal,
            deadline_ms: r.deadline_ms,
            answer,
            result: json(r.result),
            clearance: r.clearance,
        }
    }
}
