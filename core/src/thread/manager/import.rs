//! A stored thread made from another agent's conversation (`externalAgentConfig/import` of
//! `SESSIONS`, docs/protocol.md §7.39): its rollout written through the one rollout writer
//! (header, then each turn's start, its messages as history and as completed items, its end),
//! and its row in the state index; the thread is not loaded. It lists, reads and resumes as
//! any stored thread.

use std::path::PathBuf;

use weft_protocol::{
    AgentMessageItem, ThreadId, ThreadItem, ThreadItemDetails, TurnId, TurnStatus, UserInput,
    UserMessageItem,
};

use super::{ThreadManager, new_thread};
use crate::model::{ResponseItem, Role};
use crate::rollout::{RolloutLine, RolloutRecord, RolloutWriter, SessionMeta, TurnContextRecord};
use crate::state::ThreadRow;
use crate::thread::error::CoreError;
use crate::thread::options::StartThreadOptions;

/// One turn of an imported conversation: a user message, then what the agent said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTurn {
    /// The user's message.
    pub user: String,
    /// The agent's messages, in order.
    pub agent: Vec<String>,
    /// When it started, Unix seconds.
    pub started_at: i64,
    /// When it ended, Unix seconds.
    pub completed_at: i64,
}

/// A conversation to store as a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedThread {
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its name (`thread/name/set`), when it has one.
    pub name: Option<String>,
    /// When it was created, Unix seconds.
    pub created_at: i64,
    /// Its turns (at least one).
    pub turns: Vec<ImportedTurn>,
    /// The importing client's `clientInfo.name`.
    pub originator: Option<String>,
}

impl ThreadManager {
    /// Store `imported` as a new thread with the config's defaults for its settings; returns
    /// its id.
    pub async fn import_thread(&self, imported: ImportedThread) -> Result<ThreadId, CoreError> {
        if imported.turns.is_empty() {
            return Err(CoreError::Refused("an imported thread needs a turn".into()));
        }
        let options = StartThreadOptions {
            cwd: Some(imported.cwd.clone()),
            originator: imported.originator.clone(),
            ..StartThreadOptions::default()
        };
        let settings = options.settings(&self.services.live.current())?;
        let mut thread = new_thread(&settings, false);
        thread.originator = imported.originator.clone();
        thread.created_at = imported.created_at;
        let context = TurnContextRecord::from_settings(&settings);
        let mut lines = Vec::new();
        let mut item = 0usize;
        let mut next_item = || {
            item += 1;
            weft_protocol::ItemId::from(format!("item-{item}"))
        };
        let at = |secs: i64| secs.saturating_mul(1000);
        for (index, turn) in imported.turns.iter().enumerate() {
            let turn_id = TurnId::from(format!("external-import-turn-{}", index + 1));
            lines.push(RolloutLine {
                ts: at(turn.started_at),
                record: RolloutRecord::TurnStarted {
                    turn_id: turn_id.clone(),
                    started_at: turn.started_at,
                    context: context.clone(),
                },
            });
            lines.push(RolloutLine {
                ts: at(turn.started_at),
                record: RolloutRecord::ResponseItem(ResponseItem::user_text(turn.user.clone())),
            });
            let user = UserMessageItem {
                id: next_item(),
                client_id: None,
                content: vec![UserInput::Text {
                    text: turn.user.clone(),
                    text_elements: Vec::new(),
                }],
            };
            lines.push(RolloutLine {
                ts: at(turn.started_at),
                record: RolloutRecord::ItemCompleted {
                    turn_id: turn_id.clone(),
                    item: ThreadItem::new(ThreadItemDetails::UserMessage(user)),
                },
            });
            for text in &turn.agent {
                lines.push(RolloutLine {
                    ts: at(turn.completed_at),
                    record: RolloutRecord::ResponseItem(ResponseItem::text_message(
                        Role::Assistant,
                        text.clone(),
                    )),
                });
                let message = AgentMessageItem::new(next_item(), text.clone());
                lines.push(RolloutLine {
                    ts: at(turn.completed_at),
                    record: RolloutRecord::ItemCompleted {
                        turn_id: turn_id.clone(),
                        item: ThreadItem::new(ThreadItemDetails::AgentMessage(message)),
                    },
                });
            }
            lines.push(RolloutLine {
                ts: at(turn.completed_at),
                record: RolloutRecord::TurnEnded {
                    turn_id,
                    status: TurnStatus::Completed,
                    error: None,
                    completed_at: turn.completed_at,
                    duration_ms: None,
                },
            });
        }
        let last = imported.turns.last().map_or(imported.created_at, |turn| {
            turn.completed_at.max(turn.started_at)
        });
        if let Some(name) = &imported.name {
            lines.push(RolloutLine {
                ts: at(last),
                record: RolloutRecord::ThreadNameSet { name: name.clone() },
            });
        }
        let meta = SessionMeta::new(&thread, &settings);
        let writer =
            RolloutWriter::create_stamped(&self.services.config.home, meta, at(thread.created_at))
                .await?;
        thread.path = Some(writer.path().display().to_string());
        thread.name = imported.name.clone();
        thread.preview = imported.turns[0].user.clone();
        thread.updated_at = last.max(thread.created_at);
        thread.recency_at = imported.turns.iter().map(|turn| turn.started_at).max();
        let path = writer.path().to_path_buf();
        self.index(&ThreadRow::from_thread(&thread, &path, false))
            .await;
        for line in lines {
            writer.append_line(line);
        }
        writer.flush(true).await?;
        writer.close().await?;
        self.mark_dirty(&thread.id, false).await;
        Ok(thread.id)
    }
}
