//! Requests a thread answers itself, through its mailbox: `turn/start`, `turn/steer`,
//! `turn/interrupt` and `thread/compact/start`. These handlers never wait: they check the
//! params and return the op, carrying the dispatcher's [`ThreadReply`], that the dispatcher
//! queues on the loaded thread (`Dispatcher::to_thread`), so the router can run them in arrival
//! order and two requests sent back to back reach the thread in that order.

use std::path::PathBuf;

use weft_core::thread::{InputMode, Op, Submitted, TurnOverrides};
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::thread_api::{ThreadCompactStartParams, ThreadCompactStartResponse};
use weft_protocol::turn_api::{
    TurnInterruptParams, TurnInterruptResponse, TurnStartParams, TurnStartResponse,
    TurnSteerParams, TurnSteerResponse,
};
use weft_protocol::{Turn, UserInput};

use crate::dispatch::{HandlerResult, ThreadReply};

/// `turn/start`: starts a turn, or steers the input into the running one.
pub fn start(params: TurnStartParams, reply: ThreadReply<TurnStartResponse>) -> HandlerResult<Op> {
    check_input(&params.input)?;
    if params.permissions.is_some() && params.sandbox_policy.is_some() {
        return Err(JsonRpcError::invalid_request(
            "`permissions` cannot be combined with `sandboxPolicy`",
        ));
    }
    let overrides = TurnOverrides {
        model: params.model,
        cwd: params.cwd.map(PathBuf::from),
        approval_policy: params.approval_policy,
        approvals_reviewer: params.approvals_reviewer,
        sandbox: params.sandbox_policy,
        reasoning_effort: params.effort,
        reasoning_summary: params.summary,
        collaboration_mode: params.collaboration_mode,
        permission_profile: params.permissions,
        workspace_roots: params
            .runtime_workspace_roots
            .map(|roots| roots.into_iter().map(PathBuf::from).collect()),
        output_schema: params.output_schema,
        root_turn_id: None,
    };
    let reply = reply.into_core(|submitted: Submitted| {
        let turn = match submitted {
            Submitted::Started(turn) => *turn,
            Submitted::Steered(turn_id) => Turn::in_progress(turn_id, None),
        };
        TurnStartResponse { turn }
    });
    Ok(Op::Submit {
        input: params.input,
        mode: InputMode::StartOrSteer,
        overrides,
        client_id: params.client_user_message_id,
        reply,
    })
}

/// `turn/steer`: more input for the running turn, which must be `expectedTurnId`.
pub fn steer(params: TurnSteerParams, reply: ThreadReply<TurnSteerResponse>) -> HandlerResult<Op> {
    check_input(&params.input)?;
    let reply = reply.into_core(|submitted: Submitted| {
        let turn_id = match submitted {
            Submitted::Started(turn) => turn.id,
            Submitted::Steered(turn_id) => turn_id,
        };
        TurnSteerResponse { turn_id }
    });
    Ok(Op::Submit {
        input: params.input,
        mode: InputMode::Steer {
            expected_turn_id: params.expected_turn_id.to_string(),
        },
        overrides: TurnOverrides::default(),
        client_id: params.client_user_message_id,
        reply,
    })
}

/// `turn/interrupt`.
pub fn interrupt(
    params: TurnInterruptParams,
    reply: ThreadReply<TurnInterruptResponse>,
) -> HandlerResult<Op> {
    Ok(Op::Interrupt {
        turn_id: params.turn_id.to_string(),
        reply: reply.into_core(|()| TurnInterruptResponse {}),
    })
}

/// `thread/compact/start`: a compaction turn.
pub fn compact(
    _params: ThreadCompactStartParams,
    reply: ThreadReply<ThreadCompactStartResponse>,
) -> HandlerResult<Op> {
    Ok(Op::Compact {
        reply: reply.into_core(|()| ThreadCompactStartResponse {}),
    })
}

/// Input kinds Weft cannot send to a model are refused up front rather than dropped.
fn check_input(input: &[UserInput]) -> Result<(), JsonRpcError> {
    for part in input {
        let problem = match part {
            UserInput::Image {
                url: None,
                file_id: Some(_),
                ..
            } => {
                "image inputs by `fileId` are not supported by Weft; send a `url` or a `localImage`"
            }
            UserInput::Image {
                url: None,
                file_id: None,
                ..
            } => "image input needs a `url`",
            UserInput::Image {
                url: Some(_),
                file_id: Some(_),
                ..
            } => "image input takes either `url` or `fileId`, not both",
            UserInput::Text { .. } | UserInput::Image { .. } | UserInput::LocalImage { .. } => {
                continue;
            }
            _ => "this input type is not supported by Weft yet",
        };
        return Err(JsonRpcError::invalid_request(problem));
    }
    Ok(())
}
