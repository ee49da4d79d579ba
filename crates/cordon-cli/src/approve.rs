//! Who answers the approval gate's cards (`--approve`): the person at the terminal by default,
//! nobody (every card denied) without a terminal, a file of answers, or everyone (benchmarks
//! only). No answer ever comes from a model or a tool: only from here. And `cordon approvals`,
//! the grants the gate remembers.

use std::path::PathBuf;

use cordon::Settings;
use cordon::api::approval::{ApproveAll, Approver, DenyAll, Scripted, Terminal};
use cordon::api::models::ProviderConfig;
use cordon::api::store::{GrantId, Scope};
use cordon::api::text::escape;

use crate::clearance::Clearance;
use crate::outcome::{Error, Report};
use crate::store::StoreArgs;

/// The `--approve` flag.
#[derive(Debug, Clone, clap::Args)]
pub struct ApproveArgs {
    /// Who answers approval cards: `none` (deny every card: the default without a terminal),
    /// `all` (approve every card unseen: benchmarks only), or a FILE of answers (`yes`, `no`,
    /// `always`, one a line, optionally after the tool: `Shop.pay yes`). On a terminal, you are
    /// asked
    #[arg(long = "approve", value_name = "none|all|FILE")]
    pub approve: Option<String>,

    /// How long an "always" answer lasts: `30m`, `12h`, `7d` (minutes, hours, days). Without
    /// it, until revoked (or, with `--session`, for that session)
    #[arg(long = "grants-expire-after", value_name = "DURATION", value_parser = duration_ms)]
    pub grants_expire_after: Option<i64>,

    /// A second opinion on each card from a model that is not the acting one (same forms as
    /// `--model`): it is sent only your request and the card, and can flag a card (which then
    /// needs your answer even under a grant), never clear one
    #[arg(long = "intent-model", value_name = "MODEL")]
    pub intent_model: Option<String>,

    /// What the intent model may be shown of a card: `public` values only, or also what is
    /// secret to the `user`; a value it may not see reads `<hidden>`
    #[arg(long = "intent-clearance", value_enum, default_value_t = Clearance::Public)]
    pub intent_clearance: Clearance,

    /// Before the run, one card for the whole plan: the calls that ask (`ask`) which its
    /// effect summary proves within their sinks and bounded in number; a yes lets each go
    /// without its own card while it stays inside what the card said
    #[arg(long = "approve-plan")]
    pub whole_plan: bool,
}

impl ApproveArgs {
    /// Puts what the flags say about the gate into `settings`: how long grants last, the intent
    /// model (a bad spec is a usage error here, before anything runs), the whole plan's card.
    pub fn apply(&self, settings: &mut Settings) -> Result<(), Error> {
        settings.grants_expire_after_ms = self.grants_expire_after;
        settings.approve_plan = self.whole_plan;
        settings.intent_clearance = self.intent_clearance.into();
        if let Some(spec) = &self.intent_model {
            let config = ProviderConfig::parse(spec).map_err(|e| Error::Usage(format!("--intent-model: {e}")))?;
            settings.intent_model = Some(config);
        }
        Ok(())
    }

    /// The approver the flag names; without the flag, the person at the terminal (or no one,
    /// without a terminal).
    pub fn approver(&self) -> Result<Box<dyn Approver>, Error> {
        if self.approve.is_none()
            && let Ok(terminal) = Terminal::stdio()
        {
            return Ok(Box::new(terminal));
        }
        Ok(self.unattended()?)
    }

    /// The approver the flag names where no terminal may be asked (`cordon mcp serve`, whose
    /// stdin is the protocol's): without the flag, no one.
    pub fn unattended(&self) -> Result<Box<dyn Approver + Send>, Error> {
        Ok(match self.approve.as_deref() {
            None | Some("none") => Box::new(DenyAll),
            Some("all") => {
                eprintln!("{}", ApproveAll::WARNING);
                Box::new(ApproveAll)
            }
            Some(file) => {
                let path = PathBuf::from(file);
                Box::new(Scripted::from_file(&path).map_err(|e| Error::Usage(e.to_string()))?)
            }
        })
    }
}

/// `cordon approvals`: the grants ("yes, and don't ask again") the gate remembers.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Every live grant: its id, tool, destinations, kind of data, scope and expiry
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revokes a grant: its tool asks again
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        /// The grant's id, as `cordon approvals list` shows it
        id: i64,
    },
}

pub fn run(command: &Command) -> Result<Report, Error> {
    match command {
        Command::List { store } => {
            let storage = store.open_existing()?;
            let grants = storage.store().grants().map_err(|error| storage.error(error))?;
            let mut stdout = String::new();
            for g in &grants {
                let scope = match &g.grant.scope {
                    Scope::Session(name) => format!("session {}", escape(name)),
                    Scope::UntilRevoked => "until revoked".to_string(),
                };
                let expires = g.grant.expires_ms.map_or(String::new(), |ms| format!(", expires {}", utc(ms)));
                stdout.push_str(&format!(
                    "{:>4}  {}  to {}  for {} data  ({scope}{expires})\n",
                    g.id,
                    escape(&g.grant.tool),
                    escape(&g.grant.destination),
                    escape(&g.grant.label_class)
                ));
            }
            if grants.is_empty() {
                stdout.push_str("no grants: every `ask` tool asks\n");
            }
            Ok(Report { stdout, accepted: true, error: None })
        }
        Command::Revoke { store, id } => {
            let storage = store.open_existing()?;
            storage.store().revoke_grant(GrantId(*id)).map_err(|error| storage.error(error))?;
            Ok(Report { stdout: format!("revoked grant {id}\n"), accepted: true, error: None })
        }
    }
}

/// A duration as `--grants-expire-after` takes it (`30m`, `12h`, `7d`), in milliseconds.
fn duration_ms(text: &str) -> Result<i64, String> {
    let unit_ms: i64 = match text.chars().last() {
        Some('m') => 60_000,
        Some('h') => 3_600_000,
        Some('d') => 86_400_000,
        _ => return Err(format!("expected a number of minutes, hours or days (`30m`, `12h`, `7d`), found `{text}`")),
    };
    let count: i64 = text[..text.len() - 1]
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("expected a positive whole number before the unit, found `{text}`"))?;
    count.checked_mul(unit_ms).ok_or_else(|| format!("`{text}` is too long a time"))
}

/// A time in milliseconds since 1970 as a UTC date and minute: `2026-12-01 09:30 UTC`.
fn utc(ms: i64) -> String {
    let (days, minute_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000) / 60_000);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by eras of 400 years.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", minute_of_day / 60, minute_of_day % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_796_117_400_000), "2026-12-01 09:30 UTC");
        assert_eq!(utc(-60_000), "1969-12-31 23:59 UTC");
    }

    #[test]
    fn durations_need_a_unit_and_a_positive_count() {
        assert_eq!(duration_ms("30m"), Ok(1_800_000));
        assert_eq!(duration_ms("7d"), Ok(604_800_000));
        for bad in ["", "30", "m", "-3h", "0d", "1.5h", "9999999999999999d"] {
            assert!(duration_ms(bad).is_err(), "{bad}");
        }
    }
}
