//! The chat service: chats and their settings (title, workspace, model, mode, tool selection)
//! and their transcripts, as stored. Runs live in `turn/`.

use crate::error::RuntimeError;
use crate::provider::parse_model;
use crate::sessions::Sessions;
use crate::settings::SettingsService;
use std::path::PathBuf;
use std::sync::Arc;
use suzent_core::{PermissionMode, new_id};
use suzent_store::{ChatPatch, ChatRecord, NewChat, Store, StoredMessage};
use suzent_tools::ToolRegistry;

/// Arguments of [`crate::Runtime::create_chat`]. Missing fields come from the configuration.
#[derive(Debug, Clone, Default)]
pub struct CreateChat {
    /// Title (default "New chat").
    pub title: Option<String>,
    /// Workspace folder; must exist.
    pub workspace: Option<PathBuf>,
    /// Model string `provider/model`.
    pub model: Option<String>,
    /// Permission mode.
    pub mode: Option<PermissionMode>,
    /// Selected tools (runtime or legacy names).
    pub tools: Option<Vec<String>>,
}

/// Chats: creation (defaults from the configuration, checked), lookup, changes, deletion.
pub(crate) struct ChatService {
    store: Store,
    settings: Arc<SettingsService>,
    registry: ToolRegistry,
    sessions: Arc<Sessions>,
}

impl ChatService {
    /// The service.
    pub(crate) fn new(
        store: Store,
        settings: Arc<SettingsService>,
        registry: ToolRegistry,
        sessions: Arc<Sessions>,
    ) -> ChatService {
        ChatService {
            store,
            settings,
            registry,
            sessions,
        }
    }

    /// Creates a chat. The workspace must be an existing directory.
    pub(crate) async fn create(&self, args: CreateChat) -> Result<ChatRecord, RuntimeError> {
        let new = self.new_chat(args)?;
        Ok(self.store.create_chat(&new).await?)
    }

    /// The chat [`ChatService::create`] would store for `args` (workspace canonicalized,
    /// defaults from the configuration, model and tools checked), with a fresh id; nothing is
    /// stored. Errors as `create`.
    pub(crate) fn new_chat(&self, args: CreateChat) -> Result<NewChat, RuntimeError> {
        let cfg = &self.settings.config();
        let workspace = match args.workspace.or_else(|| cfg.workspace.clone()) {
            Some(w) => w,
            None => std::env::current_dir().map_err(|e| RuntimeError::Io {
                path: ".".into(),
                message: e.to_string(),
            })?,
        };
        let workspace =
            std::fs::canonicalize(&workspace).map_err(|e| RuntimeError::InvalidInput {
                field: "workspace".into(),
                message: format!("'{}': {e}", workspace.display()),
            })?;
        if !workspace.is_dir() {
            return Err(RuntimeError::InvalidInput {
                field: "workspace".into(),
                message: format!("'{}' is not a directory", workspace.display()),
            });
        }
        if let Some(model) = &args.model {
            parse_model(model)?;
        }
        if let Some(tools) = &args.tools {
            self.check_tools(tools)?;
        }
        Ok(NewChat {
            id: new_id(),
            title: args.title.unwrap_or_else(|| crate::DEFAULT_TITLE.into()),
            workspace: workspace.display().to_string(),
            model: args.model.or_else(|| self.settings.default_model(cfg)),
            mode: args.mode.unwrap_or(cfg.default_mode),
            tools: args.tools,
        })
    }

    fn check_tools(&self, tools: &[String]) -> Result<(), RuntimeError> {
        self.registry
            .expand_selection(tools)
            .map(|_| ())
            .map_err(|e| RuntimeError::InvalidInput {
                field: "tools".into(),
                message: e.to_string(),
            })
    }

    /// One chat.
    pub(crate) async fn get(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        self.store
            .get_chat(chat_id)
            .await?
            .ok_or_else(|| RuntimeError::ChatNotFound(chat_id.to_string()))
    }

