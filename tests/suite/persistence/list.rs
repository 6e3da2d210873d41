//! `thread/list` (docs/protocol.md §7.5) with every filter, both sort keys and directions, and
//! keyset pagination across 250 threads; `thread/read` (§7.6) with and without turns, live and
//! stored.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};
use weft_test_support::{Client, Transport};

use super::{
    Persist, assert_error_containing, ids, item_types, list, list_ids, loaded, ok, path_of, read,
    rollout_lines, str_at, turns,
};

/// Every `thread/list` source kind.
const ALL_KINDS: [&str; 6] = ["cli", "vscode", "exec", "appServer", "subAgent", "unknown"];

/// Creation time of the hand-written threads (2023-11-14); they are older than the live one.
const BASE: i64 = 1_700_000_000;

/// A thread written straight into the home as a rollout file, as if by another Weft.
struct Stored {
    n: u64,
    source: Value,
    provider: &'static str,
    cwd: String,
    name: Option<&'static str>,
    archived: bool,
}

impl Stored {
    fn id(&self) -> String {
        format!("0190f5a4-0000-7000-8000-{:012x}", self.n)
    }

    /// Created `BASE + 100 n`; updated in the opposite order (`BASE + 10000 - 100 n`).
    fn created_at(&self) -> i64 {
        BASE + 100 * self.n as i64
    }

    fn updated_at(&self) -> i64 {
        BASE + 10_000 - 100 * self.n as i64
    }

    /// Write its rollout under `home`, from a header Weft wrote (`template`).
    fn write(&self, home: &Path, template: &Value) {
        let mut header = template.clone();
        header["ts"] = json!(self.updated_at() * 1000);
        let meta = &mut header["payload"];
        meta["id"] = json!(self.id());
        meta["created_at"] = json!(self.created_at());
        meta["cwd"] = json!(self.cwd);
        meta["model_provider"] = json!(self.provider);
        meta["source"] = self.source.clone();
        let mut text = format!("{header}\n");
        if let Some(name) = self.name {
            let line = json!({"ts": self.updated_at() * 1000, "type": "thread_name_set",
                              "payload": {"name": name}});
            text.push_str(&format!("{line}\n"));
        }
        let tree = if self.archived {
            "archived_sessions"
        } else {
            "sessions"
        };
        let dir = home.join(tree).join("2023/11/14");
        std::fs::create_dir_all(&dir).expect("create the day directory");
        let file = dir.join(format!("rollout-2023-11-14T22-13-20-{}.jsonl", self.id()));
        std::fs::write(&file, text).expect("write a rollout");
    }
}

