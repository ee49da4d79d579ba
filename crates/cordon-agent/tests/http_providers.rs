//! The HTTP providers against a mock server on 127.0.0.1: request shapes, reply parsing,
//! retries, timeouts, size caps and error messages.

#![allow(clippy::unwrap_used, clippy::panic)] // a test may fail loudly

mod mock;

use std::time::{Duration, Instant};

use cordon_agent::{
    Anthropic, AnthropicConfig, HttpConfig, Message, OpenAi, OpenAiConfig, Provider, ProviderError, Request,
    RetryPolicy,
};
use mock::{MockServer, Reply, closed_url};
use serde_json::json;

/// Quick timeouts and tiny retry delays, so the whole file runs in well under a second or two.
fn fast_http() -> HttpConfig {
    HttpConfig {
        connect_timeout: Duration::from_secs(1),
        read_timeout: Duration::from_secs(2),
        retry: RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(4),
            max_retry_after: Duration::from_millis(150),
        },
        max_reply_bytes: 8 * 1024 * 1024,
        allow_insecure_http: false,
    }
}

fn openai(server: &MockServer, key: Option<&str>) -> OpenAi {
    openai_with(server.url(), key, fast_http())
}

fn openai_with(url: &str, key: Option<&str>, http: HttpConfig) -> OpenAi {
    let config = OpenAiConfig { base_url: format!("{url}/v1"), http, ..OpenAiConfig::new("test-model") };
    OpenAi::with_api_key(config, key.map(str::to_string)).unwrap()
}

fn anthropic(server: &MockServer, key: Option<&str>) -> Anthropic {
    let config = AnthropicConfig {
        base_url: server.url().to_string(),
        http: fast_http(),
        ..AnthropicConfig::new("claude-test")
    };
    Anthropic::with_api_key(config, key.map(str::to_string)).unwrap()
}

fn request() -> Request {
    Request {
        messages: vec![Message::system("You write Cordon."), Message::user("Fill the hole."), Message::assistant("ok")],
        max_tokens: 256,
        hole: Some("h1".into()),
    }
}

fn openai_reply(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "x",
            "choices": [{ "index": 0, "message": { "role": "assistant", "content": text }, "finish_reason": "stop" }],
            "usage": { "prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15 }
        }),
    )
}

#[test]
fn openai_success_sends_the_documented_request() {
    let server = MockServer::start(vec![openai_reply("let x = 1;")]);
    let completion = openai(&server, Some("sk-test")).complete(&request()).unwrap();
    assert_eq!(completion.text, "let x = 1;");
    assert_eq!((completion.usage.prompt_tokens, completion.usage.completion_tokens), (12, 3));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(sent.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "test-model",
            "max_tokens": 256,
            "messages": [
                { "role": "system", "content": "You write Cordon." },
                { "role": "user", "content": "Fill the hole." },
                { "role": "assistant", "content": "ok" }
            ]
        })
    );
}

