//! Archiving the audit log in SQLite: rows up to a point moved into a JSONL file, removed from
//! the store only once the file's chain verifies.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::grants::carry_over_in;
use super::log::{SELECT_ROW, append_in, head_in, sql_seq, start_in, stored};
use super::tx::{read, write};
use crate::StoreError;
use crate::archive::{ArchiveReport, ArchiveWriter, verify_archive};
use crate::audit::{Archived, AuditRow, kind};
use crate::chain::{Verdict, Verifier};
use crate::request::RequestId;

/// Moves rows up to `through` into a new archive file, once the file verifies.
pub(super) fn archive(conn: &Connection, path: &Path, through: u64) -> Result<Archived, StoreError> {
    // Write the rows up to `through` to the file, checking their chain on the way.
    let (start, last) = read(conn, |c| {
        let start = start_in(c)?;
        let head = head_in(c)?;
        if through <= start.seq || through > head.seq {
            return Err(StoreError::NothingToArchive { through, first: start.seq + 1, head: head.seq });
        }
        let mut stmt = c.prepare(&format!("{SELECT_ROW} WHERE seq <= ?1 ORDER BY seq"))?;
        let mut rows = stmt.query([sql_seq(through)?])?;
        let mut writer = ArchiveWriter::create(path, start)?;
        let mut verifier = Verifier::after(start);
        let copied = (|| {
            while let Some(row) = rows.next()? {
                let stored = stored(row);
                verifier.check(row.get(0)?, stored).map_err(StoreError::ChainBroken)?;
                let Ok((fields, _)) = stored else { continue }; // checked just above
                writer.write(&AuditRow {
                    seq: verifier.head().seq,
                    at_ms: fields.at_ms,
                    kind: fields.kind.into(),
                    request: fields.request.map(RequestId),
                    content: fields.content.into(),
                    hash: verifier.head().hash,
                })?;
            }
            writer.finish()
        })();
        if let Err(e) = copied {
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok((start, verifier.head()))
    })?;
    // Read the file back: only an archive whose chain verifies may replace the rows.
    let expected = Verdict::Intact { rows: last.seq - start.seq, head: last };
    let unverified = |reason: String| {
        let _ = std::fs::remove_file(path);
        StoreError::ArchiveUnverified { path: path.to_path_buf(), reason }
    };
    match verify_archive(path) {
        Ok(report) if report.after == start && report.verdict == expected => {}
        Ok(ArchiveReport { verdict: Verdict::Broken(bad), .. }) => return Err(unverified(bad.to_string())),
        Ok(_) => return Err(unverified(format!("it does not end at row {}", last.seq))),
        Err(e) => return Err(unverified(e.to_string())),
    }
    write(conn, |c| {
        let same_row = c
            .query_row("SELECT hash FROM audit WHERE seq = ?1", [sql_seq(last.seq)?], |r| r.get::<_, Vec<u8>>(0))
            .optional()?;
        if start_in(c)? != start || same_row.as_deref() != Some(&last.hash.0[..]) {
            return Err(StoreError::ArchiveRaced);
        }
        // The live grants whose rows go are granted again after them: the chain still holds them.
        carry_over_in(c, last.seq)?;
        c.execute("DELETE FROM audit WHERE seq <= ?1", [sql_seq(last.seq)?])?;
        c.execute(
            "INSERT OR REPLACE INTO audit_start (only, seq, hash) VALUES (1, ?1, ?2)",
            params![sql_seq(last.seq)?, &last.hash.0[..]],
        )?;
        append_in(c, None, kind::ARCHIVE, &json!({ "through": last }).to_string())?;
        Ok(Archived { rows: last.seq - start.seq, through: last })
    })
}
