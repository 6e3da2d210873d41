//! The known-safe list of the `untrusted` policy: programs that only read, and for those that
//! can also write or run other programs, the options that make them do so.
//!
//! Options are matched the way getopt reads them, erring towards "unsafe": a short option
//! counts anywhere in a cluster (`-ro` contains `-o`), a long one also by any prefix of its
//! name (`--out` is `--output`), and options after `--` or between operands count too.

/// Whether one command (argv, already a plain word list) is known to only read.
pub(crate) fn is_safe_command(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    match program.as_str() {
        "cat" | "cd" | "echo" | "false" | "grep" | "head" | "ls" | "nl" | "pwd" | "tail"
        | "true" | "wc" | "which" | "whoami" | "basename" | "dirname" | "realpath" | "readlink"
        | "stat" | "cut" | "tr" | "printf" | "id" | "uname" | "du" | "df" | "diff" | "cmp"
        | "column" | ":" => true,
        // `-o FILE` writes the listing; `-R` (with `-H`) writes `00Tree.html` files.
        "tree" => !has_option(args, "oR", &["output"]),
        // `-C` compiles a magic file (writes `*.mgc`).
        "file" => !has_option(args, "C", &["compile"]),
        // `-s` / `--set` / a `MMDDhhmm` operand set the clock.
        "date" => is_safe_date(args),
        "find" => !args.iter().any(|arg| {
            matches!(
                arg.as_str(),
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fls"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
            )
        }),
        // `--pre` and `--hostname-bin` run programs; `-z` runs decompressors.
        "rg" => !has_option(args, "z", &["pre", "hostname-bin", "search-zip"]),
        // `-o` writes; `--compress-program` runs a program.
        "sort" => !has_option(args, "o", &["output", "compress-program"]),
        // Only `sed -n Np [FILE]` / `sed -n N,Mp [FILE]`.
        "sed" => match args {
            [flag, script] => flag == "-n" && is_sed_print(script),
            [flag, script, path] => flag == "-n" && is_sed_print(script) && !path.starts_with('-'),
            _ => false,
        },
        "git" => is_safe_git(args),
        _ => false,
    }
}

/// `git` with no global options, a reading subcommand, and none of the options that write a
/// file or run a configured program.
fn is_safe_git(args: &[String]) -> bool {
    let Some((subcommand, rest)) = args.split_first() else {
        return false;
    };
    match subcommand.as_str() {
        "status" | "log" | "diff" | "show" | "blame" | "ls-files" | "rev-parse" => !has_option(
            rest,
            "",
            &[
                "output",
                "ext-diff",
                "textconv",
                "open-files-in-pager",
                "exec",
            ],
        ),
        "branch" => rest.iter().all(|a| {
            matches!(
                a.as_str(),
                "-a" | "-r" | "-v" | "-vv" | "--list" | "--show-current"
            )
        }),
        _ => false,
    }
}

/// `date` that only prints: no `-s` / `--set`, and every operand a `+FORMAT` (an operand of
/// digits sets the clock) or the value of `-d` / `-f` / `-r`.
fn is_safe_date(args: &[String]) -> bool {
    if has_option(args, "s", &["set"]) {
        return false;
    }
    let mut takes_value = false;
    for arg in args {
        if takes_value {
            takes_value = false;
        } else if matches!(
            arg.as_str(),
            "-d" | "--date" | "-f" | "--file" | "-r" | "--reference"
        ) {
            takes_value = true;
        } else if !arg.starts_with('-') && !arg.starts_with('+') {
            return false;
        }
    }
    true
}

/// Whether any argument is one of the `short` options (alone or inside a cluster) or a long
/// option whose name (before `=`) is a prefix of one of `long`.
fn has_option(args: &[String], short: &str, long: &[&str]) -> bool {
    args.iter().any(|arg| {
        if let Some(name) = arg.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or_default();
            !name.is_empty() && long.iter().any(|option| option.starts_with(name))
        } else if let Some(cluster) = arg.strip_prefix('-') {
            cluster.chars().any(|c| short.contains(c))
        } else {
            false
        }
    })
}

/// `Np`, `N,Mp`, `N,$p` (the only `sed` scripts treated as reads).
pub(crate) fn is_sed_print(script: &str) -> bool {
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
