//! `cordon check`: read the policy modules and the plan, check them (types, refinements,
//! linearity, and the labels' static analysis), and render the diagnostics in the chosen
//! format; with `--effects`, the effect summary: what the plan may do with which data. File reading goes through the `read` function the caller
//! passes, so that tests can serve files from memory.

use std::io;
use std::path::{Path, PathBuf};

use cordon::Source;
use cordon::api::CheckOptions;
use cordon::api::diagnostics::{Diagnostic, SourceMap, render};

use crate::outcome::{Error, Report};
use crate::shown::visible_json;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A policy module; repeat for several (checked in the order given)
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,

    /// How to print diagnostics: `human` for people, `concise` for models, `json` for tools
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Time the solver may spend on one refinement obligation before it is rejected
    #[arg(long, value_name = "N", default_value_t = CheckOptions::default().solver_timeout_ms)]
    pub solver_timeout_ms: u32,

    /// Wall-clock time the whole check may take (type checking and solver) before it is rejected
    #[arg(long, value_name = "N", default_value_t = CheckOptions::default().check_timeout_ms)]
    pub check_timeout_ms: u32,

    /// Also print what the plan may do: each tool it may call, where, when, how often, with
    /// which data (in JSON, under `effects`)
    #[arg(long)]
    pub effects: bool,

    /// The principal the plan acts for: whom `user()` names in the policies' labels
    #[arg(long, value_name = "NAME", default_value = "user")]
    pub user: String,

    /// The plan to check; without it only the policy modules are checked
    #[arg(required_unless_present = "policies")]
    pub plan: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Concise,
    Json,
}

/// Reads the files, checks them and renders the outcome.
pub fn run(args: &Args, read: &dyn Fn(&Path) -> io::Result<String>) -> Result<Report, Error> {
    let load = |path: &Path| {
        let text = read(path).map_err(|error| cordon::Error::Read { path: path.to_path_buf(), error })?;
        Ok::<_, Error>(Source::new(path.display().to_string(), text))
    };
    let policies = args.policies.iter().map(|p| load(p)).collect::<Result<Vec<_>, _>>()?;
    let plan = args.plan.as_deref().map(load).transpose()?;
    let options = CheckOptions {
        solver_timeout_ms: args.solver_timeout_ms,
        check_timeout_ms: args.check_timeout_ms,
        ..CheckOptions::default()
    };
    let mut checked = cordon::check(&policies, plan.as_ref(), &options, &args.user);
    if !args.effects {
        checked.effects = None;
    }
    let stdout = match (args.format, &checked.effects) {
        (Format::Json, Some(_)) => {
            let value = serde_json::to_value(&checked).unwrap_or_default();
            visible_json(&serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())) + "\n"
        }
        (_, Some(summary)) => format!(
            "{}\n{}",
            summary.render(),
            render_outcome(args.format, &checked.sources, &subject(args), &checked.diagnostics)
        ),
        (Format::Human, None) => {
            releases(&checked.releases)
                + &render_outcome(args.format, &checked.sources, &subject(args), &checked.diagnostics)
        }
        (_, None) => render_outcome(args.format, &checked.sources, &subject(args), &checked.diagnostics),
    };
    Ok(Report { stdout, accepted: checked.accepted(), error: None })
}

/// The releases policies declare, one line each: what may leave a group, to where, and who is
/// asked. Nothing if they declare none.
fn releases(releases: &[cordon::api::Release]) -> String {
    let mut out = String::new();
    for r in releases {
        let to = if r.to.secrecy.is_true() { "anyone".to_string() } else { format!("readers of {}", r.to.secrecy) };
        let asked = if r.card { "with the user's yes on a card, each time" } else { "without asking anyone" };
        out.push_str(&format!("release: the data of the group `{}` may go to {to}, {asked}\n", r.group));
    }
    out
}

/// What the summary line is about: the plan, or the policy modules when there is none.
fn subject(args: &Args) -> String {
    match &args.plan {
        Some(plan) => plan.display().to_string(),
        None => args.policies.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
    }
}

