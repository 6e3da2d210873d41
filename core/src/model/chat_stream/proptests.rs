//! Property tests of the Chat Completions decoder: tool-call argument deltas split and
//! interleaved any way assemble to the same calls (also through the SSE parser cut at any
//! byte), and any bytes or chunk-shaped JSON never panic and never make the decoder hold or
//! emit more than a small multiple of what it was fed.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::model::sse::SseParser;
use crate::model::test_support::done_items;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One tool call as the model meant it.
#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// How a server numbers the fragments of its calls.
#[derive(Debug, Clone, Copy)]
enum Numbering {
    /// OpenAI: every fragment carries its call's `index`, the first one the `id` and `name`;
    /// calls may interleave.
    ByIndex,
    /// Servers that put every call at index 0, one call after the other: the first fragment
    /// carries a new `id`.
    AllAtZero,
}

fn calls() -> impl Strategy<Value = Vec<Call>> {
    proptest::collection::vec(("[a-z_]{1,12}", any::<String>()), 1..5).prop_map(|calls| {
        calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| Call {
                id: format!("call_{i}"),
                name,
                arguments,
            })
            .collect()
    })
}

/// Split `text` at (char-boundary-adjusted) `cuts`.
fn fragments(text: &str, raw_cuts: &[usize]) -> Vec<String> {
    let mut cuts: Vec<usize> = raw_cuts
        .iter()
        .map(|c| {
            let mut at = c % (text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    cuts.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        out.push(text[start..cut].to_owned());
        start = cut;
    }
    out.push(text[start..].to_owned());
    out
}

/// The chunks a server would send: fragments of `calls` in `order` (call numbers; the k-th
/// occurrence of call c is its k-th fragment), `per_chunk` tool-call deltas per chunk, then
/// a finish chunk.
fn chat_chunks(
    calls: &[Call],
    split: &[Vec<String>],
    order: &[usize],
    per_chunk: usize,
    numbering: Numbering,
) -> Vec<Value> {
    let mut next = vec![0usize; calls.len()];
    let mut deltas = Vec::new();
    for &c in order {
        let k = next[c];
        next[c] += 1;
        let mut delta = serde_json::Map::new();
        let index = match numbering {
            Numbering::ByIndex => c,
            Numbering::AllAtZero => 0,
        };
        delta.insert("index".into(), json!(index));
        let mut function = serde_json::Map::new();
        if k == 0 {
            delta.insert("id".into(), json!(calls[c].id));
            delta.insert("type".into(), json!("function"));
            function.insert("name".into(), json!(calls[c].name));
        }
        function.insert("arguments".into(), json!(split[c][k]));
        delta.insert("function".into(), Value::Object(function));
        deltas.push(Value::Object(delta));
    }
    let mut chunks: Vec<Value> = deltas
        .chunks(per_chunk.max(1))
        .map(|group| {
            json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"tool_calls": group}, "finish_reason": null}]})
        })
        .collect();
    chunks.push(json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    chunks
}

/// The fragment order: each call's fragments in order, calls interleaved by `shuffled`
/// (ByIndex) or one after the other (AllAtZero).
fn order(split: &[Vec<String>], shuffled: &[usize], numbering: Numbering) -> Vec<usize> {
    let sequential: Vec<usize> = split
        .iter()
        .enumerate()
        .flat_map(|(c, frags)| std::iter::repeat_n(c, frags.len()))
        .collect();
    match numbering {
        Numbering::AllAtZero => sequential,
        Numbering::ByIndex => {
            // Interleave: sort the slots by a random key, keeping each call's own order by
            // handing out its fragments in occurrence order (see `chat_chunks`).
            let mut keyed: Vec<(usize, usize)> = sequential
                .iter()
                .enumerate()
                .map(|(i, &c)| (shuffled.get(i).copied().unwrap_or(i), c))
                .collect();
            keyed.sort_by_key(|(key, _)| *key);
            keyed.into_iter().map(|(_, c)| c).collect()
        }
    }
}

fn expected(calls: &[Call], order: &[usize]) -> Vec<ResponseItem> {
    let mut first_seen: Vec<usize> = Vec::new();
    for &c in order {
        if !first_seen.contains(&c) {
            first_seen.push(c);
        }
    }
    first_seen
        .into_iter()
        .map(|c| {
            let call = &calls[c];
            ResponseItem::FunctionCall {
                id: None,
                name: call.name.clone(),
                namespace: None,
                arguments: if call.arguments.trim().is_empty() {
                    "{}".to_owned()
                } else {
                    call.arguments.clone()
                },
                call_id: call.id.clone(),
            }
        })
        .collect()
}

