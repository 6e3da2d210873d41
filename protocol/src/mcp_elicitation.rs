//! `mcpServer/elicitation/request`: the server asks the client for input on behalf of an MCP
//! server (its `elicitation/create`), or for the approval of an MCP tool call. Its params, the
//! typed form schema (`requestedSchema`, the restricted JSON Schema of MCP's form elicitation)
//! and the client's answer.
//!
//! Weft builds these requests itself, so only the two MCP modes are typed: `form` and `url`.
//! The reference's hosted-product modes (`openai/form`, `openaiForm`, and the experimental
//! `openai/userVerification`) are left out.
//!
//! The params and the answer write every key, `null` when absent (docs/protocol.md §1.2). The
//! form schema types mirror MCP's own and leave absent optional keys out, as the reference
//! does; they refuse unknown keys, as the reference's schema does.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::ids::{ThreadId, TurnId};

/// Params of `mcpServer/elicitation/request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerElicitationRequestParams {
    /// The thread whose MCP connection asks.
    pub thread_id: ThreadId,
    /// The turn running when the request came, if the server could tell; `null` otherwise
    /// (MCP servers may ask outside any turn).
    #[serde(default)]
    pub turn_id: Option<TurnId>,
    /// The MCP server asking.
    pub server_name: String,
    /// The environment that registered the server; `null` for a server of the whole thread.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// The request itself, tagged by `mode`.
    #[serde(flatten)]
    pub request: McpServerElicitationRequest,
}

/// What is asked, by `mode`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum McpServerElicitationRequest {
    /// Fill in a form (an empty one for a tool-call approval).
    #[serde(rename_all = "camelCase")]
    Form {
        /// Opaque metadata (for a tool-call approval: `codex_approval_kind`, `tool_name`, …).
        #[serde(rename = "_meta", default)]
        meta: Option<Value>,
        /// What to show the user.
        message: String,
        /// The fields of the form.
        requested_schema: McpElicitationSchema,
    },
    /// Open a URL (out-of-band interaction such as a login).
    #[serde(rename_all = "camelCase")]
    Url {
        /// Opaque metadata.
        #[serde(rename = "_meta", default)]
        meta: Option<Value>,
        /// What to show the user.
        message: String,
        /// The URL to open.
        url: String,
        /// The id the MCP server gave this elicitation.
        elicitation_id: String,
    },
}

/// `"object"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpElicitationObjectType {
    /// `"object"`.
    Object,
}

/// `"string"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpElicitationStringType {
    /// `"string"`.
    String,
}

/// `"array"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpElicitationArrayType {
    /// `"array"`.
    Array,
}

/// `"boolean"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpElicitationBooleanType {
    /// `"boolean"`.
    Boolean,
}

/// `"number"` or `"integer"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpElicitationNumberType {
    /// Any number.
    Number,
    /// A whole number.
    Integer,
}

/// The `format` of a string field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum McpElicitationStringFormat {
    /// An e-mail address.
    Email,
    /// A URI.
    Uri,
    /// A date (`2026-01-31`).
    Date,
    /// A date and time (RFC 3339).
    DateTime,
}

/// The form of a `form` elicitation: a flat object of primitive fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpElicitationSchema {
    /// The JSON Schema dialect, when given.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema_uri: Option<String>,
    /// `"object"`.
    #[serde(rename = "type")]
    pub type_: McpElicitationObjectType,
    /// The fields by name.
    pub properties: BTreeMap<String, McpElicitationPrimitiveSchema>,
    /// The names of the fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl McpElicitationSchema {
    /// `{"type": "object", "properties": {}}`: a form without fields (a yes/no question).
    pub fn empty() -> Self {
        Self {
            schema_uri: None,
            type_: McpElicitationObjectType::Object,
            properties: BTreeMap::new(),
            required: None,
        }
    }
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum McpElicitationPrimitiveSchema {
    /// A choice among strings.
    Enum(McpElicitationEnumSchema),
    /// A string.
    String(McpElicitationStringSchema),
    /// A number.
    Number(McpElicitationNumberSchema),
    /// A boolean.
    Boolean(McpElicitationBooleanSchema),
}

