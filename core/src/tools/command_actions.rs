//! A small, conservative reading of the shell scripts the model runs: the `commandActions` of a
//! `commandExecution` item (what the command reads, lists or searches, for display) and the
//! "known safe" test of the `untrusted` approval policy.
//!
//! Only plain command lists are understood: words (with `'…'`, `"…"` and `\` quoting) joined by
//! `&&`, `||`, `;`, newlines and `|`. Anything else — redirections, `&`, subshells, command or
//! process substitution, here-docs — makes the script opaque: one `unknown` action, never safe.
//! Both answers are best effort and err on the side of "unknown" / "ask".

use weft_protocol::CommandAction;

/// One lexed token.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word, quotes removed.
    Word(String),
    /// A list or pipe operator: `&&`, `||`, `;`, `|`.
    Op(&'static str),
}

/// A script as a list of pipelines, each a list of commands (argv).
type Pipelines = Vec<Vec<Vec<String>>>;

/// Lexes `script`; `None` when it uses anything beyond words and list/pipe operators.
fn lex(script: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = script.chars().peekable();
    let mut word = String::new();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
            }
            '\n' | ';' => {
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                if c == ';' && chars.peek() == Some(&';') {
                    return None;
                }
                tokens.push(Token::Op(";"));
            }
            '&' => {
                if chars.peek() != Some(&'&') {
                    return None;
                }
                chars.next();
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                tokens.push(Token::Op("&&"));
            }
            '|' => {
                if in_word {
                    tokens.push(Token::Word(std::mem::take(&mut word)));
                    in_word = false;
                }
                if chars.peek() == Some(&'|') {
                    chars.next();
                    tokens.push(Token::Op("||"));
                } else if chars.peek() == Some(&'&') {
                    return None;
                } else {
                    tokens.push(Token::Op("|"));
                }
            }
            '<' | '>' | '(' | ')' | '`' => return None,
            '$' => {
                if chars.peek() == Some(&'(') {
                    return None;
                }
                word.push(c);
                in_word = true;
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => word.push(ch),
                        None => return None,
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => word.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => return None,
                        },
                        Some('`') => return None,
                        Some('$') if chars.peek() == Some(&'(') => return None,
                        Some(ch) => word.push(ch),
                        None => return None,
                    }
                }
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(ch) => {
                    word.push(ch);
                    in_word = true;
                }
                None => return None,
            },
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for ch in chars.by_ref() {
                    if ch == '\n' {
                        tokens.push(Token::Op(";"));
                        break;
                    }
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        tokens.push(Token::Word(word));
    }
    Some(tokens)
}

/// Splits the tokens into pipelines of commands; `None` for an empty command between
/// operators (`a && && b`, `| a`).
fn split(tokens: Vec<Token>) -> Option<Pipelines> {
    let mut pipelines: Pipelines = Vec::new();
    let mut pipeline: Vec<Vec<String>> = Vec::new();
    let mut command: Vec<String> = Vec::new();
    // After `&&`, `||` or `|` another command must follow.
    let mut needs_command = false;
    for token in tokens {
        match token {
            Token::Word(word) => {
                command.push(word);
                needs_command = false;
            }
            Token::Op("|") => {
                if command.is_empty() {
                    return None;
                }
                pipeline.push(std::mem::take(&mut command));
                needs_command = true;
            }
            // Empty statements, and newlines after `&&`, `||`, `|`.
            Token::Op(";") if command.is_empty() => {}
            Token::Op(op) => {
                if command.is_empty() {
                    return None;
                }
                pipeline.push(std::mem::take(&mut command));
                pipelines.push(std::mem::take(&mut pipeline));
                needs_command = op != ";";
            }
        }
    }
    if needs_command {
        return None;
    }
    if !command.is_empty() {
        pipeline.push(command);
        pipelines.push(pipeline);
    }
    Some(pipelines)
}

fn parse(script: &str) -> Option<Pipelines> {
    let pipelines = split(lex(script)?)?;
    (!pipelines.is_empty()).then_some(pipelines)
}

/// The `commandActions` of a script: one action per command of a plain command list (`cd`
/// and trivial commands dropped; a pipeline counts as its first command when the rest only
/// filters), or one `unknown` action with the whole script.
pub fn command_actions(script: &str) -> Vec<CommandAction> {
    let unknown = || {
        vec![CommandAction::Unknown {
            command: script.trim().to_string(),
        }]
    };
    let Some(pipelines) = parse(script) else {
        return unknown();
    };
    let mut actions = Vec::new();
    for pipeline in &pipelines {
        let Some((first, rest)) = pipeline.split_first() else {
            continue;
        };
        if !rest.iter().all(|cmd| is_filter(cmd)) {
            return unknown();
        }
        let name = program_name(first);
        if matches!(name, "cd" | "true" | ":") {
            continue;
        }
        match classify(first) {
            Some(action) => actions.push(action),
            None => return unknown(),
        }
    }
    if actions.is_empty() {
        return unknown();
    }
    actions
}

