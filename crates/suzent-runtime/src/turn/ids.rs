//! Tool-call ids are not keys (issue #13 item 1). A provider's id correlates a call with its
//! result inside one request and nothing more: two chats, two turns or two calls of one response
//! may carry the same id (OpenAI-compatible servers often number them `call_0`, `call_1`; some
//! send `""`). Before a model step is stored, each call claims its step id in the store
//! ([`suzent_store::Store::claim_tool_call_id`], atomic across processes): the provider's id when
//! no call of any chat used it before, else a fresh one of ours. The store keys tool steps and
//! approvals by it, events carry it, and providers send it back on the next request, where it is
//! unique too.

use suzent_core::ToolCall;
use suzent_store::{Store, StoreError};

/// A fresh step id: `call_` and the 32 hex digits of a UUIDv7 (37 characters, under OpenAI's
/// 40-character limit on tool-call ids and within Anthropic's `[a-zA-Z0-9_-]+` pattern).
pub(super) fn fresh_step_id() -> String {
    format!("call_{}", uuid::Uuid::now_v7().simple())
}

/// Gives each call of one model response a step id claimed for `chat_id`, in place: its own id
/// when that was free, else a fresh one (logged with the provider's id at debug level).
///
/// Errors: the store's, when an id cannot be claimed.
pub(super) async fn claim_step_ids(
    store: &Store,
    chat_id: &str,
    calls: &mut [ToolCall],
) -> Result<(), StoreError> {
    for call in calls {
        if store.claim_tool_call_id(chat_id, &call.id).await? {
            continue;
        }
        let ours = loop {
            let id = fresh_step_id();
            if store.claim_tool_call_id(chat_id, &id).await? {
                break id;
            }
        };
        tracing::debug!(chat = %chat_id, provider_id = %call.id, step_id = %ours, tool = %call.name, "tool call id already used or empty: the call gets a fresh step id");
        call.id = ours;
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
