//! The HTTP side: one fallback handler that records the request and plays the next script.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::serve::ListenerExt;
use futures::Stream;
use serde_json::{Value, json};

use crate::script::{ScriptBody, Step, WireApi};
use crate::{RecordedRequest, Shared};

pub(crate) async fn spawn(
    shared: Arc<Shared>,
) -> anyhow::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    // Small SSE frames separated by delays must not wait for Nagle.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let app = Router::new().fallback(handle).with_state(shared);
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((addr, server))
}

async fn handle(
    AxumState(shared): AxumState<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = RecordedRequest {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_string(), value)
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw_body: body,
    };
    let path = request.path.clone();
    let api = if method != Method::POST {
        None
    } else if path.ends_with(WireApi::Responses.path_suffix()) {
        Some(WireApi::Responses)
    } else if path.ends_with(WireApi::Chat.path_suffix()) {
        Some(WireApi::Chat)
    } else {
        None
    };
    let Some(api) = api else {
        let models = shared.update(|state| {
            state.all_requests.push(request);
            state.models.clone()
        });
        if method == Method::GET && path.ends_with("/models") {
            return models_response(&models);
        }
        return text(
            StatusCode::NOT_FOUND,
            format!("weft-mock-model: no route for {method} {path}"),
        );
    };
    let pairing = request.check_tool_pairing();
    let messages = request.messages().to_vec();
    // A request the real API would reject does not consume a script.
    let script = shared.update(|state| {
        state.all_requests.push(request.clone());
        if let Some(at) = state.matched.iter().position(|s| (s.matches)(&request)) {
            state.requests.push(request);
            return Ok(Some(state.matched.remove(at).script));
        }
        if let Some(standing) = state.standing.iter().find(|s| (s.matches)(&request)) {
            return Ok(Some(standing.script.clone()));
        }
        state.requests.push(request);
        if api == WireApi::Chat
            && let Some(mode) = state.strict_alternation
            && let Err(problem) = crate::alternation::check(&messages, mode)
        {
            return Err(Refusal::Template(problem));
        }
        match &pairing {
            Err(problem) if state.check_tool_pairing => Err(Refusal::Pairing(problem.clone())),
            _ => Ok(state.scripts.pop_front()),
        }
    });
    let script = match script {
        Ok(Some(script)) => script,
        Ok(None) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("weft-mock-model: no scripted response left for {method} {path}"),
            );
        }
        Err(Refusal::Pairing(problem)) => {
            let body = json!({ "error": {
                "message": format!("weft-mock-model: tool call pairing is broken: {problem}"),
                "type": "invalid_request_error", "code": null, "param": "input" } });
            return text(StatusCode::BAD_REQUEST, body.to_string());
        }
        Err(Refusal::Template(problem)) => {
            // llama.cpp's answer when the chat template raises.
            let body = json!({ "error": {
                "code": 400, "message": problem, "type": "invalid_request_error" } });
            return text(StatusCode::BAD_REQUEST, body.to_string());
        }
    };
    if let Some(expected) = script.api()
        && expected != api
    {
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "weft-mock-model: the next script is for {expected:?} but the request was {method} {path}"
            ),
        );
    }
    let mut response = match script.body {
        ScriptBody::Status { status, body } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            text(status, body)
        }
        ScriptBody::Stream { steps, .. } => {
            let mut response = Response::new(Body::from_stream(play(shared, steps)));
            let headers = response.headers_mut();
            headers.insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert("cache-control", HeaderValue::from_static("no-cache"));
            response
        }
    };
    for (name, value) in script.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

/// Why a model request is refused before a script is played.
enum Refusal {
    /// Tool calls and outputs do not pair up.
    Pairing(String),
    /// The strict chat template's roles are broken.
    Template(String),
}

/// A response with `body`, typed as JSON when it parses as JSON.
fn text(status: StatusCode, body: String) -> Response {
    let content_type = if serde_json::from_str::<Value>(&body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static(content_type));
    response
}

fn models_response(models: &[String]) -> Response {
    let data: Vec<Value> = models
        .iter()
        .map(|id| json!({ "id": id, "object": "model", "created": 0, "owned_by": "weft-mock" }))
        .collect();
    text(
        StatusCode::OK,
        json!({ "object": "list", "data": data }).to_string(),
    )
}

/// Notes on drop whether the stream was played to its end; a stream dropped before that was
/// closed by the client.
struct StreamGuard {
    shared: Arc<Shared>,
    finished: bool,
}

impl StreamGuard {
    fn mark_finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let finished = self.finished;
        self.shared.update(|state| {
            if finished {
                state.finished_streams += 1;
            } else {
                state.disconnects += 1;
            }
        });
    }
}

/// Play the steps as a body stream.
fn play(
    shared: Arc<Shared>,
    steps: Vec<Step>,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let shutdown = shared.shutdown.subscribe();
    let guard = StreamGuard {
        shared,
        finished: false,
    };
    let state = (steps.into_iter(), guard);
    futures::stream::unfold(state, move |(mut steps, mut guard)| {
        let mut shutdown = shutdown.clone();
        async move {
            loop {
                let Some(step) = steps.next() else {
                    guard.mark_finished();
                    return None;
                };
                match step {
                    Step::Bytes(bytes) => return Some((Ok(bytes), (steps, guard))),
                    Step::Delay(delay) => tokio::time::sleep(delay).await,
                    Step::Gate(gate) => {
                        tokio::select! {
                            () = gate.pass() => {}
                            _ = shutdown.wait_for(|stop| *stop) => return cut(guard),
                        }
                    }
                    Step::Stall => {
                        let _ = shutdown.wait_for(|stop| *stop).await;
                        return cut(guard);
                    }
                    Step::Cut => {
                        // Return Pending once so hyper flushes what was sent so far: the
                        // client must see a started body that breaks, not a missing response.
                        tokio::task::yield_now().await;
                        return cut(guard);
                    }
                    Step::Close => {
                        guard.mark_finished();
                        return None;
                    }
                }
            }
        }
    })
}

/// The state of a playing stream and what one step of it yields.
type PlayState = (std::vec::IntoIter<Step>, StreamGuard);
type PlayItem = Option<(Result<Bytes, std::io::Error>, PlayState)>;

/// End the stream with an error, which makes hyper abort the connection.
fn cut(mut guard: StreamGuard) -> PlayItem {
    guard.mark_finished();
    Some((
        Err(std::io::Error::other(
            "weft-mock-model: connection cut by script",
        )),
        (Vec::new().into_iter(), guard),
    ))
}
