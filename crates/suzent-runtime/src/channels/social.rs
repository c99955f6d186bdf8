//! The channels as `social_message` sees them: contacts are the conversations the channels
//! have seen (structured, paginated); a send goes to one of them, or to a conversation a rule
//! allows by name (`recipient = "telegram:42"` for tool `social_message`).

use super::Channels;
use crate::rules::RuleScope;
use async_trait::async_trait;
use suzent_core::{Behavior, RuleMatcher};
use suzent_tools::{Contact, ContactPage, SocialHost};

/// Whether an allow rule for `social_message` in force for `chat_id` names `recipient`.
async fn rule_allows(channels: &Channels, chat_id: &str, recipient: &str) -> Result<bool, String> {
    let rules = channels
        .rules
        .in_force(RuleScope::Chat(chat_id))
        .await
        .map_err(|e| e.to_string())?;
    let recipient = recipient.to_ascii_lowercase();
    let applies = |tool: &str| matches!(tool, "social_message" | "SocialMessageTool" | "*");
    let denied = rules.iter().any(|r| {
        applies(&r.tool)
            && r.behavior == Behavior::Deny
            && matches!(&r.matcher, RuleMatcher::Destination { pattern }
                if suzent_permissions::destination_matches(pattern, &recipient))
    });
    let allowed = rules.iter().any(|r| {
        applies(&r.tool)
            && r.behavior == Behavior::Allow
            && matches!(&r.matcher, RuleMatcher::Destination { pattern }
                if suzent_permissions::destination_matches(pattern, &recipient))
    });
    Ok(allowed && !denied)
}

#[async_trait]
impl SocialHost for Channels {
    async fn contacts(
        &self,
        query: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<ContactPage, String> {
        let configured: Vec<String> = self
            .settings
            .config()
            .channels
            .into_iter()
            .map(|c| c.name)
            .collect();
        let query = query.map(str::to_lowercase);
        let matching: Vec<Contact> = self
            .store
            .channel_conversations(None)
            .await
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|c| configured.contains(&c.channel))
            .map(|c| Contact {
                recipient: format!("{}:{}", c.channel, c.conversation),
                channel: c.channel,
                name: c.name,
                last_seen: c.last_seen.to_rfc3339(),
            })
            .filter(|c| {
                query.as_deref().is_none_or(|q| {
                    c.name.to_lowercase().contains(q)
                        || c.channel.to_lowercase().contains(q)
                        || c.recipient.to_lowercase().contains(q)
                })
            })
            .collect();
        let total = matching.len();
        let contacts: Vec<Contact> = matching.into_iter().skip(offset).take(limit).collect();
        let end = offset.saturating_add(contacts.len());
        Ok(ContactPage {
            contacts,
            total,
            next_offset: (end < total).then_some(end),
        })
    }

    async fn send(&self, chat_id: &str, recipient: &str, message: &str) -> Result<String, String> {
        let Some((name, conversation)) = recipient.split_once(':') else {
            return Err(format!(
                "'{recipient}' is not CHANNEL:CONVERSATION (e.g. telegram:42)"
            ));
        };
        let config = self.require(name).map_err(|e| e.to_string())?;
        if !config.enabled {
            return Err(format!("channel '{name}' is switched off in the settings"));
        }
        let seen = self
            .store
            .channel_conversation(name, conversation)
            .await
            .map_err(|e| e.to_string())?;
        if seen.is_none() && !rule_allows(self, chat_id, recipient).await? {
            return Err(format!(
                "channel '{name}' has never seen '{recipient}': only conversations it has seen \
                 can be messaged (see list_contacts=true), unless the user adds a rule that \
                 allows this recipient"
            ));
        }
        let Some(client) = self.client(name) else {
            return Err(format!(
                "channel '{name}' is not connected ({:?}); try again later",
                self.status(&config).state
            ));
        };
        let parts = client
            .send(conversation, message)
            .await
            .map_err(|e| format!("sending to '{recipient}' failed: {e}"))?;
        let to = seen
            .map(|c| c.name)
            .unwrap_or_else(|| recipient.to_string());
        Ok(format!(
            "sent to {to} ({recipient}) on {} in {} message{}",
            config.platform.label(),
            parts.len(),
            if parts.len() == 1 { "" } else { "s" }
        ))
    }
}
