//! What to do with a job's due occurrences: a pure decision from its schedule, its cursor, the
//! time and its catch-up policy.

use super::spec::{Schedule, elapsed};
use chrono::{DateTime, Utc};
use std::time::Duration;
use suzent_core::{CatchUpPolicy, RunTrigger};

/// An occurrence whose run starts within this time of its slot is on time; later, it was missed
/// (the machine slept, the app was closed) and the catch-up policy decides.
pub const LATE_AFTER: Duration = Duration::from_secs(60);

/// The decision for one job at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Nothing is due.
    Wait,
    /// Claim and run `slot`.
    Run {
        /// The occurrence (the latest due one).
        slot: DateTime<Utc>,
        /// `Schedule` on time, `CatchUp` for missed occurrences.
        trigger: RunTrigger,
        /// Whether it stands for missed occurrences.
        catch_up: bool,
        /// Occurrences it stands for beyond `slot`.
        missed: u32,
    },
    /// Record that `count` occurrences up to `slot` were missed, and run none.
    Missed {
        /// The latest missed occurrence.
        slot: DateTime<Utc>,
        /// How many.
        count: u32,
    },
}

/// Decides for the occurrences in `(cursor, now]`.
///
/// - None due: [`Decision::Wait`].
/// - Only the latest is due and it is on time: run it.
/// - Otherwise occurrences were missed. `run_once`: one run, for the latest slot, flagged
///   `catch_up` (never one per missed slot). `skip`: the latest runs if it is on time, else
///   nothing runs and the miss is recorded once.
pub fn decide(
    schedule: &Schedule,
    cursor: DateTime<Utc>,
    now: DateTime<Utc>,
    policy: CatchUpPolicy,
) -> Decision {
    let Some(due) = schedule.due(cursor, now) else {
        return Decision::Wait;
    };
    let on_time = elapsed(due.latest, now) <= LATE_AFTER;
    if on_time && due.count == 1 {
        return Decision::Run {
            slot: due.latest,
            trigger: RunTrigger::Schedule,
            catch_up: false,
            missed: 0,
        };
    }
    match policy {
        CatchUpPolicy::RunOnce => Decision::Run {
            slot: due.latest,
            trigger: RunTrigger::CatchUp,
            catch_up: true,
            missed: due.count - 1,
        },
        CatchUpPolicy::Skip if on_time => Decision::Run {
            slot: due.latest,
            trigger: RunTrigger::Schedule,
            catch_up: false,
            missed: 0,
        },
        CatchUpPolicy::Skip => Decision::Missed {
            slot: due.latest,
            count: due.count,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use pretty_assertions::assert_eq;

    fn utc(h: u32, m: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 5, 4, h, m, s)
            .single()
            .unwrap_or_default()
    }

    #[test]
    fn a_wall_clock_jump_over_many_slots_gives_one_catch_up_run_or_one_missed_record()
    -> Result<(), super::super::spec::ScheduleError> {
        let daily = Schedule::parse("0 3 * * *", "UTC")?;
        let five = Schedule::parse("*/5 * * * *", "UTC")?;
        let (asleep, woke) = (utc(2, 0, 0), utc(9, 12, 0));
        assert_eq!(
            decide(&daily, asleep, woke, CatchUpPolicy::RunOnce),
            Decision::Run {
                slot: utc(3, 0, 0),
                trigger: RunTrigger::CatchUp,
                catch_up: true,
                missed: 0
            }
        );
        assert_eq!(
            decide(&five, asleep, woke, CatchUpPolicy::RunOnce),
            Decision::Run {
                slot: utc(9, 10, 0),
                trigger: RunTrigger::CatchUp,
                catch_up: true,
                missed: 85
            }
        );
        assert_eq!(
            decide(&daily, asleep, woke, CatchUpPolicy::Skip),
            Decision::Missed {
                slot: utc(3, 0, 0),
                count: 1
            }
        );
        // On time: a plain run; nothing due: wait.
        assert_eq!(
            decide(&five, utc(9, 10, 0), utc(9, 15, 1), CatchUpPolicy::Skip),
            Decision::Run {
                slot: utc(9, 15, 0),
                trigger: RunTrigger::Schedule,
                catch_up: false,
                missed: 0
            }
        );
        assert_eq!(
            decide(&five, utc(9, 15, 0), utc(9, 19, 59), CatchUpPolicy::RunOnce),
            Decision::Wait
        );
        Ok(())
    }
}
