//! What the host knows that a program cannot touch: which host-made values it made, which
//! linear values are still unused, and the real value of every measure (is this session
//! tainted?). [`Sessions`] is the part that outlives a run: the linear values a plan handed
//! back, with their measures, for the next request.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cordon_syntax::Span;
use cordon_types::{EntryFact, FactValue};
use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, RunError};
use crate::made::{self, Saved};
use crate::value::{HostId, Record, Val, Value};
use cordon_label::{DcLabel, Label};

/// A measure's value: measures are booleans, integers or strings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Str(String),
}

impl Scalar {
    pub fn from_value(v: &Value) -> Option<Scalar> {
        match v {
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::Int(i) => Some(Scalar::Int(*i)),
            Value::Str(s) => Some(Scalar::Str(s.to_string())),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::Int(*i),
            Scalar::Str(s) => Value::str(s),
        }
    }
}

/// The host's state during one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostState {
    next_id: HostId,
    /// Linear values made and not yet used, with their type.
    live: HashMap<HostId, Arc<str>>,
    /// The linear values still live, and of the used ones the newest of each type (the
    /// latest state the host knows of) and those of the call under way: a used value is
    /// forgotten when the call that used it is over ([`HostState::forget_used`]).
    linear: HashMap<HostId, Arc<str>>,
    /// Host-made values without fields, with their type.
    handles: HashMap<HostId, Arc<str>>,
    /// Of a run saved before a record's mark carried its digest: the digests of the opaque
    /// records tools had returned (`crate::made`). Empty for any other run.
    #[serde(default)]
    records: Saved,
    /// Each host-made value's measures, by the value's id: read on every refined call, so found
    /// by id, never by a search.
    #[serde(with = "measure_pairs")]
    measures: HashMap<HostId, Vec<(Arc<str>, Scalar)>>,
    /// For each linear value, what decided its measures: the pc and the arguments of the call
    /// that made it (or the label it was stored with, for one continued from an earlier request).
    decided_by: HashMap<HostId, Label>,
}

impl HostState {
    pub fn fresh_id(&mut self) -> HostId {
        self.next_id += 1;
        self.next_id
    }

    pub fn make_linear(&mut self, ty: &Arc<str>) -> HostId {
        let id = self.fresh_id();
        self.live.insert(id, ty.clone());
        self.linear.insert(id, ty.clone());
        id
    }

    pub fn make_handle(&mut self, ty: &Arc<str>) -> HostId {
        let id = self.fresh_id();
        self.handles.insert(id, ty.clone());
        id
    }

    pub fn is_live(&self, id: HostId, ty: &str) -> bool {
        self.live.get(&id).is_some_and(|t| &**t == ty)
    }

    /// The most recently made linear value of type `ty`, used or not: the latest state the
    /// host knows of (if a tool used it up and then failed, its measures still stand).
    pub fn newest_linear(&self, ty: &str) -> Option<HostId> {
        self.linear.iter().filter(|(_, t)| &***t == ty).map(|(id, _)| *id).max()
    }

    pub fn is_handle(&self, id: HostId, ty: &str) -> bool {
        self.handles.get(&id).is_some_and(|t| &**t == ty)
    }

    /// Whether `record` is, labels aside, an opaque record a tool returned, as it returned it.
    pub fn made_record(&self, record: &Record) -> bool {
        made::is_sealed(record, &self.records)
    }

    /// Uses up a linear value; its measures stay readable for the rest of the call.
    pub fn consume(&mut self, id: HostId) {
        self.live.remove(&id);
    }

    /// The call that used up `used` is over: no later call can be given them (each is used),
    /// so what the host knew of them goes, except of the newest value of each type, which
    /// stands for the state the next request continues from if no newer one is made.
    pub fn forget_used(&mut self, used: &[HostId]) {
        for id in used {
            let Some(ty) = self.linear.get(id) else { continue };
            if self.live.contains_key(id) || self.newest_linear(ty) == Some(*id) {
                continue;
            }
            self.linear.remove(id);
            self.measures.remove(id);
            self.decided_by.remove(id);
        }
    }

    pub fn set_measure(&mut self, measure: &Arc<str>, id: HostId, value: Scalar) {
        let known = self.measures.entry(id).or_default();
        match known.iter_mut().find(|(m, _)| m == measure) {
            Some((_, old)) => *old = value,
            None => known.push((measure.clone(), value)),
        }
    }