#[test]
fn openai_without_a_key_sends_no_authorization() {
    let server = MockServer::start(vec![Reply::json(200, json!({ "choices": [{ "message": { "content": "1" } }] }))]);
    let completion = openai(&server, None).complete(&request()).unwrap();
    assert_eq!(completion.text, "1");
    assert_eq!(completion.usage.total(), 0, "usage is optional");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn openai_reads_the_key_from_the_configured_variable() {
    // Cargo sets CARGO_PKG_NAME for the tests it runs; any set variable will do.
    let Ok(expected) = std::env::var("CARGO_PKG_NAME") else { return };
    let server = MockServer::start(vec![openai_reply("1")]);
    let config = OpenAiConfig {
        base_url: format!("{}/v1", server.url()),
        api_key_env: "CARGO_PKG_NAME".into(),
        http: fast_http(),
        ..OpenAiConfig::new("m")
    };
    OpenAi::new(config).unwrap().complete(&request()).unwrap();
    assert_eq!(server.requests()[0].header("authorization"), Some(format!("Bearer {expected}").as_str()));
}

#[test]
fn hosted_apis_need_a_key() {
    let unset = "CORDON_AGENT_TEST_VARIABLE_THAT_IS_NEVER_SET";
    let openai = OpenAi::new(OpenAiConfig { api_key_env: unset.into(), ..OpenAiConfig::new("gpt") });
    let Err(ProviderError::Config(message)) = openai else { panic!("expected a configuration error") };
    assert!(message.contains(unset), "{message}");
    let anthropic = Anthropic::new(AnthropicConfig { api_key_env: unset.into(), ..AnthropicConfig::new("claude") });
    assert!(matches!(anthropic, Err(ProviderError::Config(_))));
}

#[test]
fn anthropic_success_sends_the_documented_request() {
    let server = MockServer::start(vec![Reply::json(
        200,
        json!({
            "type": "message",
            "content": [
                { "type": "text", "text": "let a = 1;\n" },
                { "type": "tool_use", "id": "t", "name": "x", "input": {} },
                { "type": "text", "text": "a" }
            ],
            "usage": { "input_tokens": 20, "output_tokens": 7 }
        }),
    )]);
    let completion = anthropic(&server, Some("ant-key")).complete(&request()).unwrap();
    assert_eq!(completion.text, "let a = 1;\na");
    assert_eq!((completion.usage.prompt_tokens, completion.usage.completion_tokens), (20, 7));

    let sent = &server.requests()[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(sent.header("x-api-key"), Some("ant-key"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "system": "You write Cordon.",
            "messages": [
                { "role": "user", "content": "Fill the hole." },
                { "role": "assistant", "content": "ok" }
            ]
        })
    );
}

fn expect_malformed(result: Result<cordon_agent::Completion, ProviderError>, needle: &str) {
    match result {
        Err(ProviderError::Malformed(message)) => assert!(message.contains(needle), "`{needle}` not in: {message}"),
        other => panic!("expected Malformed mentioning `{needle}`, got {other:?}"),
    }
}

#[test]
fn malformed_replies_say_what_was_expected() {
    let server = MockServer::start(vec![
        Reply::text(200, "<html>not json</html>"),
        Reply::json(200, json!({ "choices": [] })),
        Reply::json(200, json!({ "choices": [{ "message": { "role": "assistant" } }] })),
        Reply::json(200, json!({ "choices": [{ "message": { "content": 42 } }] })),
        Reply::json(
            200,
            json!({ "choices": [{ "message": { "content": "x" } }], "usage": { "prompt_tokens": "many" } }),
        ),
    ]);
    let mut provider = openai(&server, None);
    expect_malformed(provider.complete(&request()), "JSON");
    expect_malformed(provider.complete(&request()), "/choices");
    expect_malformed(provider.complete(&request()), "/choices/0/message/content");
    expect_malformed(provider.complete(&request()), "found a number");
    expect_malformed(provider.complete(&request()), "/usage/prompt_tokens");
    assert_eq!(server.requests().len(), 5, "malformed replies are not retried");

    let server = MockServer::start(vec![
        Reply::json(200, json!({ "id": "msg" })),
        Reply::json(200, json!({ "content": [{ "type": "text" }] })),
    ]);
    let mut provider = anthropic(&server, None);
    expect_malformed(provider.complete(&request()), "/content");
    expect_malformed(provider.complete(&request()), "/content/0/text");
}

#[test]
fn rate_limit_is_retried_honouring_retry_after() {
    let limited = Reply::json(429, json!({ "error": { "message": "slow down" } }));
    let server = MockServer::start(vec![limited.with_header("Retry-After", "1"), openai_reply("done")]);
    let started = Instant::now();
    let completion = openai(&server, None).complete(&request()).unwrap();
    let waited = started.elapsed();
    assert_eq!(completion.text, "done");
    assert_eq!(server.requests().len(), 2);
    // Retry-After: 1 asks for a second; the test policy caps it at 150 ms.
    assert!(waited >= Duration::from_millis(150), "waited only {waited:?}");
    assert!(waited < Duration::from_millis(900), "cap not applied: {waited:?}");
}

#[test]
fn retry_after_ms_is_honoured() {
    let limited = Reply::json(429, json!({})).with_header("retry-after-ms", "80");
    let server = MockServer::start(vec![limited, openai_reply("done")]);
    let started = Instant::now();
    openai(&server, None).complete(&request()).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(80));
}

