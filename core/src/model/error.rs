//! [`ModelError`] and its classification (docs/architecture.md §7.5), `Retry-After` handling and the retry
//! backoff.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;
use weft_protocol::CodexErrorInfo;

/// Longest delay a server can ask for (`Retry-After`, "try again in …"); longer requests are
/// cut to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Longest delay [`backoff`] returns.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Error bodies are cut to this many bytes in messages.
const MAX_BODY_IN_MESSAGE: usize = 2_000;

/// Why a model request failed. Each variant says whether the turn loop should re-run the
/// sampling request ([`ModelError::is_retryable`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The provider's `env_key` variable is unset or blank. Not retried.
    #[error("environment variable `{env_key}` with the model provider's API key is not set{}",
        instructions.as_deref().map(|i| format!(" ({i})")).unwrap_or_default())]
    MissingApiKey {
        /// The variable name.
        env_key: String,
        /// The provider's `env_key_instructions`.
        instructions: Option<String>,
    },
    /// The provider configuration cannot make a valid request (bad URL or header). Not retried.
    #[error("invalid model provider configuration: {0}")]
    Config(String),
    /// Connecting or sending failed. Retried.
    #[error("connection to the model provider failed: {message}")]
    Connection {
        /// What failed.
        message: String,
    },
    /// No response headers in time. Retried.
    #[error("timed out waiting for the model provider to respond")]
    Timeout,
    /// A non-2xx status without a more specific meaning. Retried.
    #[error("unexpected status {status} from the model provider: {message}{}",
        request_id.as_deref().map(|id| format!(" (request id {id})")).unwrap_or_default())]
    UnexpectedStatus {
        /// The HTTP status.
        status: u16,
        /// `error.message` from a JSON body, else the (cut) body.
        message: String,
        /// The full body.
        body: String,
        /// `x-request-id` (or similar) header.
        request_id: Option<String>,
    },
    /// HTTP 500. Retried.
    #[error("internal server error from the model provider: {message}")]
    InternalServerError {
        /// The error message.
        message: String,
    },
    /// The provider says it is overloaded (503 with `server_is_overloaded`/`slow_down`, or the
    /// same codes in `response.failed`). Not retried.
    #[error("the model provider is overloaded: {message}")]
    ServerOverloaded {
        /// HTTP status, when it came from one.
        status: Option<u16>,
        /// The error message.
        message: String,
    },
    /// HTTP 400 / `invalid_prompt`. Not retried.
    #[error("invalid request: {message}")]
    InvalidRequest {
        /// HTTP status, when it came from one.
        status: Option<u16>,
        /// The error message.
        message: String,
    },
    /// HTTP 400 about an image (the turn loop may replace the images and retry once).
    #[error("invalid image in request: {message}")]
    InvalidImageRequest {
        /// The error message.
        message: String,
    },
    /// HTTP 401/403. Not retried.
    #[error("unauthorized (status {status}): {message}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The error message.
        message: String,
    },
    /// HTTP 429 still answered after the request retries (which honour `Retry-After`). Not
    /// retried again by the turn loop.
    #[error("exceeded retry limit, last status: 429 Too Many Requests: {message}")]
    RateLimited {
        /// The error message.
        message: String,
        /// The last `Retry-After`, if any.
        retry_after: Option<Duration>,
    },
    /// `usage_limit_reached`. Not retried.
    #[error("usage limit reached: {message}")]
    UsageLimitReached {
        /// The error message.
        message: String,
        /// When the limit resets (epoch seconds), if known.
        resets_at: Option<i64>,
    },
    /// `usage_not_included`. Not retried.
    #[error("the current plan does not include this model or feature: {message}")]
    UsageNotIncluded {
        /// The error message.
        message: String,
    },
    /// `insufficient_quota`. Not retried.
    #[error("quota exceeded: {message}")]
    QuotaExceeded {
        /// The error message.
        message: String,
    },
    /// The prompt does not fit the model's context window. Not retried; start a new thread or
    /// compact.
    #[error("context window exceeded: {message}")]
    ContextWindowExceeded {
        /// HTTP status, when it came from one.
        status: Option<u16>,
        /// The error message.
        message: String,
    },
    /// The stream broke: cut connection, closed before completion, idle timeout, or a
    /// retryable `response.failed`. Retried after `retry_after` when the server gave one.
    #[error("stream error: {message}")]
    Stream {
        /// What happened.
        message: String,
        /// Delay requested by the server ("try again in 1.5s").
        retry_after: Option<Duration>,
    },
    /// The stream broke a rule of its wire format or one of the bounds in `limits` (an index
    /// or size past what the daemon accepts). Not retried.
    #[error("malformed response stream from the model provider: {message}")]
    Malformed {
        /// What was wrong.
        message: String,
    },
    /// `response.incomplete`. Retried unless the reason makes a retry futile
    /// (`max_output_tokens`, `content_filter`).
    #[error("incomplete response returned, reason: {reason}")]
    Incomplete {
        /// `incomplete_details.reason`.
        reason: String,
    },
}

