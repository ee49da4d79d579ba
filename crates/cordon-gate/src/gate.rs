//! The gate: the stage every effect passes after the boundary admitted it and before the host
//! performs it. It decides in three values, never a bool ([`Decision`]): allow, needs approval,
//! deny; asks the approver when a card is needed; and answers the engine.

use std::sync::Arc;

use cordon_egress::{Category, Scanner};
use cordon_engine::{Note, Stage, Verdict};
use cordon_label::{Label, Tier};
use cordon_runtime::{Effect, ErrorKind, Program, RunError, Value, deep_label};
use cordon_store::{GrantId, GrantQuery, NewGrant, Scope};
use serde::Serialize;

use crate::approver::{Answer, Approver, Reply};
use crate::card::{Card, FlowShown, Sensitive, Shown, integrity_words, named_in, secrecy_words};
use crate::egress;
use crate::grants::{Grants, MemoryGrants};
use crate::intent::{IntentCheck, ProvenanceRules};
use crate::plan::PlanApproval;

/// What the rules say about a call before anyone is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Performed without a card: no tier, or a grant covers it and nothing is flagged.
    Allow,
    /// A card first; `grantable` when "always" may be answered.
    NeedsApproval { grantable: bool },
    /// Never performed (`@approval(deny)`), whoever approves.
    Deny,
}

/// The rules, as a pure function of what the gate found: the tier; whether the labels refused
/// the call (and the user could approve that); whether the intent check flagged the card;
/// whether the call sends what needs the user's consent (and their own words did not give it);
/// and whether a live grant covers it. Deny beats everything; `ask_always` ignores grants; a
/// flagged card, a label approval or a consent needs a card even under a grant, and never makes
/// one.
pub fn rule(tier: Tier, flows: bool, flagged: bool, consent: bool, granted: bool) -> Decision {
    let special = flows || flagged || consent;
    match tier {
        Tier::Deny => Decision::Deny,
        Tier::AskAlways => Decision::NeedsApproval { grantable: false },
        Tier::Ask if granted && !special => Decision::Allow,
        Tier::Ask => Decision::NeedsApproval { grantable: !special },
        Tier::None if flows || consent => Decision::NeedsApproval { grantable: false },
        Tier::None => Decision::Allow,
    }
}

/// How many calls the gate decided, and how: the number of cards is the run's security budget
/// (every card is a person's attention); label cards are what utility costs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub decided: u64,
    /// Performed without a card (no tier, or a grant).
    pub allowed: u64,
    /// Refused by `@approval(deny)`.
    pub denied: u64,
    pub cards: u64,
    /// Cards for calls the labels refused.
    pub label_cards: u64,
    pub approved: u64,
    /// Cards answered no (or by no one).
    pub refused: u64,
    pub grants_used: u64,
    pub grants_made: u64,
    /// Performed without their own card, under the approval of the whole plan.
    pub plan_covered: u64,
    /// Cards the intent check flagged.
    pub flagged: u64,
    /// Calls held for an answer that comes later.
    pub held: u64,
    /// Calls refused because something failed (a tier or card that could not be computed, a
    /// grant store that could not be read or written).
    pub errors: u64,
}

/// One decision, for the trace and the JSON output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub tool: String,
    pub at: cordon_syntax::Span,
    pub tier: Option<Tier>,
    pub decision: Option<Decision>,
    /// What happened: `allowed`, `granted`, `plan` (covered by the plan's approval),
    /// `approved`, `refused`, `denied`, `held`, `error`.
    pub outcome: &'static str,
    /// Boxed: most records have none, and a long run keeps one record per call.
    pub card: Option<Box<Card>>,
    /// Who answered the card (`terminal`, `scripted`, `none`, `all`).
    pub approver: Option<String>,
    pub answer: Option<Answer>,
    pub grant_used: Option<GrantId>,
    pub grants_made: Vec<GrantId>,
    /// Why it was refused, when it was.
    pub reason: Option<String>,
    /// What the decision to make the call depended on (bottom for the whole plan's card):
    /// that there is a record at all says which way that decision went.
    #[serde(skip)]
    pub pc: Label,
}

/// A card waiting for an answer that comes later: which call, and the answer once given.
#[derive(Debug)]
struct Pending {
    key: String,
    card: u64,
    answer: Option<Answer>,
}

