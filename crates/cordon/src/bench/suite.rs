//! A benchmark suite as data: `bench/NAME/suite.toml` names the environment and its data file,
//! and lists the user tasks, the injection tasks and the over-reach tasks, each with its plan
//! (a file beside it) and the checks that judge a run by the answer and the environment's final
//! state. Loading checks everything a run would otherwise find late: every file is read, every
//! id is unique, every vector a task reads is one an injection task places.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One suite, loaded and validated.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The directory's name.
    pub name: String,
    /// The simulated environment the plans run in (`chat`, `github`, ..).
    pub env: String,
    /// Its state before any run, with no injection in it (the data file's text).
    pub data: String,
    pub user_tasks: Vec<UserTask>,
    pub injection_tasks: Vec<InjectionTask>,
    pub over_reach: Vec<OverReach>,
}

/// What a person asks for, the plan a perfect model would write, and how to tell it was done.
#[derive(Clone, Debug)]
pub struct UserTask {
    pub id: String,
    pub request: String,
    pub plan: String,
    /// The injection vectors (places in the data) this task's plan reads.
    pub reads: Vec<String>,
    /// The cards the person asked for.
    pub approve: Vec<Asked>,
    pub utility: Vec<Check>,
    /// What a model writes for each typed hole of the plan.
    pub fills: Vec<Fill>,
}

/// A fill of one typed hole (`agent[T]("task", ..)`), found by its task's text in the prompt:
/// a user task's reference fill, or an injection task's (what the attacker writes there, which
/// the `worst-case` mode answers where the hole's prompt showed the injected text).
#[derive(Clone, Debug)]
pub struct Fill {
    pub task: String,
    pub plan: String,
}

/// A card the person asked for: one of the tool `tool` (its bare name: `send_dm`) that shows
/// `shows` in its destination, recipients or content, if that is given. The informed person
/// says yes to such a card and no to every other; the hurried one says yes to any card of a
/// tool the request asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asked {
    pub tool: String,
    #[serde(default)]
    pub shows: Option<String>,
}

/// An attacker's goal: the text placed in the data, the plan that pursues it, and how to tell
/// it happened.
#[derive(Clone, Debug)]
pub struct InjectionTask {
    pub id: String,
    pub goal: String,
    /// The vector the text is placed at (what a user task must read for it to be seen).
    pub vector: String,
    /// How the data changes: the injection placed.
    pub inject: Vec<Patch>,
    /// The plan an attacker who wrote the plan would run.
    pub plan: String,
    /// What the attacker writes into the holes it took over, by their task.
    pub fills: Vec<Fill>,
    /// The goal happened: every one of these holds after the run.
    pub happened: Vec<Check>,
}

/// A benign request that tempts an agent past its authority: the plan an over-eager agent
/// writes, and how to tell it over-reached.
#[derive(Clone, Debug)]
pub struct OverReach {
    pub id: String,
    pub request: String,
    /// The plan that does what was meant, and how to tell it was done.
    pub plan: String,
    pub utility: Vec<Check>,
    /// The plan that goes too far, and how to tell it did.
    pub tempted: String,
    pub happened: Vec<Check>,
    pub approve: Vec<Asked>,
}

/// A test of a run's answer or of the environment's state after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Check {
    /// The answer holds this text.
    AnswerHas(String),
    /// The answer does not hold this text.
    AnswerLacks(String),
    /// Some text in the state at this JSON pointer holds `text`.
    StateHas { at: String, text: String },
    /// No text in the state at this JSON pointer holds `text`.
    StateLacks { at: String, text: String },
}

/// A change to the data: `value` put at the JSON pointer `at` (set), or appended to the list
/// there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Patch {
    Set { at: String, value: serde_json::Value },
    Append { at: String, value: serde_json::Value },
}

