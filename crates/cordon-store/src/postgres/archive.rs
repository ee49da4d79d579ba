//! Archiving the PostgreSQL store's audit log: rows up to some row move into a JSONL file
//! (`crate::archive`), removed from the store only once the file's chain verifies.

use std::path::Path;

use serde_json::json;

use super::conn::{Conn, Mode, Tx};
use super::log::{SELECT_ROW, append_in, head_in, sql_seq, start_in, stored};
use crate::StoreError;
use crate::archive::{ArchiveReport, ArchiveWriter, verify_archive};
use crate::audit::{Archived, AuditRow, kind};
use crate::chain::{Checkpoint, Verdict, Verifier};
use crate::request::RequestId;

/// Writes the rows after `start` up to `through` to a new archive file at `path`, checking
/// their chain on the way; returns the last row written. The file is removed if that fails.
fn copy_out(tx: &mut Tx<'_>, path: &Path, start: Checkpoint, through: u64) -> Result<Checkpoint, StoreError> {
    let mut writer = ArchiveWriter::create(path, start)?;
    let mut verifier = Verifier::after(start);
    let copied = tx
        .for_each(&format!("{SELECT_ROW} WHERE seq <= $1 ORDER BY seq"), &[&sql_seq(through)?], |row| {
            let stored = stored(row);
            verifier.check(row.try_get(0)?, stored).map_err(StoreError::ChainBroken)?;
            let Ok((fields, _)) = stored else { return Ok(true) }; // checked just above
            writer.write(&AuditRow {
                seq: verifier.head().seq,
                at_ms: fields.at_ms,
                kind: fields.kind.into(),
                request: fields.request.map(RequestId),
                content: fields.content.into(),
                hash: verifier.head().hash,
            })?;
            Ok(true)
        })
        .and_then(|()| writer.finish());
    if let Err(e) = copied {
        let _ = std::fs::remove_file(path);
        return Err(e);
    }
    Ok(verifier.head())
}

/// Moves rows up to `through` into a new archive file, once the file verifies.
pub(super) fn archive(conn: &Conn, path: &Path, through: u64) -> Result<Archived, StoreError> {
    // Write the rows up to `through` to the file, checking their chain on the way.
    let (start, last) = conn.run(Mode::Read, |tx| {
        let start = start_in(tx)?;
        let head = head_in(tx)?;
        if through <= start.seq || through > head.seq {
            return Err(StoreError::NothingToArchive { through, first: start.seq + 1, head: head.seq });
        }
        Ok((start, copy_out(tx, path, start, through)?))
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
    conn.run(Mode::Chained, |tx| {
        let same_row = tx.query_opt("SELECT hash FROM audit WHERE seq = $1", &[&sql_seq(last.seq)?])?;
        let same_row = match same_row {
            Some(row) => row.try_get::<_, &[u8]>(0)? == &last.hash.0[..],
            None => false,
        };
        if start_in(tx)? != start || !same_row {
            return Err(StoreError::ArchiveRaced);
        }
        // The live grants whose rows go are granted again after them: the chain still holds them.
        super::grants::carry_over_in(tx, last.seq)?;
        tx.execute("DELETE FROM audit WHERE seq <= $1", &[&sql_seq(last.seq)?])?;
        let hash: &[u8] = &last.hash.0;
        tx.execute(
            "INSERT INTO audit_start (one, seq, hash) VALUES (1, $1, $2) \
             ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
            &[&sql_seq(last.seq)?, &hash],
        )?;
        append_in(tx, None, kind::ARCHIVE, &json!({ "through": last }).to_string())?;
        Ok(Archived { rows: last.seq - start.seq, through: last })
    })
}