/// The approval gate: a [`Stage`].
pub struct Gate<'a> {
    program: Program,
    user: String,
    request: String,
    /// Whether a model wrote the plan (a request was given): then the plan's own text is the
    /// model's, not the user's, on every card.
    plan_by_model: bool,
    approver: Box<dyn Approver + 'a>,
    intent: Box<dyn IntentCheck + 'a>,
    /// The outgoing-data check's detectors, for the consent tier, and the user's own words
    /// (their request, or the plan they wrote), whose consent-tier data they consent to send
    /// to whom they name.
    consent: Option<(Arc<Scanner>, String)>,
    grants: Box<dyn Grants + 'a>,
    session: Option<String>,
    scope: Scope,
    grant_ttl_ms: Option<i64>,
    /// What serves each capability (`Host::instance`), which grants are bound to.
    instances: std::collections::HashMap<String, String>,
    cards: u64,
    /// The calls the person approved with the whole plan, and the card that asked.
    plan: PlanApproval,
    plan_decision: Option<Record>,
    pending: Option<Pending>,
    stats: Stats,
    records: Vec<Record>,
    /// Whether [`Gate::records`] keeps a call the policy allowed with no card
    /// ([`Gate::keeping_only_decisions`]).
    keep_allowed: bool,
    /// The record of the decision just made, when it is one `records` does not keep.
    just_allowed: Option<Record>,
}

impl std::fmt::Debug for Gate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("user", &self.user)
            .field("approver", &self.approver.name())
            .field("intent", &self.intent.name())
            .field("stats", &self.stats)
            .finish()
    }
}

impl<'a> Gate<'a> {
    /// A gate for runs of `program` on behalf of `user` (the principal `user()` of its
    /// labels), asking `approver`. Grants are kept in memory and the intent check is
    /// [`ProvenanceRules`] with nothing trusted, until told otherwise.
    pub fn new(program: &Program, user: &str, approver: Box<dyn Approver + 'a>) -> Gate<'a> {
        Gate {
            program: program.clone(),
            user: user.to_string(),
            request: String::new(),
            plan_by_model: false,
            approver,
            intent: Box::new(ProvenanceRules::new()),
            consent: None,
            grants: Box::new(MemoryGrants::new()),
            session: None,
            scope: Scope::UntilRevoked,
            grant_ttl_ms: None,
            instances: std::collections::HashMap::new(),
            cards: 0,
            plan: PlanApproval::default(),
            plan_decision: None,
            pending: None,
            stats: Stats::default(),
            records: Vec::new(),
            keep_allowed: true,
            just_allowed: None,
        }
    }

    /// The same gate, its [`Gate::records`] keeping only the calls that took more than the
    /// policy's allowing (a card, a grant, the plan's approval, a refusal, a wait): the calls it
    /// simply allowed are counted in [`Gate::stats`] and told to observers, not kept, so a long
    /// run does not hold a record of each.
    pub fn keeping_only_decisions(mut self) -> Gate<'a> {
        self.keep_allowed = false;
        self
    }

