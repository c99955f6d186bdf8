//! Tool-call ids are not keys (issue #13 item 1). A provider's id correlates a call with its
//! result inside one request and nothing more: two chats, two turns or two calls of one response
//! may carry the same id (OpenAI-compatible servers often number them `call_0`, `call_1`; some
//! send `""`). Before a model step is stored, each call claims its step id in the store
//! ([`suzent_store::Store::claim_tool_call_id`], atomic across processes, sent together with the
//! message: [`suzent_store::Store::append_claiming`]): the provider's id when no call of any chat
//! used it before, else a fresh one of ours. The store keys tool steps and
//! approvals by it, events carry it, and providers send it back on the next request, where it is
//! unique too.

use suzent_core::{ChatMessage, ToolCall};
use suzent_store::{Store, StoreError};

/// A fresh step id: `call_` and the 32 hex digits of a UUIDv7 (37 characters, under OpenAI's
/// 40-character limit on tool-call ids and within Anthropic's `[a-zA-Z0-9_-]+` pattern).
pub(super) fn fresh_step_id() -> String {
    format!("call_{}", uuid::Uuid::now_v7().simple())
}

/// Stores the assistant message of one model step with its `text` and `calls`, each call under
/// a step id claimed for `chat_id` (in place): its own id when that was free, else a fresh one
/// (logged with the provider's id at debug level). Returns the message's seq and the message.
///
/// The common case is one round trip ([`Store::append_claiming`]): the ids are claimed in the
/// statement sent with the message's. Empty ids and ids repeated within the response get fresh
/// ones first. When an id was taken before (a server that numbers its calls `call_0`,
/// `call_1`), the taken ones get fresh ids (the only call's at once, else those the store says
/// are taken) and the step is sent again; after [`SEND_ATTEMPTS`] each call claims its id on
/// its own and the message is stored after.
///
/// Errors: the store's, when an id cannot be claimed or the message not stored.
pub(super) async fn store_model_step(
    store: &Store,
    chat_id: &str,
    run_id: &str,
    text: String,
    mut calls: Vec<ToolCall>,
) -> Result<(i64, ChatMessage), StoreError> {
    for i in 0..calls.len() {
        let repeated = calls[..i].iter().any(|c| c.id == calls[i].id);
        if calls[i].id.is_empty() || repeated {
            renew(chat_id, &mut calls[i]);
        }
    }
    let mut message = ChatMessage::Assistant {
        text,
        tool_calls: calls,
    };
    for _ in 0..SEND_ATTEMPTS {
        if let Some(seq) = store
            .append_claiming(chat_id, Some(run_id), &message)
            .await?
        {
            return Ok((seq, message));
        }
        let ChatMessage::Assistant { tool_calls, .. } = &mut message else {
            break;
        };
        if let [only] = tool_calls.as_mut_slice() {
            renew(chat_id, only);
            continue;
        }
        let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
        let taken = store.taken_tool_call_ids(&ids).await?;
        for call in tool_calls.iter_mut().filter(|c| taken.contains(&c.id)) {
            renew(chat_id, call);
        }
    }
    if let ChatMessage::Assistant { tool_calls, .. } = &mut message {
        claim_step_ids(store, chat_id, tool_calls).await?;
    }
    let seq = store
        .append_message(chat_id, Some(run_id), &message)
        .await?;
    Ok((seq, message))
}

/// How many times a model step is sent with its claims before its calls claim their ids one
/// at a time: a fresh id is only taken when another process claims it meanwhile.
const SEND_ATTEMPTS: usize = 3;

/// Gives `call` a fresh step id in place, logged with the provider's id.
fn renew(chat_id: &str, call: &mut ToolCall) {
    let ours = fresh_step_id();
    tracing::debug!(chat = %chat_id, provider_id = %call.id, step_id = %ours, tool = %call.name, "tool call id already used or empty: the call gets a fresh step id");
    call.id = ours;
}

/// Gives each call a step id claimed for `chat_id`, one call at a time, in place: its own id
/// when that was free, else a fresh one.
///
/// Errors: the store's, when an id cannot be claimed.
async fn claim_step_ids(
    store: &Store,
    chat_id: &str,
    calls: &mut [ToolCall],
) -> Result<(), StoreError> {
    for call in calls {
        if store.claim_tool_call_id(chat_id, &call.id).await? {
            continue;
        }
        loop {
            renew(chat_id, call);
            if store.claim_tool_call_id(chat_id, &call.id).await? {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_step_id_fits_every_provider() {
        let id = fresh_step_id();
        assert!(id.starts_with("call_") && id.len() == 37, "{id}");
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{id}"
        );
        assert_ne!(id, fresh_step_id());
    }
}
