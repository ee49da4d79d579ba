//! Helpers shared by the HTTP providers for reading their JSON replies and API keys, so that
//! every provider reports a missing or mistyped field the same way.

use serde_json::Value;

use crate::provider::ProviderError;

/// The string at `pointer` (a JSON pointer such as `/choices/0/message/content`), or a
/// `Malformed` error naming the field and what it found instead.
pub(crate) fn string_at<'a>(reply: &'a Value, pointer: &str) -> Result<&'a str, ProviderError> {
    match reply.pointer(pointer) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => {
            Err(ProviderError::Malformed(format!("expected a string at `{pointer}`, found {}", describe(other))))
        }
        None => Err(ProviderError::Malformed(format!("expected a string at `{pointer}`, but it is missing"))),
    }
}

/// The token count at `pointer`: zero when the server does not report it, an error when it
/// reports something that is not a count.
pub(crate) fn count_at(reply: &Value, pointer: &str) -> Result<u64, ProviderError> {
    match reply.pointer(pointer) {
        None | Some(Value::Null) => Ok(0),
        Some(value) => value.as_u64().ok_or_else(|| {
            ProviderError::Malformed(format!("expected a token count at `{pointer}`, found {}", describe(value)))
        }),
    }
}

/// A short description of a JSON value's kind, for error messages.
pub(crate) fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The API key in environment variable `name`: `None` when it is unset or empty.
pub(crate) fn key_from_env(name: &str) -> Result<Option<String>, ProviderError> {
    match std::env::var(name) {
        Ok(key) if key.trim().is_empty() => Ok(None),
        Ok(key) => Ok(Some(key.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(ProviderError::Config(format!("environment variable {name} is not valid UTF-8")))
        }
    }
}

/// A base URL without trailing slashes, checked to be http or https.
pub(crate) fn base_url(url: &str) -> Result<String, ProviderError> {
    let trimmed = url.trim().trim_end_matches('/');
    let host = trimmed.strip_prefix("https://").or_else(|| trimmed.strip_prefix("http://"));
    match host {
        Some(host) if !host.is_empty() => Ok(trimmed.to_string()),
        _ => {
            Err(ProviderError::Config(format!("base URL `{url}` must start with http:// or https:// and name a host")))
        }
    }
}

/// The host of `base` when it is plain `http://` to a host that is not this machine's loopback
/// (`localhost`, `127.0.0.0/8`, `::1`); `None` for https, for loopback and for what does not
/// parse (refused elsewhere). The URL is read by the same parser the HTTP client uses, so
/// `http://127.0.0.1@evil.example` or `http://localhost.evil.example` is the remote host it is.
pub(crate) fn remote_plain_http(base: &str) -> Option<String> {
    let url = url::Url::parse(base).ok()?;
    if url.scheme() != "http" {
        return None;
    }
    let loopback = match url.host()? {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    (!loopback).then(|| url.host_str().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_remote_unless_it_is_this_machine() {
        // Hostile first: each of these reaches another machine.
        for remote in [
            "http://10.0.0.5:8000/v1",
            "http://api.example.com/v1",
            "http://127.0.0.1.evil.example/v1",
            "http://localhost.evil.example/v1",
            "http://127.0.0.1@evil.example/v1",
            "http://localhost:80@evil.example",
            "HTTP://EVIL.EXAMPLE/v1",
            "http://[2001:db8::1]:8080/v1",
            "http://0x7f000001.evil.example",
        ] {
            assert!(remote_plain_http(remote).is_some(), "{remote} reaches another machine");
        }
        assert_eq!(remote_plain_http("http://127.0.0.1@evil.example/v1").as_deref(), Some("evil.example"));
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://localhost:8000",
            "http://LOCALHOST:8000",
            "http://[::1]:8080/v1",
            "http://2130706433/v1",
            "https://api.example.com/v1",
            "https://10.0.0.5/v1",
        ] {
            assert_eq!(remote_plain_http(local), None, "{local} stays on this machine or is encrypted");
        }
    }
}
