//! A notification as one wire line: `{"jsonrpc":"2.0","method":M,"params":P,"emittedAtMs":N}`,
//! written into one buffer, the params serialized straight into it (no copy of them, and
//! room for a streamed delta up front: this is the per-delta path, bench/README.md).

use super::ServerNotification;

/// Bytes a line is given up front: room for a streamed delta's (its ids, a few words of text
/// and the envelope) without growing.
const LINE_CAPACITY: usize = 320;

impl ServerNotification {
    /// One complete wire message, without a trailing newline.
    pub fn to_line(&self, emitted_at_ms: i64) -> serde_json::Result<String> {
        let line = self.line_bytes(emitted_at_ms)?;
        // serde_json writes UTF-8 only, and the rest is ASCII.
        String::from_utf8(line)
            .map_err(|err| <serde_json::Error as serde::ser::Error>::custom(err.to_string()))
    }

    /// [`to_line`](Self::to_line) as bytes, what a transport sends.
    pub fn line_bytes(&self, emitted_at_ms: i64) -> serde_json::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(LINE_CAPACITY);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","method":""#);
        // Method names are plain ASCII without characters that need escaping.
        out.extend_from_slice(self.method().as_bytes());
        out.extend_from_slice(br#"","params":"#);
        self.write_params(&mut out)?;
        out.extend_from_slice(br#","emittedAtMs":"#);
        // serde_json's integer writer, not `write!`: the formatting machinery was 2.6 % of a
        // streamed delta's instructions (callgrind).
        serde_json::to_writer(&mut out, &emitted_at_ms)?;
        out.push(b'}');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::*;

    /// The params object alone, as the line carries it.
    fn params(n: &ServerNotification) -> String {
        let mut out = Vec::new();
        n.write_params(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn to_line_assembles_the_envelope() {
        let n = ServerNotification::from(ThreadClosedNotification {
            thread_id: "t1".into(),
        });
        assert_eq!(n.method(), "thread/closed");
        assert_eq!(params(&n), r#"{"threadId":"t1"}"#);
        assert_eq!(
            n.to_line(1_795_979_147_618).unwrap(),
            r#"{"jsonrpc":"2.0","method":"thread/closed","params":{"threadId":"t1"},"emittedAtMs":1795979147618}"#
        );
        let parsed: Value = serde_json::from_str(&n.to_line(-1).unwrap()).unwrap();
        assert_eq!(parsed["emittedAtMs"], json!(-1));
        // The enum's own serialization is `{method, params}`.
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"method": "thread/closed", "params": {"threadId": "t1"}})
        );
        assert_eq!(
            <ThreadClosedNotification as NotificationParams>::METHOD,
            "thread/closed"
        );
    }

    #[test]
    fn nullable_keys_are_written() {
        let n = ServerNotification::from(WarningNotification {
            thread_id: None,
            message: "m".into(),
        });
        assert_eq!(params(&n), r#"{"threadId":null,"message":"m"}"#);
    }
}
