//! `cordon audit`: read the store's audit log. `verify` checks its hash chain (against a
//! checkpoint kept elsewhere, if given) and names the first bad row; `show` tells what a request
//! did, from the log's rows (its fills, each effect with the stages' decisions and its outcome,
//! an effect without an outcome as unknown, refused calls, its end); `head` prints the
//! checkpoint to keep elsewhere.

use std::fmt::Write as _;

use cordon::Storage;
use cordon::api::store::{BadRow, Checkpoint, EffectStatus, Entry, Problem, RequestId, RequestLog, Verdict};
use cordon::api::text::{escape, guard_line};
use serde_json::Value;

use crate::outcome::{Error, Report};
use crate::shown::visible_json;
use crate::store::StoreArgs;

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Check that no row of the audit log was edited, removed, inserted or reordered: exit 0
    /// if intact, 1 naming the first bad row
    Verify {
        #[command(flatten)]
        store: StoreArgs,

        /// A checkpoint printed by `cordon audit head` earlier and kept elsewhere: the log must
        /// still hold its row, unchanged (so it was not cut back or rewritten since)
        #[arg(long, value_name = "SEQ:HASH", value_parser = parse_checkpoint)]
        checkpoint: Option<Checkpoint>,
    },
    /// What a request did: its fills, each effect with the stages' decisions and its outcome,
    /// refused calls, how it ended
    Show {
        #[command(flatten)]
        store: StoreArgs,

        /// The request's number (printed by `run`, `ask` and `chat`); default: the latest
        #[arg(long, value_name = "ID")]
        request: Option<i64>,

        /// `human`, or `json` for tools
        #[arg(long, value_enum, default_value_t = ShowFormat::Human)]
        format: ShowFormat,
    },
    /// Print the log's last row as SEQ:HASH: a checkpoint to keep elsewhere, for `verify
    /// --checkpoint` later
    Head {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    Human,
    Json,
}

fn parse_checkpoint(text: &str) -> Result<Checkpoint, String> {
    text.parse()
}

pub fn run(command: &Command) -> Result<Report, Error> {
    match command {
        Command::Verify { store, checkpoint } => {
            let storage = store.open_existing()?;
            let verdict = match checkpoint {
                Some(checkpoint) => storage.store().verify_against(checkpoint),
                None => storage.store().verify(),
            };
            Ok(verified(&verdict.map_err(|error| storage.error(error))?, checkpoint.as_ref()))
        }
        Command::Show { store, request, format } => {
            let storage = store.open_existing()?;
            let Some(log) = request_log(&storage, request.map(RequestId))? else {
                return Ok(Report { stdout: "the store holds no request yet\n".into(), accepted: true, error: None });
            };
            let stdout = match format {
                ShowFormat::Json => {
                    let json = serde_json::to_string_pretty(&log)
                        .map_err(|e| Error::Usage(format!("the request could not be written as JSON: {e}")))?;
                    visible_json(&json) + "\n"
                }
                ShowFormat::Human => render(&log),
            };
            Ok(Report { stdout, accepted: true, error: None })
        }
        Command::Head { store } => {
            let storage = store.open_existing()?;
            let head = storage.store().head().map_err(|error| storage.error(error))?;
            Ok(Report { stdout: format!("{head}\n"), accepted: true, error: None })
        }
    }
}

/// The request `id`, or the latest one; none if the store holds no request.
fn request_log(storage: &Storage, id: Option<RequestId>) -> Result<Option<RequestLog>, Error> {
    let store = storage.store();
    let id = match id {
        Some(id) => id,
        None => match store.requests(1).map_err(|error| storage.error(error))?.first() {
            Some(latest) => latest.id,
            None => return Ok(None),
        },
    };
    store.show(id).map(Some).map_err(|error| match error {
        cordon::api::store::StoreError::NoSuchRequest(id) => Error::Usage(format!("the store holds no request {id}")),
        error => storage.error(error).into(),
    })
}

fn verified(verdict: &Verdict, checkpoint: Option<&Checkpoint>) -> Report {
    match verdict {
        Verdict::Intact { rows, head } => {
            let mut stdout = format!("intact: {rows} row{}, head {head}\n", if *rows == 1 { "" } else { "s" });
            if let Some(checkpoint) = checkpoint {
                let _ = writeln!(stdout, "the checkpoint's row {} is in the log, unchanged", checkpoint.seq);
            }
            Report { stdout, accepted: true, error: None }
        }
        // A grant the chain does not hold may have no row to name.
        Verdict::Broken(bad @ BadRow { problem: Problem::Grant { .. }, .. }) => {
            Report { stdout: format!("BROKEN: {bad}\n"), accepted: false, error: None }
        }
        Verdict::Broken(bad) => {
            Report { stdout: format!("BROKEN at row {}: {bad}\n", bad.seq), accepted: false, error: None }
        }
    }
}

