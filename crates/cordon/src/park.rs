//! Parking a request's run at a card no one is there to answer, and applying an answer to it
//! later: the pieces `cordon::background`'s workers and the request pipeline share.
//!
//! - [`Background`]: how a request runs in the background: the deployment's key and the
//!   worker's lease ([`LeaseStage`] keeps it, before each effect).
//! - [`Waiting`]: a run stopped at a card, saved under the key.
//! - [`card_record`] and [`seal`]: the card as a page shows it, and the MAC that binds it to
//!   its run. [`answer`] takes a person's answer with a MAC of its own.
//! - [`Later`]: the approver of a run in the background: every card waits, but the one whose
//!   seal was answered.

use std::time::Instant;

use cordon_engine::{Stage, Verdict};
use cordon_gate::{Answer, Approver, Card, Reply};
use cordon_runtime::effect::Effect;
use cordon_runtime::{ErrorKind, Run, RunError};
use cordon_store::{AnswerRefused, Lease, QueuedRun, RequestId, RunId, Store, StoreError};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::{Error, Storage};

/// How a request runs in the background: the key its run is saved (and its card sealed) under,
/// shared by every worker of a deployment, and the worker's lease on the queue's run.
#[derive(Clone, Debug)]
pub struct Background {
    pub key: Vec<u8>,
    pub lease: Lease,
    /// How long a lease lasts unless renewed (it is renewed at each effect).
    pub lease_ms: i64,
}

/// The stage that keeps a background run's lease: before each effect it renews the lease
/// (once a third of it has passed), and refuses the effect once another worker holds the run.
pub(crate) struct LeaseStage<'s> {
    store: &'s dyn Store,
    lease: Lease,
    lease_ms: i64,
    renewed: Instant,
}

impl<'s> LeaseStage<'s> {
    pub(crate) fn new(store: &'s dyn Store, background: &Background) -> LeaseStage<'s> {
        LeaseStage { store, lease: background.lease.clone(), lease_ms: background.lease_ms, renewed: Instant::now() }
    }

    /// Notes the request the run is recorded as, in the queue.
    pub(crate) fn started(&self, request: RequestId) -> Result<(), StoreError> {
        self.store.run_started(&self.lease, request)
    }
}

impl Stage for LeaseStage<'_> {
    fn name(&self) -> &str {
        "lease"
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        let due = self.renewed.elapsed().as_millis() >= u128::try_from(self.lease_ms / 3).unwrap_or(0);
        if due {
            if let Err(e) = self.store.renew_lease(&self.lease, self.lease_ms) {
                let why = format!("not performed: this worker no longer holds the run ({e})");
                return Verdict::Refuse(RunError::new(ErrorKind::Tool, effect.span, why));
            }
            self.renewed = Instant::now();
        }
        Verdict::Proceed
    }
}

/// A run waiting for a person: the card, and the run saved under the deployment's key.
#[derive(Debug)]
pub struct Waiting {
    pub card: Card,
    pub saved: Vec<u8>,
}

impl Waiting {
    pub(crate) fn new(run: &Run, sources: &cordon_syntax::SourceMap, key: &[u8], card: Card) -> Waiting {
        Waiting { card, saved: run.save(sources, key) }
    }
}

/// How wide a stored card's text is drawn.
pub const CARD_WIDTH: usize = 100;

/// A card as a page shows it and the store keeps it: the card's data (without its number in the
/// run, which a resumed run counts again), its text as a terminal shows it, but for what to type
/// there ([`Card::render_without_answer`], every line escaped), whether "always" may be answered, and for a flagged card the characters
/// a person must type to approve it.
pub fn card_record(card: &Card) -> serde_json::Value {
    let mut data = card.clone();
    data.id = 0;
    serde_json::json!({
        "card": data,
        "text": card.render_without_answer(CARD_WIDTH),
        "grantable": card.grantable && card.confirmation().is_none(),
        "confirm": card.confirmation().map(|(what, tail)| serde_json::json!({ "what": what, "tail": tail })),
    })
}

/// The seal of `record` ([`card_record`]) as the card of run `run`: HMAC-SHA256 under `key` of
/// the run's number and the record's JSON, in hex.
pub fn seal(key: &[u8], run: RunId, record: &serde_json::Value) -> String {
    // A record is plain data: it always serializes.
    let json = serde_json::to_vec(record).unwrap_or_default();
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(format!("cordon card of run {run}\n").as_bytes());
    mac.update(&json);
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `seal` is `record`'s, compared in constant time.
pub fn seal_holds(key: &[u8], run: RunId, record: &serde_json::Value, seal_hex: &str) -> bool {
    crate::people::same(&seal(key, run, record), seal_hex)
}

/// The MAC of `by`'s `answer` to the card sealed `seal` of run `run`, under `key`, in hex.
fn answer_mac(key: &[u8], run: RunId, seal: &str, by: &str, answer: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(format!("cordon answer of run {run}\n{seal}\n{by}\n{answer}").as_bytes());
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// A person's answer to a card, as a page or the API takes it.
#[derive(Clone, Copy, Debug)]
pub struct Given<'a> {
    /// The seal of the card the person was shown.
    pub seal: &'a str,
    /// `yes`, `no` or `always`.
    pub answer: &'a str,
    /// For a flagged card approved: what the person typed of the flagged value.
    pub confirm: Option<&'a str>,
}

/// Why an answer was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The store's reasons: no such run, another person's, not waiting, another card, too late.
    Store(AnswerRefused),
    /// The answer is not `yes`, `no` or `always`.
    NotAnAnswer,
    /// The stored card's seal does not hold: it was changed after it was made.
    CardChanged,
    /// A flagged card approved without typing the end of its flagged value, or with "always".
    NotConfirmed,
    /// "always" on a card that cannot be remembered.
    NotGrantable,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Store(why) => why.fmt(f),
            Refused::NotAnAnswer => f.write_str("the answer is yes, no or always"),
            Refused::CardChanged => {
                f.write_str("the card was changed in the store after it was made: it cannot be answered")
            }
            Refused::NotConfirmed => {
                f.write_str("a flagged card is approved only by typing the end of the flagged value, never always")
            }
            Refused::NotGrantable => f.write_str("this card cannot be remembered: answer yes or no"),
        }
    }
}

