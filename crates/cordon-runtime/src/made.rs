//! What the host keeps of each opaque record a tool returned: a digest of it, not the record.
//! A plan cannot build an opaque record, so one passed to a tool must be one a tool returned,
//! unchanged; the digest of its content (labels aside, as [`crate::builtins::equal`] compares
//! values) says so, and the record itself is freed once the plan lets go of it, so a run of many
//! calls holds only the answers it still uses.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::value::{HostId, Value};

/// A SHA-256 digest of a record's content: finding another record with the same digest is as
/// hard as breaking SHA-256.
type Fingerprint = [u8; 32];

/// The opaque records tools returned, by their host id.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Made(HashMap<HostId, Fingerprint>);

impl Made {
    /// Notes `record`, made by a tool under `id`.
    pub(crate) fn add(&mut self, id: HostId, record: &Value) {
        self.0.insert(id, fingerprint(record));
    }

    /// Whether `record` is, labels aside, the record a tool returned under `id`.
    pub(crate) fn is(&self, id: HostId, record: &Value) -> bool {
        self.0.get(&id).is_some_and(|f| *f == fingerprint(record))
    }
}

/// A run saved before the host kept digests kept the records themselves: they are read as
/// their digests.
impl<'de> Deserialize<'de> for Made {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Made, D::Error> {
        use serde::de::Error;
        let saved = HashMap::<String, serde_json::Value>::deserialize(d)?;
        let mut made = Made::default();
        for (id, saved) in saved {
            let id: HostId = id.parse().map_err(D::Error::custom)?;
            let digest = match saved.is_array() {
                true => serde_json::from_value(saved),
                false => serde_json::from_value::<Value>(saved).map(|record| fingerprint(&record)),
            };
            made.0.insert(id, digest.map_err(D::Error::custom)?);
        }
        Ok(made)
    }
}

fn fingerprint(v: &Value) -> Fingerprint {
    let mut h = Hashing { hash: Sha256::new(), leaf: Vec::new() };
    h.value(v);
    h.hash.finalize().into()
}

/// A hash being fed a value, every part's extent marked so that no two different values feed
/// the same bytes. Containers are walked, their labels left out; every other value is written as
/// a saved run writes it.
struct Hashing {
    hash: Sha256,
    /// The last leaf, written out.
    leaf: Vec<u8>,
}

impl Hashing {
    fn value(&mut self, v: &Value) {
        match v {
            Value::Tuple(xs) => self.parts(0, &[], xs.iter().map(|x| &x.value)),
            Value::List(xs) => self.parts(1, &[], xs.iter().map(|x| &x.value)),
            Value::Variant(x) => self.parts(2, &[&x.enum_name, &x.name], x.payload.iter().map(|p| &p.value)),
            Value::Labeled(x) => self.parts(3, &[], std::iter::once(&x.value)),
            Value::Record(r) => {
                let id = r.host().map(|id| id.to_string()).unwrap_or_default();
                self.parts(4, &[r.ty(), &id], r.fields().map(|(_, f)| &f.value));
                r.fields().for_each(|(name, _)| self.text(name));
            }
            leaf => {
                self.leaf.clear();
                // Writing plain data to memory cannot fail.
                let _ = serde_json::to_writer(&mut self.leaf, leaf);
                self.hash.update([5]);
                self.hash.update((self.leaf.len() as u64).to_le_bytes());
                self.hash.update(&self.leaf);
            }
        }
    }

    fn parts<'v>(&mut self, tag: u8, names: &[&str], items: impl ExactSizeIterator<Item = &'v Value>) {
        self.hash.update([tag]);
        names.iter().for_each(|n| self.text(n));
        self.hash.update((items.len() as u64).to_le_bytes());
        items.for_each(|item| self.value(item));
    }

    fn text(&mut self, s: &str) {
        self.hash.update((s.len() as u64).to_le_bytes());
        self.hash.update(s.as_bytes());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use std::sync::Arc;

    use cordon_label::{DcLabel, Label, Source};

    use super::{Made, fingerprint};
    use crate::value::{Record, Val, Value, Variant};

    fn issue(title: &str, tags: Vec<Val>, labelled: bool) -> Value {
        let label = match labelled {
            true => Label::new(DcLabel::secret("alice"), Source { what: "a test".into(), span: Default::default() }),
            false => Label::bottom(),
        };
        let open = Value::Variant(Arc::new(Variant::new("State".into(), "Open".into(), Vec::new())));
        let fields: Vec<(Arc<str>, Val)> = vec![
            ("title".into(), Val { value: Value::str(title), label }),
            ("number".into(), Val::plain(Value::Int(7))),
            ("tags".into(), Val::plain(Value::List(Arc::new(tags)))),
            ("state".into(), Val::plain(open)),
        ];
        Value::Record(Arc::new(Record::new("Issue".into(), fields, Some(3))))
    }

    fn tags(names: &[&str]) -> Vec<Val> {
        names.iter().map(|n| Val::plain(Value::str(n))).collect()
    }

    #[test]
    fn a_record_is_known_again_whatever_labels_it_carries_now() {
        let mut made = Made::default();
        made.add(3, &issue("Broken link", tags(&["bug"]), false));
        assert!(made.is(3, &issue("Broken link", tags(&["bug"]), true)));
        assert!(!made.is(4, &issue("Broken link", tags(&["bug"]), false)), "under another id it is not the same");
    }

    #[test]
    fn any_change_of_content_is_a_different_record() {
        let original = fingerprint(&issue("Broken link", tags(&["bug", "ui"]), false));
        let changed = [
            issue("Broken link.", tags(&["bug", "ui"]), false),
            issue("Broken link", tags(&["bug"]), false),
            issue("Broken link", tags(&["bugu", "i"]), false),
            issue("Broken link", tags(&["ui", "bug"]), false),
            issue("Broken link", vec![Val::plain(Value::Int(1))], false),
        ];
        for record in changed {
            assert_ne!(fingerprint(&record), original, "{record}");
        }
        // The same texts split differently between a record's parts feed different bytes.
        let a = Value::Tuple(Arc::new(tags(&["ab", "c"])));
        let b = Value::Tuple(Arc::new(tags(&["a", "bc"])));
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn a_run_saved_with_the_records_themselves_knows_them_by_their_digests() {
        let record = issue("Broken link", tags(&["bug"]), false);
        let old = serde_json::json!({ "3": record });
        let made: Made = serde_json::from_value(old).unwrap();
        assert!(made.is(3, &record));
        let again: Made = serde_json::from_value(serde_json::to_value(&made).unwrap()).unwrap();
        assert!(again.is(3, &record), "a saved digest reads back as itself");
    }
}
