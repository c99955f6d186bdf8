//! The event bus: every service announces through one [`Events`] handle, and every shell
//! subscribes to it. Events are sent after what they announce is stored.

use suzent_core::{AgentEvent, DecisionEvent};
use suzent_permissions::DecisionSink;
use tokio::sync::broadcast;

/// Capacity of the event channel; slow subscribers lose the oldest events (they can re-read the
/// transcript, which is stored before any event is sent).
const EVENT_CAPACITY: usize = 4096;

/// A handle to the runtime's event stream. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Events(broadcast::Sender<AgentEvent>);

impl Events {
    /// A bus with no subscribers yet.
    pub(crate) fn new() -> Events {
        Events(broadcast::channel(EVENT_CAPACITY).0)
    }

    /// Announces one event (to nobody when no one listens).
    pub(crate) fn emit(&self, event: AgentEvent) {
        let _ = self.0.send(event);
    }

    /// Every event from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<AgentEvent> {
        self.0.subscribe()
    }
}

/// The permission gate announces its decisions as `tool_permission_decision`.
impl DecisionSink for Events {
    fn decided(&self, event: DecisionEvent) {
        self.emit(AgentEvent::ToolPermissionDecision(event));
    }
}
