//! The vocabulary of unattended runs (seed 000 "Headless Runs"): scheduled jobs, their policies
//! and the outcomes of their runs, and chat goals. Stored by `suzent-store`, evaluated by the
//! scheduler in `suzent-runtime`, shown by the desktop UI and the CLI.

use serde::{Deserialize, Serialize};

/// Declares a fieldless enum with its snake_case wire name, `as_str`, `FromStr` and `ALL`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[cfg_attr(feature = "specta", derive(specta::Type))]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire and stored name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire),+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($wire => Ok($name::$variant),)+
                    other => Err(format!(
                        concat!("unknown ", $what, " '{}' (expected one of: {})"),
                        other,
                        [$($wire),+].join(", ")
                    )),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_enum! {
    /// What a scheduled job does when it fires.
    JobKind ("job kind") {
        /// Sends the job's prompt to its own chat.
        Prompt = "prompt",
        /// Reads `HEARTBEAT.md` in a chat's workspace and acts on it (one per chat).
        Heartbeat = "heartbeat",
        /// Memory consolidation: merges duplicate memories and updates the `facts` block.
        Dream = "dream",
    }
}

wire_enum! {
    /// Whether the user is told when a run finishes.
    Delivery ("delivery") {
        /// A notification when the run finishes.
        Notify = "notify",
        /// Recorded only.
        Silent = "silent",
    }
}

wire_enum! {
    /// What happens when an occurrence comes while the job's previous run is still running.
    OverlapPolicy ("overlap policy") {
        /// The occurrence is recorded as skipped (still running). The default.
        Skip = "skip",
        /// At most one occurrence waits and starts when the running one ends; more are skipped.
        QueueOne = "queue_one",
        /// Runs start side by side.
        Allow = "allow",
    }
}

wire_enum! {
    /// What happens to occurrences missed while the machine slept or the app was closed, and to a
    /// run interrupted by a crash.
    CatchUpPolicy ("catch-up policy") {
        /// One run for all the missed occurrences (flagged `catch_up`, with the latest missed
        /// slot); an interrupted run is run again once. The default.
        RunOnce = "run_once",
        /// Missed occurrences are recorded once as missed and not run.
        Skip = "skip",
    }
}

wire_enum! {
    /// Why a run row exists.
    RunTrigger ("run trigger") {
        /// Its occurrence came.
        Schedule = "schedule",
        /// Occurrences were missed (machine asleep, app closed): one run for them.
        CatchUp = "catch_up",
        /// The previous attempt was interrupted by a crash or a restart.
        Recovery = "recovery",
        /// The previous attempt failed or timed out and its processes were confirmed gone.
        Retry = "retry",
        /// Run now, from the UI or the CLI.
        Manual = "manual",
    }
}

wire_enum! {
    /// Where a run is, or how it ended.
    RunStatus ("run status") {
        /// Asked for (Run now) and waiting for the process that schedules to start it.
        Requested = "requested",
        /// Waiting for the job's running run to end (overlap policy `queue_one`).
        Queued = "queued",
        /// Claimed in the store and running.
        Running = "running",
        /// The turn ended normally.
        Completed = "completed",
        /// The turn failed (model provider error, bad configuration...).
        Failed = "failed",
        /// The process running it stopped (crash, kill, restart) before it ended.
        Interrupted = "interrupted",
        /// Not run: the job's previous run was still running (overlap policy `skip`).
        Skipped = "skipped",
        /// Not run: occurrences passed while the machine slept or the app was closed (catch-up
        /// policy `skip`).
        Missed = "missed",
        /// Stopped at the job's timeout; its processes were killed and confirmed gone.
        TimedOut = "timed_out",
        /// Stopped at the timeout, but its end could not be confirmed: it may still have
        /// effects, so it is not retried.
        Unknown = "unknown",
    }
}

impl RunStatus {
    /// Whether the run has ended (or never ran).
    pub fn is_final(self) -> bool {
        !matches!(
            self,
            RunStatus::Requested | RunStatus::Queued | RunStatus::Running
        )
    }

    /// Whether a turn was started for it.
    pub fn was_started(self) -> bool {
        matches!(
            self,
            RunStatus::Running
                | RunStatus::Completed
                | RunStatus::Failed
                | RunStatus::Interrupted
                | RunStatus::TimedOut
                | RunStatus::Unknown
        )
    }
}

wire_enum! {
    /// Where a chat's goal is.
    GoalStatus ("goal status") {
        /// The agent continues turn after turn.
        Active = "active",
        /// Stopped by the user, or by a judge that gave no readable verdict (the reason says).
        Paused = "paused",
        /// The judge model said the objective is met.
        Met = "met",
        /// The turn or token budget is spent.
        BudgetSpent = "budget_spent",
    }
}

/// A call refused during an unattended run (what would have asked is denied at once).
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeniedCall {
    /// Tool runtime name.
    pub tool: String,
    /// The decision's reason code (`headless_ask_denied`, a rule's...).
    pub reason_code: String,
    /// Why it was refused, as the model was told.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn every_wire_name_parses_back_and_unknown_names_are_named() {
        for status in RunStatus::ALL {
            assert_eq!(RunStatus::from_str(status.as_str()), Ok(*status));
        }
        assert_eq!(
            OverlapPolicy::from_str("sometimes"),
            Err(
                "unknown overlap policy 'sometimes' (expected one of: skip, queue_one, allow)"
                    .to_string()
            )
        );
    }
}
