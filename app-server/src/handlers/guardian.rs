//! `thread/approveGuardianDeniedAction`: the user allows one action the guardian denied
//! (docs/protocol.md §9.9).

use weft_core::guardian::DeniedReview;
use weft_core::thread::Op;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::{
    ThreadApproveGuardianDeniedActionParams, ThreadApproveGuardianDeniedActionResponse,
};

use crate::dispatch::{HandlerResult, ThreadReply};

/// Reads the denied review (the reference's core event, snake_case) and hands it to the
/// thread, which leaves the approval for the model; a malformed event is refused with the
/// reference's error.
pub fn approve_denied(
    params: ThreadApproveGuardianDeniedActionParams,
    reply: ThreadReply<ThreadApproveGuardianDeniedActionResponse>,
) -> HandlerResult<Op> {
    let denial: DeniedReview = serde_json::from_value(params.event).map_err(|err| {
        JsonRpcError::invalid_request(format!("invalid Guardian denial event: {err}"))
    })?;
    Ok(Op::ApproveGuardianDenial {
        denial,
        reply: reply.into_core(|()| ThreadApproveGuardianDeniedActionResponse {}),
    })
}
