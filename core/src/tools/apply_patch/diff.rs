//! A small line-based unified-diff generator (Myers' O(ND) greedy algorithm) and the
//! git-style file diff used for `turn/diff/updated`.
//!
//! Common prefix and suffix are stripped first, so typical edits cost little even in large
//! files. Myers keeps one `V` snapshot per edit step (O(D²) memory); past
//! [`MAX_EDIT_DISTANCE`] steps the remaining middle region is reported as one replacement,
//! which is still a correct (if not minimal) diff, so time and memory stay bounded.

use std::collections::HashMap;
use std::fmt::Write as _;

/// Above this many edit steps the diff falls back to "replace the changed middle".
pub const MAX_EDIT_DISTANCE: usize = 2_000;

/// The all-zero object id git uses for a missing side.
const ZERO_OID: &str = "0000000000000000000000000000000000000000";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Equal { old: usize, new: usize },
    Delete { old: usize },
    Insert { new: usize },
}

/// Splits text into lines that keep their terminating `\n` (the last may lack one).
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Computes a line edit script from `old` to `new`.
fn diff_lines(old: &[&str], new: &[&str]) -> Vec<Edit> {
    // Intern lines so comparisons are integer compares.
    fn intern<'a>(line: &'a str, ids: &mut HashMap<&'a str, u32>) -> u32 {
        let next = u32::try_from(ids.len()).unwrap_or(u32::MAX);
        *ids.entry(line).or_insert(next)
    }
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let a: Vec<u32> = old.iter().map(|l| intern(l, &mut ids)).collect();
    let b: Vec<u32> = new.iter().map(|l| intern(l, &mut ids)).collect();

    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mid_a = &a[prefix..a.len() - suffix];
    let mid_b = &b[prefix..b.len() - suffix];

    let mut edits = Vec::with_capacity(a.len().max(b.len()) + 1);
    for i in 0..prefix {
        edits.push(Edit::Equal { old: i, new: i });
    }
    match myers(mid_a, mid_b, MAX_EDIT_DISTANCE) {
        Some(middle) => edits.extend(middle.into_iter().map(|e| match e {
            Edit::Equal { old, new } => Edit::Equal {
                old: old + prefix,
                new: new + prefix,
            },
            Edit::Delete { old } => Edit::Delete { old: old + prefix },
            Edit::Insert { new } => Edit::Insert { new: new + prefix },
        })),
        None => {
            edits.extend((0..mid_a.len()).map(|i| Edit::Delete { old: i + prefix }));
            edits.extend((0..mid_b.len()).map(|j| Edit::Insert { new: j + prefix }));
        }
    }
    for k in 0..suffix {
        edits.push(Edit::Equal {
            old: a.len() - suffix + k,
            new: b.len() - suffix + k,
        });
    }
    edits
}

