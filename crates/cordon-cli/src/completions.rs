//! `cordon completions SHELL` and `cordon man`: the shell completion scripts (`clap_complete`)
//! and the roff man pages (`clap_mangen`), generated from the command line's own definition, so
//! they name every subcommand and flag there is and none that is gone.

use std::path::{Path, PathBuf};

use clap_complete::Shell;

use crate::outcome::{Error, Report};

#[derive(Debug, clap::Args)]
pub struct CompletionArgs {
    /// The shell to complete for: bash, zsh, fish, elvish or powershell
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write a page for `cordon` and one for each subcommand (`cordon-run.1`, ...) into this
    /// directory, instead of printing `cordon`'s page
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// The completion script for `args.shell`, as the report's text (load it with e.g.
/// `source <(cordon completions bash)`).
pub fn completions(args: &CompletionArgs, mut command: clap::Command) -> Result<Report, Error> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    let stdout = String::from_utf8(script).map_err(|e| Error::Usage(format!("completion script: {e}")))?;
    Ok(Report { stdout, accepted: true, error: None })
}

/// `cordon`'s man page as the report's text, or, with `--dir`, every page written there and
/// their paths listed.
pub fn man(args: &ManArgs, mut command: clap::Command) -> Result<Report, Error> {
    // What `--help` shows: the name a subcommand's page has (`cordon-run`) comes from here.
    command = command.disable_help_subcommand(true);
    command.build();
    let source = format!("cordon {}", command.get_version().unwrap_or_default());
    match &args.dir {
        None => {
            let mut page = Vec::new();
            page_of(command, &source).render(&mut page).map_err(|error| write_error(Path::new("-"), error))?;
            let stdout = String::from_utf8(page).map_err(|e| Error::Usage(format!("man page: {e}")))?;
            Ok(Report { stdout, accepted: true, error: None })
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|error| write_error(dir, error))?;
            let mut written = Vec::new();
            write_pages(command, &source, dir, &mut written)?;
            written.sort();
            let stdout = written.iter().map(|path| format!("{}\n", path.display())).collect();
            Ok(Report { stdout, accepted: true, error: None })
        }
    }
}

/// The page of `command` (`cordon`, or a subcommand built by its parent): titled in capitals as
/// man pages are (`CORDON-RUN`), with the version of the whole command.
fn page_of(command: clap::Command, source: &str) -> clap_mangen::Man {
    let title = command.get_display_name().unwrap_or_else(|| command.get_name()).to_uppercase();
    clap_mangen::Man::new(command).title(title).source(source.to_string()).manual("Cordon Manual")
}

/// Writes the page of `command` and of each of its subcommands, at any depth, into `dir`.
fn write_pages(command: clap::Command, source: &str, dir: &Path, written: &mut Vec<PathBuf>) -> Result<(), Error> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub.clone(), source, dir, written)?;
    }
    let page = page_of(command, source);
    let path = dir.join(page.get_filename());
    written.push(page.generate_to(dir).map_err(|error| write_error(&path, error))?);
    Ok(())
}

fn write_error(path: &Path, error: std::io::Error) -> Error {
    Error::Cordon(cordon::Error::Write { path: path.to_path_buf(), error })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::ValueEnum;
    use clap_complete::Shell;

    use super::{CompletionArgs, ManArgs, completions, man};

    fn command() -> clap::Command {
        <crate::Cli as clap::CommandFactory>::command()
    }

    /// The scripts and the page pass through the guard on their way to the terminal unchanged:
    /// none has a character it would escape (a tab, a control character).
    #[test]
    fn the_guard_leaves_every_script_and_the_man_page_as_they_are() {
        for shell in Shell::value_variants() {
            let text = completions(&CompletionArgs { shell: *shell }, command()).unwrap().stdout;
            assert!(!text.is_empty(), "{shell}");
            assert_eq!(cordon::api::text::guard(&text), text, "{shell}");
        }
        let page = man(&ManArgs { dir: None }, command()).unwrap().stdout;
        assert_eq!(cordon::api::text::guard(&page), page);
    }
}
