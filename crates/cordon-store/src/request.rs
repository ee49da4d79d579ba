//! Requests: what the user asked, on whose behalf, and how it went.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub i64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for RequestId {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(RequestId)
    }
}

/// A request as it starts.
#[derive(Clone, Copy, Debug)]
pub struct NewRequest<'a> {
    pub text: &'a str,
    /// Whom the agent acts for.
    pub principal: &'a str,
    pub session: Option<&'a str>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Running,
    /// Parked: an effect waits for the user's approval.
    Waiting,
    Done,
    Failed,
    /// Stopped by a signal (Ctrl-C, the terminal closing, SIGTERM) before it ended: what it
    /// performed is in its rows; an effect with no outcome row may or may not have been.
    Interrupted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Waiting => "waiting",
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Status> {
        [Status::Running, Status::Waiting, Status::Done, Status::Failed, Status::Interrupted]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// A request as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    pub id: RequestId,
    pub started_ms: i64,
    pub text: String,
    pub principal: String,
    pub session: Option<String>,
    /// `None` if the stored status is not one this crate writes.
    pub status: Option<Status>,
}
