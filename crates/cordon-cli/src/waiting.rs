//! The model, opened for the commands a person waits on (`ask`, `chat`, `run --model`): while
//! it is asked, a line on standard error says who is being waited for and for how long, so a
//! slow model is told from a hung one. The line is drawn only where standard error is a
//! terminal (indicatif draws nothing elsewhere), and cleared when the answer comes.

use std::time::Duration;

use cordon::api::models::{Completion, HttpConfig, Provider, ProviderConfig, ProviderError, Request, open};
use cordon::api::text::escape;
use indicatif::{ProgressBar, ProgressStyle};

use crate::outcome::Error;

/// The model `spec` names (`openai:gpt-4o-mini`, `scripted:FILE`, ..) with `http`'s settings,
/// showing its waits.
pub(crate) fn open_model(spec: &str, http: HttpConfig) -> Result<Box<dyn Provider + Send>, Error> {
    let config = ProviderConfig::parse(spec).map_err(|e| Error::Usage(e.to_string()))?.with_http(http);
    let model = open(&config).map_err(|e| Error::Usage(e.to_string()))?;
    Ok(Box::new(Waited { model }))
}

/// How often the elapsed time is redrawn.
const TICK: Duration = Duration::from_millis(200);

/// A model whose every request shows a line while it is waited for.
struct Waited {
    model: Box<dyn Provider + Send>,
}

impl Provider for Waited {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn complete(&mut self, request: &Request) -> Result<Completion, ProviderError> {
        let line = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} waiting for {msg}: {elapsed}") {
            line.set_style(style);
        }
        // The line above it says which hole the model is asked for.
        line.set_message(escape(self.model.name()));
        line.enable_steady_tick(TICK);
        let answer = self.model.complete(request);
        line.finish_and_clear();
        answer
    }

    fn finish(&mut self) -> Result<(), ProviderError> {
        self.model.finish()
    }
}
