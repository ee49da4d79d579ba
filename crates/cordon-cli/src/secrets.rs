//! `cordon secrets`: the vault's credentials, added, listed and removed. A value is read from
//! the terminal without echo (or from standard input when that is not a terminal), never from
//! the command line, where shell history and `ps` would keep it; nothing prints it.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;

use cordon::Error;
use cordon::api::vault::{Destination, Entry, KEY_VARIABLE, Key, SecretValue, Vault, key_location, location};

/// Where the vault and its key are.
#[derive(Debug, Clone, clap::Args)]
pub struct VaultArgs {
    /// The store the vault is beside (the vault is the file `vault` in its directory, where
    /// `cordon run`, `ask`, `chat` and `mcp serve` find it). Default: $CORDON_STORE, else
    /// $XDG_DATA_HOME/cordon/cordon.db, else ~/.local/share/cordon/cordon.db
    #[arg(long = "store", value_name = "PATH")]
    pub store: Option<PathBuf>,

    /// The vault's key file (64 hex digits; made on the first `add`), used when
    /// $CORDON_VAULT_KEY is not set. Default: $XDG_CONFIG_HOME/cordon/vault.key, else
    /// ~/.config/cordon/vault.key
    #[arg(long = "key-file", value_name = "PATH")]
    pub key_file: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Add a secret (or replace the one of that name); its value is read without echo
    Add {
        /// Its name, as policies and MCP configurations refer to it (`GITHUB_TOKEN`)
        name: String,
        /// A host it may be sent to (`api.github.com`, meaning HTTPS on port 443, or an origin
        /// such as `https://ghe.example.com:8443`); repeat for more
        #[arg(long = "host", value_name = "HOST", required_unless_present = "programs")]
        hosts: Vec<String>,
        /// The request header it goes in
        #[arg(long, value_name = "NAME", default_value = "Authorization")]
        header: String,
        /// A word the header's value starts with before the secret (`Bearer`, `token`), as
        /// `Authorization: Bearer <secret>`
        #[arg(long, value_name = "WORD")]
        scheme: Option<String>,
        /// A program that may be started with it in an environment variable: a local MCP
        /// server's command and arguments, exactly as the config gives them (`"npx -y
        /// @modelcontextprotocol/server-github"`, split at spaces); repeat for more
        #[arg(long = "program", value_name = "COMMAND")]
        programs: Vec<String>,
        #[command(flatten)]
        vault: VaultArgs,
    },
    /// List the secrets: names, hosts and headers, never values
    List {
        #[command(flatten)]
        vault: VaultArgs,
    },
    /// Remove a secret
    Remove {
        name: String,
        #[command(flatten)]
        vault: VaultArgs,
    },
}

/// What the command says on stdout.
pub fn run(command: &Command) -> Result<String, Error> {
    let stdout = match command {
        Command::Add { name, hosts, header, scheme, programs, vault } => {
            let destinations = hosts.iter().map(|h| Destination::parse(h)).collect::<Result<Vec<_>, _>>();
            let programs = programs.iter().map(|p| program(p)).collect::<Result<Vec<_>, _>>()?;
            let entry = Entry {
                name: name.clone(),
                destinations: destinations?,
                header: header.clone(),
                scheme: scheme.clone(),
                programs,
            };
            // Nothing is asked for or written for an entry the vault would refuse.
            entry.check()?;
            let key = Key::load_or_create(key_variable(), &vault.key_file()?)?;
            let mut opened = Vault::open(&vault.path()?, &key)?;
            let value = read_value(name)?;
            let places: Vec<String> = entry
                .destinations
                .iter()
                .map(ToString::to_string)
                .chain(entry.programs.iter().map(|p| format!("the program `{}`", p.join(" "))))
                .collect();
            let slot = match scheme {
                Some(scheme) => format!("{header}: {scheme} ..."),
                None => header.clone(),
            };
            let said = format!("added `{name}`: sent only in `{slot}` to {}\n", places.join(", "));
            opened.add(entry, value, &key)?;
            said
        }
        Command::List { vault } => {
            let Some(key) = Key::load(key_variable(), &vault.key_file()?)? else {
                return Ok("no secrets (there is no vault key yet)\n".into());
            };
            let opened = Vault::open(&vault.path()?, &key)?;
            let entries = opened.entries();
            if entries.is_empty() {
                "no secrets\n".to_string()
            } else {
                let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
                let header_width = entries.iter().map(|e| e.header.len()).max().unwrap_or(0);
                let lines: Vec<String> = entries
                    .iter()
                    .map(|e| {
                        let places: Vec<String> = e
                            .destinations
                            .iter()
                            .map(ToString::to_string)
                            .chain(e.programs.iter().map(|p| format!("program:{}", p.join(" "))))
                            .collect();
                        format!("{:width$}  {:header_width$}  {}\n", e.name, e.header, places.join(" "))
                    })
                    .collect();
                lines.concat()
            }
        }
        Command::Remove { name, vault } => {
            let Some(key) = Key::load(key_variable(), &vault.key_file()?)? else {
                return Err(Error::Setup(format!("the vault has no secret `{name}` (there is no vault key yet)")));
            };
            let mut opened = Vault::open(&vault.path()?, &key)?;
            opened.remove(name, &key)?;
            format!("removed `{name}`\n")
        }
    };
    Ok(stdout)
}