    /// The user's original request, as the user typed it, for a plan a model wrote from it:
    /// all the intent check knows of the user's intent. The plan's own text on a card is then
    /// the model's, unless the request names it.
    pub fn with_request(mut self, request: &str) -> Gate<'a> {
        self.request = request.to_string();
        self.plan_by_model = true;
        self
    }

    /// Asks the user's consent, on a card, before a call sends to readers other than them what
    /// `scanner`'s consent tier finds (health, finances, beliefs, precise location, ..), unless
    /// `own_words` (their request, or the plan they wrote) speak of that kind of data and name
    /// every destination and recipient of the call: "tell my dentist my tooth hurts" consents to
    /// health, to the dentist, for this request only.
    pub fn with_consent(mut self, scanner: Arc<Scanner>, own_words: &str) -> Gate<'a> {
        self.consent = Some((scanner, own_words.to_string()));
        self
    }

    /// Finds and keeps grants in `grants` (a store's, to persist across runs).
    pub fn with_grants(mut self, grants: Box<dyn Grants + 'a>) -> Gate<'a> {
        self.grants = grants;
        self
    }

    /// Checks intent with `intent` instead of the default rules.
    pub fn with_intent(mut self, intent: Box<dyn IntentCheck + 'a>) -> Gate<'a> {
        self.intent = intent;
        self
    }

    /// Runs in the session `name`: session-scoped grants of other sessions do not apply, and
    /// grants answered "always" are kept for this session only.
    pub fn in_session(mut self, name: &str) -> Gate<'a> {
        self.session = Some(name.to_string());
        self.scope = Scope::Session(name.to_string());
        self
    }

    /// Grants answered "always" are kept until revoked (the default outside a session).
    pub fn remember_until_revoked(mut self) -> Gate<'a> {
        self.scope = Scope::UntilRevoked;
        self
    }

    /// What serves each capability, by name (`Hosts::instances`): a grant made here is bound
    /// to what served its tool, and covers the tool only as served by the same.
    pub fn with_instances(mut self, instances: impl IntoIterator<Item = (String, String)>) -> Gate<'a> {
        self.instances = instances.into_iter().collect();
        self
    }

    /// Grants answered "always" expire after `ms` milliseconds.
    pub fn grants_expire_after_ms(mut self, ms: i64) -> Gate<'a> {
        self.grant_ttl_ms = Some(ms);
        self
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Every decision so far, in order (but for the calls simply allowed, if the gate is
    /// [`Gate::keeping_only_decisions`]).
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// What the gate decided, its use over: every call's record, the plan's, and the counts,
    /// kept whole, not copied.
    pub fn into_decisions(self) -> (Vec<Record>, Option<Record>, Stats) {
        (self.records, self.plan_decision, self.stats)
    }

    /// The card waiting for an answer that comes later, if any.
    pub fn pending_card(&self) -> Option<u64> {
        self.pending.as_ref().filter(|p| p.answer.is_none()).map(|p| p.card)
    }

    /// Gives the answer to the held card `card`; then resume the run (`Engine::resume`) and
    /// the gate decides with it. An answer for any other card is refused.
    pub fn answer(&mut self, card: u64, answer: Answer) -> Result<(), String> {
        match &mut self.pending {
            Some(p) if p.card == card && p.answer.is_none() => {
                p.answer = Some(answer);
                Ok(())
            }
            _ => Err(format!("no card {card} is waiting for an answer")),
        }
    }

    /// Decides about `effect`: the verdict for the engine, and what the gate records.
    fn judge(&mut self, effect: &Effect) -> (Verdict, Record) {
        let mut record = Record {
            tool: format!("{}.{}", effect.capability, effect.tool),
            at: effect.span,
            tier: None,
            decision: None,
            outcome: "error",
            card: None,
            approver: None,
            answer: None,
            grant_used: None,
            grants_made: Vec::new(),
            reason: None,
            pc: effect.pc.clone(),
        };
        let tier = match self.program.tier(effect) {
            Ok(t) => t,
            Err(e) => return self.failed(record, effect, "its approval tier could not be computed", &e.to_string()),
        };
        record.tier = Some(tier);
        // Label cards only where the approver speaks for the user and the user may approve
        // every failed check; otherwise the gate lets it go on, and the run refuses it as the
        // boundary would have.
        let flows = !effect.flows.is_empty();
        let approvable =
            flows && self.approver.speaks_for_user() && effect.flows.iter().all(|f| f.approvable_by(&self.user));
        if tier == Tier::Deny {
            record.decision = Some(Decision::Deny);
            let reason = format!(
                "`{}` is never performed: the policy marks it `@approval(deny)`, and no approval can change that",
                record.tool
            );
            return self.refuse(record, effect, reason, "denied");
        }
        if flows && !approvable {
            record.outcome = "unapprovable";
            record.reason = Some("the labels refused this call and the user may not approve it".into());
            return (Verdict::Proceed, record);
        }
        // What needs consent, before a card is built: most calls send nothing of the kind.
        let found = match &self.consent {
            Some((scanner, _)) => egress::needs_consent(scanner, effect, &self.user),
            None => Vec::new(),
        };
        let allowed = |mut record: Record| {
            record.decision = Some(Decision::Allow);
            record.outcome = "allowed";
            (Verdict::Proceed, record)
        };
        if tier == Tier::None && !flows && found.is_empty() {
            return allowed(record);
        }
        let mut card = match Card::build(&self.program, effect, tier, &self.user) {
            Ok(c) => c,
            Err(e) => return self.failed(record, effect, "its approval card could not be built", &e.to_string()),
        };
        card.sensitive = self.not_consented(found, &card);
        let consent = !card.sensitive.is_empty();
        if tier == Tier::None && !flows && !consent {
            return allowed(record);
        }
        if flows {
            card.flows = self.flows_shown(effect);
        }
        card.hide_everywhere();
        // Masked once every value is on it: the card is recorded (the audit log, transcripts).
        if consent {
            self.mask(&mut card);
        }
        if self.plan_by_model {
            card.attribute_plan_text_to_model(&self.request);
        }
        card.flags = self.intent.check(&self.request, &card);
        let flagged = !card.flags.is_empty();
        if tier == Tier::Ask && !flagged && !flows && !consent && self.plan.take(effect, &card) {
            record.decision = Some(Decision::Allow);
            record.outcome = "plan";
            return (Verdict::Proceed, record);
        }
        let mut granted = None;
        if tier == Tier::Ask && !flagged && !flows && !consent {
            match self.find_grant(&card) {
                Ok(g) => granted = g,
                Err(e) => return self.failed(record, effect, "the grant store could not be read", &e),
            }
        }
        let decision = rule(tier, flows, flagged, consent, granted.is_some());
        record.decision = Some(decision);
        match decision {
            Decision::Deny => unreachable_deny(self, record, effect),
            Decision::Allow => {
                record.outcome = if granted.is_some() { "granted" } else { "allowed" };
                record.grant_used = granted;
                (Verdict::Proceed, record)
            }
            Decision::NeedsApproval { grantable } => {
                card.grantable = grantable;
                self.ask(record, effect, card, flows)
            }
        }
    }

    /// Of what a call sends that needs the user's consent (`found`: each text's place and
    /// kinds), what their own words did not give: a kind of data they did not speak of, or a
    /// destination or recipient (of `card`) they did not name.
    fn not_consented(&self, found: Vec<(String, Vec<Category>, String)>, card: &Card) -> Vec<Sensitive> {
        let Some((scanner, own_words)) = &self.consent else { return Vec::new() };
        if found.is_empty() {
            return Vec::new();
        }
        let spoken = egress::consent_categories(scanner, own_words);
        let destinations = card.destinations();
        let named = !destinations.is_empty() && destinations.iter().all(|d| named_in(own_words, d));
        found
            .into_iter()
            .filter(|(_, kinds, _)| !(named && kinds.iter().all(|k| spoken.contains(k))))
            .map(|(at, mut kinds, rewritten)| {
                kinds.sort_unstable();
                kinds.dedup();
                let kinds = kinds.iter().map(|k| k.placeholder().trim_matches(['[', ']']).to_string()).collect();
                Sensitive { at, kinds, rewritten }
            })
            .collect()
    }

    /// Every value `card` shows with what the outgoing-data check finds in it masked: the card
    /// is recorded (the audit log, transcripts), and a record may not hold it.
    fn mask(&self, card: &mut Card) {
        let Some((scanner, _)) = &self.consent else { return };
        // A part cut out of a value may hold a piece of what is masked in it: a masked value's
        // parts are not marked.
        for flow in &mut card.flows {
            if egress::masked(scanner, &flow.value.text).is_some() {
                flow.received.clear();
            }
        }
        for shown in card.shown_mut() {
            if let Some(masked) = egress::masked(scanner, &shown.text) {
                shown.text = masked;
            }
        }
    }

    /// The answer to the plan's card, if one was asked ([`Gate::approve_plan`]).
    pub fn plan_decision(&self) -> Option<&Record> {
        self.plan_decision.as_ref()
    }

    /// Asks the approver, before the run, to approve the calls `plan` covers at once; `true`
    /// if they did. A plan with nothing to cover asks nothing. An answer that would come later
    /// is a no: nothing has run yet, so each call will ask for itself.
    pub fn approve_plan(&mut self, plan: PlanApproval) -> bool {
        if plan.is_empty() {
            return false;
        }
        let mut card = plan.card(&self.user);
        self.cards += 1;
        card.id = self.cards;
        self.stats.cards += 1;
        let answer = match self.approver.review(&card) {
            Reply::Answer(a) => a,
            Reply::Later => Answer::No,
        };
        let approved = answer != Answer::No;
        if approved {
            self.stats.approved += 1;
            self.plan = plan;
        } else {
            self.stats.refused += 1;
        }
        self.plan_decision = Some(Record {
            tool: card.tool.clone(),
            at: cordon_syntax::Span::default(),
            tier: Some(card.tier),
            decision: Some(Decision::NeedsApproval { grantable: false }),
            outcome: if approved { "approved" } else { "refused" },
            card: Some(Box::new(card)),
            approver: Some(self.approver.name().to_string()),
            answer: Some(answer),
            grant_used: None,
            grants_made: Vec::new(),
            reason: None,
            pc: Label::bottom(),
        });
        approved
    }

    /// Shows `card` and acts on the answer.
    fn ask(&mut self, mut record: Record, effect: &Effect, mut card: Card, flows: bool) -> (Verdict, Record) {
        let key = effect_key(effect);
        let answered = match &self.pending {
            Some(p) if p.key == key => p.answer.map(|a| (p.card, a)),
            _ => None,
        };
        let answer = match answered {
            Some((id, answer)) => {
                card.id = id;
                self.pending = None;
                answer
            }
            None => {
                self.cards += 1;
                card.id = self.cards;
                self.stats.cards += 1;
                self.stats.label_cards += u64::from(flows);
                self.stats.flagged += u64::from(!card.flags.is_empty());
                match self.approver.review(&card) {
                    Reply::Answer(a) => a,
                    Reply::Later => {
                        self.pending = Some(Pending { key, card: card.id, answer: None });
                        let needs = format!("the user's answer to card {} ({})", card.id, card.tool);
                        record.outcome = "held";
                        record.card = Some(Box::new(card));
                        record.approver = Some(self.approver.name().to_string());
                        return (Verdict::Hold { needs }, record);
                    }
                }
            }
        };
        record.approver = Some(self.approver.name().to_string());
        record.answer = Some(answer);
        let verdict = match answer {
            Answer::No => {
                let reason = format!("`{}` was not approved: {} answered no", card.tool, self.approver.name());
                let rewrites = rewrites(&card.sensitive);
                record.card = Some(Box::new(card));
                let (verdict, record) = self.refuse(record, effect, reason, "refused");
                let verdict = match verdict {
                    Verdict::Refuse(mut e) => {
                        e.notes.extend(rewrites);
                        Verdict::Refuse(e)
                    }
                    other => other,
                };
                return (verdict, record);
            }
            Answer::Always if card.grantable => match self.make_grants(&card) {
                Ok(ids) => {
                    record.grants_made = ids;
                    Verdict::Proceed
                }
                Err(e) => {
                    record.card = Some(Box::new(card));
                    return self.failed(record, effect, "the approval could not be remembered", &e);
                }
            },
            Answer::Yes | Answer::Always => Verdict::Proceed,
        };
        let verdict = match verdict {
            Verdict::Proceed if flows => Verdict::Endorse { by: self.user.clone() },
            v => v,
        };
        record.outcome = "approved";
        record.card = Some(Box::new(card));
        (verdict, record)
    }

    fn refuse(
        &mut self,
        mut record: Record,
        effect: &Effect,
        reason: String,
        outcome: &'static str,
    ) -> (Verdict, Record) {
        record.outcome = outcome;
        record.reason = Some(reason.clone());
        let e = RunError::new(ErrorKind::ApprovalDenied, effect.span, reason);
        (Verdict::Refuse(e), record)
    }

    /// Something the gate needs failed: nothing is performed.
    fn failed(&mut self, record: Record, effect: &Effect, what: &str, why: &str) -> (Verdict, Record) {
        self.stats.errors += 1;
        let reason = format!("`{}.{}` was not performed: {what}: {why}", effect.capability, effect.tool);
        self.refuse(record, effect, reason, "error")
    }

    /// A grant covering every destination of the card (the tool, each destination and
    /// recipient, the label class of the call's data), if one does.
    /// What serves `tool` (`Capability.tool`), as [`Gate::with_instances`] said.
    fn instance_of(&self, tool: &str) -> Option<&str> {
        let capability = tool.split_once('.').map_or(tool, |(capability, _)| capability);
        self.instances.get(capability).map(String::as_str)
    }

    fn find_grant(&self, card: &Card) -> Result<Option<GrantId>, String> {
        let destinations = card.destinations();
        let destinations = if destinations.is_empty() { vec![""] } else { destinations };
        let mut found = None;
        for destination in destinations {
            let query = GrantQuery {
                tool: &card.tool,
                destination,
                label_class: &card.label_class,
                session: self.session.as_deref(),
                instance: self.instance_of(&card.tool),
                principal: &self.user,
            };
            match self.grants.find(&query).map_err(|e| e.to_string())? {
                Some(g) => found = found.or(Some(g.id)),
                None => return Ok(None),
            }
        }
        Ok(found)
    }

    /// Remembers "always" for the card's tool, each of its destinations (exactly: a
    /// destination with a `*` in it would stand for more than was shown, so none is made for
    /// it) and its label class.
    fn make_grants(&mut self, card: &Card) -> Result<Vec<GrantId>, String> {
        let destinations = card.destinations();
        let destinations = if destinations.is_empty() { vec![""] } else { destinations };
        let expires_ms = self.grant_ttl_ms.map(|ttl| crate::grants::now_ms().saturating_add(ttl));
        let mut ids = Vec::new();
        for destination in destinations.into_iter().filter(|d| !d.contains('*')) {
            let grant = NewGrant {
                tool: card.tool.clone(),
                destination: destination.to_string(),
                label_class: card.label_class.clone(),
                scope: self.scope.clone(),
                expires_ms,
                instance: self.instance_of(&card.tool).map(str::to_string),
                principal: Some(self.user.clone()),
            };
            ids.push(self.grants.add(&grant).map_err(|e| e.to_string())?.id);
        }
        Ok(ids)
    }

    /// The failed label checks as the card shows them. The decision's label failing several
    /// sinks the same way (its own, and each argument's chosen under it) is one line: the same
    /// label, endorsed or released once.
    fn flows_shown(&self, effect: &Effect) -> Vec<FlowShown> {
        let mut shown: Vec<FlowShown> = Vec::new();
        let mut decision: Option<(usize, &cordon_runtime::Flow, Vec<&str>)> = None;
        for f in &effect.flows {
            match (&f.value, &mut decision) {
                (None, Some((_, first, params))) if first.carried == f.carried && first.sink == f.sink => {
                    params.extend(f.param.as_deref());
                }
                (None, None) => {
                    decision = Some((shown.len(), f, f.param.as_deref().into_iter().collect()));
                    shown.push(self.flow_shown(effect, f));
                }
                _ => shown.push(self.flow_shown(effect, f)),
            }
        }
        if let Some((at, first, params)) = decision.filter(|(_, _, params)| params.len() > 1) {
            let under: Vec<String> = params.iter().map(|p| format!("`{p}`")).collect();
            shown[at] = FlowShown { param: None, ..self.flow_shown(effect, first) };
            shown[at].value.text.push_str(&format!(", and so the arguments chosen under it: {}", under.join(", ")));
        }
        shown
    }

    /// A failed label check as the card shows it, with what approving it means.
    fn flow_shown(&self, effect: &Effect, f: &cordon_runtime::Flow) -> FlowShown {
        let value = match &f.value {
            Some(v) => Shown::labelled(display(v), &f.carried, &self.user),
            None => {
                let sources: Vec<String> = effect.pc.sources().iter().map(|s| s.what.to_string()).collect();
                Shown::labelled(
                    format!("(the decision, which depended on {})", sources.join("; ")),
                    &f.carried,
                    &self.user,
                )
            }
        };
        let carried = f.carried.dc();
        let mut meaning = Vec::new();
        let to = if f.sink.secrecy.is_true() {
            "anyone".to_string()
        } else {
            crate::card::words(&f.sink.secrecy.to_string())
        };
        // What a release of the policy lets out of a group on this yes, then what is the user's.
        let let_out = f.let_out();
        if !let_out.is_empty() {
            let groups: Vec<String> = let_out.iter().map(|g| format!("`{g}`")).collect();
            let what = match f.as_received {
                true => "this text, word for word as it was received",
                false => "a text built from that data, which may carry any of it",
            };
            meaning.push(format!(
                "you let the data of the group {} out to {to}, as the policy's release allows: {what}",
                groups.join(", ")
            ));
        }
        if !f.sink.secrecy.implies(&f.releasable.secrecy) {
            meaning.push(format!("you release data that is {} to {to}", secrecy_words(&f.releasable.secrecy)));
        }
        if !carried.integrity.implies(&f.sink.integrity) {
            meaning
                .push(format!("you vouch for data vouched for by {} as your own", integrity_words(&carried.integrity)));
        }
        FlowShown {
            param: f.param.clone(),
            value,
            sink: f.sink.clone(),
            meaning: meaning.join("; and "),
            let_out,
            as_received: f.as_received,
            received: f.received.clone(),
        }
    }
}

