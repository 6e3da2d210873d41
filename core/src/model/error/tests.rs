use super::*;
use reqwest::header::HeaderValue;
use serde_json::json;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).unwrap());
    }
    map
}

#[test]
fn backoff_doubles_with_jitter() {
    for (attempt, base) in [(1, 200.0), (2, 400.0), (3, 800.0), (5, 3200.0)] {
        let ms = backoff(attempt).as_secs_f64() * 1000.0;
        assert!(
            ms >= base * 0.9 - 1.0 && ms < base * 1.1 + 1.0,
            "{attempt}: {ms}"
        );
    }
    assert_eq!(backoff(100), MAX_BACKOFF);
}

#[test]
fn retry_after_forms() {
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37
    assert_eq!(
        retry_after_from_headers(&headers(&[("retry-after", "7")]), now),
        Some(Duration::from_secs(7))
    );
    assert_eq!(
        retry_after_from_headers(&headers(&[("retry-after", "1.5")]), now),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(
        retry_after_from_headers(
            &headers(&[("retry-after-ms", "250"), ("retry-after", "9")]),
            now
        ),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        retry_after_from_headers(
            &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:47 GMT")]),
            now
        ),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        retry_after_from_headers(&headers(&[("retry-after", "3600")]), now),
        Some(MAX_RETRY_AFTER)
    );
    assert_eq!(
        retry_after_from_headers(&headers(&[("retry-after", "soon")]), now),
        None
    );
    assert_eq!(retry_after_from_headers(&HeaderMap::new(), now), None);
}

#[test]
fn try_again_in_messages() {
    let d = |m: &str| parse_try_again_in(m);
    assert_eq!(
        d("Rate limit reached for gpt-5. Please try again in 11.054s. Visit …"),
        Some(Duration::from_secs_f64(11.054))
    );
    assert_eq!(
        d("please try again in 28ms."),
        Some(Duration::from_millis(28))
    );
    assert_eq!(d("Try again in 35 seconds."), Some(Duration::from_secs(35)));
    assert_eq!(d("try again later"), None);
}

#[test]
fn status_classification() {
    let none = HeaderMap::new();
    let body = |code: &str, message: &str| {
        json!({"error": {"code": code, "message": message, "type": "x"}}).to_string()
    };
    let classify = |status: u16, body: String| {
        ModelError::from_status(StatusCode::from_u16(status).unwrap(), &none, body)
    };
    let err = classify(400, body("context_length_exceeded", "too long"));
    assert!(matches!(
        err,
        ModelError::ContextWindowExceeded {
            status: Some(400),
            ..
        }
    ));
    assert!(!err.is_retryable());
    let err = classify(400, "the request exceeds the available context size".into());
    assert!(
        matches!(err, ModelError::ContextWindowExceeded { .. }),
        "{err:?}"
    );
    assert!(matches!(
        classify(400, body("", "bad")),
        ModelError::InvalidRequest { .. }
    ));
    assert!(matches!(
        classify(401, body("", "no")),
        ModelError::Unauthorized { status: 401, .. }
    ));
    let err = classify(500, body("", "boom"));
    assert!(err.is_retryable() && err.is_transport_retryable());
    assert_eq!(err.http_status(), Some(500));
    let err = classify(503, body("server_is_overloaded", "busy"));
    assert!(matches!(err, ModelError::ServerOverloaded { .. }) && !err.is_retryable());
    let err = classify(404, "not here".into());
    assert!(
        matches!(&err, ModelError::UnexpectedStatus { status: 404, message, .. } if message == "not here")
    );
    assert!(err.is_retryable() && !err.is_transport_retryable());
    let err = classify(429, body("insufficient_quota", "pay"));
    assert!(matches!(err, ModelError::QuotaExceeded { .. }));
    let err = ModelError::from_status(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("retry-after", "2")]),
        body("rate_limit_exceeded", "slow"),
    );
    assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
    assert!(err.is_transport_retryable() && !err.is_retryable());
}

#[test]
fn failed_event_classification() {
    let classify = |code: &str, message: &str| {
        ModelError::from_error_object(Some(&json!({"code": code, "message": message})))
    };
    assert!(matches!(
        classify("context_length_exceeded", "x"),
        ModelError::ContextWindowExceeded { status: None, .. }
    ));
    assert!(matches!(
        classify("insufficient_quota", "x"),
        ModelError::QuotaExceeded { .. }
    ));
    assert!(matches!(
        classify("invalid_prompt", "x"),
        ModelError::InvalidRequest { .. }
    ));
    assert!(matches!(
        classify("slow_down", "x"),
        ModelError::ServerOverloaded { .. }
    ));
    let err = classify("rate_limit_exceeded", "Please try again in 1.5s.");
    assert!(err.is_retryable());
    assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
    let err = classify("server_error", "oops");
    assert!(err.is_retryable() && err.retry_after().is_none());
    assert!(
        !ModelError::Incomplete {
            reason: "max_output_tokens".into()
        }
        .is_retryable()
    );
    assert!(
        ModelError::Incomplete {
            reason: "interrupted".into()
        }
        .is_retryable()
    );
}