fn decode_chunks(chunks: &[Value]) -> Events {
    let mut decoder = ChatDecoder::default();
    let mut out = Events::new();
    for chunk in chunks {
        decoder.data(chunk.to_string().as_bytes(), &mut out);
    }
    decoder.data(b"[DONE]", &mut out);
    out
}

/// The same chunks as an SSE body cut at `raw_cuts`, through [`SseParser`].
fn decode_sse(chunks: &[Value], raw_cuts: &[usize]) -> Events {
    let mut body = Vec::new();
    for chunk in chunks {
        body.extend_from_slice(format!("data: {chunk}\n\n").as_bytes());
    }
    body.extend_from_slice(b"data: [DONE]\n\n");
    let mut cuts: Vec<usize> = raw_cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    let mut parser = SseParser::default();
    let mut decoder = ChatDecoder::default();
    let mut out = Events::new();
    let mut start = 0;
    let mut stopped = false;
    for end in cuts.into_iter().chain([body.len()]) {
        parser.push(&body[start..end]);
        start = end;
        while let Some(data) = parser.next_event() {
            if !stopped && decoder.data(data, &mut out) == Flow::Stop {
                stopped = true;
            }
        }
    }
    if !stopped {
        decoder.end(&mut out);
    }
    out
}

/// Model-provided bytes an event carries (texts, names, arguments, ids taken from the input;
/// generated item ids are not counted, see [`event_bound`]).
fn event_bytes(event: &Result<ResponseEvent, ModelError>) -> usize {
    match event {
        Ok(ResponseEvent::OutputTextDelta { delta, .. })
        | Ok(ResponseEvent::ReasoningContentDelta { delta, .. })
        | Ok(ResponseEvent::ReasoningSummaryDelta { delta, .. }) => delta.len(),
        Ok(ResponseEvent::OutputItemAdded(item)) | Ok(ResponseEvent::OutputItemDone(item)) => {
            item_bytes(item)
        }
        Ok(ResponseEvent::Completed { response_id, .. }) => response_id.len(),
        Ok(_) => 0,
        Err(err) => err.to_string().len(),
    }
}

fn item_bytes(item: &ResponseItem) -> usize {
    match item {
        ResponseItem::Message { content, .. } => content
            .iter()
            .map(|c| match c {
                ContentItem::OutputText { text } => text.len(),
                other => format!("{other:?}").len(),
            })
            .sum(),
        ResponseItem::Reasoning { content, .. } => content
            .iter()
            .flatten()
            .map(
                |(ReasoningContent::ReasoningText { text } | ReasoningContent::Text { text })| {
                    text.len()
                },
            )
            .sum(),
        ResponseItem::FunctionCall {
            name,
            arguments,
            call_id,
            ..
        } => name.len() + arguments.len() + call_id.len(),
        other => format!("{other:?}").len(),
    }
}

/// Bytes the decoder itself holds between chunks.
fn state_bytes(decoder: &ChatDecoder) -> usize {
    decoder.response_id.len()
        + decoder.message.as_ref().map_or(0, |m| m.text.len())
        + decoder.reasoning.as_ref().map_or(0, |r| r.text.len())
        + decoder
            .calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len() + c.id.as_ref().map_or(0, String::len))
            .sum::<usize>()
}

/// Feed `chunks` (stopping at [`Flow::Stop`]) and check the decoder's state and output after
/// each against the bytes fed so far: text is held at most three times (the delta, the item
/// being built, the finished item), a generated item id costs a fixed amount per event, and
/// no event or tool-call slot appears without input to pay for it.
fn check_bounded(chunks: &[Vec<u8>], end: bool) -> Result<(), TestCaseError> {
    let mut decoder = ChatDecoder::default();
    let mut out = Events::new();
    let mut fed = 0usize;
    let mut stopped = false;
    for chunk in chunks {
        fed += chunk.len();
        if decoder.data(chunk, &mut out) == Flow::Stop {
            stopped = true;
        }
        check_against(&decoder, &out, fed)?;
        if stopped {
            break;
        }
    }
    if end && !stopped {
        decoder.end(&mut out);
        check_against(&decoder, &out, fed)?;
    }
    Ok(())
}