/// Declares one kind of form field. Every primitive schema of MCP opens with the same members:
/// its `type` tag, a `title` and a `description` (left out when absent); the macro writes those
/// and takes the kind's own members after them. Each kind refuses unknown keys.
macro_rules! form_field_schema {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(#[$type_meta:meta])*
            pub type_: $type:ty,
            $($(#[$field_meta:meta])* pub $field:ident: $field_type:ty,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $name {
            $(#[$type_meta])*
            #[serde(rename = "type")]
            pub type_: $type,
            /// Label.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub title: Option<String>,
            /// Help text.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub description: Option<String>,
            $($(#[$field_meta])* pub $field: $field_type,)*
        }
    };
}

form_field_schema! {
    /// A string field.
    pub struct McpElicitationStringSchema {
        /// `"string"`.
        pub type_: McpElicitationStringType,
        /// Shortest accepted length.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_length: Option<u32>,
        /// Longest accepted length.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_length: Option<u32>,
        /// Expected format.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub format: Option<McpElicitationStringFormat>,
        /// Pre-filled value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<String>,
    }
}

form_field_schema! {
    /// A number field. Bounds and default keep the number as sent (`5` stays `5`, not `5.0`).
    pub struct McpElicitationNumberSchema {
        /// `"number"` or `"integer"`.
        pub type_: McpElicitationNumberType,
        /// Smallest accepted value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<f64>")]
        pub minimum: Option<Number>,
        /// Largest accepted value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<f64>")]
        pub maximum: Option<Number>,
        /// Pre-filled value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "Option<f64>")]
        pub default: Option<Number>,
    }
}

form_field_schema! {
    /// A boolean field.
    pub struct McpElicitationBooleanSchema {
        /// `"boolean"`.
        pub type_: McpElicitationBooleanType,
        /// Pre-filled value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<bool>,
    }
}

/// A choice field: pick one, pick several, or the older titled form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum McpElicitationEnumSchema {
    /// Pick one.
    SingleSelect(McpElicitationSingleSelectEnumSchema),
    /// Pick several.
    MultiSelect(McpElicitationMultiSelectEnumSchema),
    /// Pick one, with display names in `enumNames`.
    Legacy(McpElicitationLegacyTitledEnumSchema),
}

/// Pick one: plain values, or values with titles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum McpElicitationSingleSelectEnumSchema {
    /// Values shown as they are.
    Untitled(McpElicitationUntitledSingleSelectEnumSchema),
    /// Values with titles.
    Titled(McpElicitationTitledSingleSelectEnumSchema),
}

/// Pick several: plain values, or values with titles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum McpElicitationMultiSelectEnumSchema {
    /// Values shown as they are.
    Untitled(McpElicitationUntitledMultiSelectEnumSchema),
    /// Values with titles.
    Titled(McpElicitationTitledMultiSelectEnumSchema),
}

/// A value and its title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpElicitationConstOption {
    /// The value.
    #[serde(rename = "const")]
    pub const_: String,
    /// Its title.
    pub title: String,
}

form_field_schema! {
    /// Pick one of plain values.
    pub struct McpElicitationUntitledSingleSelectEnumSchema {
        /// `"string"`.
        pub type_: McpElicitationStringType,
        /// The values.
        #[serde(rename = "enum")]
        pub enum_: Vec<String>,
        /// Pre-selected value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<String>,
    }
}

form_field_schema! {
    /// Pick one of titled values.
    pub struct McpElicitationTitledSingleSelectEnumSchema {
        /// `"string"`.
        pub type_: McpElicitationStringType,
        /// The values with their titles.
        #[serde(rename = "oneOf")]
        pub one_of: Vec<McpElicitationConstOption>,
        /// Pre-selected value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<String>,
    }
}

/// The `items` of a multi-select of plain values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpElicitationUntitledEnumItems {
    /// `"string"`.
    #[serde(rename = "type")]
    pub type_: McpElicitationStringType,
    /// The values.
    #[serde(rename = "enum")]
    pub enum_: Vec<String>,
}

/// The `items` of a multi-select of titled values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpElicitationTitledEnumItems {
    /// The values with their titles.
    #[serde(rename = "anyOf")]
    pub any_of: Vec<McpElicitationConstOption>,
}

form_field_schema! {
    /// Pick several of plain values.
    pub struct McpElicitationUntitledMultiSelectEnumSchema {
        /// `"array"`.
        pub type_: McpElicitationArrayType,
        /// Fewest values to pick.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_items: Option<u64>,
        /// Most values to pick.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_items: Option<u64>,
        /// The values.
        pub items: McpElicitationUntitledEnumItems,
        /// Pre-selected values.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<Vec<String>>,
    }
}

form_field_schema! {
    /// Pick several of titled values.
    pub struct McpElicitationTitledMultiSelectEnumSchema {
        /// `"array"`.
        pub type_: McpElicitationArrayType,
        /// Fewest values to pick.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_items: Option<u64>,
        /// Most values to pick.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_items: Option<u64>,
        /// The values with their titles.
        pub items: McpElicitationTitledEnumItems,
        /// Pre-selected values.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<Vec<String>>,
    }
}