/// Whether the script only reads: every command of a plain command list is a known read-only
/// program used with read-only options. Used by the `untrusted` policy (everything else asks).
pub fn is_known_safe(script: &str) -> bool {
    let Some(pipelines) = parse(script) else {
        return false;
    };
    pipelines
        .iter()
        .flatten()
        .all(|command| is_safe_command(command))
}

fn program_name(argv: &[String]) -> &str {
    argv.first().map(String::as_str).unwrap_or("")
}

/// Joins words back into a command line for display.
fn join(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%*?[]~^".contains(c));
            if plain {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', r#"'"'"'"#))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Commands that only reshape the output of the command before them in a pipeline.
fn is_filter(argv: &[String]) -> bool {
    match program_name(argv) {
        "head" | "tail" | "wc" | "sort" | "uniq" | "cut" | "tr" | "nl" | "column" | "cat" => {
            // A file operand would make it read a file of its own.
            operands(&argv[1..], &["-n", "-c", "-d", "-f", "-t", "-k"]).is_empty()
        }
        "grep" | "rg" => true,
        _ => false,
    }
}

/// The non-option arguments, skipping the values of the options in `with_value`.
fn operands<'a>(args: &'a [String], with_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    let mut only_operands = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if only_operands {
            out.push(arg.as_str());
            continue;
        }
        if arg == "--" {
            only_operands = true;
        } else if with_value.contains(&arg.as_str()) {
            skip = true;
        } else if !arg.starts_with('-') || arg == "-" {
            out.push(arg.as_str());
        }
    }
    out
}

fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

fn read_action(argv: &[String], path: &str) -> CommandAction {
    CommandAction::Read {
        command: join(argv),
        name: file_name(path),
        path: path.to_string(),
    }
}

/// What one command does, when it is one of the readers, listers and searchers we know.
fn classify(argv: &[String]) -> Option<CommandAction> {
    let command = join(argv);
    let args = &argv[1..];
    match program_name(argv) {
        "cat" | "bat" | "less" | "more" | "nl" => match operands(args, &[]).as_slice() {
            [path] => Some(read_action(argv, path)),
            _ => None,
        },
        "head" | "tail" => match operands(args, &["-n", "-c"]).as_slice() {
            [path] => Some(read_action(argv, path)),
            _ => None,
        },
        "sed" => match args {
            [flag, script, path] if flag == "-n" && is_sed_print(script) => {
                Some(read_action(argv, path))
            }
            _ => None,
        },
        "ls" | "tree" | "eza" | "exa" => Some(CommandAction::ListFiles {
            command,
            path: operands(args, &["-I", "-L"]).first().map(|p| p.to_string()),
        }),
        "rg" | "grep" | "ag" | "ack" | "git-grep" => {
            let mut found = operands(args, &["-e", "-g", "-t", "-A", "-B", "-C", "-m"]);
            let files_only = args.iter().any(|a| a == "--files");
            if files_only {
                return Some(CommandAction::ListFiles {
                    command,
                    path: found.first().map(|p| p.to_string()),
                });
            }
            let query = if found.is_empty() {
                None
            } else {
                Some(found.remove(0).to_string())
            };
            Some(CommandAction::Search {
                command,
                query,
                path: found.first().map(|p| p.to_string()),
            })
        }
        "fd" | "find" => {
            let path = operands(args, &[]).first().map(|p| p.to_string());
            let query = args
                .iter()
                .position(|a| a == "-name" || a == "-iname")
                .and_then(|at| args.get(at + 1))
                .cloned();
            match query {
                Some(query) => Some(CommandAction::Search {
                    command,
                    query: Some(query),
                    path,
                }),
                None => Some(CommandAction::ListFiles { command, path }),
            }
        }
        _ => None,
    }
}

/// `Np`, `N,Mp` (the only `sed` scripts treated as reads).
fn is_sed_print(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    let mut parts = range.split(',');
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), None, None) => numeric(a),
        (Some(a), Some(b), None) => numeric(a) && (numeric(b) || b == "$"),
        _ => false,
    }
}

