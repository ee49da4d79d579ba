//! The audit log's hash chain, with no storage: how a row's hash is computed and how a sequence
//! of stored rows is checked. The SQLite store and the archive file feed the same `Verifier`, so
//! a log and its archive are verified by the same code.
//!
//! Row `n`'s hash is SHA-256 over a domain tag, row `n - 1`'s hash (zeros before the first row),
//! `n`, and the row's time, kind, request and content, each length-prefixed or fixed-width so no
//! two rows encode alike. Changing any of them, or any row before, changes the hash.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// Separates this chain's hashes from any other use of SHA-256.
const DOMAIN: &[u8] = b"cordon-audit-v1\0";

/// A SHA-256 hash; written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RowHash(pub [u8; 32]);

impl RowHash {
    /// The hash before the first row.
    pub const ZERO: RowHash = RowHash([0; 32]);
}

impl fmt::Display for RowHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for RowHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl FromStr for RowHash {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(format!("a hash has 64 hex digits, not {}", bytes.len()));
        }
        let mut out = [0; 32];
        for (byte, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let digits = std::str::from_utf8(pair).map_err(|_| "a hash is hex digits".to_string())?;
            *byte = u8::from_str_radix(digits, 16).map_err(|_| format!("'{digits}' is not a hex byte"))?;
        }
        Ok(RowHash(out))
    }
}

impl Serialize for RowHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RowHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// A row's number and hash: what a user keeps elsewhere to detect, later, that the log was cut
/// back or rewritten. Written `SEQ:HASH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub seq: u64,
    pub hash: RowHash,
}

impl Checkpoint {
    /// The checkpoint of an empty log.
    pub const START: Checkpoint = Checkpoint { seq: 0, hash: RowHash::ZERO };
}

impl fmt::Display for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

impl FromStr for Checkpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (seq, hash) = s.split_once(':').ok_or("a checkpoint is written SEQ:HASH")?;
        let seq = seq.parse().map_err(|_| format!("'{seq}' is not a row number"))?;
        Ok(Checkpoint { seq, hash: hash.parse()? })
    }
}

/// What a row's hash covers besides its number and its predecessor.
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a> {
    pub at_ms: i64,
    pub kind: &'a str,
    pub request: Option<i64>,
    pub content: &'a str,
}

/// The hash of row `seq` with these fields, following the row whose hash is `prev`.
pub fn row_hash(prev: &RowHash, seq: u64, fields: &Fields<'_>) -> RowHash {
    let mut h = Sha256::new();
    h.update(DOMAIN);
    h.update(prev.0);
    h.update(seq.to_be_bytes());
    h.update(fields.at_ms.to_be_bytes());
    h.update((fields.kind.len() as u64).to_be_bytes());
    h.update(fields.kind.as_bytes());
    match fields.request {
        None => h.update([0]),
        Some(id) => {
            h.update([1]);
            h.update(id.to_be_bytes());
        }
    }
    h.update((fields.content.len() as u64).to_be_bytes());
    h.update(fields.content.as_bytes());
    RowHash(h.finalize().into())
}

/// The first row that breaks the chain, and how.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BadRow {
    /// The number of the row where the log stops being what was written.
    pub seq: u64,
    pub problem: Problem,
}

/// Why a row is bad.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Problem {
    /// No row has this number: the next one found is `next` (rows deleted or renumbered).
    Missing { next: i64 },
    /// A row numbered `found` stands where this one should (inserted or renumbered).
    Unexpected { found: i64 },
    /// A column does not hold what the log writes there.
    Malformed { column: &'static str },
    /// The row's hash is not that of its fields and its predecessor: the row was edited, moved
    /// or inserted, or the row before it was.
    HashMismatch,
    /// The log ends at `head`, before the checkpoint's row `checkpoint`: rows were cut off its
    /// end.
    Truncated { head: u64, checkpoint: u64 },
    /// The checkpoint's row has another hash: the log was rewritten up to here.
    CheckpointMismatch,
    /// The checkpoint's row was archived (rows up to `through`): verify the archive against it.
    Archived { through: u64 },
    /// The grants table and the log disagree about grant `grant` (a grant written, widened or
    /// revived by hand, or one the log granted that is gone): it is not honoured.
    Grant { grant: i64, reason: &'static str },
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seq = self.seq;
        match &self.problem {
            Problem::Missing { next } => write!(f, "row {seq} is missing: the next row is numbered {next}"),
            Problem::Unexpected { found } => write!(f, "a row numbered {found} stands where row {seq} should"),
            Problem::Malformed { column } => write!(f, "row {seq}: its {column} is not what the log writes there"),
            Problem::HashMismatch => write!(
                f,
                "row {seq} does not match its hash: it, or its place in the log, or the row before it, was changed"
            ),
            Problem::Truncated { head, checkpoint } => {
                write!(f, "rows {seq}..={checkpoint} are gone: the log ends at row {head}, before the checkpoint")
            }
            Problem::CheckpointMismatch => {
                write!(f, "row {seq} is not the row of the checkpoint: the log was rewritten")
            }
            Problem::Grant { grant, reason } => {
                write!(f, "grant {grant} is not as the audit log recorded it ({reason}): it is not honoured")
            }
            Problem::Archived { through } => write!(
                f,
                "row {seq} was archived (rows up to {through} were): verify the archive against the checkpoint"
            ),
        }
    }
}

