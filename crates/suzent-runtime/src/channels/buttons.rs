//! Approvals answered with the platform's buttons (issue 20 item 2), where the channel's client
//! has them ([`Channel::has_buttons`]: Telegram's inline keyboards, Discord's message
//! components, Slack's Block Kit buttons; not Matrix).
//!
//! When a turn of a channel with the `ask_in_app` profile waits for approvals, each approval
//! goes to the conversation as a prompt with two buttons, "Allow once" and "Reject", besides
//! the app's dialog (which still works). Each button carries a fresh random token (122 bits,
//! a v4 UUID), never the approval id: the token is looked up in this process's table, which
//! binds it to one approval, one action, one channel and one conversation. A press decides
//! only when all of these hold, else it is refused with a short answer and nothing changes:
//!
//! - the token is in the table (a forged, replayed or pre-restart token is not);
//! - the press comes from the same channel and conversation the prompt went to;
//! - the person who pressed is on the channel's allow-list now;
//! - the approval is still pending (one answered in the app, or by the other button, is not).
//!
//! A deciding press removes both tokens of its approval first, so two presses never decide
//! twice. The table lives in memory: after a restart the old buttons are refused as no longer
//! valid and the approval is answered in the app.

use super::{Channels, WAITING_TEXT};
use crate::error::RuntimeError;
use crate::turn::{OnAsk, RunOptions, RunSummary};
use std::sync::{PoisonError, Weak};
use suzent_channels::{Button, Channel, Press};
use suzent_core::{ApprovalActionId, ApprovalResponse, ChannelProfile};
use suzent_store::{ApprovalStatus, ChannelConversation, PendingApproval};

