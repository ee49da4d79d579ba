//! A workspace: the tools, store, session and settings one user's requests run with, and the
//! checks that run nothing ([`check`], [`Workspace::check`]). The methods that run a request
//! ([`Workspace::run`], [`Workspace::ask`], [`Workspace::prepare`], [`Workspace::resume`]) are
//! in `request.rs`, with the pipeline they go through: a request depends on its workspace, never
//! the other way round.

use std::sync::{Arc, OnceLock};

use cordon_agent::{Earlier, FillConfig, ProviderConfig};
use cordon_egress::Scanner;
use cordon_engine::Hosts;
use cordon_gate::Approver;
use cordon_label::DcLabel;
use cordon_runtime::{Limits, Sessions};
use cordon_syntax::{Code, Diagnostic, FileId, SourceMap};
use cordon_types::{BindingType, CheckOptions};

use crate::report::CheckReport;
use crate::session::SessionAt;
use crate::{Error, Source, Storage, Tools};

/// What a model may be shown: showing it a value is a flow of that value to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clearance {
    /// Public data only.
    #[default]
    Public,
    /// Also what is secret to the user (a model the user trusts with their data, e.g. one
    /// running on their machine).
    User,
}

impl Clearance {
    /// Every clearance, least first.
    pub const ALL: [Clearance; 2] = [Clearance::Public, Clearance::User];

    /// The clearance named `name`, as [`Clearance::name`] names it.
    pub fn named(name: &str) -> Option<Clearance> {
        Clearance::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Its name, as `--clearance` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Clearance::Public => "public",
            Clearance::User => "user",
        }
    }

    /// The most a prompt may carry: public data (or also `user`'s secrets) from anyone.
    pub fn label(self, user: &str) -> DcLabel {
        match self {
            Clearance::Public => DcLabel::untrusted(),
            Clearance::User => DcLabel::secret(user).join(&DcLabel::untrusted()),
        }
    }
}

/// How a workspace's requests run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Each run's limits: fuel, tool calls, memory, depth, time.
    pub limits: Limits,
    /// The checker's limits (its solver and wall-clock time).
    pub check: CheckOptions,
    /// How long a person's "always" lasts, in milliseconds; without it, until revoked (or, in a
    /// session, for that session).
    pub grants_expire_after_ms: Option<i64>,
    /// A second opinion on each card, from a model that is not the acting one: it is sent only
    /// the request and the card, and can flag a card, never clear one.
    pub intent_model: Option<ProviderConfig>,
    /// What the intent model may be shown of a card: it is a model, and so a sink.
    pub intent_clearance: Clearance,
    /// Before a plan runs, one card for the calls that ask which its effect summary proves
    /// within their sinks and bounded in number.
    pub approve_plan: bool,
    /// Replies asked for one hole before it is given up.
    pub max_attempts: u32,
    /// How deep holes may nest in fills.
    pub max_depth: usize,
    /// What the model filling holes may be shown.
    pub clearance: Clearance,
}

impl Default for Settings {
    fn default() -> Settings {
        let fill = FillConfig::default();
        Settings {
            limits: Limits::default(),
            check: CheckOptions::default(),
            grants_expire_after_ms: None,
            intent_model: None,
            intent_clearance: Clearance::Public,
            approve_plan: false,
            max_attempts: fill.max_attempts,
            max_depth: fill.max_depth,
            clearance: Clearance::Public,
        }
    }
}

/// Checks `plan` against `policies` for `user` (whom `user()` names), or the policies alone
/// (which are then also linted for the default labels they rely on): types, refinements,
/// linearity, and the labels' static analysis.
pub fn check(policies: &[Source], plan: Option<&Source>, options: &CheckOptions, user: &str) -> CheckReport {
    check_keeping_bindings(policies, plan, options, user).0
}

/// [`check`], with the bindings' types the checker recorded if `options` asked it to (an
/// editor's, `ide.rs`).
pub(crate) fn check_keeping_bindings(
    policies: &[Source],
    plan: Option<&Source>,
    options: &CheckOptions,
    user: &str,
) -> (CheckReport, Vec<BindingType>) {
    let mut sources = SourceMap::new();
    let files: Vec<FileId> = policies.iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
    let plan = plan.map(|p| sources.add(p.name.clone(), p.text.clone()));
    let (mut outcome, effects) = cordon_flow::check(&sources, &files, plan, options, user, false);
    if policies.is_empty() {
        outcome.diagnostics = without_policy(outcome.diagnostics, &sources);
    }
    let mut releases = Vec::new();
    if plan.is_none() {
        outcome.diagnostics.extend(cordon_types::lint(&sources, &files));
        if let Some(checked) = &outcome.program {
            releases = cordon_flow::releases(checked, &sources, user);
        }
    }
    let bindings = std::mem::take(&mut outcome.bindings);
    (CheckReport { sources, diagnostics: outcome.diagnostics, effects, releases }, bindings)
}

