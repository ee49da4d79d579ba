//! How the host knows an opaque record a tool returned when a plan passes it back, keeping
//! nothing of it. A plan cannot build an opaque record, so one passed to a tool must be one a
//! tool returned, unchanged. The boundary seals each such record: its mark (`Mark`, which no
//! instruction of the machine makes or copies) carries the SHA-256 digest of its content, labels
//! aside, as [`crate::builtins::equal`] compares values. A record passed back is the host's if
//! its content still has that digest. Nothing is kept per record, so a run of many calls holds
//! only the answers it still uses.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::value::{HostId, Record, Value};

/// A SHA-256 digest of a record's content: finding another record with the same digest is as
/// hard as breaking SHA-256.
type Fingerprint = [u8; 32];

/// `record`, made by a tool, with the digest of its content in its mark.
pub(crate) fn seal(record: Record) -> Record {
    let digest = fingerprint(&record);
    record.with_digest(digest)
}

/// Whether `record`, passed to a tool, is the host's: marked, and its content what it was sealed
/// with (or, for a record of a run saved before marks carried digests, what `saved` kept).
pub(crate) fn is_sealed(record: &Record, saved: &Saved) -> bool {
    match record.mark() {
        Some(mark) => match mark.digest {
            Some(digest) => digest == fingerprint(record),
            None => saved.0.get(&mark.id).is_some_and(|d| *d == fingerprint(record)),
        },
        None => false,
    }
}

/// The records' digests a run saved before marks carried them kept with the host: read from
/// the records themselves, which it kept then, or, once such a run was saved again, from the
/// digests. A run made now keeps none.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Saved(HashMap<HostId, Fingerprint>);

impl<'de> Deserialize<'de> for Saved {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Saved, D::Error> {
        use serde::de::Error;
        let kept = HashMap::<String, serde_json::Value>::deserialize(d)?;
        let mut saved = Saved::default();
        for (id, kept) in kept {
            let id: HostId = id.parse().map_err(D::Error::custom)?;
            let digest = match kept.is_array() {
                true => serde_json::from_value(kept).map_err(D::Error::custom)?,
                false => match serde_json::from_value::<Value>(kept).map_err(D::Error::custom)? {
                    Value::Record(r) => fingerprint(&r),
                    other => return Err(D::Error::custom(format!("a host record that is not a record: {other}"))),
                },
            };
            saved.0.insert(id, digest);
        }
        Ok(saved)
    }
}

fn fingerprint(record: &Record) -> Fingerprint {
    let mut content = Content(Vec::new());
    content.record(record);
    Sha256::digest(&content.0).into()
}

/// A value's content written out for the hash, every part's extent marked so that no two
/// different values write the same bytes. Containers are walked, their labels left out; every
/// other value is written as a saved run writes it. Written whole, then hashed once: the
/// hash's own buffering of many small parts cost more than the hashing.
struct Content(Vec<u8>);

impl Content {
    fn value(&mut self, v: &Value) {
        match v {
            Value::Tuple(xs) => self.parts(0, &[], xs.iter().map(|x| &x.value)),
            Value::List(xs) => self.parts(1, &[], xs.iter().map(|x| &x.value)),
            Value::Variant(x) => self.parts(2, &[&x.enum_name, &x.name], x.payload.iter().map(|p| &p.value)),
            Value::Labeled(x) => self.parts(3, &[], std::iter::once(&x.value)),
            Value::Record(r) => self.record(r),
            leaf => {
                self.0.push(5);
                // The leaf's length goes before it, once it is written.
                let at = self.0.len();
                self.0.extend_from_slice(&[0; 8]);
                // Writing plain data to memory cannot fail.
                let _ = serde_json::to_writer(&mut self.0, leaf);
                let len = (self.0.len() - at - 8) as u64;
                self.0[at..at + 8].copy_from_slice(&len.to_le_bytes());
            }
        }
    }

    /// A record: its type, its host id, its fields' values and names (not its digest).
    fn record(&mut self, r: &Record) {
        let id = r.host().map(|id| id.to_string()).unwrap_or_default();
        self.parts(4, &[r.ty(), &id], r.fields().map(|(_, f)| &f.value));
        r.fields().for_each(|(name, _)| self.text(name));
    }