    /// Copies a file the user attached into the chat's workspace (see `attachments.rs`); the
    /// write runs off the async threads.
    pub(crate) async fn add_attachment(
        &self,
        chat_id: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<suzent_core::Attachment, RuntimeError> {
        let chat = self.get(chat_id).await?;
        let (id, name, bytes) = (chat.id.clone(), name.to_string(), bytes.to_vec());
        tokio::task::spawn_blocking(move || {
            crate::attachments::Attachments.add(
                std::path::Path::new(&chat.workspace),
                &id,
                &name,
                &bytes,
            )
        })
        .await
        .map_err(|e| RuntimeError::Io {
            path: crate::attachments::folder_hint(chat_id),
            message: format!("the attachment write stopped: {e}"),
        })?
    }

    /// Every chat, most recently updated first.
    pub(crate) async fn list(&self) -> Result<Vec<ChatRecord>, RuntimeError> {
        Ok(self.store.list_chats().await?)
    }

    async fn patch(&self, chat_id: &str, patch: ChatPatch) -> Result<ChatRecord, RuntimeError> {
        self.get(chat_id).await?;
        Ok(self.store.update_chat(chat_id, &patch).await?)
    }

    /// Renames a chat (the title trimmed; empty is an error).
    pub(crate) async fn rename(
        &self,
        chat_id: &str,
        title: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        if title.trim().is_empty() {
            return Err(RuntimeError::InvalidInput {
                field: "title".into(),
                message: "empty".into(),
            });
        }
        let patch = ChatPatch {
            title: Some(title.trim().to_string()),
            ..Default::default()
        };
        self.patch(chat_id, patch).await
    }

    /// Deletes a chat with everything stored of it, and its live session.
    pub(crate) async fn delete(&self, chat_id: &str) -> Result<(), RuntimeError> {
        self.get(chat_id).await?;
        self.store.delete_chat(chat_id).await?;
        self.sessions.remove(chat_id);
        Ok(())
    }

    /// Sets a chat's permission mode.
    pub(crate) async fn set_mode(
        &self,
        chat_id: &str,
        mode: PermissionMode,
    ) -> Result<ChatRecord, RuntimeError> {
        let patch = ChatPatch {
            mode: Some(mode),
            ..Default::default()
        };
        self.patch(chat_id, patch).await
    }

    /// Sets a chat's model (`provider/model`).
    pub(crate) async fn set_model(
        &self,
        chat_id: &str,
        model: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        parse_model(model)?;
        let patch = ChatPatch {
            model: Some(Some(model.to_string())),
            ..Default::default()
        };
        self.patch(chat_id, patch).await
    }

    /// Goes back to the default model for a chat.
    pub(crate) async fn clear_model(&self, chat_id: &str) -> Result<ChatRecord, RuntimeError> {
        let patch = ChatPatch {
            model: Some(None),
            ..Default::default()
        };
        self.patch(chat_id, patch).await
    }

    /// A chat still called [`crate::DEFAULT_TITLE`] with no message yet is named after `text`
    /// (see [`crate::title_from`]); other chats are returned as they are.
    pub(crate) async fn name_after_first_message(
        &self,
        chat: ChatRecord,
        text: &str,
    ) -> Result<ChatRecord, RuntimeError> {
        if chat.title != crate::DEFAULT_TITLE || !self.messages(&chat.id).await?.is_empty() {
            return Ok(chat);
        }
        match crate::title_from(text) {
            Some(title) => self.rename(&chat.id, &title).await,
            None => Ok(chat),
        }
    }

    /// Sets a chat's tool selection (None: the configuration's).
    pub(crate) async fn set_tools(
        &self,
        chat_id: &str,
        tools: Option<Vec<String>>,
    ) -> Result<ChatRecord, RuntimeError> {
        if let Some(t) = &tools {
            self.check_tools(t)?;
        }
        let patch = ChatPatch {
            tools: Some(tools),
            ..Default::default()
        };
        self.patch(chat_id, patch).await
    }

    /// The stored transcript.
    pub(crate) async fn messages(&self, chat_id: &str) -> Result<Vec<StoredMessage>, RuntimeError> {
        self.get(chat_id).await?;
        Ok(self.store.messages(chat_id).await?)
    }

    /// The chat's selected tools as runtime names (its own selection, else the configuration's).
    pub(crate) fn selected_tools(&self, chat: &ChatRecord) -> Vec<String> {
        let selection = chat
            .tools
            .clone()
            .unwrap_or_else(|| self.settings.config().tools);
        self.registry
            .expand_selection(&selection)
            .unwrap_or_default()
    }
}

/// The local user (tools' `user_id`, memory's owner): `USER`, `USERNAME`, else `local`.
pub(crate) fn whoami() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "local".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::test_services::TestServices;
    use pretty_assertions::assert_eq;
    use suzent_core::Config;

