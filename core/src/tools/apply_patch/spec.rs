//! The tool definitions offered to the model (docs/architecture.md §7.2, §8.3).

use serde::Deserialize;
use serde_json::{Value, json};

/// The tool's name in both variants.
pub const TOOL_NAME: &str = "apply_patch";

/// The Lark grammar of the freeform variant (`format.definition`).
pub const LARK_GRAMMAR: &str = r#"start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"#;

/// Description of the freeform (grammar) variant.
pub const FREEFORM_DESCRIPTION: &str = "Edit files by sending a patch in the apply_patch \
format. This is a FREEFORM tool: send the raw patch text itself, not JSON.";

/// Description of the function (JSON) variant, with the format instructions.
pub const FUNCTION_DESCRIPTION: &str = r#"Edit files with a patch. Put the whole patch in the `input` argument.

The patch is a small, line-number-free diff format wrapped in an envelope:

*** Begin Patch
[one or more file operations]
*** End Patch

Each file operation starts with one of three headers:

*** Add File: <path>      create a file; every following line starts with `+` and is a line of the new file
*** Delete File: <path>   delete a file; nothing follows
*** Update File: <path>   change a file in place; may be followed directly by `*** Move to: <new path>` to rename it

An update is made of one or more chunks. A chunk starts with `@@`, optionally followed by one line copied from the file (such as a class or function signature) that precedes the change and tells where it is: `@@ def handler(request):`. Then come the chunk's lines, each starting with one character:

` ` (a space)  an unchanged context line
`-`            a line to remove
`+`            a line to add

Give about three lines of context above and below each change, and no more context than that. If three lines are not enough to pick a unique place, start the chunk with an `@@` line naming the enclosing class or function. Chunks must appear in the order of the file. End a chunk that touches the very end of the file with `*** End of File`.

Example:

*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+First entry.
*** Update File: src/server.py
*** Move to: src/app.py
@@ def handler(request):
     user = load_user(request)
-    return render(user)
+    if user is None:
+        return not_found()
+    return render(user)
*** Delete File: src/legacy.py
*** End Patch

Rules: paths are relative to the working directory (never absolute); every line inside a file operation carries its prefix character, including empty lines (`+` alone adds an empty line); the patch is applied only if every chunk matches, otherwise nothing is changed."#;

/// The function variant (Responses API function tool with its JSON parameter schema).
pub fn function_tool_spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": FUNCTION_DESCRIPTION,
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "input": {
                    "type": "string",
                    "description": "The complete patch, from `*** Begin Patch` to `*** End Patch`."
                }
            },
            "required": ["input"],
            "additionalProperties": false
        }
    })
}

/// The freeform variant (custom tool constrained by a Lark grammar).
pub fn freeform_tool_spec() -> Value {
    json!({
        "type": "custom",
        "name": TOOL_NAME,
        "description": FREEFORM_DESCRIPTION,
        "format": {
            "type": "grammar",
            "syntax": "lark",
            "definition": LARK_GRAMMAR
        }
    })
}

/// Arguments of the function variant.
#[derive(Debug, Clone, Deserialize)]
pub struct ApplyPatchArgs {
    /// The patch text.
    pub input: String,
}

/// Extracts the patch text from the function variant's JSON arguments. The caller reports
/// an error as `failed to parse function arguments: <error>` (docs/architecture.md §8.1).
pub fn patch_from_function_arguments(arguments: &str) -> Result<String, serde_json::Error> {
    serde_json::from_str::<ApplyPatchArgs>(arguments).map(|a| a.input)
}
