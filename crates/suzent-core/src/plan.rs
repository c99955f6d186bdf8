//! A chat's plan (seed 000 "planning_update"): a goal and ordered phases, each pending,
//! in progress or completed. The rules of `update` and `advance` live here, free of I/O, so the
//! tool, the store and the UI agree on them.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a phase stands.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseStatus {
    /// Not started.
    Pending,
    /// The phase being worked on (at most one per plan).
    InProgress,
    /// Done (explicitly, or skipped over by an `advance`).
    Completed,
}

/// One phase of a plan.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanPhase {
    /// Id the model uses to advance (`research`).
    pub id: String,
    /// What the phase does.
    pub title: String,
    /// Capabilities the phase needs (`web`, `filesystem`...).
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Where it stands.
    pub status: PhaseStatus,
}

/// A chat's plan.
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The high-level goal.
    pub goal: String,
    /// The phases in order.
    pub phases: Vec<PlanPhase>,
    /// When the plan last changed.
    pub updated_at: DateTime<Utc>,
}

/// A phase as the model proposes it in `update` (no status: `update` resets progress).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseDraft {
    /// Short unique id of the phase (`research`, `implement`).
    pub id: String,
    /// What the phase does.
    pub title: String,
    /// Capabilities the phase needs (`web`, `filesystem`, `shell`...).
    #[serde(default)]
    pub capabilities: Vec<String>,
}

/// Why a plan change was refused. The messages are written for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `update` without a goal.
    #[error("the goal is empty")]
    EmptyGoal,
    /// `update` without phases.
    #[error("a plan needs at least one phase")]
    NoPhases,
    /// A phase with an empty id or title.
    #[error("phase {index} has an empty {field}")]
    EmptyField {
        /// 0-based position of the phase.
        index: usize,
        /// `id` or `title`.
        field: &'static str,
    },
    /// Two phases share an id.
    #[error("phase id '{0}' is used twice")]
    DuplicatePhase(String),
    /// `advance` named a phase the plan does not have.
    #[error("unknown phase id '{id}'; the plan's phases are: {known}")]
    UnknownPhase {
        /// The id given.
        id: String,
        /// The plan's ids, comma-separated.
        known: String,
    },
    /// `advance` with a next phase that is not after the current one.
    #[error("next phase '{next}' does not come after '{current}'; phases only move forward")]
    Backwards {
        /// The phase being completed.
        current: String,
        /// The phase asked to start.
        next: String,
    },
}

impl Plan {
    /// A new plan (`action='update'`): the first phase in progress, the others pending.
    pub fn new(goal: &str, phases: Vec<PhaseDraft>, now: DateTime<Utc>) -> Result<Plan, PlanError> {
        if goal.trim().is_empty() {
            return Err(PlanError::EmptyGoal);
        }
        if phases.is_empty() {
            return Err(PlanError::NoPhases);
        }
        let mut seen = std::collections::HashSet::new();
        for (index, p) in phases.iter().enumerate() {
            if p.id.trim().is_empty() {
                return Err(PlanError::EmptyField { index, field: "id" });
            }
            if p.title.trim().is_empty() {
                return Err(PlanError::EmptyField {
                    index,
                    field: "title",
                });
            }
            if !seen.insert(p.id.trim().to_string()) {
                return Err(PlanError::DuplicatePhase(p.id.trim().to_string()));
            }
        }
        let phases = phases
            .into_iter()
            .enumerate()
            .map(|(i, p)| PlanPhase {
                id: p.id.trim().to_string(),
                title: p.title.trim().to_string(),
                capabilities: p.capabilities,
                status: if i == 0 {
                    PhaseStatus::InProgress
                } else {
                    PhaseStatus::Pending
                },
            })
            .collect();
        Ok(Plan {
            goal: goal.trim().to_string(),
            phases,
            updated_at: now,
        })
    }

