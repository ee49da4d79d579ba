//! Requests that run while no one watches (`cordon serve`): a run stops at a card no one is
//! there to answer, is saved, and goes on later, maybe in another process, once a person
//! answered that very card.
//!
//! - A request prepared [`crate::Prepared::in_background`] and answered by [`Later`] ends, at
//!   the first card, as [`crate::Ended::Waiting`]: the run saved under the deployment's key
//!   (authenticated: a saved run edited anywhere is refused when loaded) and the card. Until
//!   then it runs under the worker's lease on the queue's run ([`Background`]).
//! - [`Worker`] takes the queue's runs: it parks each at its card (the card, its seal and its
//!   deadline stored before anyone is told) and finishes it.
//! - The card is [`seal`]ed: a MAC, under the same key, over the run's number and the card as
//!   shown. A page shows a card only if its seal holds, and an answer names the seal of the
//!   card the person saw.
//! - [`crate::Workspace::resume`] loads the saved run and drives it on, its effect passing the
//!   whole pipeline again. [`Later`] answers the card the run now shows only if its seal is the
//!   one answered: if anything made the card differ (a grant revoked, an intent model's second
//!   opinion), the run parks again at the new card, and the answer is not applied to what the
//!   person did not see.

use std::collections::HashMap;
use std::time::Instant;

use cordon_agent::ProviderConfig;
use cordon_engine::{Observers, Stage, Verdict};
use cordon_gate::{Answer, Approver, Card, Reply};
use cordon_runtime::effect::Effect;
use cordon_runtime::{ErrorKind, Run, RunError};
use cordon_store::{Claimed, Lease, Parking, RequestId, RunId, RunKind, RunState, Status, Store, StoreError};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::report::{Audience, Ended};
use crate::{Error, Request, Source, Storage, Workspace};

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

/// Takes `by`'s `answer` to the card sealed `seal` that run `run` waits on, MACed under `key`
/// (see [`cordon_store::NewAnswer`]): the store's refusal if it does not take it.
pub fn answer(
    storage: &Storage,
    key: &[u8],
    run: RunId,
    seal: &str,
    by: &str,
    answer: &str,
) -> Result<Result<(), cordon_store::AnswerRefused>, Error> {
    let mac = answer_mac(key, run, seal, by, answer);
    let given = cordon_store::NewAnswer { seal, by, answer, mac: &mac };
    storage.store().answer_run(run, &given).map_err(|e| storage.error(e))
}

/// The answer a worker may apply to run `run`'s card sealed `seal`: a person's, whose MAC holds;
/// else no (the deadline's, or one written into the store by someone without the key).
fn answer_to_apply(key: &[u8], run: RunId, seal: &str, given: &cordon_store::GivenAnswer) -> Answer {
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

/// How a worker runs the queue's runs.
#[derive(Clone, Debug)]
pub struct WorkerSettings {
    /// Its name in the queue's leases (unique per worker).
    pub name: String,
    /// The deployment's key: saved runs and card seals.
    pub key: Vec<u8>,
    pub lease_ms: i64,
    /// How long a card waits for its answer before it counts as denied.
    pub card_ms: i64,
    /// The model that answers requests in words, if any.
    pub model: Option<ProviderConfig>,
    /// A command run with a parked run's number after its card is stored (a notification).
    pub notify: Option<Vec<String>>,
}

/// What a worker did with the run it took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Did {
    /// The run waits at a card.
    Parked(RunId),
    /// The run ended (done or failed).
    Ended(RunId, RunState),
    /// Another worker took the run over meanwhile: what this one did of it is not kept.
    LostLease(RunId),
}

/// How a worker opens the workspace a principal's requests run in.
pub type OpenWorkspace = Box<dyn FnMut(&str) -> Result<Workspace, Error> + Send>;

/// Takes the queue's runs and runs them: each principal's requests in a workspace of their own,
/// opened when first needed.
pub struct Worker {
    settings: WorkerSettings,
    storage: Storage,
    open: OpenWorkspace,
    workspaces: HashMap<String, Workspace>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("name", &self.settings.name).finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker over `storage`'s queue; `open` makes the workspace a principal's requests run in.
    pub fn new(settings: WorkerSettings, storage: Storage, open: OpenWorkspace) -> Worker {
        Worker { settings, storage, open, workspaces: HashMap::new() }
    }

    /// Takes the next run there is work on and works on it until it ends or waits at a card;
    /// `None` when there is none.
    pub fn work_once(&mut self) -> Result<Option<Did>, Error> {
        let store = self.storage.store();
        let claimed =
            store.claim_run(&self.settings.name, self.settings.lease_ms).map_err(|e| self.storage.error(e))?;
        let Some(claimed) = claimed else { return Ok(None) };
        let id = claimed.run.id;
        let lease = claimed.lease.clone();
        let Finished { state, request, result } = match self.go_on(claimed) {
            Ok(did) => return Ok(Some(did)),
            Err(finished) => finished,
        };
        match self.storage.store().finish_run(&lease, state, request, &result) {
            Ok(()) => Ok(Some(Did::Ended(id, state))),
            Err(StoreError::LeaseLost { .. }) => Ok(Some(Did::LostLease(id))),
            Err(e) => Err(self.storage.error(e)),
        }
    }