fn check_against(decoder: &ChatDecoder, out: &Events, fed: usize) -> Result<(), TestCaseError> {
    let emitted: usize = out.iter().map(event_bytes).sum();
    let held = state_bytes(decoder);
    prop_assert!(
        emitted + held <= 3 * fed + 128,
        "{} emitted + {} held from {} bytes fed",
        emitted,
        held,
        fed
    );
    prop_assert!(
        out.len() <= fed / 8 + 2,
        "{} events from {} bytes",
        out.len(),
        fed
    );
    prop_assert!(
        decoder.calls.len() <= fed / 2 + 1,
        "{} call slots from {} bytes",
        decoder.calls.len(),
        fed
    );
    Ok(())
}

fn flex_text() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::String),
        Just(Value::Null),
        proptest::collection::vec(
            prop_oneof![
                any::<String>().prop_map(Value::String),
                any::<String>().prop_map(|t| json!({"type": "text", "text": t})),
            ],
            0..4
        )
        .prop_map(Value::Array),
        any::<String>().prop_map(|t| json!({"text": t})),
        any::<String>().prop_map(|t| json!({"content": t})),
        any::<i64>().prop_map(Value::from),
    ]
}

fn tool_call_delta() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(prop_oneof![any::<i64>(), 0i64..4]),
        proptest::option::of(prop_oneof![
            Just("a".to_owned()),
            Just("b".to_owned()),
            any::<String>()
        ]),
        proptest::option::of("[a-z]{0,4}"),
        proptest::option::of(prop_oneof![
            any::<String>().prop_map(Value::String),
            Just(json!({"x": 1})),
            Just(Value::Null),
        ]),
    )
        .prop_map(|(index, id, name, arguments)| {
            let mut call = serde_json::Map::new();
            if let Some(index) = index {
                call.insert("index".into(), json!(index));
            }
            if let Some(id) = id {
                call.insert("id".into(), json!(id));
            }
            let mut function = serde_json::Map::new();
            if let Some(name) = name {
                function.insert("name".into(), json!(name));
            }
            if let Some(arguments) = arguments {
                function.insert("arguments".into(), arguments);
            }
            call.insert("function".into(), Value::Object(function));
            Value::Object(call)
        })
}

/// A chunk-shaped JSON value: every field the decoder reads, with hostile values.
/// `usage` counts stay within `0..=limit`.
fn chat_chunk(limit: i64) -> impl Strategy<Value = Value> {
    let choice = (
        proptest::option::of(flex_text()),
        proptest::option::of(flex_text()),
        proptest::option::of(flex_text()),
        proptest::option::of(proptest::collection::vec(tool_call_delta(), 0..4)),
        proptest::option::of(prop_oneof![
            Just("stop".to_owned()),
            Just("tool_calls".to_owned()),
            any::<String>()
        ]),
    )
        .prop_map(
            |(content, reasoning, reasoning_content, tool_calls, finish)| {
                let mut delta = serde_json::Map::new();
                for (key, value) in [
                    ("content", content),
                    ("reasoning", reasoning),
                    ("reasoning_content", reasoning_content),
                ] {
                    if let Some(value) = value {
                        delta.insert(key.into(), value);
                    }
                }
                if let Some(calls) = tool_calls {
                    delta.insert("tool_calls".into(), Value::Array(calls));
                }
                json!({"index": 0, "delta": delta, "finish_reason": finish})
            },
        );
    let usage = (0..=limit, 0..=limit, proptest::option::of(0..=limit)).prop_map(
        |(prompt, completion, total)| {
            let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": completion});
            if let Some(total) = total {
                usage["total_tokens"] = json!(total);
            }
            usage
        },
    );
    (
        proptest::option::of(any::<String>()),
        proptest::collection::vec(choice, 0..3),
        proptest::option::of(usage),
    )
        .prop_map(|(id, choices, usage)| {
            let mut chunk = json!({"choices": choices});
            if let Some(id) = id {
                chunk["id"] = json!(id);
            }
            if let Some(usage) = usage {
                chunk["usage"] = usage;
            }
            chunk
        })
}

fn split_calls() -> impl Strategy<Value = (Vec<Call>, Vec<Vec<String>>, Vec<usize>)> {
    calls().prop_flat_map(|calls| {
        let cuts =
            proptest::collection::vec(proptest::collection::vec(any::<usize>(), 0..6), calls.len());
        let keys = proptest::collection::vec(any::<usize>(), 0..64);
        (Just(calls), cuts, keys).prop_map(|(calls, cuts, keys)| {
            let split = calls
                .iter()
                .zip(&cuts)
                .map(|(call, cuts)| fragments(&call.arguments, cuts))
                .collect();
            (calls, split, keys)
        })
    })
}