    fn parts<'v>(&mut self, tag: u8, names: &[&str], items: impl ExactSizeIterator<Item = &'v Value>) {
        self.0.push(tag);
        names.iter().for_each(|n| self.text(n));
        self.0.extend_from_slice(&(items.len() as u64).to_le_bytes());
        items.for_each(|item| self.value(item));
    }

    fn text(&mut self, s: &str) {
        self.0.extend_from_slice(&(s.len() as u64).to_le_bytes());
        self.0.extend_from_slice(s.as_bytes());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test may fail loudly
mod tests {
    use std::sync::Arc;

    use cordon_label::{DcLabel, Label, Source};

    use super::{Saved, fingerprint, is_sealed, seal};
    use crate::value::{Record, Val, Value, Variant};

    fn issue(title: &str, tags: Vec<Val>, labelled: bool) -> Record {
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
        Record::new("Issue".into(), fields, Some(3))
    }

    fn tags(names: &[&str]) -> Vec<Val> {
        names.iter().map(|n| Val::plain(Value::str(n))).collect()
    }

    /// `record` saved and read back, its saved form first changed by `edit`.
    fn saved_and_read(record: &Record, edit: impl FnOnce(&mut serde_json::Value)) -> Record {
        let mut json = serde_json::to_value(record).unwrap();
        edit(&mut json);
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_sealed_record_is_known_again_whatever_labels_it_carries_and_after_a_save() {
        let sealed = seal(issue("Broken link", tags(&["bug"]), false));
        assert!(is_sealed(&sealed, &Saved::default()));
        let relabelled = seal(issue("Broken link", tags(&["bug"]), true));
        assert_eq!(sealed.mark(), relabelled.mark(), "labels are not part of the content");
        assert!(is_sealed(&saved_and_read(&sealed, |_| {}), &Saved::default()));
    }

    #[test]
    fn a_record_not_sealed_or_changed_since_is_not_the_hosts() {
        let none = Saved::default();
        // Built by the plan: no mark at all.
        assert!(!is_sealed(&Record::new("Issue".into(), Vec::new(), None), &none));
        // Marked but never sealed, and unknown to the host.
        assert!(!is_sealed(&issue("Broken link", tags(&["bug"]), false), &none));
        // Sealed, then a field changed in its saved form: the mark no longer fits.
        let sealed = seal(issue("Broken link", tags(&["bug"]), false));
        let changed = saved_and_read(&sealed, |json| {
            json["fields"][0][1]["value"] = serde_json::json!({ "Str": "Fixed link" });
        });
        assert_eq!(changed.field("title").map(|t| t.value.to_string()), Some("\"Fixed link\"".to_string()));
        assert!(!is_sealed(&changed, &none));
    }

    #[test]
    fn any_change_of_content_is_a_different_digest() {
        let original = fingerprint(&issue("Broken link", tags(&["bug", "ui"]), false));
        let changed = [
            issue("Broken link.", tags(&["bug", "ui"]), false),
            issue("Broken link", tags(&["bug"]), false),
            issue("Broken link", tags(&["bugu", "i"]), false),
            issue("Broken link", tags(&["ui", "bug"]), false),
            issue("Broken link", vec![Val::plain(Value::Int(1))], false),
            Record::new(
                "Issue".into(),
                issue("Broken link", tags(&["bug", "ui"]), false)
                    .fields()
                    .map(|(n, v)| (n.clone(), v.clone()))
                    .collect(),
                Some(4),
            ),
        ];
        for record in changed {
            assert_ne!(fingerprint(&record), original, "{record:?}");
        }
    }

    /// A run saved with digests is checked against digests made by a later Cordon: how a
    /// record is fed to the hash is part of the saved form, and may not change.
    #[test]
    fn a_records_digest_is_the_one_saved_runs_carry() {
        let record = issue("Broken link", tags(&["bug", "ui"]), true);
        let hex: String = fingerprint(&record).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "054967ba0952d5d5aa0c20f369655cbf5c7884bfdf776f8941821a7fd479008c");
    }

    #[test]
    fn a_run_saved_with_the_records_themselves_knows_them_by_their_digests() {
        let record = issue("Broken link", tags(&["bug"]), false);
        let old = serde_json::json!({ "3": Value::Record(Arc::new(record.clone())) });
        let saved: Saved = serde_json::from_value(old).unwrap();
        assert!(is_sealed(&record, &saved), "its record, unsealed as it was saved, is the host's");
        let other = issue("Fixed link", tags(&["bug"]), false);
        assert!(!is_sealed(&other, &saved));
        // Such a run saved again keeps the digests, and reads them back as themselves.
        let again: Saved = serde_json::from_value(serde_json::to_value(&saved).unwrap()).unwrap();
        assert!(is_sealed(&record, &again), "a saved digest reads back as itself");
        assert!(!is_sealed(&other, &again));
    }
}
