//! The documentation's examples, checked against the `cordon` binary, so that a doc cannot drift
//! from what the program does. Every fenced block of `README.md`, `ARCHITECTURE.md` and
//! `docs/**/*.md` says what it holds, and is checked by what it holds:
//!
//! - A ```` ```console ```` block is a terminal session. A line starting with `$ ` is a command
//!   (ending in `\`, it goes on on the next line), and the lines after it, up to the next
//!   command, are what it prints, stdout and stderr together. A line `...` stands for any
//!   lines, and `[..]` in a line for any text. A command exits 0 unless it ends with the comment
//!   `# exit N`.
//! - Its `cordon` commands run with the built binary in the repository root, with a store, a
//!   home and a scratch directory of the block's own. A path starting `/tmp/` names a file in
//!   the scratch directory (which is shown as `/tmp` in what is printed), `mkdir -p /tmp/..`
//!   makes one, and `< FILE` feeds a command's input.
//! - A ```` ```console not-run ```` block (a hosted model, a server from npm, a server waiting
//!   for its client) is not run: each command's subcommand and flags must be ones
//!   `cordon --help` lists.
//! - A ```` ```cordon ```` block must parse. Where it names its policies as a corpus case does
//!   (`//@ policy: FILE`, or an inline policy before `//@ plan`: `tests/corpus/README.md`), it is
//!   checked as `cordon check` checks a plan, and its errors must be exactly those its lines
//!   mark with `//~ ERROR code`.
//! - A block marked `file=PATH` shows that file and must be what it holds (elisions allowed; an
//!   insta snapshot is read without its header).
//! - A `cordon` command in a shell block (```` ```sh ````) is an error: it would be shown
//!   without being run.
//!
//! And every relative link of those files leads to a file that exists, and to a heading of it
//! where it names one.
#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A fenced block of a Markdown file.
#[derive(Debug)]
struct Block {
    /// The file, relative to the repository root.
    file: String,
    /// The line of the opening fence (1-based).
    line: usize,
    /// The words after the opening fence: the language, then marks such as `not-run`.
    info: Vec<String>,
    lines: Vec<String>,
}

impl Block {
    /// Where the block's line `i` (0-based) is, as `file:line`.
    fn at(&self, i: usize) -> String {
        format!("{}:{}", self.file, self.line + 1 + i)
    }
}

/// One command of a console block, with what it must print.
#[derive(Debug)]
struct Step {
    /// The block's line it starts on (0-based).
    at: usize,
    text: String,
    words: Vec<String>,
    stdin: Option<String>,
    exit: i32,
    expected: Vec<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The Markdown files the test reads, relative to the root, sorted.
fn doc_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    walk(root, &root.join("docs"), &mut out);
    out.sort();
    out
}

/// The fenced blocks of a Markdown text. A fence may be indented (in a list item); its lines
/// lose that indentation.
fn blocks(file: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    // The block being read, with its fence's indentation and length.
    let mut open: Option<(usize, usize, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let ticks = trimmed.bytes().take_while(|&b| b == b'`').count();
        match open.take() {
            // A run of backticks followed by more of them is inline code, not a fence.
            None if ticks >= 3 && !trimmed[ticks..].contains('`') => {
                let info = trimmed[ticks..].split_whitespace().map(str::to_string).collect();
                let block = Block { file: file.to_string(), line: i + 1, info, lines: Vec::new() };
                open = Some((indent, ticks, block));
            }
            None => {}
            Some((_, fence, block)) if ticks >= fence && trimmed[ticks..].trim().is_empty() => out.push(block),
            Some((indent, fence, mut block)) => {
                let spaces = line.len() - line.trim_start_matches(' ').len();
                block.lines.push(line[spaces.min(indent)..].to_string());
                open = Some((indent, fence, block));
            }
        }
    }
    match open {
        Some((_, _, block)) => Err(format!("{file}:{}: a fenced block that is never closed", block.line)),
        None => Ok(out),
    }
}

/// Splits a command line into words as a shell would (quotes, no expansion); `#` starts a
/// comment, returned apart.
fn shell_words(text: &str) -> Result<(Vec<String>, Option<String>), String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => w.extend(chars.next()),
                        Some(other) => w.push(other),
                        None => return Err(format!("an unclosed {c} in `{text}`")),
                    }
                }
            }
            '#' if word.is_none() => return Ok((words, Some(chars.as_str().trim().to_string()))),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok((words, None))
}

