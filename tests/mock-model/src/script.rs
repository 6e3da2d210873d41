//! What the mock answers to one model request: a [`Script`] is either an SSE stream made of
//! pre-rendered [`Step`]s or a plain HTTP error.

use std::time::Duration;

use bytes::Bytes;
use tokio::sync::watch;

/// The two model wire APIs the mock speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireApi {
    /// `POST …/responses` (OpenAI Responses API, SSE with typed events).
    Responses,
    /// `POST …/chat/completions` (Chat Completions, `data:` chunks ending with `[DONE]`).
    Chat,
}

impl WireApi {
    /// The path suffix requests for this API end with.
    pub fn path_suffix(self) -> &'static str {
        match self {
            WireApi::Responses => "/responses",
            WireApi::Chat => "/chat/completions",
        }
    }
}

/// One piece of a streamed body. Consecutive byte steps are merged when a script is built, so a
/// 10,000-delta reply without delays is a single write.
#[derive(Debug, Clone)]
pub enum Step {
    /// Send these bytes.
    Bytes(Bytes),
    /// Wait this long before the next step.
    Delay(Duration),
    /// Hold the stream open until the gate is released.
    Gate(Gate),
    /// Stop sending but keep the connection open (until the client closes or the mock stops).
    Stall,
    /// Abort the connection (the client sees a truncated body, no clean end).
    Cut,
    /// End the body cleanly right here (whatever steps follow are not sent).
    Close,
}

/// A scripted answer to one model request. Build streamed ones with [`crate::Reply`], errors with
/// [`Script::http_error`].
#[derive(Debug, Clone)]
pub struct Script {
    pub(crate) body: ScriptBody,
    pub(crate) headers: Vec<(String, String)>,
}

#[derive(Debug, Clone)]
pub(crate) enum ScriptBody {
    /// An SSE stream; `api` is the wire API it was rendered for (`None`: any).
    Stream {
        api: Option<WireApi>,
        steps: Vec<Step>,
    },
    /// A non-streamed answer with this status and body.
    Status { status: u16, body: String },
}

impl Script {
    /// A plain HTTP answer with `status` and `body` (served as JSON when the body parses as
    /// JSON, else as text). Matches requests of either wire API.
    pub fn http_error(status: u16, body: impl Into<String>) -> Script {
        Script {
            body: ScriptBody::Status {
                status,
                body: body.into(),
            },
            headers: Vec::new(),
        }
    }

    /// An HTTP error with an OpenAI-style body:
    /// `{"error":{"message":…,"type":…,"code":…}}` (`type` and `code` both set to `code`).
    pub fn api_error(status: u16, code: &str, message: &str) -> Script {
        let body = serde_json::json!({
            "error": { "message": message, "type": code, "code": code, "param": null }
        });
        Script::http_error(status, body.to_string())
    }

    /// A raw SSE body for `api`, sent as is in one write.
    pub fn raw_sse(api: WireApi, body: impl Into<Bytes>) -> Script {
        Script::from_steps(Some(api), vec![Step::Bytes(body.into())])
    }

    /// A streamed body made of explicit steps (for shapes [`crate::Reply`] cannot express).
    /// `api: None` serves it to either wire API.
    pub fn from_steps(api: Option<WireApi>, steps: Vec<Step>) -> Script {
        Script {
            body: ScriptBody::Stream {
                api,
                steps: merge_bytes(steps),
            },
            headers: Vec::new(),
        }
    }

    /// Add a response header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Script {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Add a `Retry-After` header (seconds or an HTTP date, sent verbatim).
    pub fn retry_after(self, value: impl Into<String>) -> Script {
        self.header("retry-after", value)
    }

    /// The wire API this script was rendered for, if it is specific to one.
    pub fn api(&self) -> Option<WireApi> {
        match &self.body {
            ScriptBody::Stream { api, .. } => *api,
            ScriptBody::Status { .. } => None,
        }
    }
}

/// Merge runs of `Step::Bytes` into one buffer each.
fn merge_bytes(steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    let mut pending: Vec<u8> = Vec::new();
    for step in steps {
        match step {
            Step::Bytes(bytes) => pending.extend_from_slice(&bytes),
            other => {
                if !pending.is_empty() {
                    out.push(Step::Bytes(Bytes::from(std::mem::take(&mut pending))));
                }
                out.push(other);
            }
        }
    }
    if !pending.is_empty() {
        out.push(Step::Bytes(Bytes::from(pending)));
    }
    out
}

/// A point where a streamed reply holds until the test releases it. Clones share state.
///
/// ```no_run
/// # use std::time::Duration;
/// # use weft_mock_model::{Gate, MockModel, Reply};
/// # async fn example(mock: &MockModel) -> anyhow::Result<()> {
/// let gate = Gate::new();
/// mock.push(Reply::new().text("partial").gate(&gate).text("rest").responses());
/// // … the client has received "partial" …
/// gate.wait_reached(Duration::from_secs(10)).await?; // optional: the server now holds
/// gate.release();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Gate {
    released: watch::Sender<bool>,
    reached: watch::Sender<bool>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate::new()
    }
}

impl Gate {
    /// A closed gate.
    pub fn new() -> Gate {
        Gate {
            released: watch::Sender::new(false),
            reached: watch::Sender::new(false),
        }
    }

    /// Let every stream held at this gate (now or later) continue.
    pub fn release(&self) {
        self.released.send_replace(true);
    }

    /// Whether a stream has reached this gate.
    pub fn is_reached(&self) -> bool {
        *self.reached.borrow()
    }

    /// Wait until a stream reaches this gate (everything before it has been handed to the
    /// socket).
    pub async fn wait_reached(&self, timeout: Duration) -> anyhow::Result<()> {
        let mut rx = self.reached.subscribe();
        match tokio::time::timeout(timeout, rx.wait_for(|reached| *reached)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => anyhow::bail!("gate dropped"),
            Err(_) => {
                anyhow::bail!("timed out after {timeout:?} waiting for a stream to reach the gate")
            }
        }
    }

    /// Called by the server: mark reached and wait for the release.
    pub(crate) async fn pass(&self) {
        self.reached.send_replace(true);
        let mut rx = self.released.subscribe();
        // The sender lives in `self`, so this only returns once released.
        let _ = rx.wait_for(|released| *released).await;
    }
}
