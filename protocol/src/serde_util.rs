//! Small serde helpers shared by the wire types.

use serde::{Deserialize, Deserializer, Serialize};

/// Deserializes `null` like an omitted key: the field's `Default`.
///
/// Used on params fields that the reference schema types as plain (non-nullable) values with a
/// default, so that clients sending `null` are treated like clients omitting the key.
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A key that may be omitted (`None`), `null` (`Some(None)`) or set (`Some(Some(v))`): use
/// with `#[serde(default, deserialize_with = "crate::serde_util::present_or_null")]`.
pub(crate) fn present_or_null<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The wire name of a unit enum variant (or any value that serialises to a JSON string):
/// `wire_name(&SandboxMode::WorkspaceWrite) == Some("workspace-write")`. `None` for values that
/// serialise to anything else.
pub fn wire_name<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => Some(name),
        _ => None,
    }
}

/// Declares camelCase wire structs with the same members (the same docs too), each with its
/// own doc: `same_members! { { /// The thread. pub thread_id: ThreadId, } /// Doc. Name; … }`.
macro_rules! same_members {
    ($members:tt $($(#[$meta:meta])* $name:ident;)*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
            #[serde(rename_all = "camelCase")]
            pub struct $name $members
        )*
    };
}
pub(crate) use same_members;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_name_gives_the_serialised_string() {
        assert_eq!(
            wire_name(&crate::ImageDetail::High).as_deref(),
            Some("high")
        );
        assert_eq!(wire_name(&42), None);
    }
}
