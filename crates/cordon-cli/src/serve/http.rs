//! The HTTP side of `cordon serve`: the page (cookie and CSRF token) and the API (bearer token),
//! over one small router. Every answer says not to cache it, not to be framed, and to run no
//! script; a state-changing form must carry the session's CSRF token, and a browser's `Origin`,
//! when it sends one, must be this server's.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use cordon::Storage;
use cordon::api::store::{AnswerRefused, NewRun, QueuedRun, RunId, RunKind, RunState, WebSession};
use cordon::background::{self, seal_holds};
use cordon::people;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;

use super::page::{self, CardView, GrantRow};
use super::wake::Wake;

/// The most a request body may hold (a plan, a form).
const MAX_BODY: usize = 1 << 20;

/// What the handlers share.
pub struct Server {
    pub storage: Storage,
    pub key: Vec<u8>,
    /// Cookies marked Secure (the deployer terminates TLS).
    pub secure: bool,
    pub wake: Arc<Wake>,
    /// Listening on loopback: a request must name a loopback host (no DNS rebinding).
    pub loopback: bool,
}

/// Serves on `addr` until the process stops.
pub async fn serve(server: Arc<Server>, addr: SocketAddr) -> Result<(), String> {
    use hyper_util::rt::TokioIo;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("cordon: serving on http://{bound}/ (stop with Ctrl-C)");
    loop {
        let (stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(server.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

type Answer = Response<Full<Bytes>>;

async fn handle(server: Arc<Server>, req: Request<Incoming>) -> Result<Answer, Infallible> {
    let (parts, body) = req.into_parts();
    if server.loopback && !loopback_host(&parts.headers) {
        return Ok(text(StatusCode::FORBIDDEN, "this server answers only requests to a loopback host name"));
    }
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Ok(text(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large or broken")),
    };
    // The store blocks (PostgreSQL's client runs a runtime of its own): off the server's thread.
    let answered = tokio::task::spawn_blocking(move || route(&server, &parts, &body)).await;
    Ok(answered.unwrap_or_else(|_| failed("the request could not be answered")))
}

/// The page or API call `parts` asks for.
fn route(server: &Server, parts: &hyper::http::request::Parts, body: &[u8]) -> Answer {
    let path: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
    match (&parts.method, path.as_slice()) {
        (&Method::GET, [""]) => server.home(&parts.headers),
        (&Method::POST, ["sign-in"]) => server.sign_in(&parts.headers, body),
        (&Method::POST, ["sign-out"]) => server.sign_out(&parts.headers, body),
        (&Method::GET, ["runs", id]) => server.run_page(&parts.headers, id, None),
        (&Method::POST, ["runs", id, "answer"]) => server.answer_form(&parts.headers, body, id),
        (&Method::POST, ["grants", id, "revoke"]) => server.revoke(&parts.headers, body, id),
        (&Method::POST, ["api", "runs"]) => server.api(&parts.headers, |user| server.submit(user, body)),
        (&Method::GET, ["api", "runs"]) => server.api(&parts.headers, |user| server.list(user)),
        (&Method::GET, ["api", "runs", id]) => server.api(&parts.headers, |user| server.show(user, id)),
        (&Method::POST, ["api", "runs", id, "answer"]) => {
            server.api(&parts.headers, |user| server.answer_api(user, id, body))
        }
        _ => text(StatusCode::NOT_FOUND, "no such page"),
    }
}

impl Server {
    /// The signed-in person's web session, from the cookie.
    fn session(&self, headers: &HeaderMap) -> Option<(String, WebSession)> {
        let cookie = cookie(headers, COOKIE)?;
        let session = people::web_session(&self.storage, &cookie).ok()??;
        Some((cookie, session))
    }

    fn home(&self, headers: &HeaderMap) -> Answer {
        let Some((_, session)) = self.session(headers) else { return html(StatusCode::OK, page::sign_in(None)) };
        let runs = self.storage.store().queued_runs(Some(&session.user), 100);
        let grants = self.storage.store().grants();
        let (Ok(runs), Ok(grants)) = (runs, grants) else { return failed("the store could not be read") };
        let grants: Vec<GrantRow> = grants
            .into_iter()
            .filter(|g| g.grant.principal.as_deref() == Some(session.user.as_str()))
            .map(|g| GrantRow {
                id: g.id.0,
                tool: g.grant.tool,
                destination: g.grant.destination,
                label_class: g.grant.label_class,
                expires: g.grant.expires_ms.map_or("until you revoke it".to_string(), |at| {
                    format!("{} from now", page::duration(at - now_ms()))
                }),
            })
            .collect();
        html(StatusCode::OK, page::home(&session.user, &session.csrf, &runs, &grants, now_ms()))
    }

    fn sign_in(&self, headers: &HeaderMap, body: &[u8]) -> Answer {
        if !same_origin(headers) {
            return text(StatusCode::FORBIDDEN, "a cross-site form is refused");
        }
        let token = field(body, "token").unwrap_or_default();
        match people::sign_in(&self.storage, &token) {
            Ok(Some(signed)) => {
                let secure = if self.secure { "; Secure" } else { "" };
                let set = format!("{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict{secure}", signed.cookie);
                let mut answer = see_other("/");
                if let Ok(value) = HeaderValue::from_str(&set) {
                    answer.headers_mut().insert(header::SET_COOKIE, value);
                }
                answer
            }
            Ok(None) => html(StatusCode::UNAUTHORIZED, page::sign_in(Some("that token signs no one in"))),
            Err(_) => failed("the store could not be read"),
        }
    }

    /// A state-changing form: from this server's page, signed in, with the session's CSRF
    /// token. The session's cookie and the session, or the refusal.
    fn form(&self, headers: &HeaderMap, body: &[u8]) -> Result<(String, WebSession), Refused> {
        if !same_origin(headers) {
            return Err(Refused(StatusCode::FORBIDDEN, "a cross-site form is refused"));
        }
        let form = b"application/x-www-form-urlencoded";
        if headers.get(header::CONTENT_TYPE).is_none_or(|t| !t.as_bytes().starts_with(form)) {
            return Err(Refused(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "a form is sent as application/x-www-form-urlencoded",
            ));
        }
        let Some((cookie, session)) = self.session(headers) else {
            return Err(Refused(StatusCode::UNAUTHORIZED, "sign in first"));
        };
        let token = field(body, "csrf").unwrap_or_default();
        if !people::same(&token, &session.csrf) {
            return Err(Refused(StatusCode::FORBIDDEN, "the form's CSRF token is missing or wrong"));
        }
        Ok((cookie, session))
    }

    fn sign_out(&self, headers: &HeaderMap, body: &[u8]) -> Answer {
        let (cookie, _) = match self.form(headers, body) {
            Ok(signed) => signed,
            Err(refused) => return refused.answer(),
        };
        match people::sign_out(&self.storage, &cookie) {
            Ok(()) => {
                let mut answer = see_other("/");
                let gone = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
                if let Ok(value) = HeaderValue::from_str(&gone) {
                    answer.headers_mut().insert(header::SET_COOKIE, value);
                }
                answer
            }
            Err(_) => failed("the store could not end the session"),
        }
    }

    /// The run `id` of `user`, if it is theirs (anyone else's is as if it did not exist).
    fn own_run(&self, user: &str, id: &str) -> Result<QueuedRun, Refused> {
        let none = Refused(StatusCode::NOT_FOUND, "no such run");
        let id = id.parse::<i64>().map_err(|_| none)?;
        match self.storage.store().queued_run(RunId(id)) {
            Ok(Some(run)) if run.principal == user => Ok(run),
            Ok(_) => Err(none),
            Err(_) => Err(Refused(StatusCode::INTERNAL_SERVER_ERROR, "the store could not be read")),
        }
    }

    fn run_page(&self, headers: &HeaderMap, id: &str, message: Option<(StatusCode, &str)>) -> Answer {
        let Some((_, session)) = self.session(headers) else { return html(StatusCode::OK, page::sign_in(None)) };
        let run = match self.own_run(&session.user, id) {
            Ok(run) => run,
            Err(refused) => return refused.answer(),
        };
        let card = match (&run.card, &run.seal, run.state) {
            (Some(card), Some(seal), RunState::Waiting) if seal_holds(&self.key, run.id, card, seal) => {
                CardView::Sealed { card, seal, answerable: run.answer.is_none() }
            }
            (Some(_), _, RunState::Waiting) => CardView::Broken,
            _ => CardView::None,
        };
        let rows = match run.request.map(|r| self.storage.store().show(r)) {
            Some(Ok(log)) => log.entries,
            _ => Vec::new(),
        };
        let (status, message) = message.map_or((StatusCode::OK, None), |(s, m)| (s, Some(m)));
        html(status, page::run(&session.user, &session.csrf, &run, card, &rows, message))
    }

    fn answer_form(&self, headers: &HeaderMap, body: &[u8], id: &str) -> Answer {
        let session = match self.form(headers, body) {
            Ok((_, session)) => session,
            Err(refused) => return refused.answer(),
        };
        let run = match self.own_run(&session.user, id) {
            Ok(run) => run,
            Err(refused) => return refused.answer(),
        };
        let given = Given {
            seal: field(body, "seal").unwrap_or_default(),
            answer: field(body, "answer").unwrap_or_default(),
            confirm: field(body, "confirm"),
        };
        match self.answer(&session.user, &run, &given) {
            Ok(()) => see_other(&format!("/runs/{}", run.id)),
            Err((status, why)) => self.run_page(headers, id, Some((status, &why))),
        }
    }

    /// Takes `user`'s answer to `run`'s card: the card they saw (its seal), their answer, and
    /// for a flagged card what they typed of the flagged value.
    fn answer(&self, user: &str, run: &QueuedRun, given: &Given) -> Result<(), (StatusCode, String)> {
        let given = background::Given { seal: &given.seal, answer: &given.answer, confirm: given.confirm.as_deref() };
        match background::answer(&self.storage, &self.key, run.id, user, &given) {
            Ok(Ok(())) => {
                self.wake.notify();
                Ok(())
            }
            Ok(Err(why)) => {
                let status = match why {
                    background::Refused::Store(AnswerRefused::NotYours) => StatusCode::FORBIDDEN,
                    background::Refused::NotAnAnswer => StatusCode::BAD_REQUEST,
                    _ => StatusCode::CONFLICT,
                };
                Err((status, why.to_string()))
            }
            Err(_) => Err((StatusCode::INTERNAL_SERVER_ERROR, "the store could not take the answer".into())),
        }
    }

    fn revoke(&self, headers: &HeaderMap, body: &[u8], id: &str) -> Answer {
        let session = match self.form(headers, body) {
            Ok((_, session)) => session,
            Err(refused) => return refused.answer(),
        };
        let Ok(id) = id.parse::<i64>() else { return text(StatusCode::NOT_FOUND, "no such grant") };
        let Ok(grants) = self.storage.store().grants() else { return failed("the store could not be read") };
        let own = grants.iter().any(|g| g.id.0 == id && g.grant.principal.as_deref() == Some(session.user.as_str()));
        if !own {
            return text(StatusCode::NOT_FOUND, "no such grant");
        }
        match self.storage.store().revoke_grant(cordon::api::store::GrantId(id)) {
            Ok(()) => see_other("/"),
            Err(_) => failed("the store could not revoke it"),
        }
    }

    /// An API call: the bearer token's person, or 401.
    fn api(&self, headers: &HeaderMap, act: impl FnOnce(&str) -> Answer) -> Answer {
        let token =
            headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        match token.map(|t| people::user_by_token(&self.storage, t)) {
            Some(Ok(Some(user))) => act(&user),
            Some(Err(_)) => failed("the store could not be read"),
            _ => json_answer(StatusCode::UNAUTHORIZED, &json!({ "error": "a bearer token is needed" })),
        }
    }

    /// `{"plan": TEXT, "name": NAME}` or `{"request": TEXT}`: queued, for `user`.
    fn submit(&self, user: &str, body: &[u8]) -> Answer {
        let Ok(asked) = serde_json::from_slice::<serde_json::Value>(body) else {
            return json_answer(StatusCode::BAD_REQUEST, &json!({ "error": "the body is not JSON" }));
        };
        let (kind, text, name) = match (asked["plan"].as_str(), asked["request"].as_str()) {
            (Some(plan), None) => (RunKind::Plan, plan, asked["name"].as_str().unwrap_or("plan.cord")),
            (None, Some(request)) => (RunKind::Ask, request, "request"),
            _ => {
                return json_answer(
                    StatusCode::BAD_REQUEST,
                    &json!({ "error": "give `plan` (and a `name`) or `request`" }),
                );
            }
        };
        match self.storage.store().submit_run(&NewRun { principal: user, kind, name, text, clearance: None }) {
            Ok(id) => {
                self.wake.notify();
                json_answer(StatusCode::CREATED, &json!({ "run": id }))
            }
            Err(_) => failed("the store could not queue the run"),
        }
    }

    fn list(&self, user: &str) -> Answer {
        match self.storage.store().queued_runs(Some(user), 100) {
            Ok(runs) => json_answer(
                StatusCode::OK,
                &json!({ "runs": runs.iter().map(|r| self.run_json(r)).collect::<Vec<_>>() }),
            ),
            Err(_) => failed("the store could not be read"),
        }
    }

    fn show(&self, user: &str, id: &str) -> Answer {
        match self.own_run(user, id) {
            Ok(run) => json_answer(StatusCode::OK, &self.run_json(&run)),
            Err(refused) => refused.answer(),
        }
    }

    /// A run as the API shows it; its card only while its seal holds.
    fn run_json(&self, run: &QueuedRun) -> serde_json::Value {
        let mut value = json!(run);
        let sealed = match (&run.card, &run.seal) {
            (Some(card), Some(seal)) => seal_holds(&self.key, run.id, card, seal),
            _ => false,
        };
        if !sealed {
            value["card"] = serde_json::Value::Null;
            value["seal"] = serde_json::Value::Null;
        }
        value
    }

    fn answer_api(&self, user: &str, id: &str, body: &[u8]) -> Answer {
        let run = match self.own_run(user, id) {
            Ok(run) => run,
            Err(refused) => return refused.answer(),
        };
        let Ok(asked) = serde_json::from_slice::<serde_json::Value>(body) else {
            return json_answer(StatusCode::BAD_REQUEST, &json!({ "error": "the body is not JSON" }));
        };
        let given = Given {
            seal: asked["seal"].as_str().unwrap_or_default().to_string(),
            answer: asked["answer"].as_str().unwrap_or_default().to_string(),
            confirm: asked["confirm"].as_str().map(str::to_string),
        };
        match self.answer(user, &run, &given) {
            Ok(()) => json_answer(StatusCode::OK, &json!({ "run": run.id, "answer": given.answer })),
            Err((status, why)) => json_answer(status, &json!({ "error": why })),
        }
    }
}

/// A request refused, with its status and why.
#[derive(Clone, Copy, Debug)]
struct Refused(StatusCode, &'static str);

impl Refused {
    fn answer(self) -> Answer {
        text(self.0, self.1)
    }
}

/// An answer as a form or the API gives it.
struct Given {
    seal: String,
    answer: String,
    confirm: Option<String>,
}

/// The session cookie's name.
const COOKIE: &str = "cordon_session";

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(|pair| {
        let (key, value) = pair.trim().split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

/// A field of a URL-encoded form.
fn field(body: &[u8], name: &str) -> Option<String> {
    form_urlencoded::parse(body).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}

/// Whether the browser's `Origin`, if it sent one, is this server's (`Host`).
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else { return true };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let origin_host = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://"));
    origin_host == Some(host) && !host.is_empty()
}

/// Whether the `Host` is a loopback name (with any port).
fn loopback_host(headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

fn with_headers(status: StatusCode, kind: &'static str, body: String) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    *answer.status_mut() = status;
    let headers = answer.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with a form, which is refused.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    answer
}

fn html(status: StatusCode, body: String) -> Answer {
    with_headers(status, "text/html; charset=utf-8", body)
}

fn text(status: StatusCode, body: &str) -> Answer {
    with_headers(status, "text/plain; charset=utf-8", format!("{body}\n"))
}

fn json_answer(status: StatusCode, value: &serde_json::Value) -> Answer {
    with_headers(status, "application/json", value.to_string())
}

fn failed(why: &str) -> Answer {
    text(StatusCode::INTERNAL_SERVER_ERROR, why)
}

fn see_other(to: &str) -> Answer {
    let mut answer = with_headers(StatusCode::SEE_OTHER, "text/plain; charset=utf-8", String::new());
    if let Ok(value) = HeaderValue::from_str(to) {
        answer.headers_mut().insert(header::LOCATION, value);
    }
    answer
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
