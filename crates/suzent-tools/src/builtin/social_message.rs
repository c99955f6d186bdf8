//! `social_message` (seed 000 "Social & Output"): list the contacts of the connected messaging
//! channels (no approval) or send a message to one (asks in `default` mode). The recipient is
//! one field, `CHANNEL:CONVERSATION` (`telegram:42`), so destination rules name it directly:
//! `recipient = "telegram:42"` allows that conversation, `recipient = "telegram:*"` the whole
//! channel. Sending to a conversation the channel has never seen is refused by the runtime
//! unless such a rule allows it.

use crate::tool::{ToolContext, ToolError, ToolSpec};
use crate::typed::TypedTool;
use schemars::JsonSchema;
use serde::Deserialize;
use suzent_permissions::ToolAccess;

/// Most contacts one `list_contacts` page holds.
pub const MAX_CONTACTS_PAGE: usize = 50;
/// Longest message the tool sends (the channel splits it at the platform's limit).
pub const MAX_SOCIAL_MESSAGE_CHARS: usize = 20_000;

fn default_limit() -> usize {
    10
}

/// Arguments of `social_message`: either `list_contacts: true` (with `query`, `offset`,
/// `limit`), or `recipient` and `message`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SocialMessageArgs {
    /// true: list contacts instead of sending.
    #[serde(default)]
    pub list_contacts: bool,
    /// list_contacts: only contacts whose name, channel or recipient contains this text.
    #[serde(default)]
    pub query: Option<String>,
    /// list_contacts: skip this many contacts (default 0; take `nextOffset` of the last page).
    #[serde(default)]
    pub offset: usize,
    /// list_contacts: contacts per page (default 10, max 50).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// send: the contact's `recipient` from list_contacts, `CHANNEL:CONVERSATION`
    /// (e.g. `telegram:42`).
    #[serde(default)]
    pub recipient: Option<String>,
    /// send: the text to send.
    #[serde(default)]
    pub message: Option<String>,
}

/// Lists contacts and sends messages on the messaging channels.
#[derive(Debug)]
pub struct SocialMessageTool {
    spec: ToolSpec,
}

impl SocialMessageTool {
    /// The tool.
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new::<SocialMessageArgs>(
                "social_message",
                "SocialMessageTool",
                "social",
                "Social message",
                "Send a message to someone on a connected messaging channel (Telegram, ...), or \
                 list the contacts you can reach with list_contacts=true (query, offset, limit). \
                 Send with recipient (as list_contacts gives it, e.g. telegram:42) and message; \
                 sending asks the user first.",
            )
            .requires_approval(true)
            .deferrable(false),
        }
    }
}

impl Default for SocialMessageTool {
    fn default() -> Self {
        Self::new()
    }
}

fn host(ctx: &ToolContext) -> Result<&dyn crate::hosts::SocialHost, ToolError> {
    ctx.social.as_deref().ok_or_else(|| {
        ToolError::Failed("messaging channels are not available in this session".into())
    })
}

/// The recipient and message of a send, checked.
fn send_fields(args: &SocialMessageArgs) -> Result<(&str, &str), ToolError> {
    if args.query.is_some() || args.offset != 0 || args.limit != default_limit() {
        return Err(ToolError::InvalidArguments(
            "query, offset and limit go with list_contacts=true; to send, give recipient and message only".into(),
        ));
    }
    let recipient = args.recipient.as_deref().map(str::trim).unwrap_or_default();
    let Some((channel, conversation)) = recipient.split_once(':') else {
        return Err(ToolError::InvalidArguments(format!(
            "field `recipient`: '{recipient}' is not CHANNEL:CONVERSATION (e.g. telegram:42); take it from list_contacts=true"
        )));
    };
    if channel.is_empty() || conversation.is_empty() {
        return Err(ToolError::InvalidArguments(format!(
            "field `recipient`: '{recipient}' is not CHANNEL:CONVERSATION (e.g. telegram:42)"
        )));
    }
    let message = args.message.as_deref().unwrap_or_default();
    if message.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "field `message` is empty".into(),
        ));
    }
    if message.chars().count() > MAX_SOCIAL_MESSAGE_CHARS {
        return Err(ToolError::InvalidArguments(format!(
            "field `message`: longer than {MAX_SOCIAL_MESSAGE_CHARS} characters"
        )));
    }
    Ok((recipient, message))
}

#[async_trait::async_trait]
impl TypedTool for SocialMessageTool {
    type Args = SocialMessageArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn access(&self, args: &SocialMessageArgs, _: &ToolContext) -> Result<ToolAccess, ToolError> {
        if !args.list_contacts {
            send_fields(args)?;
        } else if args.recipient.is_some() || args.message.is_some() {
            return Err(ToolError::InvalidArguments(
                "list_contacts=true takes no recipient or message".into(),
            ));
        }
        Ok(ToolAccess::Other)
    }

    /// Listing contacts never asks; sending does (unless a rule or the mode decides).
    fn needs_approval(&self, args: &SocialMessageArgs, _: &ToolContext) -> bool {
        !args.list_contacts
    }

    async fn call(&self, args: SocialMessageArgs, ctx: &ToolContext) -> Result<String, ToolError> {
        if args.list_contacts {
            if args.limit == 0 || args.limit > MAX_CONTACTS_PAGE {
                return Err(ToolError::InvalidArguments(format!(
                    "field `limit`: must be between 1 and {MAX_CONTACTS_PAGE}, got {}",
                    args.limit
                )));
            }
            let query = args
                .query
                .as_deref()
                .map(str::trim)
                .filter(|q| !q.is_empty());
            let page = host(ctx)?
                .contacts(query, args.offset, args.limit)
                .await
                .map_err(ToolError::Failed)?;
            return serde_json::to_string_pretty(&page)
                .map_err(|e| ToolError::Failed(format!("cannot encode the contacts: {e}")));
        }
        let (recipient, message) = send_fields(&args)?;
        host(ctx)?
            .send(&ctx.chat_id, recipient, message)
            .await
            .map_err(ToolError::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Tool;
    use serde_json::json;

    fn ctx() -> ToolContext {
        let dir = std::env::temp_dir();
        ToolContext::new(
            "chat",
            "me",
            dir.clone(),
            dir.clone(),
            dir.clone(),
            std::sync::Arc::new(
                suzent_permissions::PathPolicy::new(&dir, &[])
                    .unwrap_or_else(|e| panic!("path policy: {e}")),
            ),
        )
    }

    #[test]
    fn listing_needs_no_approval_sending_does_and_bad_recipients_are_refused() {
        let tool = SocialMessageTool::new();
        let c = ctx();
        assert!(!Tool::needs_approval(
            &tool,
            &json!({"list_contacts": true}),
            &c
        ));
        assert!(Tool::needs_approval(
            &tool,
            &json!({"recipient": "telegram:42", "message": "hi"}),
            &c
        ));
        assert!(!Tool::spec(&tool).deferrable);
        assert_eq!(Tool::spec(&tool).capability, "social");
        for bad in [
            json!({"recipient": "42", "message": "hi"}),
            json!({"recipient": "telegram:42", "message": " "}),
            json!({"recipient": "telegram:42", "message": "hi", "query": "x"}),
            json!({"list_contacts": true, "recipient": "telegram:42"}),
        ] {
            assert!(Tool::access(&tool, &bad, &c).is_err(), "{bad}");
        }
    }
}