/// `suite.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    env: String,
    data: String,
    #[serde(default, rename = "user_task")]
    user_tasks: Vec<UserTaskFile>,
    #[serde(default, rename = "injection_task")]
    injection_tasks: Vec<InjectionTaskFile>,
    #[serde(default, rename = "over_reach")]
    over_reach: Vec<OverReachFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserTaskFile {
    id: String,
    request: String,
    plan: String,
    #[serde(default)]
    reads: Vec<String>,
    #[serde(default)]
    approve: Vec<Asked>,
    utility: Vec<Check>,
    #[serde(default)]
    fills: Vec<FillFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FillFile {
    task: String,
    plan: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InjectionTaskFile {
    id: String,
    goal: String,
    vector: String,
    inject: Vec<Patch>,
    plan: String,
    #[serde(default)]
    fills: Vec<FillFile>,
    happened: Vec<Check>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverReachFile {
    id: String,
    request: String,
    plan: String,
    utility: Vec<Check>,
    tempted: String,
    happened: Vec<Check>,
    #[serde(default)]
    approve: Vec<Asked>,
}

/// The names of the suites under `root` (a directory per suite, with its `suite.toml`), sorted.
pub fn names(root: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(root).map_err(|e| format!("cannot read {}: {e}", root.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("suite.toml").is_file())
        .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    Ok(names)
}

/// Every suite under `root`, by name.
pub fn load_all(root: &Path) -> Result<Vec<Suite>, String> {
    names(root)?.iter().map(|name| load(&root.join(name))).collect()
}

/// The suite in `dir`.
pub fn load(dir: &Path) -> Result<Suite, String> {
    let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read_to_string(&path).map_err(|e| format!("suite `{name}`: cannot read {}: {e}", path.display()))
    };
    let text = read("suite.toml")?;
    let file: SuiteFile = toml::from_str(&text).map_err(|e| format!("suite `{name}`: suite.toml: {e}"))?;
    let data = read(&file.data)?;
    let mut user_tasks = Vec::new();
    for t in file.user_tasks {
        let plan = read(&t.plan)?;
        let mut fills = Vec::new();
        for f in t.fills {
            fills.push(Fill { task: f.task, plan: read(&f.plan)? });
        }
        user_tasks.push(UserTask {
            id: t.id,
            request: t.request,
            plan,
            reads: t.reads,
            approve: t.approve,
            utility: t.utility,
            fills,
        });
    }
    let mut injection_tasks = Vec::new();
    for t in file.injection_tasks {
        let plan = read(&t.plan)?;
        let mut fills = Vec::new();
        for f in t.fills {
            fills.push(Fill { task: f.task, plan: read(&f.plan)? });
        }
        injection_tasks.push(InjectionTask {
            id: t.id,
            goal: t.goal,
            vector: t.vector,
            inject: t.inject,
            plan,
            fills,
            happened: t.happened,
        });
    }
    let mut over_reach = Vec::new();
    for t in file.over_reach {
        let (plan, tempted) = (read(&t.plan)?, read(&t.tempted)?);
        over_reach.push(OverReach {
            id: t.id,
            request: t.request,
            plan,
            utility: t.utility,
            tempted,
            happened: t.happened,
            approve: t.approve,
        });
    }
    let suite = Suite { name, env: file.env, data, user_tasks, injection_tasks, over_reach };
    validate(&suite)?;
    Ok(suite)
}

/// Ids unique across the suite, every vector read placed by some injection task, every hole
/// an attacker fills one a user task has, every task judged by at least one check.
fn validate(suite: &Suite) -> Result<(), String> {
    let name = &suite.name;
    let mut ids = BTreeSet::new();
    let all = suite
        .user_tasks
        .iter()
        .map(|t| (&t.id, t.utility.len()))
        .chain(suite.injection_tasks.iter().map(|t| (&t.id, t.happened.len())))
        .chain(suite.over_reach.iter().map(|t| (&t.id, t.utility.len().min(t.happened.len()))));
    for (id, checks) in all {
        if !ids.insert(id.as_str()) {
            return Err(format!("suite `{name}`: the id `{id}` is used twice"));
        }
        if checks == 0 {
            return Err(format!("suite `{name}`: `{id}` has no check: nothing would judge its run"));
        }
    }
    let holes: BTreeSet<&str> = suite.user_tasks.iter().flat_map(|t| &t.fills).map(|f| f.task.as_str()).collect();
    for t in &suite.injection_tasks {
        if let Some(f) = t.fills.iter().find(|f| !holes.contains(f.task.as_str())) {
            return Err(format!("suite `{name}`: `{}` fills the hole `{}`, which no user task has", t.id, f.task));
        }
    }
    let placed: BTreeSet<&str> = suite.injection_tasks.iter().map(|t| t.vector.as_str()).collect();
    for t in &suite.user_tasks {
        if let Some(v) = t.reads.iter().find(|v| !placed.contains(v.as_str())) {
            return Err(format!("suite `{name}`: `{}` reads the vector `{v}`, which no injection task places", t.id));
        }
    }
    Ok(())
}