#[test]
fn persistent_rate_limit_reports_the_retries_and_message() {
    let limited = Reply::json(429, json!({ "error": { "message": "quota exceeded" } }));
    let server = MockServer::start(vec![limited.clone(), limited.clone(), limited]);
    let error = openai(&server, None).complete(&request()).unwrap_err();
    assert_eq!(error, ProviderError::RateLimited { retries: 2, message: "quota exceeded".into() });
    assert!(error.to_string().contains("after 2 retries"), "{error}");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn server_errors_are_retried_then_reported() {
    let failing = Reply::text(500, "internal trouble");
    let server = MockServer::start(vec![failing.clone(), failing.clone(), failing.clone()]);
    let error = openai(&server, None).complete(&request()).unwrap_err();
    assert_eq!(error, ProviderError::Http { status: 500, body: "internal trouble".into(), retries: 2 });
    assert_eq!(server.requests().len(), 3);

    let server = MockServer::start(vec![Reply::text(503, "busy"), openai_reply("recovered")]);
    assert_eq!(openai(&server, None).complete(&request()).unwrap().text, "recovered");
}

#[test]
fn client_errors_are_not_retried() {
    let server = MockServer::start(vec![
        Reply::json(400, json!({ "error": { "message": "unknown model test-model" } })),
        openai_reply("never asked for"),
    ]);
    let error = openai(&server, None).complete(&request()).unwrap_err();
    assert_eq!(error, ProviderError::Http { status: 400, body: "unknown model test-model".into(), retries: 0 });
    assert_eq!(error.to_string(), "model server answered HTTP 400: unknown model test-model");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn errors_never_contain_the_key() {
    let key = "sk-very-secret-key";
    let echo = Reply::json(401, json!({ "error": { "message": format!("Incorrect API key provided: {key}") } }));
    let server = MockServer::start(vec![echo.clone()]);
    let error = openai(&server, Some(key)).complete(&request()).unwrap_err();
    assert!(!error.to_string().contains(key), "{error}");
    assert!(!format!("{error:?}").contains(key), "{error:?}");
    assert!(error.to_string().contains("[redacted]"), "{error}");

    let server = MockServer::start(vec![echo]);
    let provider = anthropic(&server, Some(key));
    assert!(!format!("{provider:?}").contains(key));
    let error = { provider }.complete(&request()).unwrap_err();
    assert!(!error.to_string().contains(key), "{error}");
}

#[test]
fn a_silent_server_times_out_quickly() {
    let server = MockServer::start(vec![Reply::Silent(Duration::from_secs(3)), openai_reply("late")]);
    let http = HttpConfig { read_timeout: Duration::from_millis(200), ..fast_http() };
    let started = Instant::now();
    let error = openai_with(server.url(), None, http).complete(&request()).unwrap_err();
    assert!(matches!(error, ProviderError::Timeout { .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    assert!(error.to_string().contains("timed out"), "{error}");
    assert_eq!(server.requests().len(), 1, "timeouts are not retried");
}

#[test]
fn an_unreachable_server_is_retried_then_reported() {
    let url = closed_url();
    let error = openai_with(&url, None, fast_http()).complete(&request()).unwrap_err();
    let ProviderError::Io(message) = &error else { panic!("expected Io, got {error:?}") };
    assert!(message.contains("could not reach") && message.contains("after 2 retries"), "{message}");
}

#[test]
fn huge_replies_are_refused() {
    let limit = 4096;
    let http = HttpConfig { max_reply_bytes: limit, ..fast_http() };
    let server = MockServer::start(vec![
        Reply::Huge { bytes: 1 << 20, declare_length: true },
        Reply::Huge { bytes: 1 << 20, declare_length: false },
    ]);
    let mut provider = openai_with(server.url(), None, http);
    assert_eq!(provider.complete(&request()).unwrap_err(), ProviderError::TooLarge { limit });
    assert_eq!(provider.complete(&request()).unwrap_err(), ProviderError::TooLarge { limit });
}

#[test]
fn bad_base_urls_are_configuration_errors() {
    let config = OpenAiConfig { base_url: "ftp://example".into(), ..OpenAiConfig::new("m") };
    assert!(matches!(OpenAi::with_api_key(config, None), Err(ProviderError::Config(_))));
    let config = OpenAiConfig { base_url: "http://127.0.0.1:1/v1".into(), ..OpenAiConfig::new(" ") };
    assert!(matches!(OpenAi::with_api_key(config, None), Err(ProviderError::Config(_))));
}

#[test]
fn a_key_is_never_sent_over_plain_http_to_another_machine() {
    // Hostile first: a base URL that sends the key, unencrypted, to a remote host, including
    // ones dressed up as loopback.
    for base in ["http://10.0.0.5:8000/v1", "http://127.0.0.1@evil.example/v1", "http://localhost.evil.example"] {
        let config = OpenAiConfig { base_url: base.into(), http: fast_http(), ..OpenAiConfig::new("m") };
        let Err(ProviderError::Config(message)) = OpenAi::with_api_key(config, Some("sk-secret".into())) else {
            panic!("{base} was accepted");
        };
        assert!(message.contains("plain http") && message.contains("the API key"), "{message}");
        assert!(message.contains("--allow-insecure-http") && !message.contains("sk-secret"), "{message}");
        let config = AnthropicConfig { base_url: base.into(), http: fast_http(), ..AnthropicConfig::new("m") };
        assert!(matches!(Anthropic::with_api_key(config, Some("k".into())), Err(ProviderError::Config(_))));
        // Without a key the prompts would still cross the network in clear text.
        let config = OpenAiConfig { base_url: base.into(), http: fast_http(), ..OpenAiConfig::new("m") };
        assert!(matches!(OpenAi::with_api_key(config, None), Err(ProviderError::Config(_))));
    }
    // Asked for in so many words, it is allowed; so are loopback and https, always.
    let http = HttpConfig { allow_insecure_http: true, ..fast_http() };
    let config = OpenAiConfig { base_url: "http://10.0.0.5:8000/v1".into(), http, ..OpenAiConfig::new("m") };
    assert!(OpenAi::with_api_key(config, Some("k".into())).is_ok());
    for base in ["http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://[::1]:1/v1", "https://10.0.0.5/v1"] {
        let config = OpenAiConfig { base_url: base.into(), http: fast_http(), ..OpenAiConfig::new("m") };
        assert!(OpenAi::with_api_key(config, Some("k".into())).is_ok(), "{base}");
    }
}
