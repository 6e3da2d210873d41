//! Small serde helpers shared by the wire types.

use serde::{Deserialize, Deserializer};

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
