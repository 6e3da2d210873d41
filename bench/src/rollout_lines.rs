//! The lines of a rollout file (one JSON record per line, `*.jsonl`): finding a thread's file,
//! reading its records, and renumbering the ids and the reference's line counter in repeated
//! records, so that a rollout grown by repetition keeps its turn, item and call ids unique.
//! Used by `resume.rs` and `stored.rs` (and through it `big_resume.rs`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The non-empty lines of a file.
pub fn read_lines(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    Ok(text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// The `*.jsonl` file under `dir` whose name holds `thread`.
pub fn find_rollout(dir: &Path, thread: &str) -> Result<Option<PathBuf>> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && name.contains(thread)
                && name.ends_with(".jsonl")
            {
                return Ok(Some(path));
            }
        }
    }
    Ok(None)
}

/// Whether `b` is the text of a UUID (8-4-4-4-12 hex digits).
pub fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Replace the last 8 hex digits of every UUID in `line` except `keep` with `copy`'s (so the
/// ids of each repetition are distinct from every other's and from the original's, whose copy
/// number is 0).
pub fn renumber_uuids(line: &str, keep: &str, copy: u64) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 36 <= bytes.len() {
        if (bytes[i] as char).is_ascii_hexdigit()
            && is_uuid(&bytes[i..i + 36])
            && &line[i..i + 36] != keep
        {
            out.push_str(&line[copied..i + 28]);
            out.push_str(&format!("{:08x}", copy & 0xffff_ffff));
            i += 36;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&line[copied..]);
    out
}

/// Replace the number after the first `"ordinal":` (the reference's line sequence number).
pub fn renumber_ordinal(line: &str, ordinal: usize) -> String {
    const KEY: &str = "\"ordinal\":";
    let Some(at) = line.find(KEY) else {
        return line.to_string();
    };
    let start = at + KEY.len();
    let digits = line[start..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return line.to_string();
    }
    format!("{}{ordinal}{}", &line[..start], &line[start + digits..])
}

#[cfg(test)]
mod tests {
    use super::{renumber_ordinal, renumber_uuids};

    const THREAD: &str = "01a22910-326b-75c2-9010-53f5cc9d8fbf";
    const TURN: &str = "01a22910-4444-75c2-9010-abcdefabcdef";

    #[test]
    fn renumbers_all_but_the_thread() {
        let line = format!(r#"{{"thread":"{THREAD}","turn":"{TURN}","é":1}}"#);
        let out = renumber_uuids(&line, THREAD, 3);
        assert_eq!(
            out,
            format!(
                r#"{{"thread":"{THREAD}","turn":"01a22910-4444-75c2-9010-abcd00000003","é":1}}"#
            )
        );
    }

    #[test]
    fn renumbers_ordinals() {
        assert_eq!(
            renumber_ordinal(r#"{"ordinal":3,"x":1}"#, 12),
            r#"{"ordinal":12,"x":1}"#
        );
        assert_eq!(renumber_ordinal(r#"{"x":1}"#, 12), r#"{"x":1}"#);
    }
}
