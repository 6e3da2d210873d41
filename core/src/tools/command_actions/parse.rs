//! Reading a shell script with the tree-sitter bash grammar: a script is understood only when
//! it is a plain command list — commands made of plain words, joined by `&&`, `||`, `;`,
//! newlines and `|`. Anything bash would expand, redirect or run differently (parameter,
//! command, arithmetic and process substitution, redirections, here-docs, subshells, groups,
//! functions, assignments, `&`, globs, brace and tilde expansion, backslash escapes outside
//! quotes, syntax errors) makes the script opaque: [`parse`] returns `None`.

use tree_sitter::{Node, Parser};

/// A script as a list of pipelines, each a list of commands (argv).
pub(crate) type Pipelines = Vec<Vec<Vec<String>>>;

/// Longer scripts are not read at all (opaque): nobody needs a 64 KiB one-liner judged safe.
const MAX_SCRIPT_BYTES: usize = 64 * 1024;

/// Named node kinds a plain command list is made of.
const ALLOWED_KINDS: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "number",
    "string",
    "string_content",
    "raw_string",
    "comment",
];

/// Anonymous tokens allowed between them (whitespace and newlines are allowed too).
const ALLOWED_TOKENS: &[&str] = &["&&", "||", ";", "|", "\""];

/// Characters that make an unquoted word something other than itself once bash has read it:
/// expansions (`$`, `` ` ``), globs (`*`, `?`, `[`), brace expansion, escapes, and anything the
/// grammar might have let into a word that bash treats specially. (A `~` is checked apart: it
/// expands at the start of a word and after `=` or `:`, and means itself elsewhere, as in
/// `HEAD~1`.)
const UNSAFE_IN_WORD: &[char] = &[
    '$', '`', '*', '?', '[', ']', '{', '}', '\\', '(', ')', '<', '>', '&', '|', ';', '!', '\'',
    '"', ' ', '\t', '\n',
];

/// The pipelines of a plain command list; `None` for anything else (or an empty script).
pub(crate) fn parse(script: &str) -> Option<Pipelines> {
    if script.len() > MAX_SCRIPT_BYTES {
        return None;
    }
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .ok()?;
    let tree = parser.parse(script, None)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let commands = plain_commands(root)?;
    let src = script.as_bytes();
    let mut pipelines: Pipelines = Vec::new();
    let mut last_key = None;
    for command in commands {
        let argv = argv(command, src)?;
        let key = pipeline_key(command);
        match pipelines.last_mut() {
            Some(pipeline) if last_key == Some(key) => pipeline.push(argv),
            _ => pipelines.push(vec![argv]),
        }
        last_key = Some(key);
    }
    (!pipelines.is_empty()).then_some(pipelines)
}

/// Checks every node of the tree (iteratively: a script may nest deeply) and returns the
/// `command` nodes in source order; `None` when any node is not part of a plain command list.
fn plain_commands(root: Node<'_>) -> Option<Vec<Node<'_>>> {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    let mut commands = Vec::new();
    while let Some(node) = stack.pop() {
        let kind = node.kind();
        if node.is_error() || node.is_missing() {
            return None;
        }
        if node.is_named() {
            if !ALLOWED_KINDS.contains(&kind) {
                return None;
            }
            if kind == "command" {
                commands.push(node);
            }
        } else if !ALLOWED_TOKENS.contains(&kind) && !kind.trim().is_empty() {
            return None;
        }
        stack.extend(node.children(&mut cursor));
    }
    commands.sort_by_key(Node::start_byte);
    Some(commands)
}

/// Commands of one pipeline share its outermost `pipeline` node; any other command stands alone.
fn pipeline_key(command: Node<'_>) -> usize {
    let mut key = command.id();
    let mut node = command;
    while let Some(parent) = node.parent() {
        if parent.kind() != "pipeline" {
            break;
        }
        key = parent.id();
        node = parent;
    }
    key
}

/// The argv of one `command` node, quotes removed.
fn argv(command: Node<'_>, src: &[u8]) -> Option<Vec<String>> {
    let mut cursor = command.walk();
    let mut argv = Vec::new();
    for child in command.named_children(&mut cursor) {
        match child.kind() {
            "command_name" => {
                let mut inner = child.walk();
                let mut words = child.named_children(&mut inner);
                let (Some(word), None) = (words.next(), words.next()) else {
                    return None;
                };
                argv.push(word_text(word, src)?);
            }
            "comment" => {}
            _ => argv.push(word_text(child, src)?),
        }
    }
    (!argv.is_empty()).then_some(argv)
}

/// The value of one plain word: an unquoted word with nothing bash would expand, a number, a
/// `'…'` string, or a `"…"` string with no expansion in it.
fn word_text(node: Node<'_>, src: &[u8]) -> Option<String> {
    let text = node.utf8_text(src).ok()?;
    match node.kind() {
        "word" | "number" => {
            let tilde = text.starts_with('~') || text.contains("=~") || text.contains(":~");
            (!text.is_empty() && !tilde && !text.contains(UNSAFE_IN_WORD)).then(|| text.to_string())
        }
        "raw_string" => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_string),
        "string" => {
            let mut cursor = node.walk();
            if node
                .named_children(&mut cursor)
                .any(|c| c.kind() != "string_content")
            {
                return None;
            }
            let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))?;
            unescape_double_quoted(inner)
        }
        _ => None,
    }
}