/// The commands of a console block and what each must print.
fn steps(block: &Block) -> Result<Vec<Step>, String> {
    let mut out: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < block.lines.len() {
        let line = &block.lines[i];
        let Some(first) = line.strip_prefix("$ ") else {
            match out.last_mut() {
                Some(step) => step.expected.push(line.clone()),
                None => return Err(format!("{}: a console block starts with a command (`$ ..`)", block.at(i))),
            }
            i += 1;
            continue;
        };
        let at = i;
        let mut text = first.to_string();
        while let Some(head) = text.strip_suffix('\\') {
            i += 1;
            let next = block.lines.get(i).ok_or_else(|| format!("{}: `\\` on the last line", block.at(at)))?;
            text = format!("{head}{}", next.trim_start());
        }
        let (mut words, comment) = shell_words(&text).map_err(|e| format!("{}: {e}", block.at(at)))?;
        let exit = match comment.as_deref().and_then(|c| c.strip_prefix("exit ")) {
            Some(code) => {
                code.trim().parse().map_err(|_| format!("{}: `# exit {code}` is not a number", block.at(at)))?
            }
            None => 0,
        };
        let stdin = match words.iter().position(|w| w == "<") {
            Some(p) if p + 2 == words.len() => {
                let file = words.pop();
                words.pop();
                file
            }
            Some(_) => return Err(format!("{}: `< FILE` ends a command", block.at(at))),
            None => None,
        };
        out.push(Step { at, text, words, stdin, exit, expected: Vec::new() });
        i += 1;
    }
    if out.is_empty() {
        return Err(format!("{}: a console block without a command", block.at(0)));
    }
    Ok(out)
}

/// Whether `line` is what `pattern` says, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(p) => rest = &rest[p + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether the printed lines are what the expected ones say, where a line `...` stands for any
/// number of lines.
fn output_matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| output_matches(rest, &actual[k..])),
        Some((e, rest)) => {
            actual.split_first().is_some_and(|(a, more)| line_matches(e, a) && output_matches(rest, more))
        }
    }
}

/// A line diff of the expected lines (`-`) against the printed ones (`+`), elisions left out.
fn diff(expected: &[String], actual: &[&str]) -> String {
    let expected: Vec<&String> = expected.iter().filter(|e| *e != "...").collect();
    let (n, m) = (expected.len(), actual.len());
    let mut common = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            common[i][j] = if line_matches(expected[i], actual[j]) {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && line_matches(expected[i], actual[j]) {
            writeln!(out, "   {}", actual[j]).unwrap();
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || common[i][j + 1] >= common[i + 1][j]) {
            writeln!(out, "  +{}", actual[j]).unwrap();
            j += 1;
        } else {
            writeln!(out, "  -{}", expected[i]).unwrap();
            i += 1;
        }
    }
    out
}

/// A directory of the block's own, empty, under the target's temporary directory.
fn scratch(block: &Block) -> PathBuf {
    let name = format!("{}-{}", block.file.replace('/', "_"), block.line);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home")).unwrap();
    dir
}

/// `cordon args` in the repository root with the block's own store and home; what it printed
/// (stdout and stderr as they came) and its exit code.
fn cordon(root: &Path, dir: &Path, args: &[String], stdin: Stdio) -> (String, i32) {
    let (mut reader, writer) = std::io::pipe().unwrap();
    let home = dir.join("home");
    let mut command = Command::new(env!("CARGO_BIN_EXE_cordon"));
    command
        .args(args)
        .current_dir(root)
        .env("CORDON_STORE", dir.join("cordon.db"))
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(stdin)
        .stdout(writer.try_clone().unwrap())
        .stderr(writer);
    let mut child = command.spawn().unwrap();
    // The command holds the pipe's writing ends: the reader sees its end only once they are gone.
    drop(command);
    let mut out = Vec::new();
    reader.read_to_end(&mut out).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (String::from_utf8_lossy(&out).into_owned(), code)
}

