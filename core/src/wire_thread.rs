//! The one constructor of the wire [`Thread`] in core. A new thread, a replayed rollout and an
//! index row all start from [`base`], which fills what follows from the id and the source
//! (session id, parent, agent nickname and role) and the defaults Weft always reports; each
//! caller then sets only the facts it knows, with struct update syntax.

use weft_protocol::{
    SessionSource, SubAgentSource, Thread, ThreadHistoryMode, ThreadId, ThreadStatus,
};

/// A thread with this id and source, created (and last updated) at `created_at`: status
/// `notLoaded`, no turns, not ephemeral, no path, created by this build of Weft.
pub fn base(id: ThreadId, source: SessionSource, created_at: i64) -> Thread {
    Thread {
        session_id: id.to_string(),
        id,
        forked_from_id: None,
        parent_thread_id: SubAgentSource::parent_of(&source),
        preview: String::new(),
        ephemeral: false,
        section: None,
        section_entered_at: None,
        project_id: None,
        history_mode: ThreadHistoryMode::default(),
        model_provider: String::new(),
        model: None,
        reasoning_effort: None,
        created_at,
        updated_at: created_at,
        recency_at: Some(created_at),
        status: ThreadStatus::NotLoaded,
        path: None,
        cwd: String::new(),
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        originator: None,
        agent_nickname: SubAgentSource::nickname_of(&source),
        agent_role: SubAgentSource::role_of(&source),
        source,
        thread_source: None,
        git_info: None,
        name: None,
        turns: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_agent_gets_its_parent_and_names_from_its_source() {
        let parent = crate::time::new_thread_id();
        let source = SessionSource::SubAgent(SubAgentSource::ThreadSpawn {
            parent_thread_id: parent.clone(),
            depth: 1,
            agent_path: None,
            agent_nickname: Some("Ada".into()),
            agent_role: Some("explorer".into()),
        });
        let thread = base(crate::time::new_thread_id(), source, 7);
        assert_eq!(thread.parent_thread_id, Some(parent));
        assert_eq!(thread.agent_nickname.as_deref(), Some("Ada"));
        assert_eq!(thread.agent_role.as_deref(), Some("explorer"));
        assert_eq!(thread.session_id, thread.id.to_string());
        assert_eq!(
            (thread.created_at, thread.updated_at, thread.recency_at),
            (7, 7, Some(7))
        );
    }

    #[test]
    fn a_client_thread_is_a_root() {
        let thread = base(crate::time::new_thread_id(), SessionSource::Vscode, 1);
        assert_eq!(thread.parent_thread_id, None);
        assert_eq!(thread.agent_nickname, None);
        assert_eq!(thread.status, ThreadStatus::NotLoaded);
    }
}
