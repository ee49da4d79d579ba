//! The audit archive: rows moved out of the store into a JSONL file, whose chain is verified
//! like the store's. The first line names the format and the row the archive follows; each
//! other line is one `AuditRow`, its content the JSON text exactly as hashed.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StoreError;
use crate::audit::AuditRow;
use crate::chain::{BadRow, Checkpoint, Fields, Problem, Verdict, Verifier};

const FORMAT: &str = "cordon-audit-archive";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    version: u32,
    /// The row before the archive's first: its chain starts from this hash.
    after: Checkpoint,
}

/// An archive file's verification.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArchiveReport {
    /// The row the archive follows.
    pub after: Checkpoint,
    pub verdict: Verdict,
}

/// Writes an archive; nothing is in it for sure until `finish`.
#[derive(Debug)]
pub(crate) struct ArchiveWriter {
    path: PathBuf,
    out: BufWriter<File>,
}

impl ArchiveWriter {
    /// Creates the file, refusing to overwrite one.
    pub fn create(path: &Path, after: Checkpoint) -> Result<ArchiveWriter, StoreError> {
        // New (never an existing file or a link followed), and the user's alone, like the store.
        let file = File::options().write(true).create_new(true).mode(0o600).open(path).map_err(StoreError::io(path))?;
        let mut writer = ArchiveWriter { path: path.to_path_buf(), out: BufWriter::new(file) };
        let header = Header { format: FORMAT.into(), version: VERSION, after };
        writer.line(&header)?;
        Ok(writer)
    }

    pub fn write(&mut self, row: &AuditRow) -> Result<(), StoreError> {
        self.line(row)
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), StoreError> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n").map_err(StoreError::io(&self.path))
    }

    /// Flushes the file to disk.
    pub fn finish(self) -> Result<(), StoreError> {
        let file =
            self.out.into_inner().map_err(|e| StoreError::Io { path: self.path.clone(), error: e.into_error() })?;
        file.sync_all().map_err(StoreError::io(&self.path))
    }
}

/// Verifies an archive file's chain: every row follows the one before, from the header's row on.
pub fn verify_archive(path: &Path) -> Result<ArchiveReport, StoreError> {
    let file = File::open(path).map_err(StoreError::io(path))?;
    let mut lines = BufReader::new(file).lines();
    let not_archive = |reason: String| StoreError::NotAnArchive { path: path.to_path_buf(), reason };
    let first = lines.next().ok_or_else(|| not_archive("it is empty".into()))?.map_err(StoreError::io(path))?;
    let header: Header = serde_json::from_str(&first).map_err(|e| not_archive(format!("its first line: {e}")))?;
    if header.format != FORMAT || header.version != VERSION {
        return Err(not_archive(format!("it is '{}' version {}", header.format, header.version)));
    }
    let mut verifier = Verifier::after(header.after);
    for line in lines {
        let line = line.map_err(StoreError::io(path))?;
        let checked = match serde_json::from_str::<AuditRow>(&line) {
            Err(_) => Err(BadRow {
                seq: verifier.head().seq.saturating_add(1),
                problem: Problem::Malformed { column: "line" },
            }),
            Ok(row) => {
                let seq = i64::try_from(row.seq).unwrap_or(i64::MAX);
                let fields = Fields {
                    at_ms: row.at_ms,
                    kind: &row.kind,
                    request: row.request.map(|r| r.0),
                    content: &row.content,
                };
                verifier.check(seq, Ok((fields, &row.hash.0)))
            }
        };
        if let Err(bad) = checked {
            return Ok(ArchiveReport { after: header.after, verdict: Verdict::Broken(bad) });
        }
    }
    Ok(ArchiveReport { after: header.after, verdict: verifier.finish() })
}