/// A request as people read it: what the requests table says of it, then each of its rows.
fn render(log: &RequestLog) -> String {
    let r = &log.request;
    let status = r.status.map_or("(an unknown status)", |s| s.as_str());
    let mut out = format!("request {}: {status}\n", r.id);
    // A request's text may run over lines (a plan, a fill): each line on its own row.
    for (i, line) in r.text.split('\n').enumerate() {
        let _ = writeln!(out, "  {:<9}{}", if i == 0 { "text" } else { "" }, escape(line));
    }
    let _ = writeln!(out, "  for      {}", escape(&r.principal));
    if let Some(session) = &r.session {
        let _ = writeln!(out, "  session  {}", escape(session));
    }
    let _ = writeln!(out, "  started  {} UTC\n", utc(r.started_ms));
    for entry in &log.entries {
        let (what, more) = describe(entry);
        let kind = escape(&entry.kind);
        let _ = writeln!(out, "  #{:<6} {}  {kind:<14} {what}", entry.seq, &utc(entry.at_ms)[11..]);
        for line in more {
            let _ = writeln!(out, "  {:<38}{line}", "");
        }
    }
    out
}

/// A row's one-line summary and the lines under it.
fn describe(entry: &Entry) -> (String, Vec<String>) {
    let c = &entry.content;
    // Every string from a row is escaped where it is quoted: a row's text is data.
    let text = |key: &str| escape(c[key].as_str().unwrap_or_default());
    match entry.kind.as_str() {
        "request" => (format!("\"{}\"", text("text")), Vec::new()),
        "status" => (text("status"), Vec::new()),
        "effect" => {
            let args = match &c["args"] {
                Value::Object(args) => {
                    args.iter().map(|(k, v)| format!("{}: {}", escape(k), short(v))).collect::<Vec<_>>()
                }
                _ => Vec::new(),
            };
            let mut more: Vec<String> = Vec::new();
            if let Value::Array(stages) = &c["stages"] {
                let said: Vec<String> = stages
                    .iter()
                    .map(|s| {
                        let needs = s["needs"].as_str().map(|n| format!(" ({n})")).unwrap_or_default();
                        format!(
                            "{} {}{}",
                            escape(s["stage"].as_str().unwrap_or("?")),
                            escape(s["verdict"].as_str().unwrap_or("?")),
                            escape(&needs)
                        )
                    })
                    .collect();
                more.push(format!("stages: {}", said.join(", ")));
            }
            if let Some(by) = c["approved_by"].as_str() {
                more.push(format!("approved by {}", escape(by)));
            }
            more.push(match &entry.outcome {
                Some(EffectStatus::Performed { seq, result_size }) => {
                    format!("performed: a {result_size}-byte answer (row #{seq})")
                }
                Some(EffectStatus::Failed { seq, error }) => format!("failed: {} (row #{seq})", guard_line(error)),
                Some(EffectStatus::Unknown) | None => "OUTCOME UNKNOWN: no outcome row; the process stopped after \
                                                       writing this one, so the host may or may not have performed it"
                    .to_string(),
            });
            (format!("{}({})", text("tool"), args.join(", ")), more)
        }
        "refused" => {
            let by = match &c["by"] {
                Value::String(by) => format!("the {}", escape(by)),
                by => format!("the stage `{}`", escape(by["stage"].as_str().unwrap_or("?"))),
            };
            (format!("{} by {by} [{}]", text("tool"), text("code")), Vec::new())
        }
        "fill" => {
            let code = c["code"].as_str().unwrap_or_default().split('\n').map(|l| format!("| {}", escape(l))).collect();
            (format!("hole {}, attempt {}", text("hole"), c["attempt"]), code)
        }
        "decision" => {
            let mut more = Vec::new();
            if let Some(card) = c["card"]["id"].as_u64() {
                let answer = c["answer"].as_str().unwrap_or("no answer");
                let by = c["approver"].as_str().unwrap_or("?");
                more.push(format!(
                    "card #{card} ({}) answered {answer} by {by}",
                    c["card"]["action"].as_str().unwrap_or("?")
                ));
            }
            if let Some(grant) = c["grant_used"].as_i64() {
                more.push(format!("under grant {grant}"));
            }
            if let Value::Array(made) = &c["grants_made"]
                && !made.is_empty()
            {
                let ids: Vec<String> = made.iter().map(Value::to_string).collect();
                more.push(format!("made grant {}", ids.join(", ")));
            }
            if let Some(reason) = c["reason"].as_str() {
                more.push(reason.to_string());
            }
            (format!("{} {} by the {}", text("tool"), text("outcome"), text("stage")), more)
        }
        "hole-abandoned" => {
            let hole = escape(c["hole"].as_str().unwrap_or("?"));
            let plural = if c["attempts"] == 1 { "" } else { "s" };
            (
                format!("hole {hole} after {} attempt{plural} [{}]", c["attempts"], text("code")),
                vec![guard_line(c["reason"].as_str().unwrap_or_default())],
            )
        }
        _ => (short(c), Vec::new()),
    }
}

/// A value as compact JSON (nothing hidden in it), cut short past 80 characters.
fn short(v: &Value) -> String {
    let text = visible_json(&v.to_string());
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}..", &text[..cut]),
        None => text,
    }
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS.mmm` (UTC).
fn utc(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year:04}-{month:02}-{day:02} {h:02}:{m:02}:{s:02}.{milli:03}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00.000");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00.000");
        assert_eq!(utc(1_764_571_267_123), "2025-12-01 06:41:07.123");
        assert_eq!(utc(-1), "1969-12-31 23:59:59.999");
    }

    #[test]
    fn long_values_are_cut_short() {
        assert_eq!(short(&Value::String("ab".into())), "\"ab\"");
        let long = short(&Value::String("é".repeat(100)));
        assert_eq!(long.chars().count(), 82, "{long}");
    }
}