/// Runs a console block's commands in order; a failure for each that printed or exited
/// otherwise than the block says.
fn run_console(root: &Path, block: &Block, failures: &mut Vec<String>) {
    let steps = match steps(block) {
        Ok(steps) => steps,
        Err(e) => return failures.push(e),
    };
    let dir = scratch(block);
    let shown = dir.display().to_string();
    let local = |word: &str| word.replace("/tmp/", &format!("{shown}/"));
    for step in &steps {
        let words: Vec<String> = step.words.iter().map(|w| local(w)).collect();
        let (printed, code) = match words.first().map(String::as_str) {
            Some("cordon") => {
                let stdin = match &step.stdin {
                    Some(file) => match std::fs::File::open(root.join(local(file))) {
                        Ok(file) => Stdio::from(file),
                        Err(e) => {
                            failures.push(format!("{}: `< {file}`: {e}", block.at(step.at)));
                            continue;
                        }
                    },
                    None => Stdio::null(),
                };
                cordon(root, &dir, &words[1..], stdin)
            }
            Some("mkdir")
                if words.get(1).is_some_and(|w| w == "-p")
                    && step.words[2..].iter().all(|w| w.starts_with("/tmp/")) =>
            {
                words[2..].iter().for_each(|d| std::fs::create_dir_all(d).unwrap());
                (String::new(), 0)
            }
            _ => {
                failures.push(format!(
                    "{}: `{}`: only `cordon` and `mkdir -p /tmp/..` run here",
                    block.at(step.at),
                    step.text
                ));
                continue;
            }
        };
        let printed = printed.replace(&shown, "/tmp");
        let actual: Vec<&str> = trim_blank_end(printed.lines().collect());
        let expected = trim_blank_end(step.expected.to_vec());
        if code != step.exit || !output_matches(&expected, &actual) {
            let mut report = format!("{}: `$ {}`\n", block.at(step.at), step.text);
            if code != step.exit {
                writeln!(report, "  exit code {code}, where the doc says {}", step.exit).unwrap();
            }
            report.push_str(&diff(&expected, &actual));
            failures.push(report);
        }
    }
}

fn trim_blank_end<T: AsRef<str>>(mut lines: Vec<T>) -> Vec<T> {
    while lines.last().is_some_and(|l| l.as_ref().trim().is_empty()) {
        lines.pop();
    }
    lines
}

/// The subcommands `help` lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Checks a command that is not run: its subcommand exists and `--help` lists each of its flags.
fn check_flags(
    root: &Path,
    block: &Block,
    step: &Step,
    help: &mut BTreeMap<Vec<String>, String>,
) -> Result<(), String> {
    let at = block.at(step.at);
    if step.words.first().map(String::as_str) != Some("cordon") {
        return Err(format!("{at}: `{}`: a console block shows `cordon` commands", step.text));
    }
    let mut path: Vec<String> = Vec::new();
    let mut text = help_of(root, &path, help);
    for word in &step.words[1..] {
        if !subcommands(&text).contains(word) {
            break;
        }
        path.push(word.clone());
        text = help_of(root, &path, help);
    }
    if path.is_empty() {
        return Err(format!("{at}: `{}`: `cordon --help` lists no such subcommand", step.text));
    }
    for flag in step.words.iter().filter(|w| w.starts_with("--")) {
        let flag = flag.split('=').next().unwrap_or(flag);
        if !text.split_whitespace().any(|w| w == flag || w.strip_suffix(',') == Some(flag)) {
            return Err(format!("{at}: `{}`: `cordon {} --help` lists no `{flag}`", step.text, path.join(" ")));
        }
    }
    Ok(())
}

fn help_of(root: &Path, path: &[String], cache: &mut BTreeMap<Vec<String>, String>) -> String {
    cache
        .entry(path.to_vec())
        .or_insert_with(|| {
            let output = Command::new(env!("CARGO_BIN_EXE_cordon")).args(path).arg("--help").current_dir(root).output();
            String::from_utf8_lossy(&output.unwrap().stdout).into_owned()
        })
        .clone()
}