form_field_schema! {
    /// Pick one, with display names in a parallel `enumNames` list (the older form).
    pub struct McpElicitationLegacyTitledEnumSchema {
        /// `"string"`.
        pub type_: McpElicitationStringType,
        /// The values.
        #[serde(rename = "enum")]
        pub enum_: Vec<String>,
        /// Display names, one per value.
        #[serde(rename = "enumNames", default, skip_serializing_if = "Option::is_none")]
        pub enum_names: Option<Vec<String>>,
        /// Pre-selected value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub default: Option<String>,
    }
}

/// The client's answer to an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerElicitationAction {
    /// Go ahead (with `content` for a form with fields).
    Accept,
    /// Refused; for a tool call, the call fails and the turn goes on.
    Decline,
    /// Dismissed without an answer; for a tool call, the call fails and the turn goes on.
    Cancel,
}

/// Result of `mcpServer/elicitation/request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerElicitationRequestResponse {
    /// The answer.
    pub action: McpServerElicitationAction,
    /// The filled-in form, with `accept`; `null` otherwise.
    #[serde(default)]
    pub content: Option<Value>,
    /// Client metadata for the answer.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field(value: Value) -> McpElicitationPrimitiveSchema {
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"))
    }

    #[test]
    fn each_field_kind_decodes_to_its_own_shape_and_back() {
        let cases = [
            json!({"type": "string", "title": "Name", "minLength": 1, "format": "email"}),
            json!({"type": "integer", "minimum": 1, "maximum": 10, "default": 5}),
            json!({"type": "number", "maximum": 2.5}),
            json!({"type": "boolean", "default": true}),
            json!({"type": "string", "enum": ["a", "b"], "default": "a"}),
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
            json!({"type": "string", "enum": ["a"], "enumNames": ["A"]}),
            json!({"type": "array", "items": {"type": "string", "enum": ["x", "y"]},
                "minItems": 1}),
            json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]},
                "default": ["x"]}),
        ];
        for case in cases {
            assert_eq!(serde_json::to_value(field(case.clone())).unwrap(), case);
        }
        assert!(matches!(
            field(json!({"type": "string", "enum": ["a"], "enumNames": ["A"]})),
            McpElicitationPrimitiveSchema::Enum(McpElicitationEnumSchema::Legacy(_))
        ));
        assert!(matches!(
            field(json!({"type": "string"})),
            McpElicitationPrimitiveSchema::String(_)
        ));
        assert!(
            serde_json::from_value::<McpElicitationPrimitiveSchema>(
                json!({"type": "string", "pattern": "x"})
            )
            .is_err()
        );
    }

    #[test]
    fn form_request_flattens_its_mode() {
        let params = McpServerElicitationRequestParams {
            thread_id: "t".into(),
            turn_id: None,
            server_name: "anchor".into(),
            environment_id: None,
            request: McpServerElicitationRequest::Form {
                meta: None,
                message: "Allow?".into(),
                requested_schema: McpElicitationSchema::empty(),
            },
        };
        let value = serde_json::to_value(&params).unwrap();
        assert_eq!(
            value,
            json!({"threadId": "t", "turnId": null, "serverName": "anchor",
                "environmentId": null, "mode": "form", "_meta": null, "message": "Allow?",
                "requestedSchema": {"type": "object", "properties": {}}})
        );
        let back: McpServerElicitationRequestParams = serde_json::from_value(value).unwrap();
        assert_eq!(back, params);
    }

    #[test]
    fn url_request_carries_its_elicitation_id() {
        let value = json!({"threadId": "t", "turnId": "u", "serverName": "s",
            "environmentId": "local", "mode": "url", "_meta": null, "message": "Log in",
            "url": "https://example.com/login", "elicitationId": "e1"});
        let params: McpServerElicitationRequestParams =
            serde_json::from_value(value.clone()).unwrap();
        assert!(matches!(
            &params.request,
            McpServerElicitationRequest::Url { elicitation_id, .. } if elicitation_id == "e1"
        ));
        assert_eq!(serde_json::to_value(&params).unwrap(), value);
    }

    #[test]
    fn hosted_modes_are_not_typed() {
        let err = serde_json::from_value::<McpServerElicitationRequestParams>(json!({
            "threadId": "t", "serverName": "s", "mode": "openai/form", "message": "m",
            "requestedSchema": {}}))
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown variant `openai/form`"), "{err}");
    }

    #[test]
    fn answers_decode_with_or_without_content() {
        let answer: McpServerElicitationRequestResponse =
            serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert_eq!(answer.action, McpServerElicitationAction::Decline);
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"action": "decline", "content": null, "_meta": null})
        );
        let answer: McpServerElicitationRequestResponse =
            serde_json::from_value(json!({"action": "accept", "content": {"name": "x"}})).unwrap();
        assert_eq!(answer.content, Some(json!({"name": "x"})));
        assert!(
            serde_json::from_value::<McpServerElicitationRequestResponse>(
                json!({"action": "maybe"})
            )
            .is_err()
        );
    }
}