/// Myers' greedy forward algorithm with a trace for backtracking. `None` when the edit
/// distance exceeds `max_d`.
fn myers(a: &[u32], b: &[u32], max_d: usize) -> Option<Vec<Edit>> {
    let n = a.len() as isize;
    let m = b.len() as isize;
    if n == 0 || m == 0 {
        let mut out: Vec<Edit> = (0..a.len()).map(|old| Edit::Delete { old }).collect();
        out.extend((0..b.len()).map(|new| Edit::Insert { new }));
        return Some(out);
    }
    let max = (n + m) as usize;
    let limit = max.min(max_d);
    let offset = limit as isize + 1;
    let width = 2 * (limit + 1) + 1;
    let mut v = vec![0isize; width];
    // trace[d] holds V after step d for diagonals -d..=d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=limit as isize {
        let mut k = -d;
        while k <= d {
            let idx = (k + offset) as usize;
            let mut x = if k == -d || (k != d && v[idx - 1] < v[idx + 1]) {
                v[idx + 1]
            } else {
                v[idx - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx] = x;
            if x >= n && y >= m {
                trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
                return Some(backtrack(&trace, n, m));
            }
            k += 2;
        }
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Edit> {
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..trace.len() as isize).rev() {
        let prev = &trace[(d - 1) as usize];
        // prev covers diagonals -(d-1)..=(d-1).
        let get = |k: isize| prev[(k + d - 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = get(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            out.push(Edit::Equal {
                old: x as usize,
                new: y as usize,
            });
        }
        if x == prev_x {
            y -= 1;
            out.push(Edit::Insert { new: y as usize });
        } else {
            x -= 1;
            out.push(Edit::Delete { old: x as usize });
        }
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        out.push(Edit::Equal {
            old: x as usize,
            new: y as usize,
        });
    }
    out.reverse();
    out
}

fn push_line(out: &mut String, sign: char, line: &str) {
    out.push(sign);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}

fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{}", start + 1, len),
    }
}

/// Unified-diff hunks (`@@ -a,b +c,d @@` …, no file headers) from `old` to `new` with
/// `context` lines of context. Empty when the texts are equal.
pub fn unified_hunks(old: &str, new: &str, context: usize) -> String {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let edits = diff_lines(&old_lines, &new_lines);
    let changes: Vec<usize> = edits
        .iter()
        .enumerate()
        .filter(|(_, e)| !matches!(e, Edit::Equal { .. }))
        .map(|(i, _)| i)
        .collect();
    let mut out = String::new();
    let mut c = 0;
    while c < changes.len() {
        // Extend the group while the gap of equal lines between changes is ≤ 2·context.
        let first = changes[c];
        let mut last = first;
        c += 1;
        while c < changes.len() && changes[c] - last - 1 <= 2 * context {
            last = changes[c];
            c += 1;
        }
        let lo = first.saturating_sub(context);
        let hi = (last + context + 1).min(edits.len());
        let group = &edits[lo..hi];
        // Old/new start positions of the hunk.
        let (mut old_start, mut new_start) = (None, None);
        let (mut old_len, mut new_len) = (0usize, 0usize);
        for e in group {
            match *e {
                Edit::Equal { old, new } => {
                    old_start.get_or_insert(old);
                    new_start.get_or_insert(new);
                    old_len += 1;
                    new_len += 1;
                }
                Edit::Delete { old } => {
                    old_start.get_or_insert(old);
                    old_len += 1;
                }
                Edit::Insert { new } => {
                    new_start.get_or_insert(new);
                    new_len += 1;
                }
            }
        }
        let old_start = old_start.unwrap_or_else(|| old_position(&edits, lo));
        let new_start = new_start.unwrap_or_else(|| new_position(&edits, lo));
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(old_start, old_len),
            range(new_start, new_len)
        );
        for e in group {
            match *e {
                Edit::Equal { old, .. } => push_line(&mut out, ' ', old_lines[old]),
                Edit::Delete { old } => push_line(&mut out, '-', old_lines[old]),
                Edit::Insert { new } => push_line(&mut out, '+', new_lines[new]),
            }
        }
    }
    out
}

/// Number of old lines consumed before edit index `at`.
fn old_position(edits: &[Edit], at: usize) -> usize {
    edits[..at]
        .iter()
        .filter(|e| !matches!(e, Edit::Insert { .. }))
        .count()
}

/// Number of new lines produced before edit index `at`.
fn new_position(edits: &[Edit], at: usize) -> usize {
    edits[..at]
        .iter()
        .filter(|e| !matches!(e, Edit::Delete { .. }))
        .count()
}

/// A git-style diff of one file (`diff --git a/… b/…`, `new file mode` / `deleted file
/// mode`, `index`, `---`/`+++` with `/dev/null` for a missing side, hunks with 3 lines of
/// context). `None` when nothing changed. `left`/`right` are the display paths (relative to
/// the display root, `/`-separated); `None` content means the file does not exist.
pub fn git_file_diff(
    left_path: &str,
    left: Option<&str>,
    right_path: &str,
    right: Option<&str>,
) -> Option<String> {
    if left == right && (left_path == right_path || left.is_none()) {
        return None;
    }
    let oid = |content: Option<&str>| {
        content.map_or_else(|| ZERO_OID.to_string(), |c| git_blob_oid(c.as_bytes()))
    };
    let mut out = format!("diff --git a/{left_path} b/{right_path}\n");
    match (left, right) {
        (None, Some(_)) => out.push_str("new file mode 100644\n"),
        (Some(_), None) => out.push_str("deleted file mode 100644\n"),
        _ => {}
    }
    let _ = writeln!(out, "index {}..{}", oid(left), oid(right));
    let hunks = unified_hunks(left.unwrap_or(""), right.unwrap_or(""), 3);
    if !hunks.is_empty() {
        let old_header = match left {
            Some(_) => format!("a/{left_path}"),
            None => "/dev/null".to_string(),
        };
        let new_header = match right {
            Some(_) => format!("b/{right_path}"),
            None => "/dev/null".to_string(),
        };
        let _ = writeln!(out, "--- {old_header}");
        let _ = writeln!(out, "+++ {new_header}");
        out.push_str(&hunks);
    }
    Some(out)
}

/// The git blob object id (`git hash-object`) of `data`, as 40 hex digits.
pub fn git_blob_oid(data: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(format!("blob {}\0", data.len()).as_bytes());
    sha.update(data);
    sha.hex()
}

/// A minimal SHA-1 (FIPS 180-4), used only for git object ids in diff `index` lines.
struct Sha1 {
    state: [u32; 5],
    buffer: Vec<u8>,
    length: u64,
}

