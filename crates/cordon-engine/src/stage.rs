//! The stages of the effect pipeline: what sits between the boundary, which admitted an
//! effect, and the host that performs it (the approval gate, an outgoing-data check, a
//! credential broker), and what each may say.

use cordon_runtime::RunError;
use cordon_runtime::effect::Effect;

/// What a stage says about an effect the boundary admitted.
#[derive(Debug)]
pub enum Verdict {
    /// Go on to the next stage (and, after the last, perform it).
    Proceed,
    /// Go on, and the label checks the boundary found failed on this call ([`Effect::flows`])
    /// are approved by the principal `by`, for this call only: the run performs it only if `by`
    /// may approve each (the user vouches for the user; only a value's owner releases it),
    /// and refuses it as the boundary would have otherwise. Only a stage that put the values to
    /// that principal says this.
    Endorse { by: String },
    /// Wait: the run stops here, intact, until the caller releases or refuses the effect.
    /// `needs` says what is awaited ("the user's approval of this card").
    Hold { needs: String },
    /// Do not perform it: the plan gets the refusal where the tool allows one
    /// (`Result[T, Refused]`), else the run ends with this diagnostic.
    Refuse(RunError),
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
}
