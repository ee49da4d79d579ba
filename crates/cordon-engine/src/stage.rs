//! The stages of the effect pipeline: what sits between the boundary, which admitted an
//! effect, and the host that performs it (the approval gate, an outgoing-data check, a
//! credential broker), and what each may say.

use std::sync::Arc;

use cordon_runtime::effect::Effect;
use cordon_runtime::{RunError, Val};

/// What a stage says about an effect the boundary admitted.
#[derive(Debug)]
pub enum Verdict {
    /// Go on to the next stage (and, after the last, perform it).
    Proceed,
    /// Go on, and the label checks the boundary found failed on this call ([`Effect::flows`])
    /// are approved by the principal `by`, for this call only: the run performs it only if `by`
    /// may approve each (the user vouches for the user, and releases only what they may read),
    /// and refuses it as the boundary would have otherwise. Only a stage that put the values to
    /// that principal says this.
    Endorse { by: String },
    /// Wait: the run stops here, intact, until the caller releases or refuses the effect.
    /// `needs` says what is awaited ("the user's approval of this card").
    Hold { needs: String },
    /// Do not perform it: the plan gets the refusal where the tool allows one
    /// (`Result[T, Refused]`), else the run ends with this diagnostic.
    Refuse(RunError),
    /// Do not perform it, as [`Verdict::Refuse`]; and wherever the refused call is told (the
    /// run's trace, the refusal event), show `shown` for its arguments: the stage's rewrite of
    /// data it would not let leave, which is then not repeated there.
    Withhold { error: RunError, shown: Vec<(Arc<str>, Val)> },
}

/// A step of the effect pipeline after the boundary and before the host: the approval gate,
/// an outgoing-data check, a credential broker.
pub trait Stage {
    /// The stage's name, for events and diagnostics.
    fn name(&self) -> &str;
    /// Decides about `effect`; nothing has been performed or used up yet.
    fn decide(&mut self, effect: &Effect) -> Verdict;

    /// Whether this stage may put calls that fail only label checks to the user (and answer
    /// [`Verdict::Endorse`]). When some stage may, the engine has the boundary propose such
    /// calls with their failures marked instead of refusing them; a call no stage endorsed is
    /// then refused exactly as the boundary would have. No, by default.
    fn approves_flows(&self) -> bool {
        false
    }

    /// What the stage keeps of the decision it made last, for observers that know the stage (the
    /// gate's record of a card); told with the decision ([`crate::Event::StageDecided`]).
    fn note(&self) -> Option<&dyn Note> {
        None
    }

    /// `effect` as observers may be told of it, if this stage keeps part of its arguments from
    /// ever being written down: the outgoing-data check shows what is never sent replaced by a
    /// placeholder, so no transcript, trace or audit row holds it either. Asked before anyone is
    /// told of the effect, in the stages' order, each given what the ones before it screened.
    /// `None` (the effect as it is), by default.
    fn screen(&self, effect: &Effect) -> Option<Effect> {
        let _ = effect;
        None
    }
}

/// What a stage keeps of a decision: typed, for an observer that knows the stage and downcasts
/// it (`(note as &dyn Any).downcast_ref::<cordon_gate::Record>()`), and serialisable, for one
/// that writes every event down (a transcript).
pub trait Note: std::any::Any + std::fmt::Debug {
    /// The decision as JSON text, written straight from the stage's own type: a transcript's
    /// line takes it as it is.
    fn to_json(&self) -> Box<serde_json::value::RawValue>;

    /// Whether the decision is the routine one, a call the policy lets through alone (no one
    /// asked, no grant used): its effect's row says all of it, so the audit log keeps no row of
    /// its own.
    fn routine(&self) -> bool {
        false
    }
}

/// The stages of a pipeline: those added in order, then the last one, which decides after every
/// other however they were added (the audit log's, which must see only effects that no stage
/// will still hold or refuse).
#[derive(Default)]
pub(crate) struct Stages<'a> {
    added: Vec<&'a mut dyn Stage>,
    last: Option<&'a mut dyn Stage>,
}

impl<'a> Stages<'a> {
    pub(crate) fn push(&mut self, stage: &'a mut dyn Stage) {
        self.added.push(stage);
    }

    pub(crate) fn set_last(&mut self, stage: &'a mut dyn Stage) {
        self.last = Some(stage);
    }

    /// Stage `i` of the pipeline: the added ones in order, then the last one.
    pub(crate) fn get(&mut self, i: usize) -> Option<&mut (dyn Stage + 'a)> {
        let added = self.added.len();
        match self.added.get_mut(i) {
            Some(stage) => Some(&mut **stage),
            None if i == added => self.last.as_deref_mut(),
            None => None,
        }
    }

    /// Whether stage `i` is the last one (one given as last, not merely the last added).
    pub(crate) fn is_last(&self, i: usize) -> bool {
        i == self.added.len() && self.last.is_some()
    }

    /// Every stage, in the order they decide.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(dyn Stage + 'a)> {
        self.added.iter().chain(&self.last).map(|s| &**s)
    }

    /// `effect` as observers may be told of it ([`Stage::screen`]), if a stage changes it: each
    /// stage screens what the ones before it left (the outgoing check's placeholders, then the
    /// gate's hidden values).
    pub(crate) fn screen(&self, effect: &Effect) -> Option<Effect> {
        self.iter().fold(None, |screened: Option<Effect>, s| s.screen(screened.as_ref().unwrap_or(effect)).or(screened))
    }
}

impl std::fmt::Debug for Stages<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter().map(|s| s.name())).finish()
    }
}