    pub fn set_decided_by(&mut self, id: HostId, label: Label) {
        self.decided_by.insert(id, label);
    }

    pub fn decided_by(&self, id: HostId) -> Label {
        self.decided_by.get(&id).cloned().unwrap_or_default()
    }

    pub fn measures_of(&self, id: HostId) -> BTreeMap<String, Scalar> {
        let known = self.measures.get(&id).map(Vec::as_slice).unwrap_or_default();
        known.iter().map(|(m, v)| (m.to_string(), v.clone())).collect()
    }

    /// The host's value of `measure(args)`. Measures are known only for host-made values the
    /// host described; anything else is an error, never a guess.
    pub fn measure(&self, measure: &str, args: &[Val]) -> Result<Value, RunError> {
        let id = match args {
            [v] => host_id(&v.value),
            _ => None,
        };
        let known = id.and_then(|id| self.measures.get(&id)?.iter().find(|(m, _)| &**m == measure));
        match known {
            Some((_, v)) => Ok(v.to_value()),
            None => Err(RunError::new(
                ErrorKind::Recheck,
                Span::default(),
                format!("the host does not know `{measure}` of this value, so it cannot confirm the refinement"),
            )),
        }
    }
}

/// The host id of a host-made value.
pub fn host_id(v: &Value) -> Option<HostId> {
    match v {
        Value::Handle(h) => Some(h.id),
        Value::Record(r) => r.host(),
        _ => None,
    }
}

/// A linear value kept between requests, with its measures and the label of what decided them
/// (a session tainted or not depending on a secret carries that secret's label).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredValue {
    pub ty: String,
    pub measures: BTreeMap<String, Scalar>,
    #[serde(default = "DcLabel::bottom")]
    pub label: DcLabel,
}

/// The state that carries from one request to the next: the linear values the last plan
/// handed back, by entry parameter name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sessions {
    pub values: BTreeMap<String, StoredValue>,
}

impl Sessions {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    pub fn from_json(text: &str) -> Result<Sessions, String> {
        serde_json::from_str(text).map_err(|e| format!("the session file is malformed: {e}"))
    }

    /// What the host knows about the values it will pass to the next plan, as facts for the
    /// checker (`CheckOptions::entry_facts`). `None` without stored values: the checker then
    /// assumes fresh ones (the measures' defaults), as the runtime makes them.
    ///
    /// Whether the next plan checks decides everything it does, public effects included, so the
    /// checker is told only facts that may decide a public action for `user`: those whose label
    /// flows to public and vouched for by the user. Of a value whose state depended on a secret
    /// or on an outsider's text, the checker knows nothing (a plan that needs it untainted is
    /// rejected whatever its real state), so acceptance reveals nothing of what decided it.
    pub fn entry_facts(&self, user: &str) -> Option<Vec<EntryFact>> {
        if self.values.is_empty() {
            return None;
        }
        let authority = DcLabel::endorsed(user);
        let mut facts = Vec::new();
        for (param, stored) in self.values.iter().filter(|(_, v)| v.label.flows_to(&authority)) {
            for (measure, value) in &stored.measures {
                let value = match value {
                    Scalar::Bool(b) => FactValue::Bool(*b),
                    Scalar::Int(i) => FactValue::Int(*i),
                    Scalar::Str(s) => FactValue::Str(s.clone()),
                };
                facts.push(EntryFact { param: param.clone(), measure: measure.clone(), value });
            }
        }
        Some(facts)
    }
}

/// The measures, written as a list of `((measure, id), value)` (JSON objects need string keys;
/// a saved run keeps this form).
mod measure_pairs {
    use std::collections::HashMap;
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serializer};

    use super::{HostId, Scalar};

    type Measures = HashMap<HostId, Vec<(Arc<str>, Scalar)>>;

    pub fn serialize<S: Serializer>(measures: &Measures, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(measures.iter().flat_map(|(id, known)| known.iter().map(move |(m, v)| ((m, id), v))))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Measures, D::Error> {
        let mut measures = Measures::new();
        for ((m, id), v) in Vec::<((Arc<str>, HostId), Scalar)>::deserialize(d)? {
            let known: &mut Vec<_> = measures.entry(id).or_default();
            known.retain(|(old, _)| *old != m);
            known.push((m, v));
        }
        Ok(measures)
    }
}