/// Every filter of `thread/list`, both sort keys in both directions, and pagination with a
/// filter, over one live thread and seven stored ones of every source kind, written into the
/// home while the daemon is down (so the next start re-indexes them).
#[tokio::test]
async fn list_with_every_filter() {
    let mut p = Persist::start(Transport::Ws).await;
    let (live, _) = p.thread_with_turn("found it", "find the needle here").await;
    let template = rollout_lines(&path_of(&read(&mut p.client, &live, false).await))[0].clone();
    p.stop().await;

    let dir_a = p.home.path().join("a").display().to_string();
    let dir_b = p.home.path().join("b").display().to_string();
    let stored = |n, source: Value, provider, cwd: &str, name, archived| Stored {
        n,
        source,
        provider,
        cwd: cwd.to_owned(),
        name,
        archived,
    };
    let threads = [
        stored(
            1,
            json!("cli"),
            "mock",
            &dir_a,
            Some("Alpha project"),
            false,
        ),
        stored(
            2,
            json!("vscode"),
            "other",
            &dir_b,
            Some("beta 100% done"),
            false,
        ),
        stored(3, json!("exec"), "mock", &dir_a, None, false),
        stored(4, json!("appServer"), "other", &dir_b, None, false),
        stored(
            5,
            json!({"subAgent": "review"}),
            "mock",
            &dir_a,
            None,
            false,
        ),
        stored(6, json!({"custom": "my-tool"}), "mock", &dir_b, None, false),
        stored(
            7,
            json!("vscode"),
            "mock",
            &dir_a,
            Some("Alpha archived"),
            true,
        ),
    ];
    for thread in &threads {
        thread.write(p.home.path(), &template);
    }
    let owned = threads.map(|t| t.id());
    let [c1, c2, c3, c4, c5, c6, c7] = [0, 1, 2, 3, 4, 5, 6].map(|i| owned[i].as_str());
    let live = live.as_str();

    p.start_again().await;
    // Files added by hand change their day directories: only those are re-read.
    p.daemon
        .wait_for_stderr("re-read the rollouts the thread index may be behind indexed=7")
        .await;
    let c = &mut p.client;

    // Defaults: interactive sources (cli, vscode), not archived, newest first.
    assert_eq!(
        list_ids(c, json!({})).await,
        [live, c2, c1],
        "default listing"
    );
    assert_eq!(
        list_ids(c, json!({"sortDirection": "asc"})).await,
        [c1, c2, live]
    );
    assert_eq!(
        list_ids(c, json!({"archived": false})).await,
        [live, c2, c1]
    );

    // sourceKinds.
    let every = [live, c6, c5, c4, c3, c2, c1];
    assert_eq!(list_ids(c, json!({"sourceKinds": ALL_KINDS})).await, every);
    for (kinds, expected) in [
        (json!(["exec"]), vec![c3]),
        (json!(["appServer"]), vec![c4]),
        (json!(["subAgent"]), vec![c5]),
        (json!(["subAgentReview"]), vec![c5]),
        (json!(["subAgentCompact"]), vec![]),
        (json!(["unknown"]), vec![c6]),
        (json!(["vscode"]), vec![live, c2]),
        (json!(["cli", "exec"]), vec![c3, c1]),
        (json!([]), vec![live, c2, c1]),
    ] {
        assert_eq!(
            list_ids(c, json!({"sourceKinds": kinds})).await,
            expected,
            "sourceKinds {kinds}"
        );
    }

    // sortKey × sortDirection.
    assert_eq!(
        list_ids(
            c,
            json!({"sourceKinds": ALL_KINDS, "sortKey": "created_at", "sortDirection": "desc"})
        )
        .await,
        every
    );
    let by_update = [live, c1, c2, c3, c4, c5, c6];
    assert_eq!(
        list_ids(
            c,
            json!({"sourceKinds": ALL_KINDS, "sortKey": "updated_at"})
        )
        .await,
        by_update
    );
    let mut oldest_update_first = by_update.to_vec();
    oldest_update_first.reverse();
    assert_eq!(
        list_ids(
            c,
            json!({"sourceKinds": ALL_KINDS, "sortKey": "updated_at", "sortDirection": "asc"})
        )
        .await,
        oldest_update_first
    );

    // modelProviders.
    for (providers, expected) in [
        (json!(["other"]), vec![c4, c2]),
        (json!(["mock"]), vec![live, c6, c5, c3, c1]),
        (json!(["mock", "other"]), every.to_vec()),
        (json!([]), every.to_vec()),
        (json!(["nobody"]), vec![]),
    ] {
        assert_eq!(
            list_ids(
                c,
                json!({"sourceKinds": ALL_KINDS, "modelProviders": providers})
            )
            .await,
            expected,
            "modelProviders {providers}"
        );
    }

    // archived.
    let archived = list(c, json!({"archived": true})).await;
    assert_eq!(ids(&archived), [c7]);
    assert!(
        str_at(&archived["data"][0], "/path").contains("/archived_sessions/"),
        "{archived}"
    );
    assert_eq!(archived["data"][0]["name"], "Alpha archived");

    // cwd: one path, several, none matching.
    assert_eq!(
        list_ids(c, json!({"sourceKinds": ALL_KINDS, "cwd": dir_a})).await,
        [c5, c3, c1]
    );
    assert_eq!(
        list_ids(c, json!({"sourceKinds": ALL_KINDS, "cwd": [dir_a, dir_b]})).await,
        [c6, c5, c4, c3, c2, c1]
    );
    assert_eq!(
        list_ids(c, json!({"cwd": p.home.path().display().to_string()})).await,
        [live]
    );
    assert_eq!(
        list_ids(c, json!({"cwd": "/nowhere/at/all"})).await,
        Vec::<String>::new()
    );

    // searchTerm: case-sensitive substring of the name or the preview; `%` and `_` are literal.
    for (term, expected) in [
        ("Alpha", vec![c1]),
        ("alpha", vec![]),
        ("needle", vec![live]),
        ("100%", vec![c2]),
        ("%", vec![c2]),
        ("_", vec![]),
    ] {
        assert_eq!(
            list_ids(c, json!({"searchTerm": term})).await,
            expected,
            "searchTerm {term:?}"
        );
    }
    assert_eq!(
        list_ids(c, json!({"archived": true, "searchTerm": "Alpha"})).await,
        [c7]
    );

    // Pagination with a filter and a sort.
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = list(
            c,
            json!({"sourceKinds": ALL_KINDS, "sortDirection": "asc", "limit": 2, "cursor": cursor}),
        )
        .await;
        pages.push(ids(&page));
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
        assert!(pages.len() < 10, "pagination does not end");
    }
    assert_eq!(
        pages,
        [vec![c1, c2], vec![c3, c4], vec![c5, c6], vec![live]]
    );
    assert_error_containing(
        c.request("thread/list", json!({"cursor": "not a cursor"}))
            .await,
        &["cursor"],
    );

    // What a stored entry says.
    let all = list(c, json!({"sourceKinds": ALL_KINDS})).await;
    let entry = |id: &str| -> Value {
        all["data"]
            .as_array()
            .expect("data")
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} not listed"))
    };
    let first = entry(c1);
    assert_eq!(first["status"]["type"], "notLoaded");
    assert_eq!(first["name"], "Alpha project");
    assert_eq!(first["source"], "cli");
    assert_eq!(first["modelProvider"], "mock");
    assert_eq!(first["cwd"], dir_a.as_str());
    assert_eq!(first["createdAt"], BASE + 100);
    assert_eq!(first["updatedAt"], BASE + 9_900);
    assert_eq!(first["turns"], json!([]));
    assert!(str_at(&first, "/path").ends_with(&format!("-{c1}.jsonl")));
    assert_eq!(entry(c5)["source"], json!({"subAgent": "review"}));
    let live_entry = entry(live);
    assert_eq!(live_entry["preview"], "find the needle here");
    assert_eq!(live_entry["source"], "vscode");

    // A loaded thread is listed with its live status.
    ok(c, "thread/resume", json!({"threadId": live})).await;
    let resumed = list(c, json!({"searchTerm": "needle"})).await;
    assert_eq!(resumed["data"][0]["status"]["type"], "idle");
}