/// The rules never answer `Deny` past the tier check, which refuses first; kept total all the
/// same: deny.
fn unreachable_deny(gate: &mut Gate<'_>, record: Record, effect: &Effect) -> (Verdict, Record) {
    let reason = format!("`{}.{}` is never performed", effect.capability, effect.tool);
    gate.refuse(record, effect, reason, "denied")
}

/// A value's text on a card.
fn display(v: &cordon_runtime::Val) -> String {
    match &v.value {
        cordon_runtime::Value::Str(s) => s.as_str().to_string(),
        other => other.to_string(),
    }
}

/// What identifies a call across a hold: the tool, its place and its arguments.
fn effect_key(effect: &Effect) -> String {
    let mut key = format!("{}.{}@{:?}", effect.capability, effect.tool, effect.span);
    for (name, v) in &effect.args {
        let json = serde_json::to_string(&v.value.as_json()).unwrap_or_default();
        key.push_str(&format!("|{name}={json}|{}", deep_label(v)));
    }
    key
}

impl Stage for Gate<'_> {
    fn name(&self) -> &str {
        "gate"
    }

    /// A call is told of with every value its card hides (`@card(hidden = ..)`, a new
    /// password) replaced by `<hidden>`, from its proposal on: no trace line, transcript or
    /// audit row holds it either.
    fn screen(&self, effect: &Effect) -> Option<Effect> {
        // Most tools hide nothing: only the `hidden` field is computed, and only where there is one.
        let field = self.program.card_field(effect, "hidden").ok()??;
        let hidden = match &field.value.value {
            Value::Str(s) => s.as_str().to_string(),
            other => other.to_string(),
        };
        if hidden.is_empty() {
            return None;
        }
        let mut hide = |text: &str, _: &str| {
            text.contains(hidden.as_str()).then(|| text.replace(hidden.as_str(), crate::card::HIDDEN))
        };
        let mut screened = effect.clone();
        screened.args =
            effect.args.iter().map(|(p, v)| (p.clone(), egress::rewrite_texts(v, p.to_string(), &mut hide))).collect();
        Some(screened)
    }

    fn decide(&mut self, effect: &Effect) -> Verdict {
        let (verdict, record) = self.judge(effect);
        self.stats.decided += 1;
        match record.outcome {
            "allowed" => self.stats.allowed += 1,
            "granted" => {
                self.stats.allowed += 1;
                self.stats.grants_used += 1;
            }
            "plan" => {
                self.stats.allowed += 1;
                self.stats.plan_covered += 1;
            }
            "approved" => self.stats.approved += 1,
            "refused" => self.stats.refused += 1,
            "denied" => self.stats.denied += 1,
            "held" => self.stats.held += 1,
            _ => {}
        }
        self.stats.grants_made += record.grants_made.len() as u64;
        match !self.keep_allowed && record.outcome == "allowed" && record.card.is_none() {
            true => self.just_allowed = Some(record),
            false => {
                self.just_allowed = None;
                self.records.push(record);
            }
        }
        verdict
    }

    fn approves_flows(&self) -> bool {
        self.approver.speaks_for_user()
    }

    /// The record of the decision just made.
    fn note(&self) -> Option<&dyn Note> {
        self.just_allowed.as_ref().or(self.records.last()).map(|r| r as &dyn Note)
    }
}

/// A record told with its decision, or with the plan's card.
impl Note for Record {
    fn to_json(&self) -> Box<serde_json::value::RawValue> {
        // A record has no map with keys that are not text, so writing it cannot fail.
        serde_json::value::to_raw_value(self).unwrap_or_default()
    }

    fn routine(&self) -> bool {
        self.outcome == "allowed"
    }
}

/// For a refused call that would have sent what needs consent: each such text rewritten, so
/// the plan (or the model) can send the rewrite instead; never the data.
fn rewrites(sensitive: &[Sensitive]) -> Vec<String> {
    if sensitive.is_empty() {
        return Vec::new();
    }
    let mut notes: Vec<String> = sensitive
        .iter()
        .map(|s| format!("`{}` holds {}; rewritten: {:?}", s.at, s.kinds.join(", "), s.rewritten))
        .collect();
    notes.push("the user may agree to the rewritten text: each placeholder stands where the data was".into());
    notes
}
