//! Starting a program with vault secrets in its environment (a local MCP server that wants a
//! token) and relaying its standard input and output over the client's connection. A secret is
//! given only to a program it is bound to (the command and arguments, exactly); the program gets
//! no environment but what the client names and the secrets; and every line it writes is
//! scrubbed of every vault secret, in any form, before it reaches the client, so a server that
//! echoes its token hands the plan (and the model) only `[vault secret]`.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use cordon_egress::VaultMatcher;
use zeroize::Zeroizing;

use crate::protocol::{Code, Refusal, Spawn};
use crate::send::{Sender, scrub};

/// The longest line a program may write: a larger MCP message is cut off, and the relay ends.
const MAX_LINE: u64 = 64 << 20;

impl Sender {
    /// Starts `spawn`'s program, or says why not.
    pub(crate) fn start(&self, spawn: &Spawn) -> Result<std::process::Child, Refusal> {
        let argv: Vec<String> = std::iter::once(spawn.command.clone()).chain(spawn.args.iter().cloned()).collect();
        let mut command = Command::new(&spawn.command);
        command.args(&spawn.args).env_clear().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        if let Some(cwd) = &spawn.cwd {
            command.current_dir(cwd);
        }
        for (name, value) in &spawn.env {
            command.env(checked_variable(name)?, value);
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
    let pid = child.id();
    std::thread::spawn(move || {
        // A plain loop, not `std::io::copy`: on Linux that splices a socket into a pipe, which
        // here held each message back instead of passing it on.
        let mut buffer = [0u8; 8192];
        while let Ok(n) = from_client.read(&mut buffer) {
            if n == 0 || input.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        // The client is gone (or closed its side): so is the program.
        drop(input);
        if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
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
    let _ = child.kill();
    let _ = child.wait();
}
