//! Starting a program with vault secrets in its environment (a local MCP server that wants a
//! token) and relaying its standard input and output over the client's connection. A secret is
//! given only to a program it is bound to (the program's canonical path and its arguments,
//! exactly); the program gets no environment but what the client names (never a variable that
//! loads other code into it) and the secrets; it runs in a process group of its own, killed
//! whole when either side ends; and every line it writes is scrubbed of every vault secret, in
//! any of its forms, before it reaches the client, so a server that echoes its token hands the
//! plan (and the model) only `[vault secret]`.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use cordon_egress::VaultMatcher;
use zeroize::Zeroizing;

use crate::protocol::{Code, Refusal, Spawn};
use crate::send::{Sender, scrub};

/// The longest line a program may write: a larger MCP message is cut off, and the relay ends.
const MAX_LINE: u64 = 64 << 20;

impl Sender {
    /// Starts `spawn`'s program, or says why not.
    pub(crate) fn start(&self, spawn: &Spawn) -> Result<std::process::Child, Refusal> {
        // The program as it is found, and checked as the file it is (a binding names the
        // canonical path), so that no `PATH` the client gives picks another.
        let path = spawn.env.iter().find(|(n, _)| n == "PATH").map(|(_, v)| v.as_str());
        let found = find_program(&spawn.command, path);
        let canonical = found.as_ref().and_then(|f| std::fs::canonicalize(f).ok());
        let (Some(found), Some(canonical)) = (found, canonical) else {
            let missing = format!("there is no program `{}`", spawn.command.escape_debug());
            return Err(Refusal::new(Code::Unreachable, missing));
        };
        let argv: Vec<String> =
            std::iter::once(canonical.display().to_string()).chain(spawn.args.iter().cloned()).collect();
        // Run as found: a virtual environment's interpreter is a link that knows its place.
        let mut command = Command::new(&found);
        command.args(&spawn.args).env_clear().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        // A group of its own, so that what it starts (`npx` starts `node`) ends with it.
        command.process_group(0);
        if let Some(cwd) = &spawn.cwd {
            command.current_dir(cwd);
        }
        for (name, value) in &spawn.env {
            let name = checked_variable(name)?;
            if !spawn.secrets.is_empty() && changes_what_runs(name) {
                return Err(Refusal::new(
                    Code::NotAllowed,
                    format!("`{name}` would change what a program given a secret runs: it is not passed to one"),
                ));
            }
            command.env(name, value);
        }
        for (variable, secret) in &spawn.secrets {
            let Some((entry, value)) = self.secrets.iter().find(|(e, _)| &e.name == secret) else {
                return Err(Refusal::new(
                    Code::NotAllowed,
                    format!("the vault has no secret `{}`", secret.escape_debug()),
                ));
            };
            if !entry.programs.contains(&argv) {
                return Err(Refusal::new(
                    Code::NotAllowed,
                    format!(
                        "the secret `{secret}` is not bound to the program `{}`: it is never given to it",
                        argv.join(" ")
                    ),
                ));
            }
            command.env(checked_variable(variable)?, Zeroizing::new(value.expose().to_string()).as_str());
        }
        command.spawn().map_err(|e| {
            Refusal::new(Code::Unreachable, format!("cannot start `{}`: {e}", spawn.command.escape_debug()))
        })
    }
}

/// `command` as the canonical path of the program it names (what a binding keeps): itself if
/// it holds a `/`, else the first executable of that name on `path`.
pub fn resolve_program(command: &str, path: Option<&str>) -> Option<String> {
    Some(std::fs::canonicalize(find_program(command, path)?).ok()?.display().to_string())
}

/// The program `command` names: itself if it holds a `/`, else the first executable of that
/// name on `path`.
fn find_program(command: &str, path: Option<&str>) -> Option<std::path::PathBuf> {
    if command.contains('/') {
        return Some(std::path::PathBuf::from(command));
    }
    let executable = |p: &std::path::Path| {
        let mode = |m: &std::fs::Metadata| std::os::unix::fs::PermissionsExt::mode(&m.permissions());
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && mode(&m) & 0o111 != 0)
    };
    path?.split(':').filter(|d| !d.is_empty()).map(|d| std::path::Path::new(d).join(command)).find(|p| executable(p))
}

/// Variables that load other code into a program (the dynamic linker's, the interpreters'):
/// never given to a program that is also given a secret.
fn changes_what_runs(name: &str) -> bool {
    const PREFIXES: [&str; 7] = ["LD_", "DYLD_", "PYTHON", "NODE_", "PERL", "RUBY", "JAVA_"];
    const NAMES: [&str; 6] = ["BASH_ENV", "ENV", "_JAVA_OPTIONS", "GCONV_PATH", "MALLOC_CONF", "NPM_CONFIG_PREFIX"];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name)
}

fn checked_variable(name: &str) -> Result<&str, Refusal> {
    let fine = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match fine {
        true => Ok(name),
        false => Err(Refusal::new(Code::BadRequest, format!("`{}` is not a variable's name", name.escape_debug()))),
    }
}

/// Relays between `stream` and `child` until the program ends or the client goes: what the
/// client writes to the program's input as it is; what the program writes, line by line,
/// scrubbed. The program is killed when the client goes.
pub(crate) fn relay(stream: UnixStream, mut child: std::process::Child, matcher: &VaultMatcher) {
    let (Some(mut input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    let Ok(mut from_client) = stream.try_clone() else {
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    // The program's group, killed by whichever side ends first; once the program is reaped (its
    // id free to be reused) it is killed no more.
    let group = Arc::new(Mutex::new(rustix::process::Pid::from_raw(child.id() as i32)));
    let kill = |group: &Mutex<Option<rustix::process::Pid>>| {
        if let Ok(group) = group.lock()
            && let Some(pid) = *group
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    };
    let theirs = group.clone();
    std::thread::spawn(move || {
        // A plain loop, not `std::io::copy`: on Linux that splices a socket into a pipe, which
        // here held each message back instead of passing it on.
        let mut buffer = [0u8; 8192];
        while let Ok(n) = from_client.read(&mut buffer) {
            if n == 0 || input.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        // The client is gone (or closed its side): so is the program, and all it started.
        drop(input);
        kill(&theirs);
    });
    let mut to_client = stream;
    let mut output = BufReader::new(output);
    loop {
        let mut line = Vec::new();
        match (&mut output).take(MAX_LINE).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        if to_client.write_all(scrub(matcher, &text).as_bytes()).is_err() || line.len() as u64 >= MAX_LINE {
            break;
        }
    }
    let _ = to_client.shutdown(std::net::Shutdown::Both);
    kill(&group);
    let _ = child.wait();
    if let Ok(mut group) = group.lock() {
        *group = None;
    }
}
