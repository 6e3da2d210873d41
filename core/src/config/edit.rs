//! Edits of `config.toml` that keep the file as the user wrote it: comments, blank lines, key
//! order and the style of every table not touched survive (a `toml_edit` document), and the
//! file is replaced atomically (a temporary file in the same directory, flushed to disk, then
//! renamed over it). What to write is decided on plain TOML values first ([`apply_merge`]), as
//! the reference does; the document then gets only the paths whose value changed
//! (docs/protocol.md §7.34).

use std::io::Write;
use std::path::Path;

use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};
use weft_protocol::MergeStrategy;

/// Split a dotted key path (`a.b`, `model_providers."my.host".name`) into its segments; a
/// segment in double quotes may hold dots and `\`-escaped characters. Errors are the
/// reference's texts.
pub fn parse_key_path(path: &str) -> Result<Vec<String>, String> {
    if path.trim().is_empty() {
        return Err("keyPath must not be empty".to_string());
    }
    let mut segments = Vec::new();
    let mut segment = String::new();
    let mut quoted = false;
    let mut chars = path.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '"' if segment.is_empty() && !quoted => quoted = true,
            '"' if quoted => quoted = false,
            '\\' if quoted => match chars.next() {
                Some(escaped) => segment.push(escaped),
                None => return Err("unterminated escape in keyPath".to_string()),
            },
            '.' if !quoted => {
                if segment.is_empty() {
                    return Err("keyPath segments must not be empty".to_string());
                }
                segments.push(std::mem::take(&mut segment));
            }
            '"' => return Err("invalid quoted keyPath segment".to_string()),
            _ => segment.push(ch),
        }
    }
    if quoted {
        return Err("unterminated quoted keyPath segment".to_string());
    }
    if segment.is_empty() {
        return Err("keyPath segments must not be empty".to_string());
    }
    segments.push(segment);
    Ok(segments)
}

/// A JSON value as TOML (`None` for `null`: the key is removed). TOML has no `null`, so one
/// inside an array or object is refused.
pub fn json_to_toml(value: serde_json::Value) -> Result<Option<toml::Value>, String> {
    if value.is_null() {
        return Ok(None);
    }
    serde_json::from_value::<toml::Value>(value)
        .map(Some)
        .map_err(|err| format!("invalid value: {err}"))
}

