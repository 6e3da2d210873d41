//! A conservative reading of the shell scripts the model runs: the `commandActions` of a
//! `commandExecution` item (what the command reads, lists or searches, for display) and the
//! "known safe" test of the `untrusted` approval policy.
//!
//! Scripts are read with a real bash parser (`parse.rs`, the tree-sitter bash grammar). Only
//! plain command lists are understood: plain words (unquoted, `'…'`, or `"…"` without
//! expansions) joined by `&&`, `||`, `;`, newlines and `|`. Anything else — expansions of any
//! kind, redirections, here-docs, `&`, subshells, functions, assignments, globs, syntax
//! errors — makes the script opaque: one `unknown` action, never safe. A plain list is safe
//! when every command on it is on the read-only list of `safe.rs`. Both answers err on the
//! side of "unknown" / "ask".

mod parse;
mod safe;

use std::path::Path;

use weft_protocol::CommandAction;

use crate::exec::Quoting;

use parse::parse;
use safe::{is_safe_command, is_sed_print};

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

/// Whether a whole invocation (`[shell, "-c" | "-lc", script]`) is known safe: the shell must
/// be one whose grammar is bash's (`bash`, `sh`, `dash`, `zsh`), and the script known safe.
pub fn is_known_safe_invocation(argv: &[String]) -> bool {
    let [shell, flag, script] = argv else {
        return false;
    };
    let name = Path::new(shell)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    matches!(name, "bash" | "sh" | "dash" | "zsh")
        && matches!(flag.as_str(), "-c" | "-lc")
        && is_known_safe(script)
}

fn program_name(argv: &[String]) -> &str {
    argv.first().map(String::as_str).unwrap_or("")
}

/// Joins words back into a command line for display.
fn join(argv: &[String]) -> String {
    Quoting {
        plain: "_-./=:,+@%*?[]~^",
        ..Quoting::COMMAND
    }
    .join(argv)
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

    /// The exploit of issue 11: `${x:=…}` assigns a string, `${x@P}` expands it as a prompt,
    /// which runs the command substitution inside it.
    const EXPLOIT: &str = "echo ${x:='$(touch /tmp/PWNED)'} ; echo ${x@P}";

    #[test]
    fn expansions_are_never_known_safe() {
        assert!(!is_known_safe(EXPLOIT));
        assert_eq!(command_actions(EXPLOIT), unknown(EXPLOIT));
        let bash = |script: &str| {
            vec![
                "/bin/bash".to_string(),
                "-lc".to_string(),
                script.to_string(),
            ]
        };
        assert!(!is_known_safe_invocation(&bash(EXPLOIT)));
        assert!(is_known_safe_invocation(&bash("ls -la")));
        // Another shell (not read with bash's grammar) or another flag is never safe.
        assert!(!is_known_safe_invocation(&[
            "python3".to_string(),
            "-c".to_string(),
            "ls".to_string()
        ]));
        assert!(!is_known_safe_invocation(&[
            "/bin/bash".to_string(),
            "-x".to_string(),
            "ls".to_string()
        ]));
    }

    #[test]
    fn known_safe_commands() {
        for safe in [
            "ls",
            "ls -la && pwd",
            "cat README.md | head -n 3",
            "git status",
            "git diff HEAD~1",
            "git log --oneline -n 5",
            "git branch --show-current",
            "rg -n foo src",
            "rg --files",
            "find . -name '*.rs'",
            "sed -n 5p file.txt",
            "sed -n 1,20p 'my file.txt'",
            "echo 'a > b'",
            "echo \"a > b\"",
            "echo '$HOME'",
            "grep -r \"x\" . ; wc -l file",
            "tree -L 2",
            "sort -n -k 2 data",
            "date +%Y",
            "date -d yesterday +%F",
            "file README.md",
            "pwd\nls",
        ] {
            assert!(is_known_safe(safe), "{safe:?} should be safe");
        }
        for unsafe_ in [
            EXPLOIT,
            "echo ${x}",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo $((1+1))",
            "cat <(ls)",
            "echo hi > f",
            "ls 2>/dev/null",
            "touch f",
            "rm -rf /",
            "ls; rm x",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -fprint out",
            "rg --pre ./evil foo",
            "rg --pre=./evil foo",
            "rg -nz foo",
            "sort -o out in",
            "sort -ro out in",
            "sort --out=x in",
            "sort --compress-program=sh in",
            "sort -- in -o out",
            "sort \\-o out in",
            "sort {-o,out} in",
            "tree -o out",
            "tree -ao out",
            "tree -H . -R",
            "file -C -m magic",
            "date -s 2020-01-01",
            "date --set=2020-01-01",
            "date 010112002025",
            "git commit -m x",
            "git -c core.pager=sh log",
            "git diff --output=x",
            "git diff --out=x",
            "git log --ext-diff",
            "git show --textconv HEAD",
            "git branch -D main",
            "git push",
            "cat $(echo f)",
            "cat `echo f`",
            "ls &",
            "ls | xargs rm",
            "sed -i s/a/b/ f",
            "sed -n 1p -i f",
            "sed -n 1p f -i",
            "sed -n '1p;w out' f",
            "bash -c ls",
            "(ls)",
            "{ ls; }",
            "f() { ls; }; f",
            "X=1 ls",
            "PATH=/tmp ls",
            "ls *",
            "cat <<EOF\nx\nEOF",
            "/bin/rm -rf x",
            "",
        ] {
            assert!(!is_known_safe(unsafe_), "{unsafe_:?} should not be safe");
        }
    }
}
