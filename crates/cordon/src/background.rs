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

use cordon_agent::ProviderConfig;
use cordon_engine::Observers;
use cordon_store::{Claimed, Parking, RequestId, RunId, RunKind, RunState, Status, StoreError};
use serde_json::json;

use crate::park::answer_to_apply;
pub use crate::park::{Background, Given, Later, Refused, Waiting, answer, card_record, seal, seal_holds};
use crate::report::{Audience, Ended};
use crate::{Clearance, Error, Request, Source, Storage, Workspace};

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
            RunKind::AgentPlan => Request::AgentPlan(&source),
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
                let mut result = report.to_json(Audience::User);
                if let Some(name) = &run.clearance {
                    // An unknown clearance is the least one.
                    let clearance = Clearance::named(name).unwrap_or_default();
                    let label = clearance.label(&run.principal);
                    result["for_agent"] = report.to_json(Audience::Agent { name: clearance.name(), clearance: &label });
                }
                return Err(Finished { state, request: report.request, result });
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
