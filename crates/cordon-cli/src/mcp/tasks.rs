//! `cordon mcp serve --web-url`: a `run` as an MCP task (the tasks extension). The plan is
//! queued in the store as the calling agent's, for the principal the server acts for and with
//! the agent's clearance; a `cordon serve` on that store runs it. `tasks/get` tells the queue's
//! state: working while it runs; at a card, input required, as a URL elicitation that sends the
//! user to the card's page (the agent cannot answer a card: only the user can, there); at its
//! end, the tool's result as the agent may see it. A task is found only by the server it belongs
//! to: the same principal and clearance.

use cordon::api::store::{NewRun, QueuedRun, RunId, RunKind, RunState};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, ElicitRequest, ElicitRequestParams, GetTaskResult,
    InputRequest, Task, TaskPayload, TaskStatus,
};

use super::{Cordon, PLAN};

/// How often a client should ask again, in milliseconds.
const POLL_MS: u64 = 1000;

/// The prefix of a task's id: `run-N` is the queue's run N.
const PREFIX: &str = "run-";

impl Cordon {
    /// Queues `plan` as the calling agent's run: the task that stands for it.
    pub(super) fn queue(&self, plan: &str) -> Result<CreateTaskResult, ErrorData> {
        let clearance = cordon::Clearance::from(self.args.clearance).name();
        let queued = self.with_workspace(|workspace, _| {
            let principal = workspace.principal().to_string();
            let run = NewRun {
                principal: &principal,
                kind: RunKind::AgentPlan,
                name: PLAN,
                text: plan,
                clearance: Some(clearance),
            };
            let storage = workspace.storage();
            let id = storage.store().submit_run(&run).map_err(|e| storage.error(e).to_string())?;
            storage
                .store()
                .queued_run(id)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| "the queued run vanished".to_string())
        });
        let run = queued.and_then(|r| r).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CreateTaskResult::new(task(&run, TaskStatus::Working)))
    }

    /// The task `id`, as it stands now.
    pub(super) fn task(&self, id: &str) -> Result<GetTaskResult, ErrorData> {
        let unknown =
            || ErrorData::invalid_params(format!("there is no task `{}`", cordon::api::text::escape(id)), None);
        let number = id.strip_prefix(PREFIX).and_then(|n| n.parse::<i64>().ok()).ok_or_else(unknown)?;
        let clearance = cordon::Clearance::from(self.args.clearance).name();
        let found = self.with_workspace(|workspace, _| {
            let run = workspace.storage().store().queued_run(RunId(number)).map_err(|e| e.to_string())?;
            let ours = |r: &QueuedRun| {
                r.principal == workspace.principal()
                    && r.kind == RunKind::AgentPlan
                    && r.clearance.as_deref() == Some(clearance)
            };
            Ok::<_, String>(run.filter(ours))
        });
        let run = found.and_then(|r| r).map_err(|e| ErrorData::internal_error(e, None))?.ok_or_else(unknown)?;
        let web = self.args.web_url.as_deref().unwrap_or_default().trim_end_matches('/');
        let payload = match run.state {
            RunState::Queued | RunState::Running => TaskPayload::Working,
            RunState::Waiting if run.answer.is_some() => TaskPayload::Working,
            RunState::Waiting => {
                let params = ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: format!(
                        "The run waits for {}'s answer to a card. Open the page to read the card and answer it: an \
                         agent cannot answer it.",
                        run.principal
                    ),
                    url: format!("{web}/runs/{}", run.id),
                    elicitation_id: format!("card-{}-{}", run.id, run.seal.as_deref().unwrap_or_default()),
                };
                let request = InputRequest::Elicitation(ElicitRequest::new(params));
                TaskPayload::InputRequired { input_requests: [("card".to_string(), request)].into_iter().collect() }
            }
            RunState::Done | RunState::Failed => TaskPayload::Completed { result: tool_result(&run) },
        };
        let status = payload.status();
        Ok(GetTaskResult::new(DetailedTask::new(task(&run, status), payload)))
    }
}

/// The task of `run`, in `status`.
fn task(run: &QueuedRun, status: TaskStatus) -> Task {
    Task::new(format!("{PREFIX}{}", run.id), status, iso(run.created_ms), iso(run.updated_ms))
        .with_poll_interval_ms(POLL_MS)
}

/// The tool's result of an ended run: the report as the agent may see it (a run that did not
/// finish is a tool error, as `run` answers without tasks).
fn tool_result(run: &QueuedRun) -> serde_json::Map<String, serde_json::Value> {
    let shown = run.result.as_ref().map(|r| r["for_agent"].clone()).filter(|v| v.is_object());
    let mut result = match shown {
        Some(report) => CallToolResult::structured(report),
        None => CallToolResult::error(vec![ContentBlock::text("the run did not finish")]),
    };
    result.is_error = Some(run.state != RunState::Done);
    serde_json::to_value(result).ok().and_then(|v| v.as_object().cloned()).unwrap_or_default()
}

/// A time in Unix milliseconds, in ISO 8601.
fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| String::new(), |t| t.to_string())
}
