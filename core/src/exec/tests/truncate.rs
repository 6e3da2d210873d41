//! Head-and-tail truncation and the output buffer.

use super::*;

#[test]
fn truncation_keeps_head_and_tail() {
    use TruncationPolicy::{Bytes, Tokens};
    let plain: fn(&str, TruncationPolicy) -> String = truncate_output;
    let formatted: fn(&str, TruncationPolicy) -> String = formatted_truncate_output;
    // (function, text, policy, expected)
    let cases = [
        (plain, "short", Tokens(10), "short"),
        // 26 bytes, 8-byte budget: 4 + 4 kept, 18 removed → ceil(18/4) = 5 tokens.
        (
            plain,
            "abcdefghijklmnopqrstuvwxyz",
            Tokens(2),
            "abcd\u{2026}5 tokens truncated\u{2026}wxyz",
        ),
        (
            plain,
            "abcdefghijklmnopqrstuvwxyz",
            Bytes(9),
            "abcd\u{2026}17 chars truncated\u{2026}vwxyz",
        ),
        (
            plain,
            "abcdef",
            Bytes(0),
            "\u{2026}6 chars truncated\u{2026}",
        ),
        // Never cuts inside a character: "é" is two bytes.
        (
            plain,
            "éééééééééé",
            Bytes(7),
            "é\u{2026}7 chars truncated\u{2026}éé",
        ),
        (
            formatted,
            "a\nb\nc\nd\ne\nf\n",
            Bytes(4),
            "Total output lines: 6\n\na\n\u{2026}8 chars truncated\u{2026}f\n",
        ),
        (formatted, "a\nb", Bytes(4), "a\nb"),
    ];
    for (truncate, text, policy, expected) in cases {
        assert_eq!(truncate(text, policy), expected, "{text:?} {policy:?}");
    }
    assert_eq!(approx_token_count("hi\n"), 1);
    assert_eq!(approx_token_count("slept\n"), 2);
    assert_eq!(TruncationPolicy::Bytes(10).token_budget(), 3);
    assert_eq!(
        TruncationPolicy::Tokens(10).scaled(1.2),
        TruncationPolicy::Tokens(12)
    );
}

#[test]
fn truncation_counts_a_buffer_gap() {
    let gap = Gap {
        bytes: 100,
        chars: 90,
        newlines: 10,
    };
    let cut = truncate_parts(
        "0123456789",
        gap,
        "abcdefghij\n",
        TruncationPolicy::Bytes(8),
    );
    assert_eq!(cut.text, "0123\u{2026}103 chars truncated\u{2026}hij\n");
    assert!(cut.truncated);
    assert_eq!(cut.original_lines, 11);
    assert_eq!(cut.original_bytes, 121);
}

#[test]
fn output_buffer_keeps_head_and_tail() {
    let mut buffer = OutputBuffer::new(10);
    for chunk in ["01234", "56789", "abcde", "fghij", "klmno"] {
        buffer.push(chunk);
    }
    assert_eq!(buffer.total_bytes(), 25);
    let taken = buffer.take();
    assert_eq!(taken.head, "01234");
    assert_eq!(taken.tail, "klmno");
    assert_eq!(taken.gap.bytes, 15);
    assert_eq!(buffer.total_bytes(), 0);

    let mut collected = OutputBuffer::new(100);
    collected.push("xy");
    collected.push_taken(&taken);
    assert_eq!(collected.total_bytes(), 27);
    assert!(collected.display_text().contains("bytes of output omitted"));
}