    /// Works on a claimed run: `Ok` with what was done when it parked (or lost its lease), `Err`
    /// with how it ended otherwise, for the caller to write.
    fn go_on(&mut self, claimed: Claimed) -> Result<Did, Finished> {
        let Claimed { run, lease, saved, resumed_after_crash, effects_since_saved } = claimed;
        let failed = |why: String| Finished {
            state: RunState::Failed,
            request: run.request,
            result: json!({ "status": "failed", "error": why }),
        };
        if resumed_after_crash && effects_since_saved > 0 {
            if let Some(request) = run.request {
                let _ = self.storage.store().set_status(request, Status::Interrupted);
            }
            return Err(failed(format!(
                "the worker running it stopped after {effects_since_saved} effect(s) since it was last saved: going on \
                 would make them again, so it ends here (`cordon audit show` says which were performed; one with no \
                 outcome may or may not have been)"
            )));
        }
        if resumed_after_crash && saved.is_none() {
            // It stopped before any effect: it starts again, as a new request.
            if let Some(request) = run.request {
                let _ = self.storage.store().set_status(request, Status::Interrupted);
            }
        }
        let workspace = match self.workspaces.entry(run.principal.clone()) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => match (self.open)(&run.principal) {
                Ok(workspace) => v.insert(workspace),
                Err(e) => return Err(failed(e.to_string())),
            },
        };
        let settings = &self.settings;
        let background = Background { key: settings.key.clone(), lease: lease.clone(), lease_ms: settings.lease_ms };
        let mut approver = Later::new(&settings.key, run.id);
        if let (Some(answer), Some(seal)) = (&run.answer, &run.seal) {
            let by = match &answer.by {
                Some(person) => format!("{person} (on the web)"),
                None => "no one (the card's deadline passed)".to_string(),
            };
            approver = approver.answered(seal, answer_to_apply(&settings.key, run.id, seal, answer), &by);
        }
        let source = Source::new(run.name.clone(), run.text.clone());
        let request = match run.kind {
            RunKind::Plan => Request::Plan(&source),
            RunKind::Ask => Request::Ask(&run.text),
        };
        let mut model = match (&settings.model, run.kind) {
            (Some(config), RunKind::Ask) => match cordon_agent::open(config) {
                Ok(model) => Some(model),
                Err(e) => return Err(failed(format!("the model: {e}"))),
            },
            (None, RunKind::Ask) => return Err(failed("this server has no model for requests in words".into())),
            _ => None,
        };
        let prepared = match (&saved, run.request) {
            (Some(saved), Some(recorded)) => workspace.resume(saved, background, recorded, request, &mut approver),
            _ => workspace.prepare(request, &mut approver).and_then(|p| p.in_background(background)),
        };
        let prepared = match (prepared, model.as_deref_mut()) {
            (Ok(prepared), Some(model)) => prepared.with_model(model),
            (Ok(prepared), None) => prepared,
            (Err(e), _) => return Err(failed(e.to_string())),
        };
        let report = match prepared.run(&mut Observers::new()) {
            Ok(report) => report,
            Err(e) => return Err(failed(e.to_string())),
        };
        let waiting = match report.ended {
            Ended::Waiting(ref waiting) => waiting,
            _ => {
                let state = if report.status() == "done" { RunState::Done } else { RunState::Failed };
                return Err(Finished { state, request: report.request, result: report.to_json(Audience::User) });
            }
        };
        let Some(request) = report.request else {
            return Err(failed("the run waits at a card, but the store did not record its request".into()));
        };
        let record = card_record(&waiting.card);
        let seal = seal(&settings.key, run.id, &record);
        let deadline_ms = crate::now_ms().saturating_add(settings.card_ms);
        let parking = Parking { request, saved: &waiting.saved, card: &record, seal: &seal, deadline_ms };
        match self.storage.store().park_run(&lease, &parking) {
            Ok(()) => {}
            Err(StoreError::LeaseLost { .. }) => return Ok(Did::LostLease(run.id)),
            Err(e) => return Err(failed(format!("the run could not be parked: {e}"))),
        }
        // Only now that the card is stored is anyone told of it.
        if let Some(command) = &settings.notify {
            notify(command, run.id);
        }
        Ok(Did::Parked(run.id))
    }
}

/// How a run ended: its state, its request, and its report (or why it failed) as JSON.
struct Finished {
    state: RunState,
    request: Option<RequestId>,
    result: serde_json::Value,
}

/// Runs `command` with the run's number as its last argument, and does not wait for it.
fn notify(command: &[String], run: RunId) {
    let Some((program, args)) = command.split_first() else { return };
    let spawned =
        std::process::Command::new(program).args(args).arg(run.to_string()).stdin(std::process::Stdio::null()).spawn();
    if let Ok(mut child) = spawned {
        std::thread::spawn(move || child.wait());
    }
}
