//! The `extension` browser backend: browser-core's [`BrowserBackend`] over the bridge's live
//! connection to the paired extension. Each call is one request with its own 20 s limit; a call
//! that times out reports an unknown outcome and is never sent again (see
//! [`crate::ExtensionLink::request`]). While no paired extension is connected every call fails
//! with [`BrowserError::NotConnected`].

use crate::bridge::{COMMAND_TIMEOUT, Hub, LinkError};
use crate::protocol::{AgentFunctionName, BridgeCommand, FailureKind, InputEffectsWire};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use suzent_browser::{
    AgentCall, AgentFunction, BrowserBackend, BrowserError, FrameInfo, InputEffects, InputEvent,
    Navigation, TabInfo,
};
use suzent_core::BrowserMode;

/// The extension backend of one bridge. Cheap to clone into an `Arc<dyn BrowserBackend>`;
/// commands go to the bridge's active link at the time of the call.
#[derive(Debug, Clone)]
pub struct ExtensionBackend {
    hub: Arc<Hub>,
    timeout: Duration,
}

impl ExtensionBackend {
    /// A backend over `hub` with the standard 20 s limit per call.
    pub fn new(hub: Arc<Hub>) -> ExtensionBackend {
        ExtensionBackend {
            hub,
            timeout: COMMAND_TIMEOUT,
        }
    }

    /// The same backend with another limit per call (tests).
    pub fn with_timeout(mut self, timeout: Duration) -> ExtensionBackend {
        self.timeout = timeout;
        self
    }

    async fn call(
        &self,
        command: BridgeCommand,
        tab: &str,
        frame: &str,
    ) -> Result<Value, BrowserError> {
        let link = self.hub.active().ok_or(BrowserError::NotConnected)?;
        link.request(command, self.timeout)
            .await
            .map_err(|e| error(e, tab, frame))
    }

    async fn call_as<T: DeserializeOwned>(
        &self,
        command: BridgeCommand,
        tab: &str,
        what: &str,
    ) -> Result<T, BrowserError> {
        let value = self.call(command, tab, "").await?;
        serde_json::from_value(value).map_err(|e| {
            BrowserError::Protocol(format!("unexpected {what} answer from the extension: {e}"))
        })
    }
}

/// A bridge failure as browser-core's error (the tab or frame named where the kind says).
fn error(e: LinkError, tab: &str, frame: &str) -> BrowserError {
    match e {
        LinkError::NotConnected => BrowserError::NotConnected,
        LinkError::Timeout(secs) => BrowserError::Timeout(secs),
        LinkError::Failed { kind, message } => match kind {
            FailureKind::TabClosed => BrowserError::TabClosed(tab.to_string()),
            FailureKind::TabNotShared => BrowserError::TabNotShared(tab.to_string()),
            FailureKind::FrameGone => BrowserError::FrameGone(frame.to_string()),
            FailureKind::Refused => BrowserError::Refused(message),
            FailureKind::Agent => BrowserError::Agent(message),
            FailureKind::Browser => BrowserError::Protocol(message),
        },
    }
}

/// browser-core's function as the bridge's (the same wire names).
pub fn function_name(function: AgentFunction) -> AgentFunctionName {
    match function {
        AgentFunction::Snapshot => AgentFunctionName::Snapshot,
        AgentFunction::Act => AgentFunctionName::Act,
        AgentFunction::ScrollPage => AgentFunctionName::ScrollPage,
        AgentFunction::FrameRect => AgentFunctionName::FrameRect,
        AgentFunction::AnnounceFrames => AgentFunctionName::AnnounceFrames,
        AgentFunction::FrameSlot => AgentFunctionName::FrameSlot,
        AgentFunction::PageInfo => AgentFunctionName::PageInfo,
    }
}

fn to_value<T: serde::Serialize>(value: &T, what: &str) -> Result<Value, BrowserError> {
    serde_json::to_value(value)
        .map_err(|e| BrowserError::Protocol(format!("cannot encode {what}: {e}")))
}

#[async_trait]
impl BrowserBackend for ExtensionBackend {
    fn mode(&self) -> BrowserMode {
        BrowserMode::Extension
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        self.call_as(BridgeCommand::Tabs {}, "", "tabs").await
    }

    async fn open_tab(&self, url: &str) -> Result<TabInfo, BrowserError> {
        self.call_as(
            BridgeCommand::OpenTab {
                url: url.to_string(),
            },
            "",
            "openTab",
        )
        .await
    }

    async fn close_tab(&self, tab: &str) -> Result<(), BrowserError> {
        self.call(
            BridgeCommand::CloseTab {
                tab: tab.to_string(),
            },
            tab,
            "",
        )
        .await
        .map(|_| ())
    }

