//! The one envelope classifier: what a JSON-RPC message is, read from its text in one pass.
//!
//! Only the envelope's members are looked at (`id`, `method`, `params`, `result`, `error`),
//! borrowed from the text; no tree of the message is built. What the message carries
//! (`params`, `result`, `error`) is kept as raw JSON text, checked by the same pass, so the
//! daemon builds a request's tree once, from its params, when it processes it
//! (docs/protocol.md §11.6).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{InvalidMessage, RequestId};

/// A JSON-RPC message read from its members alone (not by trial and error): `method` + `id` =
/// request, `method` without `id` = notification, `id` + `result` or `error` = response. An
/// `id` that is neither a string nor an int64 (e.g. `null`, a float) makes the message
/// invalid; such messages are logged and dropped without a reply.
#[derive(Debug, Clone)]
pub enum Envelope {
    /// A request.
    Request {
        /// The id, to echo back.
        id: RequestId,
        /// The method name.
        method: String,
        /// The `params` member as written (absent when the message has none).
        params: Option<Box<RawValue>>,
    },
    /// A notification.
    Notification {
        /// The method name.
        method: String,
    },
    /// A response (`result`) or an error response (`error`).
    Response {
        /// The id of the request it answers.
        id: RequestId,
        /// The `result` member as written.
        result: Option<Box<RawValue>>,
        /// The `error` member as written.
        error: Option<Box<RawValue>>,
    },
}

impl PartialEq for Envelope {
    fn eq(&self, other: &Self) -> bool {
        let raw = |a: &Option<Box<RawValue>>| a.as_ref().map(|raw| raw.get().to_owned());
        match (self, other) {
            (
                Envelope::Request { id, method, params },
                Envelope::Request {
                    id: id2,
                    method: method2,
                    params: params2,
                },
            ) => id == id2 && method == method2 && raw(params) == raw(params2),
            (Envelope::Notification { method }, Envelope::Notification { method: method2 }) => {
                method == method2
            }
            (
                Envelope::Response { id, result, error },
                Envelope::Response {
                    id: id2,
                    result: result2,
                    error: error2,
                },
            ) => id == id2 && raw(result) == raw(result2) && raw(error) == raw(error2),
            _ => false,
        }
    }
}

impl Eq for Envelope {}

impl Envelope {
    /// Classify one line or text frame.
    pub fn read(text: &str) -> Result<Envelope, InvalidMessage> {
        let members: Members<'_> =
            serde_json::from_str(text).map_err(|err| match err.classify() {
                serde_json::error::Category::Data => InvalidMessage::NotAMessage,
                _ => InvalidMessage::NotJson(err.to_string()),
            })?;
        if let Some(method) = members.method {
            let method: String =
                serde_json::from_str(method.get()).map_err(|_| InvalidMessage::NotAMessage)?;
            return Ok(match members.id {
                None => Envelope::Notification { method },
                Some(id) => Envelope::Request {
                    id: request_id(id)?,
                    method,
                    params: members.params.map(RawValue::to_owned),
                },
            });
        }
        match members.id {
            Some(id) if members.result.is_some() || members.error.is_some() => {
                Ok(Envelope::Response {
                    id: request_id(id)?,
                    result: members.result.map(RawValue::to_owned),
                    error: members.error.map(RawValue::to_owned),
                })
            }
            _ => Err(InvalidMessage::NotAMessage),
        }
    }

    /// The id of a message from the start of its text (`prefix`, e.g. what was kept of a
    /// message over the size limit), if an `id` member comes before the cut.
    pub fn probe_id(prefix: &[u8]) -> Option<RequestId> {
        let mut found = None;
        let mut deserializer = serde_json::Deserializer::from_slice(prefix);
        // The cut text ends the parse with an error; what was found before it stands.
        let _ = IdProbe(&mut found).deserialize(&mut deserializer);
        found
    }
}

