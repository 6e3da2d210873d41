//! Head-and-tail truncation and the output buffer.

use super::*;

#[test]
fn truncation_keeps_head_and_tail() {
    assert_eq!(
        truncate_output("short", TruncationPolicy::Tokens(10)),
        "short"
    );
    // 26 bytes, 8-byte budget: 4 + 4 kept, 18 removed → ceil(18/4) = 5 tokens.
    assert_eq!(
        truncate_output("abcdefghijklmnopqrstuvwxyz", TruncationPolicy::Tokens(2)),
        "abcd\u{2026}5 tokens truncated\u{2026}wxyz"
    );
    assert_eq!(
        truncate_output("abcdefghijklmnopqrstuvwxyz", TruncationPolicy::Bytes(9)),
        "abcd\u{2026}17 chars truncated\u{2026}vwxyz"
    );
    assert_eq!(
        truncate_output("abcdef", TruncationPolicy::Bytes(0)),
        "\u{2026}6 chars truncated\u{2026}"
    );
    // Never cuts inside a character: "é" is two bytes.
    let text = "éééééééééé";
    let cut = truncate_output(text, TruncationPolicy::Bytes(7));
    assert_eq!(cut, "é\u{2026}7 chars truncated\u{2026}éé");
    assert_eq!(
        formatted_truncate_output("a\nb\nc\nd\ne\nf\n", TruncationPolicy::Bytes(4)),
        "Total output lines: 6\n\na\n\u{2026}8 chars truncated\u{2026}f\n"
    );
    assert_eq!(
        formatted_truncate_output("a\nb", TruncationPolicy::Bytes(4)),
        "a\nb"
    );
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
