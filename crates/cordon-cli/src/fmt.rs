//! `cordon fmt`: Cordon files formatted in place (or `--check`ed, or standard input to standard
//! output for an editor). The layout rules are the library's formatter's; this module finds the
//! files, writes each one whole or not at all, and says what it did.

use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use cordon::api::diagnostics::{SourceMap, render};
use cordon::api::format::{FormatError, format};

use crate::outcome::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files and directories (each `.cord` file under a directory); `-` reads standard input
    /// and writes the result to standard output
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Write nothing: list the files that are not formatted, and exit 1 if there are any
    #[arg(long)]
    pub check: bool,
}

/// What became of one file.
enum Outcome {
    Unchanged,
    /// Formatted (or, with `--check`, would be).
    Changed,
    /// Not formatted: its syntax errors, rendered.
    Refused(String),
}

pub fn run(args: &Args) -> Result<Report, Error> {
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        if args.paths.len() > 1 {
            return Err(Error::Usage("`-` (standard input) cannot be given with other paths".to_string()));
        }
        return standard_input(args.check);
    }
    let mut files = Vec::new();
    for path in &args.paths {
        cord_files(path, &mut files)?;
    }
    let (mut out, mut changed, mut refused) = (String::new(), 0, 0);
    for file in &files {
        match format_file(file, args.check)? {
            Outcome::Unchanged => {}
            Outcome::Changed => {
                changed += 1;
                let verb = if args.check { "would format" } else { "formatted" };
                out.push_str(&format!("{verb}: {}\n", file.display()));
            }
            Outcome::Refused(errors) => {
                refused += 1;
                out.push_str(&errors);
            }
        }
    }
    let verb = if args.check { "would be formatted" } else { "formatted" };
    out.push_str(&format!("{changed} of {} file(s) {verb}", files.len()));
    if refused > 0 {
        out.push_str(&format!(", {refused} not formatted (syntax errors)"));
    }
    out.push('\n');
    let accepted = refused == 0 && !(args.check && changed > 0);
    Ok(Report { stdout: out, accepted, error: None })
}

/// `path` if it is a file, or every `.cord` file under it (sorted, hidden directories skipped).
fn cord_files(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    let unreadable = |error: io::Error| Error::Usage(format!("cannot read {}: {error}", path.display()));
    if !std::fs::metadata(path).map_err(unreadable)?.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(unreadable)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(unreadable)?;
    entries.sort();
    for entry in entries {
        let hidden = entry.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if entry.is_dir() && !hidden {
            cord_files(&entry, files)?;
        } else if entry.is_file() && entry.extension().is_some_and(|e| e == "cord") {
            files.push(entry);
        }
    }
    Ok(())
}

/// Formats `path` in place (unless `check`): the new text replaces the old in one rename, so
/// the file is never half written.
fn format_file(path: &Path, check: bool) -> Result<Outcome, Error> {
    let failed = |what: &str, error: io::Error| Error::Usage(format!("cannot {what} {}: {error}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| failed("read", e))?;
    let formatted = match formatted(&path.display().to_string(), &text)? {
        Ok(formatted) => formatted,
        Err(errors) => return Ok(Outcome::Refused(errors)),
    };
    if formatted == text {
        return Ok(Outcome::Unchanged);
    }
    if !check {
        // Through a symbolic link, the file it names is replaced, not the link.
        let target = std::fs::canonicalize(path).map_err(|e| failed("resolve", e))?;
        let dir = target.parent().unwrap_or(Path::new("."));
        let mut temporary = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed("write next to", e))?;
        temporary.write_all(formatted.as_bytes()).map_err(|e| failed("write", e))?;
        let permissions = std::fs::metadata(&target).map_err(|e| failed("read", e))?.permissions();
        temporary.as_file().set_permissions(permissions).map_err(|e| failed("write", e))?;
        temporary.as_file().sync_all().map_err(|e| failed("write", e))?;
        temporary.persist(&target).map_err(|e| failed("replace", e.error))?;
    }
    Ok(Outcome::Changed)
}

/// `text` (from `name`) formatted, or its syntax errors rendered as `cordon check` renders them.
fn formatted(name: &str, text: &str) -> Result<Result<String, String>, Error> {
    match format(text) {
        Ok(formatted) => Ok(Ok(formatted)),
        Err(FormatError::Syntax(errors)) => {
            let mut sources = SourceMap::new();
            sources.add(name, text);
            let mut out: String = errors.iter().map(|d| render::human(d, &sources) + "\n").collect();
            let plural = if errors.len() == 1 { "" } else { "s" };
            out.push_str(&format!("{name}: not formatted: {} syntax error{plural}\n", errors.len()));
            Ok(Err(out))
        }
        Err(changed @ FormatError::Changed(_)) => Err(Error::Usage(format!("cannot format {name}: {changed}"))),
    }
}

/// Standard input formatted to standard output. Piped, the text is written exactly as
/// formatted (an editor replaces its buffer with it); to a terminal it is guarded like all else.
fn standard_input(check: bool) -> Result<Report, Error> {
    let mut text = String::new();
    io::stdin().read_to_string(&mut text).map_err(|e| Error::Usage(format!("cannot read standard input: {e}")))?;
    let formatted = match formatted("<stdin>", &text)? {
        Ok(formatted) => formatted,
        Err(errors) => return Ok(Report { stdout: errors, accepted: false, error: None }),
    };
    if check {
        let stdout = if formatted == text { String::new() } else { "would format: <stdin>\n".to_string() };
        return Ok(Report { stdout, accepted: formatted == text, error: None });
    }
    if io::stdout().is_terminal() {
        return Ok(Report { stdout: formatted, accepted: true, error: None });
    }
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(formatted.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| Error::Usage(format!("cannot write standard output: {e}")))?;
    Ok(Report { stdout: String::new(), accepted: true, error: None })
}