impl VaultArgs {
    fn path(&self) -> Result<PathBuf, Error> {
        let store =
            cordon::api::store::location(self.store.as_deref()).map_err(|error| Error::Store { path: None, error })?;
        Ok(location(&store))
    }

    fn key_file(&self) -> Result<PathBuf, Error> {
        match &self.key_file {
            Some(path) => Ok(path.clone()),
            None => key_location(|name| std::env::var_os(name)).ok_or_else(|| {
                Error::Setup("no place for the vault key: set $HOME, $XDG_CONFIG_HOME or --key-file".into())
            }),
        }
    }
}

fn key_variable() -> Option<String> {
    std::env::var(KEY_VARIABLE).ok()
}

/// The secret's value: typed at the terminal with echo off, or all of standard input (one
/// trailing line break dropped) when it is not a terminal.
fn read_value(name: &str) -> Result<SecretValue, Error> {
    let stdin = std::io::stdin();
    let unreadable = |e: std::io::Error| Error::Setup(format!("cannot read the value of `{name}`: {e}"));
    let mut text = String::new();
    if stdin.is_terminal() {
        let mut stderr = std::io::stderr();
        // Echo goes off before the prompt shows: a value typed (or pasted) as soon as the prompt
        // appears is never echoed.
        let echo = quiet(&stdin);
        let _ = write!(stderr, "value of `{name}` (not shown): ").and_then(|()| stderr.flush());
        let read = stdin.lock().read_line(&mut text);
        if let Some(previous) = echo {
            let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &previous);
        }
        let _ = writeln!(stderr);
        read.map_err(unreadable)?;
    } else {
        stdin.lock().take(64 * 1024).read_to_string(&mut text).map_err(unreadable)?;
    }
    let value = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text).to_string();
    // The copy with the line break is cleared too.
    drop(SecretValue::new(text));
    Ok(SecretValue::new(value))
}

/// Turns the terminal's echo off; the settings to restore, if it could.
fn quiet(stdin: &std::io::Stdin) -> Option<rustix::termios::Termios> {
    let previous = rustix::termios::tcgetattr(stdin).ok()?;
    let mut silent = previous.clone();
    silent.local_modes.remove(rustix::termios::LocalModes::ECHO);
    rustix::termios::tcsetattr(stdin, rustix::termios::OptionalActions::Now, &silent).ok()?;
    Some(previous)
}

/// A program's command line as a binding keeps it: split at spaces, the command as the canonical
/// path of the program it names (found on `PATH` as the broker will find it), so that no other
/// program of that name is ever given the secret.
fn program(line: &str) -> Result<Vec<String>, Error> {
    let mut argv: Vec<String> = line.split_whitespace().map(String::from).collect();
    let Some(command) = argv.first_mut() else {
        return Err(Error::Setup("--program needs a command".into()));
    };
    let path = std::env::var("PATH").ok();
    *command = cordon::api::broker::resolve_program(command, path.as_deref())
        .ok_or_else(|| Error::Setup(format!("--program: there is no program `{command}`")))?;
    Ok(argv)
}