/// The envelope members of a message: borrowed, so nothing of it is copied or built.
struct Members<'a> {
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    /// The last of a repeated member counts, as with a JSON object tree.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Members {
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let slot = match key.as_ref() {
                "id" => &mut members.id,
                "method" => &mut members.method,
                "params" => &mut members.params,
                "result" => &mut members.result,
                "error" => &mut members.error,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(members)
    }
}

/// A string or int64 id; anything else (`null`, a float, an object…) is not an id.
fn request_id(raw: &RawValue) -> Result<RequestId, InvalidMessage> {
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str(text)
            .map(RequestId::String)
            .map_err(|_| InvalidMessage::BadId)
    } else {
        text.parse::<i64>()
            .map(RequestId::Integer)
            .map_err(|_| InvalidMessage::BadId)
    }
}

struct IdProbe<'f>(&'f mut Option<RequestId>);

impl<'de> DeserializeSeed<'de> for IdProbe<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdProbe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "id" {
                let raw: &RawValue = map.next_value()?;
                *self.0 = request_id(raw).ok();
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Envelope, InvalidMessage> {
        Envelope::read(text)
    }

    #[test]
    fn classifies_envelopes() {
        assert!(matches!(
            read(r#"{"id":1,"method":"initialize","params":{}}"#),
            Ok(Envelope::Request { id: RequestId::Integer(1), params: Some(p), .. }) if p.get() == "{}"
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":"a","method":"x"}"#),
            Ok(Envelope::Request {
                id: RequestId::String(_),
                params: None,
                ..
            })
        ));
        assert!(matches!(
            read(r#"{"method":"initialized"}"#),
            Ok(Envelope::Notification { .. })
        ));
        assert!(matches!(
            read(r#"{"id":0,"result":{}}"#),
            Ok(Envelope::Response {
                result: Some(_),
                error: None,
                ..
            })
        ));
        assert!(matches!(
            read(r#"{"id":0,"error":{"code":1,"message":"no"}}"#),
            Ok(Envelope::Response {
                result: None,
                error: Some(_),
                ..
            })
        ));
        for (bad, why) in [
            (r#"{"id":null,"method":"x"}"#, InvalidMessage::BadId),
            (r#"{"id":1.5,"method":"x"}"#, InvalidMessage::BadId),
            (r#"{"id":{"a":1},"method":"x"}"#, InvalidMessage::BadId),
            ("[1,2]", InvalidMessage::NotAMessage),
            (r#"{"id":1}"#, InvalidMessage::NotAMessage),
            (r#"{"id":1,"method":5}"#, InvalidMessage::NotAMessage),
        ] {
            assert_eq!(read(bad).unwrap_err(), why, "{bad}");
        }
        assert!(matches!(read("{\"id\":"), Err(InvalidMessage::NotJson(_))));
        assert!(matches!(
            read(r#"{"id":1,"method":"x"} trailing"#),
            Err(InvalidMessage::NotJson(_))
        ));
    }

    #[test]
    fn members_are_read_as_a_json_object_tree_would_be() {
        // Escaped member names and repeated members.
        assert!(matches!(
            read(r#"{"\u0069d":3,"method":"x","params":[[[]]]}"#),
            Ok(Envelope::Request {
                id: RequestId::Integer(3),
                ..
            })
        ));
        assert!(matches!(
            read(r#"{"id":null,"id":4,"method":"x"}"#),
            Ok(Envelope::Request {
                id: RequestId::Integer(4),
                ..
            })
        ));
    }

    #[test]
    fn an_id_is_found_at_the_start_of_a_cut_message() {
        let cut = br#"{"jsonrpc":"2.0","id":"big","params":{"pad":"xxxxx"#;
        assert_eq!(
            Envelope::probe_id(cut),
            Some(RequestId::String("big".into()))
        );
        let late = br#"{"method":"x","params":{"pad":"xxxx"#;
        assert_eq!(Envelope::probe_id(late), None);
        assert_eq!(Envelope::probe_id(b"xxxx"), None);
    }
}
