//! Ranking one path against one query, as the reference ranks them (docs/protocol.md §7.33):
//! helix's `nucleo` matcher in its path mode, case ignored, the query parsed into atoms (`^`,
//! `$`, `'`, `!` and spaces mean what they mean in fzf). On top of the matcher's score, a file
//! whose own name holds the whole query as one fuzzy needle is ranked by that name's match
//! plus 2^16, and an entry whose name is the query (case ignored) gains 2^17 more: what the
//! reference's scores show (`src/main.rs` for `main` scores 65645 = 2^16 + 109).

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use super::MatchType;

/// What a file whose name holds the query gains.
pub const NAME_MATCH_BONUS: u32 = 1 << 16;
/// What an entry whose name is the query gains (on top of [`NAME_MATCH_BONUS`] for a file).
pub const EXACT_NAME_BONUS: u32 = 2 << 16;

/// A new matcher in the reference's configuration (path delimiters, case ignored).
pub fn new_matcher() -> Matcher {
    Matcher::new(Config::DEFAULT.match_paths())
}

/// One query, compiled once and scored against many paths.
pub struct Query {
    pattern: Pattern,
    name_atom: Atom,
    lowercase: String,
    empty: bool,
}

/// A scored path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scored {
    /// The score, bonuses included.
    pub score: u32,
    /// Whether the score is the name's match (so its indices are the name's).
    pub by_name: bool,
}

impl Query {
    /// Compiles `query`.
    pub fn new(query: &str) -> Query {
        Query {
            pattern: Pattern::parse(query, CaseMatching::Ignore, Normalization::Smart),
            name_atom: Atom::new(
                query,
                CaseMatching::Ignore,
                Normalization::Smart,
                AtomKind::Fuzzy,
                false,
            ),
            lowercase: query.to_lowercase(),
            empty: query.is_empty(),
        }
    }

    /// Whether the query is empty (it then matches nothing: the reference answers no files).
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// The score of `path` (relative to its root), or `None` when it does not match.
    pub fn score(
        &self,
        path: &str,
        match_type: MatchType,
        matcher: &mut Matcher,
        buf: &mut Vec<char>,
    ) -> Option<Scored> {
        if self.empty {
            return None;
        }
        let full = self.pattern.score(Utf32Str::new(path, buf), matcher)?;
        let name = name_of(path);
        let mut scored = Scored {
            score: full,
            by_name: false,
        };
        if match_type == MatchType::File
            && let Some(name_score) = self.name_atom.score(Utf32Str::new(name, buf), matcher)
        {
            scored = Scored {
                score: u32::from(name_score) + NAME_MATCH_BONUS,
                by_name: true,
            };
        }
        if name.to_lowercase() == self.lowercase {
            scored.score += EXACT_NAME_BONUS;
        }
        Some(scored)
    }

    /// The char indices of the match of `path` that scored `scored`, sorted and unique.
    pub fn indices(
        &self,
        path: &str,
        name_start: usize,
        scored: Scored,
        matcher: &mut Matcher,
        buf: &mut Vec<char>,
    ) -> Vec<u32> {
        let mut indices = Vec::new();
        if scored.by_name {
            let name = name_of(path);
            let _ = self
                .name_atom
                .indices(Utf32Str::new(name, buf), matcher, &mut indices);
            let offset = u32::try_from(name_start).unwrap_or(u32::MAX);
            for index in &mut indices {
                *index = index.saturating_add(offset);
            }
        } else {
            let _ = self
                .pattern
                .indices(Utf32Str::new(path, buf), matcher, &mut indices);
        }
        indices.sort_unstable();
        indices.dedup();
        indices
    }
}

