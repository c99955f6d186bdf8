//! The scheduler: runs jobs unattended at their times (seed 000 "Headless Runs").
//!
//! - [`Schedule`]: cron patterns (5 fields, seconds optional, `croner`) in an IANA time zone,
//!   or `every N minutes`; one run per local occurrence across daylight saving changes.
//! - [`Scheduler`]: the service. Exactly one per data directory schedules: it holds the lease in
//!   SQLite (`BEGIN IMMEDIATE`); another process finds the lease held, says so, and stands by.
//!   Every occurrence is claimed in the store (a `schedule_runs` row) before it runs, so a
//!   restart never runs it twice; a run left `running` by a dead process is recorded as
//!   `interrupted` and, by the job's catch-up policy, run again once. Overlap (skip / queue one /
//!   allow) is applied when a run is claimed; missed occurrences (the machine slept, the app was
//!   closed) become one catch-up run or one `missed` record, never a stampede. A run's timeout
//!   covers all of it; at the timeout the run is cancelled and must stop (its processes killed)
//!   within the kill grace before a retry, else it is `unknown` and not retried.
//! - [`Clock`]: the time, injectable ([`ManualClock`] in tests).
//! - [`JobRunner`]: what runs an occurrence (the runtime's headless turn).

mod clock;
mod owner;
mod plan;
mod runner;
mod service;
mod spec;

pub use clock::{Clock, FileClock, ManualClock, SystemClock, TEST_CLOCK_ENV, from_env};
pub use owner::host_name;
pub use plan::{Decision, LATE_AFTER, decide};
pub use runner::{JobRunner, RunReport};
pub use service::{Scheduler, SchedulerOptions, SchedulerStatus};
pub use spec::{Due, MAX_COUNTED, MAX_EVERY_MINUTES, Schedule, ScheduleError};