/// What bash makes of the inside of `"…"`: `\$`, `` \` ``, `\"`, `\\` lose their backslash,
/// `\` + newline disappears, other backslashes stay. `None` when an unescaped `$` or `` ` ``
/// remains (an expansion, whatever the grammar called it).
fn unescape_double_quoted(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next @ ('$' | '`' | '"' | '\\')) => out.push(next),
                Some('\n') => {}
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '$' | '`' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Option<Pipelines> {
        parse(script)
    }

    fn argv_of(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn plain_lists_are_read_with_quotes_removed() {
        assert_eq!(
            words(r#"echo "a \"b\" c" 'd e' f"#),
            Some(vec![vec![argv_of(&["echo", "a \"b\" c", "d e", "f"])]])
        );
        assert_eq!(
            words("cd src && ls -la | head -n 5; pwd\nwc -l f || true"),
            Some(vec![
                vec![argv_of(&["cd", "src"])],
                vec![argv_of(&["ls", "-la"]), argv_of(&["head", "-n", "5"])],
                vec![argv_of(&["pwd"])],
                vec![argv_of(&["wc", "-l", "f"])],
                vec![argv_of(&["true"])],
            ])
        );
        assert_eq!(
            words("a | b | c"),
            Some(vec![vec![
                argv_of(&["a"]),
                argv_of(&["b"]),
                argv_of(&["c"])
            ]])
        );
        assert_eq!(words("echo ''"), Some(vec![vec![argv_of(&["echo", ""])]]));
        assert!(words("ls # a comment > x").is_some());
    }

    #[test]
    fn anything_bash_would_expand_or_redirect_is_opaque() {
        for script in [
            "echo ${x:='$(touch /tmp/PWNED)'} ; echo ${x@P}",
            "echo ${x}",
            "echo $x",
            "echo \"$x\"",
            "echo \"${x}\"",
            "echo \"a$\"",
            "cat $(ls)",
            "cat \"$(ls)\"",
            "cat `ls`",
            "echo $((1+2))",
            "diff <(ls) <(ls -a)",
            "echo hi > f",
            "cat < f",
            "cat <<EOF\nx\nEOF",
            "cat <<< x",
            "(ls)",
            "{ ls; }",
            "f() { ls; }",
            "X=1 ls",
            "X=1",
            "ls &",
            "ls |& cat",
            "! ls",
            "ls *.rs",
            "ls ?",
            "ls [ab]",
            "echo {a,b}",
            "sort {-o,x}",
            "ls ~",
            "ls ~/x",
            "ls --dir=~/x",
            "ls a:~/x",
            "sort \\-o x",
            "echo $'\\x41'",
            "echo $\"x\"",
            "if true; then ls; fi",
            "for f in a; do ls; done",
            "a &&",
            "| a",
            "a ;; b",
            "'unterminated",
            "",
            "   ",
        ] {
            assert_eq!(words(script), None, "{script:?} should be opaque");
        }
    }

    #[test]
    fn huge_scripts_are_opaque_and_deep_ones_do_not_overflow() {
        assert_eq!(words(&"a".repeat(MAX_SCRIPT_BYTES + 1)), None);
        let deep = vec!["true"; 5000].join(" && ");
        assert_eq!(words(&deep).map(|p| p.len()), Some(5000));
    }
}