/// A plan's diagnostics when no policy was given: its names that nothing declares, said once,
/// with why, instead of one error each (the other diagnostics as they are).
fn without_policy(diagnostics: Vec<Diagnostic>, sources: &SourceMap) -> Vec<Diagnostic> {
    let (undefined, mut rest): (Vec<Diagnostic>, Vec<Diagnostic>) =
        diagnostics.into_iter().partition(|d| d.code == Code::UndefinedName && d.is_error());
    let Some(first) = undefined.first() else { return rest };
    let mut names: Vec<String> = Vec::new();
    for d in &undefined {
        let name = d.labels.iter().find(|l| l.primary).map(|l| sources.slice(l.span).to_string());
        if let Some(name) = name.filter(|n| !names.contains(n)) {
            names.push(name);
        }
    }
    let shown: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let span = first.labels.iter().find(|l| l.primary).map(|l| l.span).unwrap_or_default();
    let message = format!(
        "{} {} not defined: no policy was given",
        shown.join(", "),
        if names.len() == 1 { "is" } else { "are" }
    );
    let diagnostic = Diagnostic::error(Code::UndefinedName, span, message).with_help(
        "a plan's capabilities and inputs are declared by a policy: give it with `--policy FILE` (the simulated \
         environments' own are in `policies/`)",
    );
    rest.insert(0, diagnostic);
    rest
}

/// The policies, tools, store, session and settings one user's requests run with.
#[derive(Debug)]
pub struct Workspace {
    pub(crate) tools: Tools,
    pub(crate) storage: Storage,
    pub(crate) session: Option<SessionAt>,
    /// The sessions between requests when they are kept nowhere else (no `session`).
    pub(crate) sessions: Sessions,
    pub(crate) settings: Settings,
    /// The requests put to a model so far and their answers, for the next one's prompt.
    pub(crate) history: Vec<Earlier>,
    /// Requests put to a model so far: the next is `<request N+1>`.
    pub(crate) asked: usize,
    /// The outgoing-data check's detectors, shared by every request: compiled (hundreds of
    /// patterns) at the first text one of them reads, so a run that sends nothing never pays.
    scanner: OnceLock<Arc<Scanner>>,
}

impl Workspace {
    /// A workspace over `tools`, recording in `storage`, keeping no sessions.
    pub fn new(tools: Tools, storage: Storage, settings: Settings) -> Workspace {
        Workspace {
            tools,
            storage,
            session: None,
            sessions: Sessions::default(),
            settings,
            history: Vec::new(),
            asked: 0,
            scanner: OnceLock::new(),
        }
    }

    /// The outgoing-data check's detectors, built on first use: with the tools' broker, also
    /// looking for the vault's secrets, exact or encoded, by asking the broker (which alone
    /// holds them).
    pub(crate) fn scanner(&self) -> Arc<Scanner> {
        let build = || match &self.tools.broker {
            Some(broker) => Scanner::with_secret_finder(broker.clone()),
            None => Scanner::new(&[]),
        };
        self.scanner.get_or_init(|| Arc::new(build())).clone()
    }

    /// The same workspace, keeping its sessions at `at` from one request to the next (without,
    /// they are kept in memory, for the workspace's life).
    pub fn with_session(mut self, at: SessionAt) -> Workspace {
        self.session = Some(at);
        self
    }

    /// Whom the plans act for.
    pub fn principal(&self) -> &str {
        &self.tools.principal
    }

    /// The policy modules, in order.
    pub fn policies(&self) -> &[Source] {
        &self.tools.policies
    }

    pub fn hosts(&self) -> &Hosts {
        &self.tools.hosts
    }

    pub fn hosts_mut(&mut self) -> &mut Hosts {
        &mut self.tools.hosts
    }

    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Checks `plan` as a run answered by `approver` would (with what the session knows now),
    /// changing nothing.
    pub fn check(&self, plan: &Source, approver: &dyn Approver) -> Result<CheckReport, Error> {
        let sessions = match &self.session {
            Some(at) => at.peek(&self.storage)?,
            None => self.sessions.clone(),
        };
        let mut sources = SourceMap::new();
        let policies: Vec<FileId> =
            self.policies().iter().map(|p| sources.add(p.name.clone(), p.text.clone())).collect();
        let file = sources.add(plan.name.clone(), plan.text.clone());
        let options = self.check_options(&sessions);
        let (outcome, effects) =
            cordon_flow::check(&sources, &policies, Some(file), &options, self.principal(), approver.speaks_for_user());
        Ok(CheckReport { sources, diagnostics: outcome.diagnostics, effects, releases: Vec::new() })
    }

    pub(crate) fn check_options(&self, sessions: &Sessions) -> CheckOptions {
        CheckOptions { entry_facts: sessions.entry_facts(self.principal()), ..self.settings.check.clone() }
    }

    /// How holes are filled, for `user`, where `asked` says whether a person speaking for them
    /// will be shown cards.
    pub(crate) fn fill_config(&self, user: &str, asked: bool) -> FillConfig {
        FillConfig {
            max_attempts: self.settings.max_attempts,
            max_depth: self.settings.max_depth,
            clearance: self.settings.clearance.label(user),
            clearance_names: Clearance::ALL.iter().map(|c| (c.name().to_string(), c.label(user))).collect(),
            history: self.history.clone(),
            user: user.to_string(),
            asked,
            ..FillConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_cleared_model_may_see_the_users_secrets_and_no_one_elses() {
        let alices = DcLabel::secret("alice").join(&DcLabel::endorsed("alice"));
        let bobs = DcLabel::secret("bob");
        assert!(!alices.flows_to(&Clearance::Public.label("alice")));
        assert!(alices.flows_to(&Clearance::User.label("alice")));
        assert!(!bobs.flows_to(&Clearance::User.label("alice")));
        assert!(DcLabel::untrusted().flows_to(&Clearance::Public.label("alice")));
    }
}
