//! End-to-end test package: the suite lives in `suite/`, helpers in `support/`.