/// The last component of a relative path (the whole path when it has none).
pub fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The char offset at which the last component of `path` starts.
pub fn name_start(path: &str) -> usize {
    path.rfind('/')
        .map_or(0, |slash| path[..=slash].chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(query: &str, path: &str, match_type: MatchType) -> Option<(u32, Vec<u32>)> {
        let query = Query::new(query);
        let (mut matcher, mut buf) = (new_matcher(), Vec::new());
        let start = name_start(path);
        let scored = query.score(path, match_type, &mut matcher, &mut buf)?;
        let indices = query.indices(path, start, scored, &mut matcher, &mut buf);
        Some((scored.score, indices))
    }

    /// Scores and indices answered by the reference (0.171.0) for these paths.
    #[test]
    fn scores_are_the_references() {
        use MatchType::{Directory, File};
        let cases: &[(&str, &str, MatchType, u32, &[u32])] = &[
            ("main", "src/main.rs", File, 65645, &[4, 5, 6, 7]),
            (
                "main",
                ".hidden/secret_main.txt",
                File,
                65640,
                &[15, 16, 17, 18],
            ),
            ("wid", "src/widgets", Directory, 84, &[4, 5, 6]),
            ("wid", "src/widgets/button.rs", File, 84, &[4, 5, 6]),
            ("HEAD", ".git/HEAD", File, 196717, &[5, 6, 7, 8]),
            ("HEAD", ".git/refs/heads", Directory, 109, &[10, 11, 12, 13]),
            ("head", ".git/HEAD", File, 196717, &[5, 6, 7, 8]),
            ("rs", "src/f1.rs", File, 65592, &[7, 8]),
            ("rs$", "src/f1.rs", File, 56, &[7, 8]),
            ("^src", "src", Directory, 84, &[0, 1, 2]),
            ("^src", "src/f10.rs", File, 84, &[0, 1, 2]),
            (
                "makefile",
                "Makefile",
                File,
                196817,
                &[0, 1, 2, 3, 4, 5, 6, 7],
            ),
            ("make", "Makefile", File, 65645, &[0, 1, 2, 3]),
            (
                "widgets",
                "src/widgets",
                Directory,
                131256,
                &[4, 5, 6, 7, 8, 9, 10],
            ),
            (
                "widgets",
                "lib/widgets2",
                Directory,
                184,
                &[4, 5, 6, 7, 8, 9, 10],
            ),
            (
                "widgets",
                "lib/widgets2/x.txt",
                File,
                184,
                &[4, 5, 6, 7, 8, 9, 10],
            ),
            (
                "tool.rs",
                "a/b/c/tool.rs",
                File,
                196792,
                &[6, 7, 8, 9, 10, 11, 12],
            ),
            ("Tool", "a/b/c/tool.rs", File, 65645, &[6, 7, 8, 9]),
            ("tool", "a/toolbox.txt", File, 65645, &[2, 3, 4, 5]),
            ("tool", "tool", Directory, 131181, &[0, 1, 2, 3]),
            ("tool", "tool/t_o_o_l.txt", File, 65633, &[5, 7, 9, 11]),
            (
                "tool",
                ".git/hooks/push-to-checkout.sample",
                File,
                65607,
                &[16, 17, 24, 32],
            ),
            ("'tool", "a/toolbox.txt", File, 109, &[2, 3, 4, 5]),
            ("abc", "a/b/c", Directory, 78, &[0, 2, 4]),
            ("abc", "xyz/abcdir/f.txt", File, 84, &[4, 5, 6]),
            (
                "abcdir",
                "xyz/abcdir",
                Directory,
                131231,
                &[4, 5, 6, 7, 8, 9],
            ),
            (
                "mod.rs",
                "src/widgets/mod.rs",
                File,
                196767,
                &[12, 13, 14, 15, 16, 17],
            ),
            ("ma rs", "src/main.rs", File, 115, &[4, 5, 9, 10]),
            (
                "src",
                ".git/hooks/fsmonitor-watchman.sample",
                File,
                65570,
                &[12, 19, 24],
            ),
            ("mai", "src/main.rs", File, 65620, &[4, 5, 6]),
        ];
        for (query, path, match_type, want_score, want_indices) in cases {
            let (got_score, got_indices) = score(query, path, *match_type)
                .unwrap_or_else(|| panic!("{query:?} should match {path:?}"));
            assert_eq!(
                (got_score, got_indices.as_slice()),
                (*want_score, *want_indices),
                "{query:?} against {path:?}"
            );
        }
    }

    #[test]
    fn non_matches_and_the_empty_query() {
        assert_eq!(score("zzz", "src/main.rs", MatchType::File), None);
        assert_eq!(score("", "src/main.rs", MatchType::File), None);
        assert_eq!(score("!main", "src/main.rs", MatchType::File), None);
        assert_eq!(name_start("a/b/c.txt"), 4);
        assert_eq!(name_start("é/x"), 2);
        assert_eq!(name_of("top"), "top");
    }
}