impl Sha1 {
    fn new() -> Self {
        Sha1 {
            state: [
                0x6745_2301,
                0xEFCD_AB89,
                0x98BA_DCFE,
                0x1032_5476,
                0xC3D2_E1F0,
            ],
            buffer: Vec::with_capacity(64),
            length: 0,
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u64);
        if !self.buffer.is_empty() {
            let take = (64 - self.buffer.len()).min(data.len());
            self.buffer.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buffer.len() == 64 {
                let block = std::mem::take(&mut self.buffer);
                self.compress(&block);
                self.buffer = block;
                self.buffer.clear();
            }
        }
        let mut blocks = data.chunks_exact(64);
        for block in &mut blocks {
            self.compress(block);
        }
        self.buffer.extend_from_slice(blocks.remainder());
    }

    fn compress(&mut self, block: &[u8]) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = self.state;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (s, v) in self.state.iter_mut().zip([a, b, c, d, e]) {
            *s = s.wrapping_add(v);
        }
    }

    fn hex(mut self) -> String {
        let bit_len = self.length.wrapping_mul(8);
        let mut tail = std::mem::take(&mut self.buffer);
        tail.push(0x80);
        while tail.len() % 64 != 56 {
            tail.push(0);
        }
        tail.extend_from_slice(&bit_len.to_be_bytes());
        for block in tail.chunks_exact(64) {
            self.compress(block);
        }
        self.state
            .iter()
            .fold(String::with_capacity(40), |mut s, v| {
                let _ = write!(s, "{v:08x}");
                s
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_vectors() {
        let hex = |d: &[u8]| {
            let mut s = Sha1::new();
            s.update(d);
            s.hex()
        };
        assert_eq!(hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(hex(&million), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
        // Fed in awkward pieces.
        let mut s = Sha1::new();
        for piece in million.chunks(37) {
            s.update(piece);
        }
        assert_eq!(s.hex(), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    }

    #[test]
    fn git_blob_ids_match_git() {
        assert_eq!(
            git_blob_oid(b""),
            "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
        );
        assert_eq!(
            git_blob_oid(b"hello from apply_patch\n"),
            "86ddfb8cbbf96928cb6ee38b9174645983db4797"
        );
    }

    #[test]
    fn git_diff_of_an_added_file_matches_the_reference() {
        let diff = git_file_diff(
            "hello_anchor.txt",
            None,
            "hello_anchor.txt",
            Some("hello from apply_patch\n"),
        );
        assert_eq!(
            diff.as_deref(),
            Some(
                "diff --git a/hello_anchor.txt b/hello_anchor.txt\nnew file mode 100644\n\
                 index 0000000000000000000000000000000000000000..86ddfb8cbbf96928cb6ee38b9174645983db4797\n\
                 --- /dev/null\n+++ b/hello_anchor.txt\n@@ -0,0 +1 @@\n+hello from apply_patch\n"
            )
        );
    }

    #[test]
    fn hunks_with_context_and_ranges() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nH\n";
        assert_eq!(
            unified_hunks(old, new, 1),
            "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -7,2 +7,2 @@\n g\n-h\n+H\n"
        );
        // With 3 lines of context the two changes merge into one hunk.
        assert_eq!(
            unified_hunks(old, new, 3),
            "@@ -1,8 +1,8 @@\n a\n-b\n+B\n c\n d\n e\n f\n g\n-h\n+H\n"
        );
        assert_eq!(unified_hunks(old, old, 1), "");
    }

    #[test]
    fn hunks_for_pure_insertions_and_deletions() {
        assert_eq!(unified_hunks("", "x\n", 1), "@@ -0,0 +1 @@\n+x\n");
        assert_eq!(unified_hunks("x\n", "", 1), "@@ -1 +0,0 @@\n-x\n");
        assert_eq!(
            unified_hunks("a\nb\n", "a\nx\nb\n", 0),
            "@@ -1,0 +2 @@\n+x\n"
        );
    }

    #[test]
    fn missing_final_newline_is_marked() {
        assert_eq!(
            unified_hunks("a\nb", "a\nb\n", 1),
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
    }

    #[test]
    fn fallback_beyond_max_distance_is_still_a_valid_diff() {
        let old: String = (0..3000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("new {i}\n")).collect();
        let hunks = unified_hunks(&old, &new, 1);
        assert!(hunks.starts_with("@@ -1,3000 +1,3000 @@\n-old 0\n"));
        assert_eq!(hunks.lines().filter(|l| l.starts_with('-')).count(), 3000);
        assert_eq!(hunks.lines().filter(|l| l.starts_with('+')).count(), 3000);
    }
}
