//! `request_user_input` (docs/protocol.md §7.25): the model asks the user one to three short
//! questions; they go to the thread's clients as the `item/tool/requestUserInput` server
//! request, and the client's answers (`{"answers": {id: {"answers": [...]}}}`) come back to
//! the model as JSON. Offered once a client has chosen a collaboration mode. The turn waits
//! for the answer; an interrupt withdraws the request (clients get `serverRequest/resolved`)
//! and the call ends as aborted.

use serde::Deserialize;
use serde_json::{Value, json};
use weft_protocol::{
    ItemId, ToolRequestUserInputOption, ToolRequestUserInputParams, ToolRequestUserInputQuestion,
    ToolRequestUserInputResponse,
};

use super::approval;
use super::context::ToolTurn;
use super::tool::{Concurrency, Effects, FunctionTool};
use crate::events::{ServerRequestOutcome, ServerRequestParams};

/// The tool's name.
pub const REQUEST_USER_INPUT_TOOL: &str = "request_user_input";

/// `request_user_input`, offered once a client chose a collaboration mode. Exclusive.
pub(crate) fn request_user_input_tool() -> FunctionTool {
    FunctionTool {
        name: REQUEST_USER_INPUT_TOOL,
        spec: request_user_input_tool_spec,
        effects: Effects {
            mutates: false,
            concurrency: Concurrency::Exclusive,
        },
        run: |call_id, arguments, turn| Box::pin(request_user_input(call_id, arguments, turn)),
    }
}

/// At most this many questions per call.
const MAX_QUESTIONS: usize = 3;

/// The `request_user_input` function tool.
pub fn request_user_input_tool_spec() -> Value {
    json!({
        "type": "function",
        "name": REQUEST_USER_INPUT_TOOL,
        "description": "Ask the user one to three short questions and wait for the answers. \
    Use it for decisions only the user can make; each question offers two or three choices, \
    and the user may also type an answer of their own.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "description": "The questions, usually one and never more than three.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {
                                "type": "string",
                                "description": "Identifier of the question (snake_case); the answer is keyed by it."
                            },
                            "header": {
                                "type": "string",
                                "description": "A label of at most 12 characters shown above the question."
                            },
                            "question": {
                                "type": "string",
                                "description": "The question, in one sentence."
                            },
                            "options": {
                                "type": "array",
                                "description": "Two or three exclusive choices, the recommended one first. Do not add an \"Other\" choice: the client offers free text itself.",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": {
                                            "type": "string",
                                            "description": "The choice, in one to five words."
                                        },
                                        "description": {
                                            "type": "string",
                                            "description": "What choosing it means, in one short sentence."
                                        }
                                    },
                                    "required": ["label", "description"],
                                    "additionalProperties": false
                                }
                            }
                        },
                        "required": ["id", "header", "question", "options"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["questions"],
            "additionalProperties": false
        }
    })
}

#[derive(Debug, Deserialize)]
struct Args {
    questions: Vec<Question>,
}

#[derive(Debug, Deserialize)]
struct Question {
    id: String,
    header: String,
    question: String,
    #[serde(default)]
    options: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    label: String,
    description: String,
}

/// The questions of a call, as the server request carries them, or what is wrong with them.
fn questions(arguments: &str) -> Result<Vec<ToolRequestUserInputQuestion>, String> {
    let args: Args = serde_json::from_str(arguments)
        .map_err(|err| format!("failed to parse function arguments: {err}"))?;
    if args.questions.is_empty() {
        return Err("request_user_input needs at least one question".to_string());
    }
    if args.questions.len() > MAX_QUESTIONS {
        return Err(format!(
            "request_user_input takes at most {MAX_QUESTIONS} questions"
        ));
    }
    Ok(args
        .questions
        .into_iter()
        .map(|q| {
            let options: Vec<ToolRequestUserInputOption> = q
                .options
                .into_iter()
                .map(|c| ToolRequestUserInputOption {
                    label: c.label,
                    description: c.description,
                })
                .collect();
            ToolRequestUserInputQuestion {
                id: q.id,
                header: q.header,
                question: q.question,
                is_other: !options.is_empty(),
                is_secret: false,
                options: (!options.is_empty()).then_some(options),
            }
        })
        .collect())
}

/// What the model is told when the request ends without answers.
const NO_ANSWERS: &str =
    "request_user_input ended without answers; continue with your best judgment";

/// `request_user_input`.
async fn request_user_input(call_id: &str, arguments: &str, turn: &ToolTurn) -> String {
    let questions = match questions(arguments) {
        Ok(questions) => questions,
        Err(text) => return text,
    };
    let params = ToolRequestUserInputParams {
        thread_id: turn.thread_id.clone(),
        turn_id: turn.turn_id.clone(),
        item_id: ItemId::from(call_id.to_string()),
        is_blocking: true,
        questions,
        auto_resolution_ms: None,
    };
    match approval::ask(turn, ServerRequestParams::UserInput(params)).await {
        ServerRequestOutcome::Answered(value) => {
            match serde_json::from_value::<ToolRequestUserInputResponse>(value) {
                Ok(response) => {
                    serde_json::to_string(&response).unwrap_or_else(|_| NO_ANSWERS.to_string())
                }
                Err(err) => format!(
                    "request_user_input failed: the client's answer is not valid ({err}); continue with your best judgment"
                ),
            }
        }
        ServerRequestOutcome::Failed(reason) => {
            format!("request_user_input failed ({reason}); continue with your best judgment")
        }
        ServerRequestOutcome::Cancelled if turn.cancel.is_cancelled() => {
            "request_user_input was interrupted before the user answered".to_string()
        }
        ServerRequestOutcome::Cancelled => NO_ANSWERS.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_with_options_allow_free_text() {
        let qs = questions(
            r#"{"questions":[{"id":"db","header":"Database","question":"Which one?","options":[{"label":"Postgres (Recommended)","description":"Mature."},{"label":"SQLite","description":"Simple."}]}]}"#,
        )
        .unwrap();
        assert_eq!(qs.len(), 1);
        assert!(qs[0].is_other);
        assert_eq!(qs[0].options.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            serde_json::to_value(&qs[0]).unwrap()["options"][0]["label"],
            "Postgres (Recommended)"
        );
    }

    #[test]
    fn bad_calls_are_explained() {
        assert!(questions("{}").unwrap_err().starts_with("failed to parse"));
        assert_eq!(
            questions(r#"{"questions":[]}"#).unwrap_err(),
            "request_user_input needs at least one question"
        );
        let four = r#"{"questions":[{"id":"a","header":"a","question":"a"},{"id":"b","header":"b","question":"b"},{"id":"c","header":"c","question":"c"},{"id":"d","header":"d","question":"d"}]}"#;
        assert_eq!(
            questions(four).unwrap_err(),
            "request_user_input takes at most 3 questions"
        );
    }
}