    async fn activate_tab(&self, tab: &str) -> Result<(), BrowserError> {
        self.call(
            BridgeCommand::ActivateTab {
                tab: tab.to_string(),
            },
            tab,
            "",
        )
        .await
        .map(|_| ())
    }

    async fn navigate(&self, tab: &str, to: &Navigation) -> Result<TabInfo, BrowserError> {
        let command = BridgeCommand::Navigate {
            tab: tab.to_string(),
            to: to_value(to, "the navigation")?,
        };
        self.call_as(command, tab, "navigate").await
    }

    async fn frames(&self, tab: &str) -> Result<Vec<FrameInfo>, BrowserError> {
        self.call_as(
            BridgeCommand::Frames {
                tab: tab.to_string(),
            },
            tab,
            "frames",
        )
        .await
    }

    async fn call_agent(
        &self,
        tab: &str,
        frame: &str,
        call: &AgentCall,
    ) -> Result<Value, BrowserError> {
        let command = BridgeCommand::CallAgent {
            tab: tab.to_string(),
            frame: frame.to_string(),
            function: function_name(call.function),
            args: call.args.clone(),
        };
        self.call(command, tab, frame).await
    }

    async fn input(&self, tab: &str, event: &InputEvent) -> Result<(), BrowserError> {
        self.input_watched(tab, event).await.map(|_| ())
    }

    async fn input_watched(
        &self,
        tab: &str,
        event: &InputEvent,
    ) -> Result<Option<InputEffects>, BrowserError> {
        let command = BridgeCommand::Input {
            tab: tab.to_string(),
            event: to_value(event, "the input event")?,
        };
        let effects: Option<InputEffectsWire> = self.call_as(command, tab, "input").await?;
        Ok(effects.map(|e| InputEffects {
            navigation: e.navigation,
            new_tab: e.new_tab,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{InputEventWire, NavigationWire};
    use pretty_assertions::assert_eq;

    #[test]
    fn every_agent_function_keeps_its_wire_name() -> anyhow::Result<()> {
        for f in [
            AgentFunction::Snapshot,
            AgentFunction::Act,
            AgentFunction::ScrollPage,
            AgentFunction::FrameRect,
            AgentFunction::AnnounceFrames,
            AgentFunction::FrameSlot,
            AgentFunction::PageInfo,
        ] {
            assert_eq!(
                serde_json::to_value(function_name(f))?,
                serde_json::to_value(f)?
            );
        }
        Ok(())
    }

    #[test]
    fn browser_cores_navigation_and_input_read_as_the_bridge_wire_types() -> anyhow::Result<()> {
        let navigations = [
            Navigation::Url {
                url: "https://docs.test/".into(),
            },
            Navigation::Back,
            Navigation::Forward,
            Navigation::Reload { ignore_cache: true },
        ];
        for n in navigations {
            let value = serde_json::to_value(&n)?;
            let wire: NavigationWire = serde_json::from_value(value.clone())?;
            assert_eq!(serde_json::to_value(wire)?, value);
        }
        let inputs = [
            InputEvent::MouseMove { x: 1.5, y: 2.0 },
            InputEvent::Click {
                x: 3.0,
                y: 4.0,
                count: 2,
            },
            InputEvent::Key {
                key: "Enter".into(),
                code: "Enter".into(),
                key_code: 13,
                text: Some("\r".into()),
                modifiers: 8,
            },
            InputEvent::InsertText { text: "hi".into() },
        ];
        for i in inputs {
            let value = serde_json::to_value(&i)?;
            let wire: InputEventWire = serde_json::from_value(value.clone())?;
            assert_eq!(serde_json::to_value(wire)?, value);
        }
        Ok(())
    }

    #[test]
    fn bridge_failures_name_the_tab_or_frame() {
        let failed = |kind| LinkError::Failed {
            kind,
            message: "m".into(),
        };
        assert_eq!(
            error(failed(FailureKind::TabClosed), "7", "0"),
            BrowserError::TabClosed("7".into())
        );
        assert_eq!(
            error(failed(FailureKind::TabNotShared), "7", "0"),
            BrowserError::TabNotShared("7".into())
        );
        assert_eq!(
            error(failed(FailureKind::FrameGone), "7", "3"),
            BrowserError::FrameGone("3".into())
        );
        assert_eq!(
            error(failed(FailureKind::Refused), "7", "0"),
            BrowserError::Refused("m".into())
        );
        assert_eq!(
            error(LinkError::Timeout(20), "7", "0"),
            BrowserError::Timeout(20)
        );
        assert_eq!(
            error(LinkError::NotConnected, "7", "0"),
            BrowserError::NotConnected
        );
    }
}