/// The whole of stdout: the diagnostics in `format`, then (except for JSON, which must parse)
/// a summary line such as `plan.cord: rejected: 2 errors`.
pub(crate) fn render_outcome(format: Format, sources: &SourceMap, subject: &str, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    match format {
        Format::Json => {
            let value = render::json(diagnostics, sources);
            // Serializing a `Value` cannot fail; fall back to compact output rather than panic.
            out.push_str(&visible_json(&serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string())));
            out.push('\n');
            return out;
        }
        Format::Human => {
            for d in diagnostics {
                out.push_str(&render::human(d, sources));
                out.push('\n');
            }
        }
        Format::Concise => {
            for d in diagnostics {
                out.push_str(&render::concise(d, sources));
            }
        }
    }
    out.push_str(&format!("{subject}: {}\n", render::summary(diagnostics)));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use cordon::api::diagnostics::{Code, Span};

    fn rejected() -> (SourceMap, Vec<Diagnostic>) {
        let mut sources = SourceMap::new();
        let plan = sources.add("plan.cord", "let x: Int = \"a\";\nlet y = ;\n");
        let diagnostics = vec![
            Diagnostic::error(Code::TypeMismatch, Span::new(plan, 13, 16), "expected `Int`, found `String`")
                .with_primary_label("expected `Int`"),
            Diagnostic::error(Code::SyntaxError, Span::new(plan, 26, 27), "expected an expression, found `;`"),
        ];
        (sources, diagnostics)
    }

    #[test]
    fn human_output_is_diagnostics_blank_lines_and_a_summary() {
        let (sources, diagnostics) = rejected();
        let out = render_outcome(Format::Human, &sources, "plan.cord", &diagnostics);
        let expected = [
            "error[type-mismatch]: expected `Int`, found `String`",
            " --> plan.cord:1:14",
            "  |",
            "1 | let x: Int = \"a\";",
            "  |              ^^^ expected `Int`",
            "",
            "error[syntax-error]: expected an expression, found `;`",
            " --> plan.cord:2:9",
            "  |",
            "2 | let y = ;",
            "  |         ^",
            "",
            "plan.cord: rejected: 2 errors",
            "",
        ];
        assert_eq!(out, expected.join("\n"));
    }

    #[test]
    fn concise_output_is_one_block_per_diagnostic_and_a_summary() {
        let (sources, diagnostics) = rejected();
        let out = render_outcome(Format::Concise, &sources, "plan.cord", &diagnostics);
        let expected = [
            "plan.cord:1:14: error[type-mismatch]: expected `Int`, found `String`",
            "  | let x: Int = \"a\";",
            "  |              ^^^ expected `Int`",
            "plan.cord:2:9: error[syntax-error]: expected an expression, found `;`",
            "  | let y = ;",
            "  |         ^",
            "plan.cord: rejected: 2 errors",
            "",
        ];
        assert_eq!(out, expected.join("\n"));
    }

    #[test]
    fn json_output_is_only_json() {
        let (sources, diagnostics) = rejected();
        let out = render_outcome(Format::Json, &sources, "plan.cord", &diagnostics);
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(value["diagnostics"][1]["code"], "syntax-error");
    }

    #[test]
    fn accepted_output_is_the_summary_alone() {
        let out = render_outcome(Format::Human, &SourceMap::new(), "plan.cord", &[]);
        assert_eq!(out, "plan.cord: accepted\n");
    }

    #[test]
    fn unreadable_file_is_an_error_before_checking() {
        let args = Args {
            policies: vec![PathBuf::from("policy.cord")],
            format: Format::Human,
            solver_timeout_ms: 1,
            check_timeout_ms: 1,
            effects: false,
            user: "user".into(),
            plan: Some(PathBuf::from("missing.cord")),
        };
        let read = |path: &Path| {
            if path == Path::new("policy.cord") {
                Ok(String::new())
            } else {
                Err(io::Error::new(io::ErrorKind::NotFound, "not found"))
            }
        };
        let error = run(&args, &read).unwrap_err();
        assert_eq!(error.to_string(), "cannot read `missing.cord`: not found");
    }

    #[test]
    fn subject_is_the_plan_or_the_policies() {
        let mut args = Args {
            policies: vec![PathBuf::from("a.cord"), PathBuf::from("b.cord")],
            format: Format::Human,
            solver_timeout_ms: 1,
            check_timeout_ms: 1,
            effects: false,
            user: "user".into(),
            plan: None,
        };
        assert_eq!(subject(&args), "a.cord, b.cord");
        args.plan = Some(PathBuf::from("plan.cord"));
        assert_eq!(subject(&args), "plan.cord");
    }
}