    /// `action='advance'`: completes `current` and starts `next`; the phases between them are
    /// completed too. Without `next`, only `current` is completed (the end of the plan).
    pub fn advance(
        &mut self,
        current: &str,
        next: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), PlanError> {
        let cur = self.index_of(current)?;
        let nxt = next.map(|n| self.index_of(n)).transpose()?;
        if let Some(n) = nxt
            && n <= cur
        {
            return Err(PlanError::Backwards {
                current: current.to_string(),
                next: next.unwrap_or_default().to_string(),
            });
        }
        // Everything before the next phase (or up to the current one) is done.
        let done_until = nxt.unwrap_or(cur + 1);
        for (i, phase) in self.phases.iter_mut().enumerate() {
            if i < done_until {
                phase.status = PhaseStatus::Completed;
            } else if Some(i) == nxt {
                phase.status = PhaseStatus::InProgress;
            } else if phase.status == PhaseStatus::InProgress {
                phase.status = PhaseStatus::Pending;
            }
        }
        self.updated_at = now;
        Ok(())
    }

    /// The phase in progress, if any.
    pub fn current(&self) -> Option<&PlanPhase> {
        self.phases
            .iter()
            .find(|p| p.status == PhaseStatus::InProgress)
    }

    /// The plan as short text for the model: the goal, then one line per phase with a marker
    /// (`[x]` completed, `[>]` in progress, `[ ]` pending).
    pub fn to_text(&self) -> String {
        let mut out = format!("Goal: {}", self.goal);
        for p in &self.phases {
            let mark = match p.status {
                PhaseStatus::Completed => "[x]",
                PhaseStatus::InProgress => "[>]",
                PhaseStatus::Pending => "[ ]",
            };
            out.push_str(&format!("\n{mark} {}: {}", p.id, p.title));
            if !p.capabilities.is_empty() {
                out.push_str(&format!(" ({})", p.capabilities.join(", ")));
            }
        }
        out
    }

    fn index_of(&self, id: &str) -> Result<usize, PlanError> {
        self.phases
            .iter()
            .position(|p| p.id == id.trim())
            .ok_or_else(|| PlanError::UnknownPhase {
                id: id.to_string(),
                known: self
                    .phases
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use pretty_assertions::assert_eq;

    fn draft(ids: &[&str]) -> Vec<PhaseDraft> {
        ids.iter()
            .map(|id| PhaseDraft {
                id: (*id).into(),
                title: format!("do {id}"),
                capabilities: vec!["web".into()],
            })
            .collect()
    }

    fn statuses(plan: &Plan) -> Vec<PhaseStatus> {
        plan.phases.iter().map(|p| p.status).collect()
    }

    #[test]
    fn update_starts_the_first_phase_and_leaves_the_rest_pending() {
        let plan = Plan::new("ship", draft(&["a", "b", "c"]), Utc::now()).unwrap();
        use PhaseStatus::*;
        assert_eq!(statuses(&plan), vec![InProgress, Pending, Pending]);
    }

    #[test]
    fn advance_over_a_gap_completes_the_skipped_phases() {
        let mut plan = Plan::new("ship", draft(&["a", "b", "c", "d"]), Utc::now()).unwrap();
        plan.advance("a", Some("c"), Utc::now()).unwrap();
        use PhaseStatus::*;
        assert_eq!(
            statuses(&plan),
            vec![Completed, Completed, InProgress, Pending]
        );
        plan.advance("c", None, Utc::now()).unwrap();
        assert_eq!(
            statuses(&plan),
            vec![Completed, Completed, Completed, Pending]
        );
    }

    #[test]
    fn unknown_and_backward_phase_ids_are_errors_that_list_the_phases() {
        let mut plan = Plan::new("ship", draft(&["a", "b"]), Utc::now()).unwrap();
        assert_eq!(
            plan.advance("a", Some("zz"), Utc::now())
                .unwrap_err()
                .to_string(),
            "unknown phase id 'zz'; the plan's phases are: a, b"
        );
        plan.advance("a", Some("b"), Utc::now()).unwrap();
        assert_eq!(
            plan.advance("b", Some("a"), Utc::now()),
            Err(PlanError::Backwards {
                current: "b".into(),
                next: "a".into()
            })
        );
    }

    #[test]
    fn duplicate_ids_and_empty_goals_are_refused() {
        assert_eq!(
            Plan::new("g", draft(&["a", "a"]), Utc::now()),
            Err(PlanError::DuplicatePhase("a".into()))
        );
        assert_eq!(
            Plan::new(" ", draft(&["a"]), Utc::now()),
            Err(PlanError::EmptyGoal)
        );
    }
}
