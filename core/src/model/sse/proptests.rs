//! Property tests of the SSE parser: any bytes split at any chunk boundaries give the events a
//! one-pass reference reading gives, nothing panics, and the parser keeps no more than the
//! unfinished line and event it is in the middle of.

use proptest::prelude::*;

use super::SseParser;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Bytes drawn mostly from the SSE alphabet (field names, colons, spaces, every line end),
/// with arbitrary bytes mixed in.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let alphabet: Vec<Vec<u8>> = [
        &b"data"[..],
        b"data: ",
        b"data:",
        b"event: x",
        b"id: 1",
        b": keep-alive",
        b"\n",
        b"\r",
        b"\r\n",
        b"\n\n",
        b" ",
        b":",
    ]
    .map(<[u8]>::to_vec)
    .to_vec();
    // Each alphabet piece as likely as a run of arbitrary bytes.
    let weight = alphabet.len() as u32;
    let piece = prop_oneof![
        weight => proptest::sample::select(alphabet),
        1 => proptest::collection::vec(any::<u8>(), 0..6),
    ];
    proptest::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat())
}

/// Chunk boundaries: cut points into `len` bytes, in order, possibly repeated (an empty
/// chunk) and possibly at either end.
fn cuts(len: usize, raw: &[usize]) -> Vec<usize> {
    let mut cuts: Vec<usize> = raw.iter().map(|c| c % (len + 1)).collect();
    cuts.sort_unstable();
    cuts
}

fn chunks<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    for &cut in cuts {
        out.push(&input[start..cut]);
        start = cut;
    }
    out.push(&input[start..]);
    out
}

/// What the parser retains besides the events it hands out, checked after every chunk.
#[derive(Debug, Default)]
struct Retained {
    /// Most bytes the parser held in its buffer, unconsumed and consumed together.
    peak_buffer: usize,
}

/// Feed `chunks`, draining events after each one, then finish. Checks after every chunk that
/// the parser holds on to nothing but the unterminated tail of what it was given.
fn parse(chunks: &[&[u8]]) -> Result<(Vec<Vec<u8>>, Retained), TestCaseError> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    let mut retained = Retained::default();
    let mut seen: Vec<u8> = Vec::new();
    for chunk in chunks {
        let before = parser.buf.len() - parser.pos;
        parser.push(chunk);
        prop_assert!(parser.buf.len() <= before + chunk.len());
        retained.peak_buffer = retained.peak_buffer.max(parser.buf.len());
        while let Some(data) = parser.next_event() {
            events.push(data.to_vec());
        }
        seen.extend_from_slice(chunk);
        let tail = seen
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(seen.len(), |end| seen.len() - end - 1);
        prop_assert_eq!(parser.buf.len() - parser.pos, tail, "unconsumed bytes");
        prop_assert!(parser.data.len() <= seen.len());
    }
    if let Some(data) = parser.finish() {
        events.push(data.to_vec());
    }
    Ok((events, retained))
}

/// The same grammar read in one pass over the whole input: lines end at `\r\n`, `\r` or
/// `\n`; a blank line dispatches the event if it has data; a last unterminated line counts.
fn reference(input: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<&[u8]> = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < input.len() {
        match input[i] {
            b'\n' => {
                lines.push(&input[start..i]);
                i += 1;
                start = i;
            }
            b'\r' => {
                lines.push(&input[start..i]);
                i += 1;
                if input.get(i) == Some(&b'\n') {
                    i += 1;
                }
                start = i;
            }
            _ => i += 1,
        }
    }
    let tail = &input[start..];
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for line in lines {
        if line.is_empty() {
            events.extend(data.take());
        } else {
            reference_line(line, &mut data);
        }
    }
    if !tail.is_empty() {
        reference_line(tail, &mut data);
    }
    events.extend(data);
    events
}