/// A verification's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every row chains to the one before; `rows` were checked, ending at `head`.
    Intact {
        rows: u64,
        head: Checkpoint,
    },
    Broken(BadRow),
}

/// Checks stored rows one by one, in the order of their numbers.
#[derive(Debug)]
pub struct Verifier {
    head: Checkpoint,
    rows: u64,
}

impl Verifier {
    /// A verifier of the rows that follow `start` (the empty log's, or the last archived row's).
    pub fn after(start: Checkpoint) -> Verifier {
        Verifier { head: start, rows: 0 }
    }

    /// Checks the next stored row: `seq` as stored, and its fields and hash, or the name of the
    /// column that holds something the log never writes.
    pub fn check(&mut self, seq: i64, stored: Result<(Fields<'_>, &[u8]), &'static str>) -> Result<(), BadRow> {
        // Saturating: an archive's header may name any start, u64::MAX included.
        let expected = self.head.seq.saturating_add(1);
        if i128::from(seq) < i128::from(expected) {
            return Err(BadRow { seq: expected, problem: Problem::Unexpected { found: seq } });
        }
        if i128::from(seq) > i128::from(expected) {
            return Err(BadRow { seq: expected, problem: Problem::Missing { next: seq } });
        }
        let bad = |problem| BadRow { seq: expected, problem };
        let (fields, hash) = stored.map_err(|column| bad(Problem::Malformed { column }))?;
        let hash: [u8; 32] = hash.try_into().map_err(|_| bad(Problem::Malformed { column: "hash" }))?;
        if row_hash(&self.head.hash, expected, &fields).0 != hash {
            return Err(bad(Problem::HashMismatch));
        }
        self.head = Checkpoint { seq: expected, hash: RowHash(hash) };
        self.rows += 1;
        Ok(())
    }

    /// The last row checked (or the start, if none was).
    pub fn head(&self) -> Checkpoint {
        self.head
    }

    pub fn finish(self) -> Verdict {
        Verdict::Intact { rows: self.rows, head: self.head }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_checkpoints_round_trip_through_text() {
        let cp = Checkpoint { seq: 42, hash: row_hash(&RowHash::ZERO, 1, &fields("x")) };
        assert_eq!(cp.to_string().parse::<Checkpoint>(), Ok(cp));
        assert!("42".parse::<Checkpoint>().is_err());
        assert!("42:abc".parse::<Checkpoint>().is_err());
        assert!(format!("1:{}", "zz".repeat(32)).parse::<Checkpoint>().is_err());
    }

    #[test]
    fn every_field_changes_the_hash() {
        let base = row_hash(&RowHash::ZERO, 1, &fields("{}"));
        let other = Fields { at_ms: 2, ..fields("{}") };
        assert_ne!(base, row_hash(&RowHash::ZERO, 1, &other));
        assert_ne!(base, row_hash(&RowHash::ZERO, 1, &Fields { kind: "y", ..fields("{}") }));
        assert_ne!(base, row_hash(&RowHash::ZERO, 1, &Fields { request: Some(0), ..fields("{}") }));
        assert_ne!(base, row_hash(&RowHash::ZERO, 1, &fields("{ }")));
        assert_ne!(base, row_hash(&RowHash::ZERO, 2, &fields("{}")));
        assert_ne!(base, row_hash(&RowHash([1; 32]), 1, &fields("{}")));
        // Length prefixes: moving a byte between kind and content is a change.
        let a = Fields { kind: "ab", ..fields("c") };
        let b = Fields { kind: "a", ..fields("bc") };
        assert_ne!(row_hash(&RowHash::ZERO, 1, &a), row_hash(&RowHash::ZERO, 1, &b));
    }

    fn fields(content: &str) -> Fields<'_> {
        Fields { at_ms: 1, kind: "x", request: None, content }
    }
}