/// Answers approvals and continues the turn that waits for them (the turn service).
#[async_trait::async_trait]
pub(crate) trait ChannelTurns: Send + Sync {
    /// Records `answers` for `chat_id` and runs the rest of its turn with `options`.
    async fn answer_and_continue(
        &self,
        chat_id: &str,
        answers: Vec<ApprovalResponse>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError>;
}

#[async_trait::async_trait]
impl ChannelTurns for crate::turn::TurnService {
    async fn answer_and_continue(
        &self,
        chat_id: &str,
        answers: Vec<ApprovalResponse>,
        options: RunOptions,
    ) -> Result<RunSummary, RuntimeError> {
        self.resume(chat_id, answers, options).await
    }
}

/// What one button's token stands for.
#[derive(Debug, Clone)]
pub(super) struct Binding {
    channel: String,
    conversation: String,
    chat_id: String,
    approval_id: String,
    action: ApprovalActionId,
}

/// The answer to a press whose token is unknown.
pub const PRESS_INVALID: &str = "This button is no longer valid. Please answer in the Suzent app.";
/// The answer to a press from another conversation than the prompt's.
pub const PRESS_ELSEWHERE: &str = "This button belongs to another conversation.";
/// The answer to a press by someone not on the channel's allow-list.
pub const PRESS_NOT_ALLOWED: &str = "Only people this assistant answers may decide this.";
/// The answer to a press on an approval that was answered already.
pub const PRESS_DECIDED: &str = "This was already answered.";

/// The prompt text of an approval: what waits, and where it can be answered.
fn prompt(approval: &PendingApproval) -> String {
    let mut reason: String = approval.decision.reason.chars().take(300).collect();
    if reason.len() < approval.decision.reason.len() {
        reason.push('…');
    }
    format!(
        "{WAITING_TEXT}\nThe assistant wants to use {}: {reason}\nAllow it once or reject it \
         here, or answer in the app.",
        approval.tool_name
    )
}

fn token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl Channels {
    /// Connects the service to the turn service, which continues a turn once a button answered
    /// its approval (set once, after both exist; weak, as the turn service holds this one).
    pub(crate) fn set_turns(&self, turns: Weak<dyn ChannelTurns>) {
        let _ = self.turns.set(turns);
    }

    /// Sends a prompt with buttons for each pending approval of `chat_id` that has none yet.
    /// Returns `false` when none could be sent (the caller tells the conversation that it
    /// waits, in words).
    pub(super) async fn prompt_approvals(
        &self,
        client: &dyn Channel,
        conversation: &ChannelConversation,
        chat_id: &str,
    ) -> bool {
        let pending = match self.store.pending_approvals(Some(chat_id)).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(chat = %chat_id, "reading pending approvals failed: {e}");
                return false;
            }
        };
        // Buttons of this chat's approvals that were answered elsewhere (in the app) go.
        self.buttons
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, b| b.chat_id != chat_id || pending.iter().any(|p| p.id == b.approval_id));
        let mut prompted = false;
        for approval in pending {
            let (allow, reject) = {
                let mut buttons = self.buttons.lock().unwrap_or_else(PoisonError::into_inner);
                if buttons.values().any(|b| b.approval_id == approval.id) {
                    prompted = true;
                    continue;
                }
                let bind = |action| Binding {
                    channel: conversation.channel.clone(),
                    conversation: conversation.conversation.clone(),
                    chat_id: chat_id.to_string(),
                    approval_id: approval.id.clone(),
                    action,
                };
                let (allow, reject) = (token(), token());
                buttons.insert(allow.clone(), bind(ApprovalActionId::AllowOnce));
                buttons.insert(reject.clone(), bind(ApprovalActionId::Reject));
                (allow, reject)
            };
            let row = [
                Button {
                    label: "Allow once".into(),
                    data: allow,
                },
                Button {
                    label: "Reject".into(),
                    data: reject,
                },
            ];
            match client
                .send_buttons(&conversation.conversation, &prompt(&approval), &row)
                .await
            {
                Ok(_) => prompted = true,
                Err(e) => {
                    tracing::warn!(chat = %chat_id, "sending an approval prompt failed: {e}");
                    self.forget_buttons(&approval.id);
                }
            }
        }
        prompted
    }

    fn forget_buttons(&self, approval_id: &str) {
        self.buttons
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, b| b.approval_id != approval_id);
    }

    /// Takes a press of channel `name` (see the module docs): answers it, and when it decides,
    /// answers the approval and continues the turn in the background.
    pub(super) async fn handle_press(&self, name: &str, client: &dyn Channel, press: Press) {
        let answer = match self.decide(name, &press).await {
            Ok(answer) => answer,
            Err(refusal) => {
                tracing::info!(
                    channel = %name,
                    user = %press.sender,
                    "a button press was refused: {refusal}"
                );
                refusal
            }
        };
        if let Err(e) = client.answer_press(&press, answer).await {
            tracing::warn!(channel = %name, "answering a button press failed: {e}");
        }
    }

    /// Checks a press and, when it decides, continues the approval's turn in the background;
    /// the text to answer the press with, or the refusal.
    async fn decide(&self, name: &str, press: &Press) -> Result<&'static str, &'static str> {
        let config = self.config_of(name).ok_or(PRESS_INVALID)?;
        let binding = {
            let mut buttons = self.buttons.lock().unwrap_or_else(PoisonError::into_inner);
            let binding = buttons.get(&press.data).cloned().ok_or(PRESS_INVALID)?;
            if binding.channel != name || binding.conversation != press.conversation {
                return Err(PRESS_ELSEWHERE);
            }
            if !config.allowed_users.iter().any(|u| *u == press.sender) {
                return Err(PRESS_NOT_ALLOWED);
            }
            // Both buttons of the approval go: a second press finds neither.
            buttons.retain(|_, b| b.approval_id != binding.approval_id);
            binding
        };
        let still_pending = matches!(
            self.store.get_approval(&binding.approval_id).await,
            Ok(Some(record))
                if record.status == ApprovalStatus::Pending
                    && record.approval.chat_id == binding.chat_id
        );
        if !still_pending {
            return Err(PRESS_DECIDED);
        }
        let turns = self
            .turns
            .get()
            .and_then(Weak::upgrade)
            .ok_or(PRESS_INVALID)?;
        let (mode, _) = super::profile_mode(config.profile);
        let options = RunOptions {
            on_ask: match config.profile {
                ChannelProfile::AskInApp => OnAsk::Suspend,
                ChannelProfile::Headless => OnAsk::Deny,
            },
            mode: Some(mode),
            origin: Some(format!("channel:{name}:{}", press.sender)),
        };
        let answer = ApprovalResponse {
            request_id: binding.approval_id.clone(),
            tool_call_id: None,
            action_id: binding.action.as_str().to_string(),
            feedback: (binding.action == ApprovalActionId::Reject).then(|| {
                format!(
                    "rejected on {} by {}",
                    config.platform.label(),
                    press.sender_name
                )
            }),
            rule: None,
        };
        let chat_id = binding.chat_id.clone();
        tokio::spawn(async move {
            if let Err(e) = turns
                .answer_and_continue(&chat_id, vec![answer], options)
                .await
            {
                tracing::warn!(chat = %chat_id, "continuing after a button press failed: {e}");
            }
        });
        Ok(match binding.action {
            ApprovalActionId::Reject => "Rejected.",
            _ => "Allowed once. Continuing…",
        })
    }
}