    fn invalid_field(e: &RuntimeError) -> Option<&str> {
        match e {
            RuntimeError::InvalidInput { field, .. } => Some(field),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_new_chat_takes_the_configured_model_and_mode_and_a_canonical_workspace()
    -> anyhow::Result<()> {
        let s = TestServices::open(Config {
            default_model: Some("openai/gpt-test".into()),
            default_mode: PermissionMode::Auto,
            ..Default::default()
        })
        .await;
        let chat = s
            .chats
            .create(CreateChat {
                workspace: Some(s.workspace.join(".")),
                ..Default::default()
            })
            .await?;
        assert_eq!(
            (
                chat.title.as_str(),
                chat.workspace.clone(),
                chat.model.as_deref(),
                chat.mode
            ),
            (
                "New chat",
                std::fs::canonicalize(&s.workspace)?.display().to_string(),
                Some("openai/gpt-test"),
                PermissionMode::Auto
            )
        );
        assert_eq!(s.chats.get(&chat.id).await?, chat);
        Ok(())
    }

    #[tokio::test]
    async fn a_workspace_that_is_a_file_is_refused_and_nothing_is_stored() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let file = s.workspace.join("notes.txt");
        std::fs::write(&file, "x")?;
        let err = s
            .chats
            .create(CreateChat {
                workspace: Some(file),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(invalid_field(&err), Some("workspace"), "{err}");
        assert_eq!(s.chats.list().await?, Vec::new());
        Ok(())
    }

    #[tokio::test]
    async fn an_unknown_tool_or_model_is_refused_before_anything_changes() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let err = s
            .chats
            .set_tools(&chat.id, Some(vec!["no_such_tool".into()]))
            .await
            .unwrap_err();
        assert_eq!(invalid_field(&err), Some("tools"), "{err}");
        assert!(s.chats.set_model(&chat.id, "nowhere/model").await.is_err());
        assert_eq!(s.chats.get(&chat.id).await?, chat);
        Ok(())
    }

    #[tokio::test]
    async fn a_blank_title_is_refused_and_a_deleted_chat_is_gone() -> anyhow::Result<()> {
        let s = TestServices::open(Config::default()).await;
        let chat = s.chat().await;
        let err = s.chats.rename(&chat.id, "   ").await.unwrap_err();
        assert_eq!(invalid_field(&err), Some("title"), "{err}");
        assert_eq!(s.chats.rename(&chat.id, "  Plans ").await?.title, "Plans");
        s.chats.delete(&chat.id).await?;
        assert!(matches!(
            s.chats.get(&chat.id).await.unwrap_err(),
            RuntimeError::ChatNotFound(id) if id == chat.id
        ));
        assert!(matches!(
            s.chats.delete(&chat.id).await.unwrap_err(),
            RuntimeError::ChatNotFound(_)
        ));
        Ok(())
    }

    #[tokio::test]
    async fn a_chat_without_its_own_selection_uses_the_configured_tools() -> anyhow::Result<()> {
        let s = TestServices::open(Config {
            tools: vec!["read_file".into(), "GrepTool".into()],
            ..Default::default()
        })
        .await;
        let chat = s.chat().await;
        assert_eq!(
            s.chats.selected_tools(&chat),
            vec!["read_file", "grep_search"]
        );
        let chat = s
            .chats
            .set_tools(&chat.id, Some(vec!["glob_search".into()]))
            .await?;
        assert_eq!(s.chats.selected_tools(&chat), vec!["glob_search"]);
        Ok(())
    }
}