proptest! {
    #![proptest_config(config())]

    /// Argument deltas split anywhere and interleaved across calls (OpenAI numbering), or
    /// sent call after call at index 0, assemble to the calls' exact arguments, in first-seen
    /// order; packing several deltas into one chunk changes nothing.
    #[test]
    fn split_arguments_assemble(
        (calls, split, keys) in split_calls(),
        per_chunk in 1usize..4,
        all_at_zero in any::<bool>(),
    ) {
        let numbering = if all_at_zero { Numbering::AllAtZero } else { Numbering::ByIndex };
        let order = order(&split, &keys, numbering);
        let chunks = chat_chunks(&calls, &split, &order, per_chunk, numbering);
        let out = decode_chunks(&chunks);
        prop_assert_eq!(done_items(&out), expected(&calls, &order));
        let completed = matches!(out.back(), Some(Ok(ResponseEvent::Completed { .. })));
        prop_assert!(completed, "the last event is not Completed");
    }

    /// The same, with the SSE body cut at arbitrary bytes: identical events.
    #[test]
    fn split_arguments_assemble_through_sse(
        (calls, split, keys) in split_calls(),
        raw_cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        let order = order(&split, &keys, Numbering::ByIndex);
        let chunks = chat_chunks(&calls, &split, &order, 1, Numbering::ByIndex);
        let whole = decode_chunks(&chunks);
        let cut = decode_sse(&chunks, &raw_cuts);
        prop_assert_eq!(done_items(&cut), done_items(&whole));
        prop_assert_eq!(done_items(&cut), expected(&calls, &order));
    }

    /// Arbitrary bytes as event data never panic, and stay bounded.
    #[test]
    fn arbitrary_data_never_panics(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..8),
        end in any::<bool>(),
    ) {
        check_bounded(&chunks, end)?;
    }

    /// Chunk-shaped JSON with hostile indices (`i64::MIN..=i64::MAX`), ids, names, argument
    /// shapes and finish reasons never panics, and what is held or emitted stays bounded.
    #[test]
    fn hostile_chunks_stay_bounded(
        chunks in proptest::collection::vec(chat_chunk(1_000_000_000), 0..8),
        end in any::<bool>(),
        done in any::<bool>(),
    ) {
        let mut bytes: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_string().into_bytes()).collect();
        if done {
            bytes.push(b"[DONE]".to_vec());
        }
        check_bounded(&bytes, end)?;
    }

    /// Text nested far beyond serde_json's recursion limit is skipped, not a stack overflow.
    #[test]
    fn deeply_nested_text_is_skipped(depth in 0usize..20_000) {
        let chunk = format!(
            "{{\"choices\":[{{\"delta\":{{\"content\":{}\"x\"{}}}}}]}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        check_bounded(&[chunk.into_bytes()], true)?;
    }
}

proptest! {
    #![proptest_config(config())]

    /// Usage counts are model-supplied: any `i64`s, with or without `total_tokens`, must not
    /// panic, and a missing total is never below either of two non-negative counts.
    /// Fails today: `prompt_tokens + completion_tokens` overflows in `ChatDecoder::data`
    /// (`prompt_tokens: 9223372036854775807, completion_tokens: 1` panics in debug builds,
    /// and wraps to a negative total in release).
    #[test]
    fn any_usage_counts(
        prompt in prop_oneof![any::<i64>(), Just(i64::MAX), 0i64..1000],
        completion in prop_oneof![any::<i64>(), Just(i64::MAX), 0i64..1000],
        total in proptest::option::of(any::<i64>()),
    ) {
        let mut usage = json!({"prompt_tokens": prompt, "completion_tokens": completion});
        if let Some(total) = total {
            usage["total_tokens"] = json!(total);
        }
        let chunk = json!({"id": "chatcmpl-1", "choices": [], "usage": usage});
        let mut decoder = ChatDecoder::default();
        let mut out = Events::new();
        decoder.data(chunk.to_string().as_bytes(), &mut out);
        decoder.data(b"[DONE]", &mut out);
        let Some(Ok(ResponseEvent::Completed { token_usage: Some(usage), .. })) = out.back() else {
            return Err(TestCaseError::fail(format!("no usage in {out:?}")));
        };
        if total.is_none() && prompt >= 0 && completion >= 0 {
            prop_assert!(
                usage.total_tokens >= prompt.max(completion),
                "total {} from {} + {}",
                usage.total_tokens,
                prompt,
                completion
            );
        }
    }
}