/// The errors a block's lines mark, as `(line, code)` pairs (1-based lines of the block).
fn marked_errors(block: &Block) -> Result<Vec<(usize, String)>, String> {
    let mut out = Vec::new();
    for (i, line) in block.lines.iter().enumerate() {
        for part in line.split("//~").skip(1) {
            match part.trim().strip_prefix("ERROR").and_then(|c| c.split_whitespace().next()) {
                Some(code) => out.push((i + 1, code.to_string())),
                None => return Err(format!("{}: a malformed mark `//~{part}`", block.at(i))),
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Checks a Cordon block with `cordon check --format json`: that it parses, and where it names
/// its policies, that its errors are exactly the ones it marks.
fn check_cordon(root: &Path, block: &Block, failures: &mut Vec<String>) {
    let marks = match marked_errors(block) {
        Ok(marks) => marks,
        Err(e) => return failures.push(e),
    };
    let dir = scratch(block);
    let mut args: Vec<String> = vec!["check".into(), "--format".into(), "json".into()];
    let mut plan = block.lines.clone();
    let mut checked = !marks.is_empty();
    for line in &block.lines {
        if let Some(policy) = line.strip_prefix("//@ policy:") {
            args.extend(["--policy".to_string(), policy.trim().to_string()]);
            checked = true;
        } else if let Some(user) = line.strip_prefix("//@ user:") {
            args.extend(["--user".to_string(), user.trim().to_string()]);
        }
    }
    let inline = dir.join("policy.cord");
    if let Some(marker) = block.lines.iter().position(|l| l.trim_end() == "//@ plan") {
        std::fs::write(&inline, block.lines[..marker].join("\n")).unwrap();
        args.extend(["--policy".to_string(), inline.display().to_string()]);
        plan.iter_mut().take(marker + 1).for_each(String::clear);
        checked = true;
    }
    let file = dir.join("plan.cord");
    std::fs::write(&file, plan.join("\n") + "\n").unwrap();
    args.push(file.display().to_string());
    let (printed, _) = cordon(root, &dir, &args, Stdio::null());
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&printed) else {
        return failures.push(format!("{}: `cordon check` printed no JSON:\n{printed}", block.at(0)));
    };
    let mut errors = Vec::new();
    let mut elsewhere = Vec::new();
    for d in json["diagnostics"].as_array().into_iter().flatten().filter(|d| d["severity"] == "error") {
        let (code, line) = (d["code"].as_str().unwrap_or("?").to_string(), d["line"].as_u64().unwrap_or(0) as usize);
        let syntax = code == "syntax-error" || code == "nesting-too-deep";
        let in_block = [&file, &inline].iter().any(|f| d["file"] == f.display().to_string().as_str());
        match (checked || syntax, in_block) {
            (false, _) => {}
            (true, true) => errors.push((line, code)),
            (true, false) => elsewhere.push(format!("  {}:{line}: {code}: {}", d["file"], d["message"])),
        }
    }
    errors.sort();
    if errors != marks || !elsewhere.is_empty() {
        let mut report = format!("{}: a Cordon block ", block.at(0));
        report.push_str(if checked { "checks otherwise than it marks\n" } else { "does not parse\n" });
        for (line, code) in marks.iter().filter(|m| !errors.contains(m)) {
            writeln!(report, "  {}: marked {code}, not reported", block.at(line - 1)).unwrap();
        }
        for (line, code) in errors.iter().filter(|e| !marks.contains(e)) {
            let message = json["diagnostics"].as_array().into_iter().flatten().find(|d| d["code"] == code.as_str());
            writeln!(
                report,
                "  {}: {code}: {}",
                block.at(line - 1),
                message.map_or("", |d| d["message"].as_str().unwrap_or(""))
            )
            .unwrap();
        }
        elsewhere.iter().for_each(|e| report.push_str(&format!("{e}\n")));
        failures.push(report);
    }
}

/// A block marked `file=PATH` shows that file (an insta snapshot without its header): its
/// lines must be the file's, elisions allowed.
fn check_file(root: &Path, block: &Block, failures: &mut Vec<String>) {
    for path in block.info.iter().filter_map(|w| w.strip_prefix("file=")) {
        let Ok(text) = std::fs::read_to_string(root.join(path)) else {
            return failures.push(format!("{}: shows `{path}`, which cannot be read", block.at(0)));
        };
        let text = match path.ends_with(".snap") {
            true => text.splitn(3, "---\n").nth(2).unwrap_or_default().to_string(),
            false => text,
        };
        let actual = trim_blank_end(text.lines().collect());
        if !output_matches(&block.lines, &actual) {
            failures.push(format!("{}: the block differs from `{path}`\n{}", block.at(0), diff(&block.lines, &actual)));
        }
    }
}

/// Checks one block by what it says it holds.
fn check_block(root: &Path, block: &Block, help: &mut BTreeMap<Vec<String>, String>, failures: &mut Vec<String>) {
    check_file(root, block, failures);
    let language = block.info.first().map(String::as_str);
    let runs_cordon = |l: &String| l.starts_with("cordon ") || l.starts_with("$ cordon ");
    match language {
        None => failures.push(format!(
            "{}:{}: a fenced block says what it holds (```cordon, ```console, ```text, ..)",
            block.file, block.line
        )),
        Some("console") if block.info.iter().any(|w| w == "not-run") => match steps(block) {
            Ok(steps) => {
                for step in &steps {
                    if let Err(e) = check_flags(root, block, step, help) {
                        failures.push(e);
                    }
                }
            }
            Err(e) => failures.push(e),
        },
        Some("console") => run_console(root, block, failures),
        Some("cordon") => check_cordon(root, block, failures),
        // A shell block is where a command the test does not run would hide.
        Some("sh" | "bash" | "shell") => {
            if let Some(i) = block.lines.iter().position(runs_cordon) {
                failures
                    .push(format!("{}: a `cordon` command goes in a ```console block, where it is run", block.at(i)));
            }
        }
        Some(_) => {}
    }
}

#[test]
fn every_example_in_the_docs_is_what_the_binary_does() {
    let root = repo_root();
    let mut failures = Vec::new();
    let mut help = BTreeMap::new();
    let (mut consoles, mut plans) = (0, 0);
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        match blocks(&file, &text) {
            Ok(blocks) => {
                for block in &blocks {
                    consoles += usize::from(block.info.first().is_some_and(|l| l == "console"));
                    plans += usize::from(block.info.first().is_some_and(|l| l == "cordon"));
                    check_block(&root, block, &mut help, &mut failures);
                }
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} examples in the docs differ from the binary:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    // A floor, so that a change to how blocks are found cannot quietly check nothing.
    assert!(consoles >= 20 && plans >= 5, "only {consoles} console and {plans} Cordon blocks found");
}

#[test]
fn elisions_match_what_they_stand_for() {
    let lines = |text: &str| text.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(output_matches(&lines("a\n...\nd"), &["a", "b", "c", "d"]));
    assert!(output_matches(&lines("a\n...\nd"), &["a", "d"]));
    assert!(!output_matches(&lines("a\n...\nd"), &["a", "b"]));
    assert!(line_matches("started [..] UTC", "started 2026-12-01 11:41:41.759 UTC"));
    assert!(line_matches("[..]x[..]", "axb"));
    assert!(!line_matches("ab[..]ba", "aba"));
    assert!(!line_matches("abc", "abcd"));
    assert_eq!(
        shell_words("cordon 'a b' \"c\\\"d\" e # exit 1").unwrap(),
        (
            vec!["cordon".to_string(), "a b".to_string(), "c\"d".to_string(), "e".to_string()],
            Some("exit 1".to_string())
        )
    );
}

/// The anchor GitHub gives a heading: lower case, spaces as `-`, punctuation but `-` and `_`
/// dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        fenced ^= line.trim_start().starts_with("```");
        if let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) {
            out.push(anchor(heading.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_link_in_the_docs_leads_somewhere() {
    let root = repo_root();
    let mut broken = Vec::new();
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(root.join(&file)).unwrap();
        let dir = Path::new(&file).parent().unwrap_or(Path::new(""));
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            fenced ^= line.trim_start().starts_with("```");
            // Code (fenced, or between backticks) is not a link: `agent[T](task)`.
            let prose: String = line.split('`').step_by(2).collect();
            if fenced {
                continue;
            }
            for link in prose.split("](").skip(1).filter_map(|rest| rest.split(')').next()) {
                if link.contains("://") || link.starts_with("mailto:") {
                    continue;
                }
                let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
                let target = if path.is_empty() { PathBuf::from(&file) } else { dir.join(path) };
                let Ok(target_text) = std::fs::read_to_string(root.join(&target)) else {
                    broken.push(format!("{file}:{}: `{link}`: no such file", n + 1));
                    continue;
                };
                if !fragment.is_empty() && !anchors(&target_text).iter().any(|a| a == fragment) {
                    broken.push(format!("{file}:{}: `{link}`: no such heading", n + 1));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links that lead nowhere:\n{}", broken.join("\n"));
}