impl ModelError {
    /// Whether the turn loop should re-run the sampling request (up to `stream_max_retries`).
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Connection { .. }
            | ModelError::Timeout
            | ModelError::UnexpectedStatus { .. }
            | ModelError::InternalServerError { .. }
            | ModelError::Stream { .. } => true,
            ModelError::Incomplete { reason } => {
                !matches!(reason.as_str(), "max_output_tokens" | "content_filter")
            }
            _ => false,
        }
    }

    /// The HTTP status this error came from, if any (for `httpStatusCode`).
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ModelError::UnexpectedStatus { status, .. }
            | ModelError::Unauthorized { status, .. } => Some(*status),
            ModelError::InternalServerError { .. } => Some(500),
            ModelError::RateLimited { .. } => Some(429),
            ModelError::InvalidImageRequest { .. } => Some(400),
            ModelError::ServerOverloaded { status, .. }
            | ModelError::InvalidRequest { status, .. }
            | ModelError::ContextWindowExceeded { status, .. } => *status,
            _ => None,
        }
    }

    /// The delay the server asked for before retrying, if any (already capped at
    /// [`MAX_RETRY_AFTER`]). Use it instead of [`backoff`] when present.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ModelError::Stream { retry_after, .. }
            | ModelError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the prompt did not fit the model's context window.
    pub fn is_context_window_exceeded(&self) -> bool {
        matches!(self, ModelError::ContextWindowExceeded { .. })
    }

    /// The client-facing error category (`codexErrorInfo`) of this error as the final error of
    /// a turn. (A retryable error that exhausted the retries is
    /// `ResponseTooManyFailedAttempts`; the turn loop knows that, not this method.)
    pub fn error_info(&self) -> CodexErrorInfo {
        let http_status_code = self.http_status();
        match self {
            ModelError::ContextWindowExceeded { .. } => CodexErrorInfo::ContextWindowExceeded,
            ModelError::UsageLimitReached { .. }
            | ModelError::UsageNotIncluded { .. }
            | ModelError::QuotaExceeded { .. } => CodexErrorInfo::UsageLimitExceeded,
            ModelError::RateLimited { .. } => {
                CodexErrorInfo::ResponseTooManyFailedAttempts { http_status_code }
            }
            ModelError::ServerOverloaded { .. } => CodexErrorInfo::ServerOverloaded,
            ModelError::InternalServerError { .. } => CodexErrorInfo::InternalServerError,
            ModelError::MissingApiKey { .. } | ModelError::Unauthorized { .. } => {
                CodexErrorInfo::Unauthorized
            }
            ModelError::InvalidRequest { .. } | ModelError::InvalidImageRequest { .. } => {
                CodexErrorInfo::BadRequest
            }
            ModelError::Connection { .. } | ModelError::Timeout => {
                CodexErrorInfo::HttpConnectionFailed { http_status_code }
            }
            ModelError::UnexpectedStatus { .. } => {
                CodexErrorInfo::ResponseStreamConnectionFailed { http_status_code }
            }
            ModelError::Stream { .. } | ModelError::Incomplete { .. } => {
                CodexErrorInfo::ResponseStreamDisconnected { http_status_code }
            }
            ModelError::Config(_) | ModelError::Malformed { .. } => CodexErrorInfo::Other,
        }
    }

    /// The stream ended before the response completed (retryable).
    pub fn stream_closed() -> ModelError {
        ModelError::stream("stream closed before response.completed")
    }

    /// A stream that broke a rule or a bound (not retried).
    pub(crate) fn malformed(message: impl Into<String>) -> ModelError {
        ModelError::Malformed {
            message: message.into(),
        }
    }

    /// A stream failure with this message.
    pub(crate) fn stream(message: impl Into<String>) -> ModelError {
        ModelError::Stream {
            message: message.into(),
            retry_after: None,
        }
    }

    /// Classify a non-2xx HTTP answer.
    pub(crate) fn from_status(status: StatusCode, headers: &HeaderMap, body: String) -> ModelError {
        let json: Option<Value> = serde_json::from_str(&body).ok();
        let error = json.as_ref().and_then(|json| json.get("error"));
        let field = |key: &str| error.and_then(|e| e.get(key)).and_then(Value::as_str);
        let code = field("code").or_else(|| field("type")).unwrap_or("");
        let message = field("message")
            .map(str::to_string)
            .or_else(|| error.and_then(Value::as_str).map(str::to_string))
            .unwrap_or_else(|| cut(&body).to_string());
        let status_code = status.as_u16();
        if looks_like_context_overflow(code, &message) {
            return ModelError::ContextWindowExceeded {
                status: Some(status_code),
                message,
            };
        }
        match status_code {
            400 if message.contains("does not represent a valid image") => {
                ModelError::InvalidImageRequest { message }
            }
            400 | 422 => ModelError::InvalidRequest {
                status: Some(status_code),
                message,
            },
            401 | 403 => ModelError::Unauthorized {
                status: status_code,
                message,
            },
            429 => match code {
                "usage_limit_reached" => ModelError::UsageLimitReached {
                    message,
                    resets_at: error
                        .and_then(|e| e.get("resets_at"))
                        .and_then(Value::as_i64),
                },
                "usage_not_included" => ModelError::UsageNotIncluded { message },
                "insufficient_quota" => ModelError::QuotaExceeded { message },
                _ => ModelError::RateLimited {
                    message,
                    retry_after: retry_after_from_headers(headers, SystemTime::now()),
                },
            },
            500 => ModelError::InternalServerError { message },
            503 if matches!(code, "server_is_overloaded" | "slow_down") => {
                ModelError::ServerOverloaded {
                    status: Some(503),
                    message,
                }
            }
            _ => ModelError::UnexpectedStatus {
                status: status_code,
                message,
                request_id: ["x-request-id", "x-oai-request-id", "request-id"]
                    .iter()
                    .find_map(|name| headers.get(*name))
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_string),
                body,
            },
        }
    }

    /// Classify the `error` object of a `response.failed` event, a top-level `error` event or
    /// a Chat error chunk: `{"code":…, "message":…}`.
    pub(crate) fn from_error_object(error: Option<&Value>) -> ModelError {
        let field = |key: &str| error.and_then(|e| e.get(key)).and_then(Value::as_str);
        let code = field("code").or_else(|| field("type")).unwrap_or("");
        let message = field("message").unwrap_or("response failed").to_string();
        if looks_like_context_overflow(code, &message) {
            return ModelError::ContextWindowExceeded {
                status: None,
                message,
            };
        }
        match code {
            "insufficient_quota" => ModelError::QuotaExceeded { message },
            "usage_not_included" => ModelError::UsageNotIncluded { message },
            "usage_limit_reached" => ModelError::UsageLimitReached {
                message,
                resets_at: None,
            },
            "invalid_prompt" => ModelError::InvalidRequest {
                status: None,
                message,
            },
            "server_is_overloaded" | "slow_down" => ModelError::ServerOverloaded {
                status: None,
                message,
            },
            _ => ModelError::Stream {
                retry_after: if code == "rate_limit_exceeded" {
                    parse_try_again_in(&message)
                } else {
                    None
                },
                message,
            },
        }
    }

    /// Classify a transport error from reqwest. A connection that could not be made (refused,
    /// unreachable, or not made within `[http] connect_timeout_ms`) is a
    /// [`ModelError::Connection`] whose message has the URL; other timeouts are
    /// [`ModelError::Timeout`].
    pub(crate) fn from_transport(err: &reqwest::Error) -> ModelError {
        if err.is_builder() {
            ModelError::Config(err.to_string())
        } else if err.is_connect() {
            let chain = error_chain(err);
            ModelError::Connection {
                message: if err.is_timeout() {
                    format!("not connected within [http] connect_timeout_ms: {chain}")
                } else {
                    chain
                },
            }
        } else if err.is_timeout() {
            ModelError::Timeout
        } else {
            ModelError::Connection {
                message: error_chain(err),
            }
        }
    }

    /// Whether the transport layer retries this error itself (before the stream starts): 5xx,
    /// 429 (honouring `Retry-After`), connection failures and timeouts.
    pub(crate) fn is_transport_retryable(&self) -> bool {
        match self {
            ModelError::Connection { .. }
            | ModelError::Timeout
            | ModelError::InternalServerError { .. }
            | ModelError::RateLimited { .. } => true,
            ModelError::UnexpectedStatus { status, .. } => *status >= 500,
            ModelError::ServerOverloaded { status, .. } => status.is_some(),
            _ => false,
        }
    }
}

