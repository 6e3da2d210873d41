//! Property tests: generated patches apply, in memory and through the filesystem.

use super::*;

/// Builds an apply_patch update body from the unified diff between two texts.
fn patch_between(old: &str, new: &str) -> Option<String> {
    let hunks = unified_hunks(old, new, 3);
    if hunks.is_empty() {
        return None;
    }
    let body: Vec<String> = hunks
        .lines()
        .map(|l| {
            if l.starts_with("@@ ") {
                "@@".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    Some(update(&body.join("\n")))
}

fn line_strategy() -> impl Strategy<Value = String> {
    // Hostile characters: markers, prefixes, typographic punctuation, spaces, non-ASCII.
    proptest::string::string_regex("[a-z*@+ \\-#é—’\u{00A0}]{0,10}").unwrap()
}

#[derive(Debug, Clone)]
enum EditOp {
    Replace(usize, String),
    Insert(usize, String),
    Delete(usize),
}

fn edit_strategy() -> impl Strategy<Value = EditOp> {
    prop_oneof![
        (any::<usize>(), line_strategy()).prop_map(|(i, s)| EditOp::Replace(i, s)),
        (any::<usize>(), line_strategy()).prop_map(|(i, s)| EditOp::Insert(i, s)),
        any::<usize>().prop_map(EditOp::Delete),
    ]
}

fn apply_edits(lines: &[String], edits: &[EditOp]) -> Vec<String> {
    let mut out = lines.to_vec();
    for e in edits {
        match e {
            EditOp::Replace(i, s) if !out.is_empty() => {
                let i = i % out.len();
                out[i] = s.clone();
            }
            EditOp::Insert(i, s) => {
                let i = i % (out.len() + 1);
                out.insert(i, s.clone());
            }
            EditOp::Delete(i) if !out.is_empty() => {
                let i = i % out.len();
                out.remove(i);
            }
            _ => {}
        }
    }
    out
}

fn join_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn arbitrary_patchish() -> impl Strategy<Value = String> {
    let fixed = proptest::sample::select(vec![
        "*** Begin Patch".to_string(),
        "*** End Patch".to_string(),
        "*** End of File".to_string(),
        "@@".to_string(),
        String::new(),
    ]);
    let line = prop_oneof![
        fixed,
        "[a-z]{0,3}".prop_map(|p| format!("*** Add File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Update File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Delete File: {p}")),
        "[a-z]{0,3}".prop_map(|p| format!("*** Move to: {p}")),
        "[a-z ]{0,4}".prop_map(|c| format!("@@ {c}")),
        "[ +\\-*@a-z\r\t]{0,6}",
        any::<String>(),
    ];
    proptest::collection::vec(line, 0..24).prop_map(|lines| lines.join("\n"))
}

proptest! {
    /// Random file + random edits: the patch generated from their diff applies back to
    /// exactly the edited file.
    #[test]
    fn generated_patches_apply_back(
        raw in proptest::collection::vec(line_strategy(), 0..40),
        edits in proptest::collection::vec(edit_strategy(), 1..8),
    ) {
        // Unique original lines, so the forward search cannot pick a wrong occurrence.
        let original: Vec<String> = raw.iter().enumerate().map(|(i, l)| format!("{l}#{i}")).collect();
        let edited = apply_edits(&original, &edits);
        let (old, new) = (join_lines(&original), join_lines(&edited));
        if let Some(patch) = patch_between(&old, &new) {
            let out = apply_text(&old, &patch);
            prop_assert!(out.is_ok(), "{:?}\n{}", out.err().map(|e| e.to_string()), patch);
            prop_assert_eq!(out.ok(), Some(new));
        } else {
            prop_assert_eq!(old, new);
        }
    }

    /// The parser never panics, and parsing is deterministic.
    #[test]
    fn parser_never_panics(input in any::<String>()) {
        let a = parse_patch(&input);
        prop_assert_eq!(a, parse_patch(&input));
    }

    /// Structured noise reaches deeper into the parser and the matcher without panicking.
    #[test]
    fn parser_and_matcher_survive_patch_shaped_noise(
        body in arbitrary_patchish(),
        file in proptest::collection::vec("[a-z +\\-@]{0,4}", 0..12),
    ) {
        for input in [body.clone(), format!("*** Begin Patch\n{body}\n*** End Patch")] {
            if let Ok(parsed) = parse_patch(&input) {
                for op in &parsed.ops {
                    if let FileOp::Update { chunks, .. } = op {
                        let _ = derive_new_contents(Path::new("/x"), &file.join("\n"), chunks);
                    }
                }
            }
        }
    }

    /// Generated diffs never lose or invent lines: replaying the hunks rebuilds the new text.
    #[test]
    fn unified_hunks_replay(
        a in proptest::collection::vec("[abc]{0,2}", 0..30),
        b in proptest::collection::vec("[abc]{0,2}", 0..30),
    ) {
        let (old, new) = (join_lines(&a), join_lines(&b));
        let hunks = unified_hunks(&old, &new, 2);
        // Replay: walk old lines, applying each hunk at its stated position.
        let old_lines: Vec<&str> = old.lines().collect();
        let mut out: Vec<String> = Vec::new();
        let mut pos = 0usize;
        for hunk in hunks.split("@@ -").skip(1) {
            let header_end = hunk.find(" @@\n").unwrap();
            let old_range = hunk[..header_end].split(' ').next().unwrap();
            let mut parts = old_range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |l| l.parse().unwrap());
            let start0 = if len == 0 { start } else { start - 1 };
            out.extend(old_lines[pos..start0].iter().map(|s| (*s).to_string()));
            pos = start0;
            for l in hunk[header_end + 4..].lines() {
                match l.as_bytes().first() {
                    Some(b' ') => { prop_assert_eq!(old_lines[pos], &l[1..]); out.push(l[1..].to_string()); pos += 1; }
                    Some(b'-') => { prop_assert_eq!(old_lines[pos], &l[1..]); pos += 1; }
                    Some(b'+') => out.push(l[1..].to_string()),
                    _ => prop_assert!(false, "bad hunk line {:?}", l),
                }
            }
        }
        out.extend(old_lines[pos..].iter().map(|s| (*s).to_string()));
        prop_assert_eq!(out, b);
    }

    /// Myers finds a minimal diff: changed lines = |a| + |b| − 2·LCS(a, b).
    #[test]
    fn unified_hunks_are_minimal(
        a in proptest::collection::vec("[abc]", 0..25),
        b in proptest::collection::vec("[abc]", 0..25),
    ) {
        let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let hunks = unified_hunks(&join_lines(&a), &join_lines(&b), 0);
        let changed = hunks
            .lines()
            .filter(|l| l.starts_with('+') || l.starts_with('-'))
            .count();
        prop_assert_eq!(changed, a.len() + b.len() - 2 * lcs[0][0]);
    }
}

#[test]
fn generated_patches_apply_through_the_filesystem() {
    // One end-to-end pass of the round trip through plan_patch/apply_plan.
    let dir = Dir::new();
    let old: String = (0..200).map(|i| format!("row {i}\n")).collect();
    let new = old
        .replace("row 10\n", "ROW TEN\n")
        .replace("row 150\n", "")
        + "tail\n";
    dir.write("f.txt", &old);
    let plan = plan_patch(&patch_between(&old, &new).unwrap(), &dir.root(), &allow_all).unwrap();
    apply_plan(&plan).unwrap();
    assert_eq!(dir.read("f.txt"), Some(new));
}