/// Whether one command is a known read-only program used without writing options.
fn is_safe_command(argv: &[String]) -> bool {
    let args = &argv[1..];
    let any = |bad: &[&str]| {
        args.iter().any(|a| {
            bad.iter()
                .any(|b| a == b || (b.starts_with("--") && a.starts_with(&format!("{b}="))))
        })
    };
    match program_name(argv) {
        "cat" | "cd" | "echo" | "false" | "grep" | "head" | "ls" | "nl" | "pwd" | "tail"
        | "true" | "wc" | "which" | "whoami" | "basename" | "dirname" | "realpath" | "readlink"
        | "stat" | "file" | "tree" | "cut" | "tr" | "printf" | "id" | "uname" | "date" | "du"
        | "df" | "diff" | "cmp" | "column" | ":" => true,
        "find" => !any(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
            "-fprintf",
        ]),
        "rg" => !any(&["--pre", "--hostname-bin", "--search-zip", "-z"]),
        "sort" => !any(&["-o", "--output", "--compress-program"]),
        "sed" => matches!(args, [flag, script, ..] if flag == "-n" && is_sed_print(script)),
        "git" => match args.first().map(String::as_str) {
            Some("status" | "log" | "diff" | "show" | "blame" | "ls-files" | "rev-parse") => {
                !any(&["--output", "--ext-diff", "--textconv", "-o"])
            }
            Some("branch") => args[1..].iter().all(|a| {
                matches!(
                    a.as_str(),
                    "-a" | "-r" | "-v" | "-vv" | "--list" | "--show-current"
                )
            }),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(command: &str) -> Vec<CommandAction> {
        vec![CommandAction::Unknown {
            command: command.to_string(),
        }]
    }

    #[test]
    fn reads_lists_and_searches_are_recognised() {
        assert_eq!(
            command_actions("cat src/main.rs"),
            vec![CommandAction::Read {
                command: "cat src/main.rs".into(),
                name: "main.rs".into(),
                path: "src/main.rs".into(),
            }]
        );
        assert_eq!(
            command_actions("sed -n 1,20p 'my file.txt'"),
            vec![CommandAction::Read {
                command: "sed -n 1,20p 'my file.txt'".into(),
                name: "my file.txt".into(),
                path: "my file.txt".into(),
            }]
        );
        assert_eq!(
            command_actions("cd src && ls -la lib"),
            vec![CommandAction::ListFiles {
                command: "ls -la lib".into(),
                path: Some("lib".into()),
            }]
        );
        assert_eq!(
            command_actions("rg -n \"fn main\" src | head -n 5"),
            vec![CommandAction::Search {
                command: "rg -n 'fn main' src".into(),
                query: Some("fn main".into()),
                path: Some("src".into()),
            }]
        );
        assert_eq!(
            command_actions("rg --files"),
            vec![CommandAction::ListFiles {
                command: "rg --files".into(),
                path: None,
            }]
        );
    }

    #[test]
    fn anything_else_is_unknown() {
        assert_eq!(command_actions("sleep 30"), unknown("sleep 30"));
        assert_eq!(
            command_actions("touch a && echo created"),
            unknown("touch a && echo created")
        );
        assert_eq!(command_actions("echo hi > f"), unknown("echo hi > f"));
        assert_eq!(command_actions("cat $(ls)"), unknown("cat $(ls)"));
        assert_eq!(command_actions("  'unterminated"), unknown("'unterminated"));
        assert_eq!(command_actions(""), unknown(""));
    }

    #[test]
    fn known_safe_commands() {
        for safe in [
            "ls",
            "ls -la && pwd",
            "cat README.md | head -n 3",
            "git status",
            "git diff HEAD~1",
            "rg -n foo src",
            "find . -name '*.rs'",
            "sed -n 5p file.txt",
            "echo 'a > b'",
            "grep -r \"x\" . ; wc -l file",
        ] {
            assert!(is_known_safe(safe), "{safe} should be safe");
        }
        for unsafe_ in [
            "echo hi > f",
            "touch f",
            "rm -rf /",
            "ls; rm x",
            "find . -delete",
            "find . -exec rm {} ;",
            "rg --pre ./evil foo",
            "sort -o out in",
            "git commit -m x",
            "git diff --output=x",
            "git branch -D main",
            "cat $(echo f)",
            "cat `echo f`",
            "ls &",
            "ls | xargs rm",
            "sed -i s/a/b/ f",
            "bash -c ls",
            "(ls)",
            "cat <<EOF\nx\nEOF",
            "",
        ] {
            assert!(!is_known_safe(unsafe_), "{unsafe_:?} should not be safe");
        }
    }

    #[test]
    fn lexer_handles_quotes_and_escapes() {
        assert_eq!(
            parse(r#"echo "a \"b\" c" 'd e' f\ g"#),
            Some(vec![vec![vec![
                "echo".to_string(),
                "a \"b\" c".to_string(),
                "d e".to_string(),
                "f g".to_string()
            ]]])
        );
        assert_eq!(parse("a &&"), None);
        assert_eq!(parse("| a"), None);
        assert_eq!(parse("a ;; b"), None);
        assert!(parse("ls # a comment > x").is_some());
    }
}