/// Start `n` threads, `batch` requests in flight at a time; their ids in creation order.
async fn start_threads(client: &mut Client, cwd: &str, n: usize, batch: usize) -> Vec<String> {
    let mut created = Vec::with_capacity(n);
    while created.len() < n {
        let mut pending = Vec::new();
        for _ in 0..batch.min(n - created.len()) {
            pending.push(
                client
                    .send_request("thread/start", json!({"cwd": cwd}))
                    .await,
            );
        }
        for id in pending {
            let result = client
                .response_to(&id)
                .await
                .unwrap_or_else(|err| panic!("thread/start failed: {err}"));
            created.push(str_at(&result, "/thread/id"));
        }
    }
    created
}

/// Page through `thread/list` with these params until `nextCursor` is null.
async fn all_pages(client: &mut Client, params: Value, limit: usize) -> Vec<Vec<Value>> {
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut request = params.clone();
        request["limit"] = json!(limit);
        request["cursor"] = cursor;
        let page = list(client, request).await;
        let data = page["data"].as_array().expect("data").clone();
        assert!(
            data.len() <= limit,
            "a page of {} > limit {limit}",
            data.len()
        );
        cursor = page["nextCursor"].clone();
        pages.push(data);
        if cursor.is_null() {
            return pages;
        }
        assert!(pages.len() <= 100, "pagination does not end");
    }
}