/// Delay before retry number `attempt` (1-based): 200 ms × 2^(attempt−1) × a jitter in
/// [0.9, 1.1), at most [`MAX_BACKOFF`] (≈ 200, 400, 800, 1600, 3200 ms).
pub fn backoff(attempt: u32) -> Duration {
    let exponent = attempt.saturating_sub(1).min(20) as i32;
    let millis = 200.0 * 2f64.powi(exponent) * (0.9 + 0.2 * random_unit());
    Duration::from_secs_f64(millis / 1000.0).min(MAX_BACKOFF)
}

/// A number in [0, 1) that differs between calls (good enough for jitter).
fn random_unit() -> f64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    hasher.write_u32(nanos);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// `retry-after-ms`, else `Retry-After` (seconds or an HTTP date), capped at
/// [`MAX_RETRY_AFTER`].
pub(crate) fn retry_after_from_headers(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let delay = if let Some(millis) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        seconds(millis / 1000.0)?
    } else {
        let value = header("retry-after")?;
        match value.parse::<f64>() {
            Ok(secs) => seconds(secs)?,
            Err(_) => {
                let at = parse_http_date(value)?;
                at.duration_since(now).unwrap_or(Duration::ZERO)
            }
        }
    };
    Some(delay.min(MAX_RETRY_AFTER))
}

fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// Parse an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the HTTP date format servers send.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let (_weekday, day, month, year, time, zone) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    if zone != "GMT" || parts.next().is_some() {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let mut hms = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3_600 + m * 60 + s).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

/// Find "try again in <number> <unit>" (case-insensitive; unit `ms`, `s`, `second(s)`).
pub(crate) fn parse_try_again_in(message: &str) -> Option<Duration> {
    const NEEDLE: &str = "try again in";
    let lower = message.to_ascii_lowercase();
    let start = lower.find(NEEDLE)? + NEEDLE.len();
    let rest = lower[start..].trim_start();
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let value: f64 = rest[..number_len].parse().ok()?;
    let unit = rest[number_len..].trim_start();
    let secs = if unit.starts_with("ms") {
        value / 1000.0
    } else if unit.starts_with('s') {
        value
    } else {
        return None;
    };
    seconds(secs).map(|d| d.min(MAX_RETRY_AFTER))
}

/// Whether an error code or message says the prompt is too long for the model (OpenAI's code,
/// and the wording of common local servers).
fn looks_like_context_overflow(code: &str, message: &str) -> bool {
    if code == "context_length_exceeded" {
        return true;
    }
    let lower = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "exceeds the available context size",
        "exceed_context_size",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

fn cut(text: &str) -> &str {
    if text.len() <= MAX_BODY_IN_MESSAGE {
        return text;
    }
    &text[..text.floor_char_boundary(MAX_BODY_IN_MESSAGE)]
}

/// An error with its sources, `a: b: c`.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(err) = source {
        let next = err.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = err.source();
    }
    text
}

#[cfg(test)]
mod tests;