/// The value at `segments` (array items by index).
pub fn value_at<'a>(root: &'a toml::Table, segments: &[String]) -> Option<&'a toml::Value> {
    let (first, rest) = segments.split_first()?;
    let mut current = root.get(first)?;
    for segment in rest {
        current = match current {
            toml::Value::Table(table) => table.get(segment)?,
            toml::Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

/// Write `value` at `segments` of `root` (`None` removes the key), creating the tables on the
/// way (a parent that is not a table becomes one). With [`MergeStrategy::Upsert`] a table is
/// merged into the table already there, key by key.
pub fn apply_merge(
    root: &mut toml::Table,
    segments: &[String],
    value: Option<&toml::Value>,
    strategy: MergeStrategy,
) {
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let Some(value) = value else {
        clear(root, segments);
        return;
    };
    let mut current = root;
    for segment in parents {
        let entry = current
            .entry(segment.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(table) = entry else {
            unreachable!("made a table above")
        };
        current = table;
    }
    if strategy == MergeStrategy::Upsert
        && let (Some(toml::Value::Table(existing)), toml::Value::Table(incoming)) =
            (current.get_mut(last), value)
    {
        merge_tables(existing, incoming);
        return;
    }
    current.insert(last.clone(), value.clone());
}

fn merge_tables(existing: &mut toml::Table, incoming: &toml::Table) {
    for (key, value) in incoming {
        match (existing.get_mut(key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(value)) => {
                merge_tables(inner, value);
            }
            _ => {
                existing.insert(key.clone(), value.clone());
            }
        }
    }
}

fn clear(root: &mut toml::Table, segments: &[String]) {
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut current = root;
    for segment in parents {
        match current.get_mut(segment) {
            Some(toml::Value::Table(table)) => current = table,
            _ => return,
        }
    }
    current.remove(last);
}

/// Set `segments` of the document to `value`, keeping what surrounds it: a value keeps the
/// comment after it, a table its comments above the header and its place in the file.
pub fn set_path(doc: &mut DocumentMut, segments: &[String], value: &toml::Value) {
    set_in_item(doc.as_item_mut(), segments, value);
}

/// Remove `segments` from the document (nothing when it is not there).
pub fn clear_path(doc: &mut DocumentMut, segments: &[String]) {
    clear_in_item(doc.as_item_mut(), segments);
}

fn set_in_item(item: &mut Item, segments: &[String], value: &toml::Value) {
    if let Item::Value(inline @ Value::InlineTable(_)) = item {
        set_in_value(inline, segments, value);
        return;
    }
    if !item.is_table() {
        let mut table = Table::new();
        table.set_implicit(true);
        *item = Item::Table(table);
    }
    let Item::Table(table) = item else {
        unreachable!("made a table above")
    };
    match segments {
        [] => {}
        [last] => match table.get_mut(last) {
            Some(old) => assign(old, value),
            None => {
                table.insert(last, to_item(value));
            }
        },
        [first, rest @ ..] => {
            if !table.contains_key(first) {
                let mut child = Table::new();
                child.set_implicit(true);
                table.insert(first, Item::Table(child));
            }
            if let Some(child) = table.get_mut(first) {
                set_in_item(child, rest, value);
            }
        }
    }
}

fn set_in_value(inline: &mut Value, segments: &[String], value: &toml::Value) {
    if !inline.is_inline_table() {
        *inline = Value::InlineTable(InlineTable::new());
    }
    let Value::InlineTable(table) = inline else {
        unreachable!("made an inline table above")
    };
    match segments {
        [] => {}
        [last] => match table.get_mut(last) {
            Some(old) => assign_value(old, value),
            None => {
                table.insert(last, to_value(value));
            }
        },
        [first, rest @ ..] => {
            if !table.contains_key(first) {
                table.insert(first, Value::InlineTable(InlineTable::new()));
            }
            if let Some(child) = table.get_mut(first) {
                set_in_value(child, rest, value);
            }
        }
    }
}

/// Make `item` hold `value`, touching as little as it can: a table written over a table is
/// synced key by key (keys it lacks removed), so the comments inside stay; a value equal to
/// what is there is left as written (`1_000`, `'literal'`).
fn assign(item: &mut Item, value: &toml::Value) {
    match (item, value) {
        (Item::Table(table), toml::Value::Table(new)) => {
            let gone: Vec<String> = table
                .iter()
                .map(|(key, _)| key.to_string())
                .filter(|key| !new.contains_key(key))
                .collect();
            for key in gone {
                table.remove(&key);
            }
            for (key, value) in new {
                match table.get_mut(key) {
                    Some(old) => assign(old, value),
                    None => {
                        table.insert(key, to_item(value));
                    }
                }
            }
        }
        (Item::Value(old), value) if !value.is_table() || old.is_inline_table() => {
            assign_value(old, value);
        }
        (item, value) => replace_item(item, to_item(value)),
    }
}

/// [`assign`] for a value (inside an inline table or an array).
fn assign_value(old: &mut Value, value: &toml::Value) {
    if let (Value::InlineTable(table), toml::Value::Table(new)) = (&mut *old, value) {
        let gone: Vec<String> = table
            .iter()
            .map(|(key, _)| key.to_string())
            .filter(|key| !new.contains_key(key))
            .collect();
        for key in &gone {
            table.remove(key);
        }
        for (key, value) in new {
            match table.get_mut(key) {
                Some(inner) => assign_value(inner, value),
                None => {
                    table.insert(key, to_value(value));
                }
            }
        }
        if !gone.is_empty() {
            table.fmt();
        }
        return;
    }
    if same_value(old, value) {
        return;
    }
    let mut new = to_value(value);
    *new.decor_mut() = old.decor().clone();
    *old = new;
}

/// Whether a document value is `value` (read back as TOML).
fn same_value(old: &Value, value: &toml::Value) -> bool {
    let mut bare = old.clone();
    bare.decor_mut().clear();
    format!("v = {bare}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut table| table.remove("v"))
        .is_some_and(|parsed| &parsed == value)
}

/// Replace `old` with `new`, carrying over the decoration (comments, spacing) and, for a table,
/// its position in the file.
fn replace_item(old: &mut Item, mut new: Item) {
    match (&*old, &mut new) {
        (Item::Value(before), Item::Value(after)) => {
            *after.decor_mut() = before.decor().clone();
        }
        (Item::Table(before), Item::Table(after)) => {
            *after.decor_mut() = before.decor().clone();
            after.set_position(before.position());
        }
        _ => {}
    }
    *old = new;
}

fn clear_in_item(item: &mut Item, segments: &[String]) {
    match item {
        Item::Value(value) => clear_in_value(value, segments),
        Item::Table(table) => match segments {
            [last] => {
                table.remove(last);
            }
            [first, rest @ ..] => {
                if let Some(child) = table.get_mut(first) {
                    clear_in_item(child, rest);
                }
            }
            [] => {}
        },
        _ => {}
    }
}

fn clear_in_value(value: &mut Value, segments: &[String]) {
    let Value::InlineTable(table) = value else {
        return;
    };
    match segments {
        [last] => {
            if table.remove(last).is_some() {
                // The spacing of the pairs left is made even again (`{ a = 1 }`).
                table.fmt();
            }
        }
        [first, rest @ ..] => {
            if let Some(child) = table.get_mut(first) {
                clear_in_value(child, rest);
            }
        }
        [] => {}
    }
}

/// A TOML value as a document item: a table becomes a `[table]` section (its own tables too),
/// anything else an inline value.
fn to_item(value: &toml::Value) -> Item {
    match value {
        toml::Value::Table(table) => {
            let mut section = Table::new();
            for (key, value) in table {
                section.insert(key, to_item(value));
            }
            Item::Table(section)
        }
        other => Item::Value(to_value(other)),
    }
}

fn to_value(value: &toml::Value) -> Value {
    match value {
        toml::Value::String(s) => Value::from(s.as_str()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => Value::from(*f),
        toml::Value::Boolean(b) => Value::from(*b),
        toml::Value::Datetime(d) => match d.to_string().parse::<Value>() {
            Ok(value) => value,
            Err(_) => Value::from(d.to_string()),
        },
        toml::Value::Array(items) => {
            let mut array = toml_edit::Array::new();
            for item in items {
                array.push(to_value(item));
            }
            Value::Array(array)
        }
        toml::Value::Table(table) => {
            let mut inline = InlineTable::new();
            for (key, value) in table {
                inline.insert(key, to_value(value));
            }
            Value::InlineTable(inline)
        }
    }
}

/// Replace `path` with `text` atomically: a temporary file beside it (so the rename stays on
/// one file system), written and flushed to disk, given the old file's permissions, renamed
/// over it, and the directory flushed. A symlink is followed: its target is replaced. A crash
/// leaves the old file or the new one, never half of either; a failure removes the temporary.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    replace_file(path, text.as_bytes(), false)
}

/// [`write_atomically`] for a file of secrets: the new file is the owner's alone (0600)
/// whatever the old one's mode was.
pub fn write_private_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

fn replace_file(path: &Path, bytes: &[u8], private: bool) -> std::io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(err) => return Err(err),
    };
    let dir = target
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let prefix = format!(
        ".{}.",
        target
            .file_name()
            .map_or_else(|| "file".into(), |name| name.to_string_lossy())
    );
    // tempfile creates the temporary 0600.
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    if !private && let Ok(meta) = std::fs::metadata(&target) {
        temp.as_file().set_permissions(meta.permissions())?;
    }
    temp.as_file().sync_all()?;
    temp.persist(&target).map_err(|err| err.error)?;
    if let Ok(dir) = std::fs::File::open(dir) {
        dir.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