/// 250 threads (indexed when they start, no turn needed) paged through with both sort keys and
/// directions: every thread exactly once, in order, even with threads created between pages.
#[tokio::test]
async fn pagination_across_250_threads() {
    let mut p = Persist::start(Transport::Stdio).await;
    let cwd = p.cwd();
    let created = start_threads(&mut p.client, &cwd, 250, 50).await;
    let unique: HashSet<&String> = created.iter().collect();
    assert_eq!(unique.len(), 250);

    // Newest first; new threads created after the first page must not show up on later pages.
    let first = list(&mut p.client, json!({"limit": 30})).await;
    assert_eq!(first["data"].as_array().expect("data").len(), 30);
    let late = start_threads(&mut p.client, &cwd, 3, 3).await;
    let mut seen: Vec<Value> = first["data"].as_array().expect("data").clone();
    let mut pages = 1;
    let mut cursor = first["nextCursor"].clone();
    while !cursor.is_null() {
        let page = list(&mut p.client, json!({"limit": 30, "cursor": cursor})).await;
        let data = page["data"].as_array().expect("data");
        assert!(data.len() <= 30);
        seen.extend(data.iter().cloned());
        cursor = page["nextCursor"].clone();
        pages += 1;
        assert!(pages <= 20, "pagination does not end");
    }
    assert_eq!(pages, 9, "250 threads in pages of 30");
    check_page_run(&seen, &created, "created_at", true);
    for id in &late {
        assert!(
            !seen.iter().any(|t| t["id"] == id.as_str()),
            "a thread created after the first page showed up on a later one"
        );
    }

    // Every thread (253 now) with each sort key and direction.
    let everything: Vec<String> = created.iter().chain(late.iter()).cloned().collect();
    for (key, desc, limit) in [
        ("created_at", false, 100),
        ("updated_at", true, 64),
        ("updated_at", false, 253),
    ] {
        let direction = if desc { "desc" } else { "asc" };
        let pages = all_pages(
            &mut p.client,
            json!({"sortKey": key, "sortDirection": direction}),
            limit,
        )
        .await;
        assert_eq!(pages.len(), 253_usize.div_ceil(limit), "{key} {direction}");
        let flat: Vec<Value> = pages.into_iter().flatten().collect();
        check_page_run(&flat, &everything, key, desc);
    }

    // The default page size is bounded and says there is more.
    let default = list(&mut p.client, json!({})).await;
    let n = default["data"].as_array().expect("data").len();
    assert!((1..253).contains(&n), "default page of {n}");
    assert!(default["nextCursor"].is_string());
    assert!(
        default["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|t| t["status"]["type"] == "idle"),
        "loaded threads are listed with their live status"
    );
}

/// `seen` (the concatenated pages) holds every id of `expected` exactly once, ordered by
/// `(key, id)` in the given direction.
fn check_page_run(seen: &[Value], expected: &[String], key: &str, desc: bool) {
    let ids: Vec<String> = seen.iter().map(|t| str_at(t, "/id")).collect();
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "duplicates across pages ({key})");
    let wanted: HashSet<&String> = expected.iter().collect();
    assert_eq!(unique, wanted, "gaps across pages ({key})");
    let field = if key == "created_at" {
        "createdAt"
    } else {
        "updatedAt"
    };
    let keys: Vec<(i64, String)> = seen
        .iter()
        .map(|t| (t[field].as_i64().expect("a time"), str_at(t, "/id")))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    if desc {
        sorted.reverse();
    }
    assert!(keys == sorted, "pages are not in ({key}, id) order");
}

/// `thread/read` without and with turns, of a loaded thread and of the same thread after a
/// restart (same turns), of a fresh thread; it never loads a thread.
async fn read_with_and_without_turns(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let (thread, run) = p.thread_with_turn("An answer.", "a question").await;
    let fresh = p.start_thread().await;

    let plain = read(&mut p.client, &thread, false).await;
    assert_eq!(plain["id"], thread.as_str());
    assert_eq!(plain["status"]["type"], "idle");
    assert_eq!(plain["preview"], "a question");
    assert_eq!(plain["turns"], json!([]));
    let full = read(&mut p.client, &thread, true).await;
    let live_turns = turns(&full);
    assert_eq!(live_turns.len(), 1);
    let turn = &live_turns[0];
    assert_eq!(turn["id"], run.turn_id.as_str());
    assert_eq!(turn["status"], "completed");
    assert_eq!(turn["itemsView"], "full");
    assert_eq!(item_types(turn), ["userMessage", "agentMessage"]);
    assert_eq!(turn["items"][0]["content"][0]["text"], "a question");
    assert_eq!(turn["items"][1]["text"], "An answer.");
    assert_eq!(read(&mut p.client, &fresh, true).await["turns"], json!([]));

    p.restart().await;

    let stored = read(&mut p.client, &thread, false).await;
    assert_eq!(stored["status"]["type"], "notLoaded");
    assert_eq!(stored["turns"], json!([]));
    for key in [
        "id",
        "preview",
        "createdAt",
        "path",
        "cwd",
        "model",
        "modelProvider",
        "source",
        "name",
        "forkedFromId",
        "ephemeral",
        "cliVersion",
    ] {
        assert_eq!(stored[key], plain[key], "`{key}` differs once stored");
    }
    assert!(stored["updatedAt"].as_i64() >= plain["updatedAt"].as_i64());
    let stored_full = read(&mut p.client, &thread, true).await;
    assert_eq!(
        turns(&stored_full),
        live_turns,
        "the stored turns differ from the live ones"
    );
    let stored_fresh = read(&mut p.client, &fresh, true).await;
    assert_eq!(stored_fresh["turns"], json!([]));
    assert_eq!(stored_fresh["preview"], "");
    assert!(
        loaded(&mut p.client).await.is_empty(),
        "thread/read loaded a thread"
    );
}

on_both_transports!(read_with_and_without_turns);
