//! Who answers the approval gate's cards (`--approve`): the person at the terminal by default,
//! nobody (every card denied) without a terminal, a file of answers, or everyone (benchmarks
//! only). No answer ever comes from a model or a tool: only from here. And `cordon approvals`,
//! the grants the gate remembers.

use std::path::PathBuf;

use cordon_gate::{ApproveAll, Approver, DenyAll, Scripted, Terminal};
use cordon_store::{GrantId, Scope, Store};

use crate::store::{StoreArgs, store_error};
use crate::{Error, Report};

/// The `--approve` flag.
#[derive(Debug, Clone, clap::Args)]
pub struct ApproveArgs {
    /// Who answers approval cards: `none` (deny every card: the default without a terminal),
    /// `all` (approve every card unseen: benchmarks only), or a FILE of answers (`yes`, `no`,
    /// `always`, one a line, optionally after the tool: `Shop.pay yes`). On a terminal, you are
    /// asked
    #[arg(long = "approve", value_name = "none|all|FILE")]
    pub approve: Option<String>,
}

impl ApproveArgs {
    /// The approver the flag names.
    pub fn approver(&self) -> Result<Box<dyn Approver>, Error> {
        Ok(match self.approve.as_deref() {
            None => match Terminal::stdio() {
                Ok(terminal) => Box::new(terminal),
                Err(_) => Box::new(DenyAll),
            },
            Some("none") => Box::new(DenyAll),
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
            let store = store.open_existing()?;
            let grants = store.grants().map_err(|error| store_error(&store, error))?;
            let mut stdout = String::new();
            for g in &grants {
                let scope = match &g.grant.scope {
                    Scope::Session(name) => format!("session {name}"),
                    Scope::UntilRevoked => "until revoked".to_string(),
                };
                let expires = g.grant.expires_ms.map_or(String::new(), |ms| format!(", expires at {ms} ms"));
                stdout.push_str(&format!(
                    "{:>4}  {}  to {}  for {} data  ({scope}{expires})\n",
                    g.id, g.grant.tool, g.grant.destination, g.grant.label_class
                ));
            }
            if grants.is_empty() {
                stdout.push_str("no grants: every `ask` tool asks\n");
            }
            Ok(Report { stdout, accepted: true, error: None })
        }
        Command::Revoke { store, id } => {
            let store = store.open_existing()?;
            store.revoke_grant(GrantId(*id)).map_err(|error| store_error(&store, error))?;
            Ok(Report { stdout: format!("revoked grant {id}\n"), accepted: true, error: None })
        }
    }
}
