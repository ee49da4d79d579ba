//! The web page of `cordon serve`, rendered on the server: no script at all, every value
//! escaped twice over. First as on a terminal (`cordon::api::text`: every hidden character,
//! line break or bidirectional control as a visible `\u{..}`), so a value cannot forge a line
//! or hide what it says; then for HTML, so it cannot be markup. A card is shown only when its
//! seal holds (it is the card the run waits on, as the worker stored it).

use cordon::api::store::{Entry, QueuedRun, RunState};
use cordon::api::text::{escape, guard, html};

/// A value on one line, for HTML.
pub fn one_line(text: &str) -> String {
    html(&escape(text))
}

/// Text of several lines (a plan, a card as drawn), for a `<pre>`: its line breaks kept,
/// everything else hidden made visible.
pub fn lines(text: &str) -> String {
    html(&guard(text))
}

/// A whole page.
pub fn layout(title: &str, user: Option<(&str, &str)>, body: &str) -> String {
    layout_refreshing(title, user, body, false)
}

/// A whole page; `refresh`: one that reloads itself every two seconds (a run still going).
fn layout_refreshing(title: &str, user: Option<(&str, &str)>, body: &str, refresh: bool) -> String {
    let refresh = if refresh { "<meta http-equiv=\"refresh\" content=\"2\">" } else { "" };
    let signed = match user {
        Some((user, csrf)) => format!(
            "<form method=\"post\" action=\"/sign-out\" class=\"who\">signed in as <b>{}</b> \
             <input type=\"hidden\" name=\"csrf\" value=\"{}\"><button>sign out</button></form>",
            one_line(user),
            html(csrf)
        ),
        None => String::new(),
    };
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">{refresh}<title>{} - Cordon</title>\
         <style>{STYLE}</style></head>\n<body><header><a href=\"/\">Cordon</a>{signed}</header>\n<main>\n{body}\n</main>\
         </body></html>\n",
        one_line(title)
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#111}header{background:#222;color:#eee;\
padding:.6em 1em;display:flex;justify-content:space-between}header a{color:#fff;font-weight:bold;text-decoration:none}\
main{padding:1em;max-width:70em}pre{background:#f4f4f4;padding:.7em;overflow-x:auto;white-space:pre-wrap}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}\
.card{border:2px solid #333;padding:.5em 1em;margin:1em 0}.flagged{border-color:#b00}.error{color:#b00;font-weight:bold}\
.who{margin:0}button{margin-right:.5em}td code{word-break:break-all}";

/// The sign-in form; `error` says why the last try failed.
pub fn sign_in(error: Option<&str>) -> String {
    let error = error.map(|e| format!("<p class=\"error\">{}</p>", one_line(e))).unwrap_or_default();
    let body = format!(
        "<h1>Sign in</h1>{error}<form method=\"post\" action=\"/sign-in\"><label>Your token \
         (from <code>cordon serve --add-user</code>): <input type=\"password\" name=\"token\" \
         autocomplete=\"off\" required></label> <button>sign in</button></form>"
    );
    layout("Sign in", None, &body)
}

/// A grant as the page lists it.
pub struct GrantRow {
    pub id: i64,
    pub tool: String,
    pub destination: String,
    pub label_class: String,
    pub expires: String,
}

/// The home page: the cards waiting for `user`, their runs, and their grants.
pub fn home(user: &str, csrf: &str, runs: &[QueuedRun], grants: &[GrantRow], now_ms: i64) -> String {
    let waiting: Vec<&QueuedRun> = runs.iter().filter(|r| r.state == RunState::Waiting && r.answer.is_none()).collect();
    let mut body = String::from("<h1>Cards waiting for you</h1>");
    if waiting.is_empty() {
        body.push_str("<p id=\"no-cards\">None.</p>");
    } else {
        body.push_str("<ul id=\"cards\">");
        for run in waiting {
            let card = run.card.as_ref().map(|c| &c["card"]);
            let field = |key: &str| card.and_then(|c| c[key].as_str()).unwrap_or("?").to_string();
            let to = card.and_then(|c| c["destination"]["text"].as_str()).map(|d| format!(" to {}", one_line(d)));
            let left = run.deadline_ms.map_or(String::new(), |d| format!(", {} left", duration(d - now_ms)));
            body.push_str(&format!(
                "<li><a href=\"/runs/{id}\">run {id}</a>: {} (<code>{}</code>){} in {}{}</li>",
                one_line(&field("action")),
                one_line(&field("tool")),
                to.unwrap_or_default(),
                one_line(&run.name),
                one_line(&left),
                id = run.id
            ));
        }
        body.push_str("</ul>");
    }
    body.push_str("<h2>Your runs</h2><table id=\"runs\"><tr><th>run</th><th>plan</th><th>state</th></tr>");
    for run in runs {
        body.push_str(&format!(
            "<tr><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td class=\"state\">{}</td></tr>",
            one_line(&run.name),
            run.state.as_str(),
            id = run.id
        ));
    }
    body.push_str("</table><h2>Your grants</h2>");
    if grants.is_empty() {
        body.push_str("<p id=\"no-grants\">None: every card asks.</p>");
    } else {
        body.push_str(
            "<table id=\"grants\"><tr><th>grant</th><th>tool</th><th>to</th><th>data</th><th>until</th><th></th></tr>",
        );
        for g in grants {
            body.push_str(&format!(
                "<tr><td>{id}</td><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td><td>\
                 <form method=\"post\" action=\"/grants/{id}/revoke\"><input type=\"hidden\" name=\"csrf\" \
                 value=\"{}\"><button>revoke</button></form></td></tr>",
                one_line(&g.tool),
                one_line(&g.destination),
                one_line(&g.label_class),
                one_line(&g.expires),
                html(csrf),
                id = g.id
            ));
        }
        body.push_str("</table>");
    }
    layout("Cards", Some((user, csrf)), &body)
}

/// A duration in words, at most two units.
pub fn duration(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// What the run page shows of a run's card.
pub enum CardView<'a> {
    /// None to show.
    None,
    /// The card, sealed as the worker stored it; with the form when the person may answer it.
    Sealed { card: &'a serde_json::Value, seal: &'a str, answerable: bool },
    /// The stored card's seal does not hold: it was changed after the worker stored it.
    Broken,
}

/// A run's page: its state, its card (with the answer form), its plan, how it ended, and its
/// audit rows.
pub fn run(
    user: &str,
    csrf: &str,
    run: &QueuedRun,
    card: CardView<'_>,
    rows: &[Entry],
    message: Option<&str>,
) -> String {
    let mut body = format!(
        "<h1>Run {} <small>{}</small></h1><p>state: <b id=\"state\">{}</b></p>",
        run.id,
        one_line(&run.name),
        run.state.as_str()
    );
    if let Some(message) = message {
        body.push_str(&format!("<p class=\"error\" id=\"message\">{}</p>", one_line(message)));
    }
    if let Some(answer) = &run.answer {
        let by = answer.by.as_deref().map_or("no one: its deadline passed".to_string(), |b| format!("by {b}"));
        body.push_str(&format!(
            "<p id=\"answered\">The card was answered <b>{}</b>, {}.</p>",
            one_line(&answer.answer),
            one_line(&by)
        ));
    }
    match card {
        CardView::None => {}
        CardView::Broken => body.push_str(
            "<p class=\"error\" id=\"broken\">This run's card was changed in the store after it was made: it is not \
             shown, and cannot be answered.</p>",
        ),
        CardView::Sealed { card, seal, answerable } => body.push_str(&card_view(card, seal, answerable, csrf, run)),
    }
    if let Some(result) = &run.result {
        body.push_str(&ended(result));
    }
    body.push_str(&format!("<h2>Plan</h2><pre id=\"plan\">{}</pre>", lines(&run.text)));
    if !rows.is_empty() {
        body.push_str("<h2>Audit log</h2><table id=\"audit\"><tr><th>row</th><th>kind</th><th>content</th></tr>");
        for row in rows {
            let outcome = row.outcome.as_ref().map(|o| serde_json::to_string(o).unwrap_or_default());
            let content = serde_json::to_string(&row.content).unwrap_or_default();
            let content = match outcome {
                Some(outcome) => format!("{content} → {outcome}"),
                None => content,
            };
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                row.seq,
                one_line(&row.kind),
                one_line(&content)
            ));
        }
        body.push_str("</table>");
    }
    let going = matches!(run.state, RunState::Queued | RunState::Running)
        || (run.state == RunState::Waiting && run.answer.is_some());
    layout_refreshing(&format!("Run {}", run.id), Some((user, csrf)), &body, going)
}

/// The card as drawn for a terminal, and the answer form: a flagged card is approved only by
/// typing the end of the flagged value, and never "always".
fn card_view(card: &serde_json::Value, seal: &str, answerable: bool, csrf: &str, run: &QueuedRun) -> String {
    let text = card["text"].as_str().unwrap_or_default();
    let confirm = card["confirm"].as_object();
    let class = if confirm.is_some() { "card flagged" } else { "card" };
    let mut out = format!("<div class=\"{class}\" id=\"card\"><pre>{}</pre>", lines(text));
    if answerable {
        out.push_str(&format!(
            "<form method=\"post\" action=\"/runs/{}/answer\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
             <input type=\"hidden\" name=\"seal\" value=\"{}\">",
            run.id,
            html(csrf),
            html(seal)
        ));
        match confirm {
            Some(confirm) => {
                let what = confirm.get("what").and_then(|w| w.as_str()).unwrap_or_default();
                out.push_str(&format!(
                    "<p><label>FLAGGED: to approve, type the last {} characters of {}: <input name=\"confirm\" \
                     autocomplete=\"off\"></label></p><button name=\"answer\" value=\"yes\">approve</button>",
                    cordon::api::approval::CONFIRM_CHARS,
                    one_line(what)
                ));
            }
            None => out.push_str("<button name=\"answer\" value=\"yes\">approve</button>"),
        }
        out.push_str("<button name=\"answer\" value=\"no\">deny</button>");
        if card["grantable"] == true {
            out.push_str("<button name=\"answer\" value=\"always\">always</button>");
        }
        out.push_str("</form>");
    }
    out.push_str("</div>");
    out
}

/// How a run ended, from its report.
fn ended(result: &serde_json::Value) -> String {
    let mut out = format!(
        "<h2>Ended</h2><p>status: <b id=\"status\">{}</b></p>",
        one_line(result["status"].as_str().unwrap_or("?"))
    );
    if let Some(error) = result["error"].as_str() {
        out.push_str(&format!("<p class=\"error\" id=\"error\">{}</p>", one_line(error)));
    }
    if !result["result"].is_null() {
        let value = match &result["result"] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push_str(&format!("<p>result: <code id=\"result\">{}</code></p>", one_line(&value)));
    }
    if let Some(diagnostics) = result["diagnostics"]["diagnostics"].as_array() {
        for d in diagnostics {
            let message = d["message"].as_str().unwrap_or_default();
            out.push_str(&format!("<p class=\"error\">{}</p>", one_line(message)));
        }
    }
    if let Some(trace) = result["trace"].as_array().filter(|t| !t.is_empty()) {
        out.push_str("<h2>Trace</h2><table id=\"trace\"><tr><th>call</th><th>decision</th><th>detail</th></tr>");
        for row in trace {
            let cell = |key: &str| row[key].as_str().map_or_else(|| row[key].to_string(), str::to_string);
            out.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td></tr>",
                one_line(&cell("tool")),
                one_line(&cell("decision")),
                one_line(&cell("detail"))
            ));
        }
        out.push_str("</table>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_never_markup_and_never_a_second_line() {
        for hostile in
            ["<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "a\nforged: line", "x\u{202e}gpj.exe"]
        {
            let shown = one_line(hostile);
            assert!(!shown.contains('<') && !shown.contains('>') && !shown.contains('"'), "{shown}");
            assert!(!shown.contains('\n') && !shown.contains('\u{202e}'), "{shown}");
        }
        assert_eq!(lines("a\n<b>"), "a\n&lt;b&gt;");
    }
}