fn reference_line(line: &[u8], data: &mut Option<Vec<u8>>) {
    if line.starts_with(b":") {
        return;
    }
    let (field, value) = match line.iter().position(|&b| b == b':') {
        Some(colon) => {
            let value = &line[colon + 1..];
            (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
        }
        None => (line, &[][..]),
    };
    if field == b"data" {
        match data {
            Some(data) => {
                data.push(b'\n');
                data.extend_from_slice(value);
            }
            None => *data = Some(value.to_vec()),
        }
    }
}

/// One well-formed event: its data lines, and the noise around them.
#[derive(Debug, Clone)]
struct Event {
    data: Vec<Vec<u8>>,
    comment: bool,
    event_field: bool,
}

fn event() -> impl Strategy<Value = Event> {
    let value = proptest::collection::vec(any::<u8>(), 0..24).prop_map(|v| {
        v.into_iter()
            .filter(|b| *b != b'\n' && *b != b'\r')
            .collect()
    });
    (
        proptest::collection::vec(value, 1..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(data, comment, event_field)| Event {
            data,
            comment,
            event_field,
        })
}

fn line_end() -> impl Strategy<Value = &'static [u8]> {
    prop_oneof![Just(&b"\n"[..]), Just(&b"\r\n"[..]), Just(&b"\r"[..])]
}

fn encode(events: &[Event], ends: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut ends = ends.iter().cycle();
    let mut end = |out: &mut Vec<u8>| {
        let next = ends.next().copied().unwrap_or(b"\n");
        // `\r` then `\n` is one CRLF line end, not two: after a bare `\r`, end a blank line
        // with another `\r`.
        let next: &[u8] = if out.ends_with(b"\r") && next.starts_with(b"\n") {
            b"\r"
        } else {
            next
        };
        out.extend_from_slice(next);
    };
    for event in events {
        if event.comment {
            out.extend_from_slice(b": ping");
            end(&mut out);
        }
        if event.event_field {
            out.extend_from_slice(b"event: message");
            end(&mut out);
        }
        for line in &event.data {
            // One space after the colon is the separator; the value keeps its own.
            out.extend_from_slice(b"data: ");
            out.extend_from_slice(line);
            end(&mut out);
        }
        end(&mut out);
    }
    out
}

proptest! {
    #![proptest_config(config())]

    /// Any bytes, split anywhere, give the reference's events; the events together are no
    /// longer than the input, and the parser's buffer never holds more than it was given.
    #[test]
    fn split_anywhere_matches_the_reference(
        input in sse_bytes(),
        raw_cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let (whole, _) = parse(&[&input])?;
        prop_assert_eq!(&whole, &reference(&input));
        let cuts = cuts(input.len(), &raw_cuts);
        let (split, retained) = parse(&chunks(&input, &cuts))?;
        prop_assert_eq!(&split, &whole);
        let total: usize = whole.iter().map(Vec::len).sum();
        prop_assert!(total <= input.len(), "{} event bytes from {} input bytes", total, input.len());
        prop_assert!(retained.peak_buffer <= input.len());
    }

    /// Uniformly random bytes, one byte per chunk (the worst split), never panic.
    #[test]
    fn arbitrary_bytes_byte_by_byte(input in proptest::collection::vec(any::<u8>(), 0..256)) {
        let singles: Vec<&[u8]> = input.chunks(1).collect();
        let (split, _) = parse(&singles)?;
        prop_assert_eq!(split, reference(&input));
    }

    /// Well-formed events (any line ends, comments and other fields between them) come out
    /// as exactly their data, however the stream is cut.
    #[test]
    fn encoded_events_round_trip(
        events in proptest::collection::vec(event(), 0..8),
        ends in proptest::collection::vec(line_end(), 1..6),
        raw_cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let input = encode(&events, &ends);
        let expected: Vec<Vec<u8>> = events.iter().map(|e| e.data.join(&b'\n')).collect();
        let cuts = cuts(input.len(), &raw_cuts);
        let (split, _) = parse(&chunks(&input, &cuts))?;
        prop_assert_eq!(split, expected);
    }

    /// Consumed bytes are released: a long stream of small events fed one event per chunk
    /// never holds more than one event's bytes.
    #[test]
    fn consumed_bytes_are_released(events in proptest::collection::vec(event(), 1..64)) {
        let mut parser = SseParser::default();
        let mut largest = 0usize;
        for event in &events {
            let bytes = encode(std::slice::from_ref(event), &[b"\n"]);
            largest = largest.max(bytes.len());
            parser.push(&bytes);
            while parser.next_event().is_some() {}
            prop_assert!(parser.buf.len() <= largest, "{} buffered, largest event {}", parser.buf.len(), largest);
        }
    }
}