/// Takes `by`'s answer to the card run `run` waits on, for every front end: only the run's
/// principal's; only for the card sealed as given, whose stored seal holds under `key`; a
/// flagged card approved only with the end of its flagged value typed, never "always"; "always"
/// only where the card allows it. Then the store takes it once, with its audit row and a MAC
/// under `key` (see [`cordon_store::NewAnswer`]).
pub fn answer(
    storage: &Storage,
    key: &[u8],
    run: RunId,
    by: &str,
    given: &Given<'_>,
) -> Result<Result<(), Refused>, Error> {
    let queued = storage.store().queued_run(run).map_err(|e| storage.error(e))?;
    let refusal = match &queued {
        None => Some(Refused::Store(AnswerRefused::NoSuchRun)),
        Some(r) if r.principal != by => Some(Refused::Store(AnswerRefused::NotYours)),
        Some(r) => refusal(key, r, given),
    };
    if let Some(refused) = refusal {
        return Ok(Err(refused));
    }
    let mac = answer_mac(key, run, given.seal, by, given.answer);
    let new = cordon_store::NewAnswer { seal: given.seal, by, answer: given.answer, mac: &mac };
    Ok(storage.store().answer_run(run, &new).map_err(|e| storage.error(e))?.map_err(Refused::Store))
}

/// Why `given` may not answer the card `run` waits on, if it may not.
fn refusal(key: &[u8], run: &QueuedRun, given: &Given<'_>) -> Option<Refused> {
    let (Some(card), Some(seal)) = (&run.card, &run.seal) else {
        return Some(Refused::Store(AnswerRefused::NotWaiting));
    };
    if !matches!(given.answer, "yes" | "no" | "always") {
        return Some(Refused::NotAnAnswer);
    }
    if !seal_holds(key, run.id, card, seal) {
        return Some(Refused::CardChanged);
    }
    if let Some(confirm) = card["confirm"].as_object().filter(|_| given.answer != "no") {
        let tail = confirm.get("tail").and_then(|t| t.as_str()).unwrap_or_default();
        let typed = given.confirm.unwrap_or_default().trim();
        if given.answer == "always" || !crate::people::same(typed, tail.trim()) {
            return Some(Refused::NotConfirmed);
        }
    }
    (given.answer == "always" && card["grantable"] != true).then_some(Refused::NotGrantable)
}

/// The answer a worker may apply to run `run`'s card sealed `seal`: a person's, whose MAC holds;
/// else no (the deadline's, or one written into the store by someone without the key).
pub(crate) fn answer_to_apply(key: &[u8], run: RunId, seal: &str, given: &cordon_store::GivenAnswer) -> Answer {
    let by = given.by.as_deref().unwrap_or_default();
    let genuine = given
        .mac
        .as_deref()
        .is_some_and(|mac| crate::people::same(mac, &answer_mac(key, run, seal, by, &given.answer)));
    match Answer::parse(&given.answer) {
        Some(answer) if genuine => answer,
        _ => Answer::No,
    }
}

/// The approver of a run in the background: every card waits for a person ([`Reply::Later`]),
/// except the one card whose seal was answered, once. Its answers are a person's, the
/// principal's own (the page lets only them answer).
#[derive(Debug)]
pub struct Later {
    key: Vec<u8>,
    run: RunId,
    answered: Option<(String, Answer)>,
    /// Who answers: `web` until an answer is given, then who gave it.
    name: String,
}

impl Later {
    /// For run `run` with no answer yet.
    pub fn new(key: &[u8], run: RunId) -> Later {
        Later { key: key.to_vec(), run, answered: None, name: "web".into() }
    }

    /// With `answer`, given by `by` (on the page or over the API) to the card sealed `seal`.
    pub fn answered(mut self, seal: &str, answer: Answer, by: &str) -> Later {
        self.answered = Some((seal.to_string(), answer));
        self.name = by.to_string();
        self
    }
}

impl Approver for Later {
    fn name(&self) -> &str {
        &self.name
    }

    fn review(&mut self, card: &Card) -> Reply {
        let this = seal(&self.key, self.run, &card_record(card));
        match self.answered.take() {
            Some((sealed, answer)) if sealed == this => Reply::Answer(answer),
            other => {
                self.answered = other;
                Reply::Later
            }
        }
    }

    fn speaks_for_user(&self) -> bool {
        true
    }
}
