//! What a reviewer answers: the JSON object its instructions ask for (findings with a title, a
//! body, a priority, a confidence and a code location; an overall verdict with its explanation
//! and confidence), read leniently, and rendered as plain text the way the reference renders it
//! (the `review` of an `exitedReviewMode` item, and the agent message that follows it).

use std::path::PathBuf;

use serde::Deserialize;

/// What `exitedReviewMode` says when the reviewer gave nothing usable (or was interrupted):
/// the reference's text.
pub const REVIEW_FALLBACK_MESSAGE: &str = "Reviewer failed to output a response.";

/// A reviewer's whole answer. Every field is required, as by the reference: an answer
/// missing one is not the format, and is kept as plain text.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ReviewOutput {
    /// The findings, in the reviewer's order.
    pub findings: Vec<ReviewFinding>,
    /// `patch is correct` or `patch is incorrect`, as the reviewer put it.
    pub overall_correctness: String,
    /// Why.
    pub overall_explanation: String,
    /// How sure the reviewer is of its verdict (0 to 1).
    pub overall_confidence_score: f64,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReviewFinding {
    /// A short title.
    pub title: String,
    /// What is wrong and why (Markdown).
    pub body: String,
    /// How sure the reviewer is (0 to 1).
    pub confidence_score: f64,
    /// 0 (must fix) to 3 (minor).
    pub priority: i64,
    /// Where.
    pub code_location: CodeLocation,
}

/// Where a finding points.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CodeLocation {
    /// The file.
    pub absolute_file_path: PathBuf,
    /// The lines.
    pub line_range: LineRange,
}

/// A range of lines, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct LineRange {
    /// The first line.
    pub start: u64,
    /// The last line.
    pub end: u64,
}

/// Read a reviewer's final message: the JSON object itself, else the outermost `{…}` in it
/// (a model may wrap it in prose or a code fence), else the whole text as the explanation.
pub fn parse_review_output(text: &str) -> ReviewOutput {
    if let Ok(output) = serde_json::from_str::<ReviewOutput>(text) {
        return output;
    }
    if let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
        && start < end
        && let Ok(output) = serde_json::from_str::<ReviewOutput>(&text[start..=end])
    {
        return output;
    }
    ReviewOutput {
        overall_explanation: text.to_string(),
        ..ReviewOutput::default()
    }
}

impl ReviewOutput {
    /// The findings as a plain-text block: a header, then `- <title> — <path>:<start>-<end>`
    /// and the body indented under each; empty without findings.
    pub fn findings_block(&self) -> String {
        if self.findings.is_empty() {
            return String::new();
        }
        let mut lines = vec![
            if self.findings.len() > 1 {
                "Full review comments:"
            } else {
                "Review comment:"
            }
            .to_string(),
        ];
        for finding in &self.findings {
            let location = &finding.code_location;
            lines.push(String::new());
            lines.push(format!(
                "- {} — {}:{}-{}",
                finding.title,
                location.absolute_file_path.display(),
                location.line_range.start,
                location.line_range.end
            ));
            lines.extend(finding.body.lines().map(|line| format!("  {line}")));
        }
        lines.join("\n")
    }

    /// The review as the user reads it: the explanation, then the findings block (a blank
    /// line between); [`REVIEW_FALLBACK_MESSAGE`] when both are empty.
    pub fn render(&self) -> String {
        let sections: Vec<String> = [
            self.overall_explanation.trim().to_string(),
            self.findings_block(),
        ]
        .into_iter()
        .filter(|section| !section.is_empty())
        .collect();
        if sections.is_empty() {
            REVIEW_FALLBACK_MESSAGE.to_string()
        } else {
            sections.join("\n\n")
        }
    }

    /// What the thread's own conversation is told of the review: the explanation, and the
    /// findings block after a newline.
    pub fn results(&self) -> String {
        let mut results = self.overall_explanation.trim().to_string();
        if !self.findings.is_empty() {
            results.push('\n');
            results.push_str(&self.findings_block());
        }
        results
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn finding(title: &str, body: &str, start: u64, end: u64) -> serde_json::Value {
        json!({
            "title": title,
            "body": body,
            "confidence_score": 0.8,
            "priority": 1,
            "code_location": {
                "absolute_file_path": "/repo/src/lib.rs",
                "line_range": {"start": start, "end": end}
            }
        })
    }

    #[test]
    fn the_json_answer_is_read_and_rendered_with_its_findings() {
        let text = json!({
            "findings": [finding("Check the bound", "The index can pass the end.\nGuard it.", 10, 12)],
            "overall_correctness": "patch is incorrect",
            "overall_explanation": "  One bug.  ",
            "overall_confidence_score": 0.7
        })
        .to_string();
        let output = parse_review_output(&text);
        assert_eq!(output.findings.len(), 1);
        assert_eq!(output.findings[0].priority, 1);
        assert_eq!(output.overall_correctness, "patch is incorrect");
        assert_eq!(
            output.render(),
            "One bug.\n\nReview comment:\n\n- Check the bound — /repo/src/lib.rs:10-12\n  The index can pass the end.\n  Guard it."
        );
        assert!(output.results().starts_with("One bug.\nReview comment:"));
    }

    #[test]
    fn several_findings_get_the_plural_header() {
        let output = parse_review_output(
            &json!({"findings": [finding("A", "a", 1, 1), finding("B", "b", 2, 3)],
                    "overall_correctness": "patch is incorrect", "overall_explanation": "",
                    "overall_confidence_score": 0.5})
            .to_string(),
        );
        assert_eq!(
            output.render(),
            "Full review comments:\n\n- A — /repo/src/lib.rs:1-1\n  a\n\n- B — /repo/src/lib.rs:2-3\n  b"
        );
    }

    #[test]
    fn json_inside_prose_or_a_fence_is_found() {
        let text = format!(
            "Here it is:\n```json\n{}\n```",
            json!({"findings": [], "overall_correctness": "patch is correct",
                   "overall_explanation": "Fine.", "overall_confidence_score": 0.9})
        );
        let output = parse_review_output(&text);
        assert_eq!(output.render(), "Fine.");
    }

    #[test]
    fn plain_text_is_the_explanation_and_nothing_is_the_fallback() {
        let output = parse_review_output("Looks good to me.");
        assert!(output.findings.is_empty());
        assert_eq!(output.render(), "Looks good to me.");
        assert_eq!(parse_review_output("").render(), REVIEW_FALLBACK_MESSAGE);
        assert_eq!(parse_review_output("  ").render(), REVIEW_FALLBACK_MESSAGE);
        // An answer missing a field is not the format: the text is kept as it is.
        assert_eq!(parse_review_output("{}").render(), "{}");
        let partial = json!({"findings": []}).to_string();
        assert_eq!(parse_review_output(&partial).render(), partial);
        let broken = json!({"findings": [{"title": "x", "body": "y"}],
            "overall_correctness": "patch is correct", "overall_explanation": "e",
            "overall_confidence_score": 0.5})
        .to_string();
        assert_eq!(parse_review_output(&broken).overall_explanation, broken);
    }
}
