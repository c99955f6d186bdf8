//! Schedules: when a job's occurrences are.
//!
//! Two forms: a cron pattern (5 fields, `minute hour day-of-month month day-of-week`, with an
//! optional leading seconds field; `@daily` and friends; parsed by `croner`) read in the job's
//! IANA time zone, and `every N minutes` (or `every N hours`), a fixed interval in absolute time,
//! aligned to multiples of N minutes since 1970-01-01 UTC (so `every 5 minutes` falls on :00,
//! :05, ... like `*/5`).
//!
//! Cron patterns follow the local wall clock through daylight saving changes with exactly one
//! run per local occurrence: a time that does not exist on the spring day (02:30 in
//! Europe/Berlin) runs at the first instant after the gap (03:00 CEST), and a time that happens
//! twice on the autumn day runs at its first instance only (croner's fixed-time rule).
//! Patterns with a wildcard hour (`*/15 * * * *`) follow the clock: the hour that does not exist
//! has no occurrences.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// Longest interval of `every N minutes`: one week.
pub const MAX_EVERY_MINUTES: u32 = 7 * 24 * 60;

/// Most occurrences [`Schedule::due`] counts one by one (more are reported as this many).
pub const MAX_COUNTED: u32 = 100_000;

/// A schedule that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The pattern does not parse.
    #[error("invalid schedule '{schedule}': {message}")]
    Pattern {
        /// As given.
        schedule: String,
        /// Why.
        message: String,
    },
    /// The time zone is not an IANA name.
    #[error("unknown time zone '{0}' (use an IANA name such as Europe/Berlin or UTC)")]
    TimeZone(String),
}

#[derive(Debug, Clone)]
enum Form {
    Cron(Box<Cron>),
    Every(i64),
}

/// A parsed schedule in its time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    form: Form,
    tz: Tz,
}

/// The occurrences that are due: after a job's cursor, up to now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The latest occurrence at or before now.
    pub latest: DateTime<Utc>,
    /// How many occurrences are due (at least 1; at most [`MAX_COUNTED`]).
    pub count: u32,
}

impl Schedule {
    /// Parses `schedule` in `timezone`.
    ///
    /// Errors: [`ScheduleError::Pattern`] for a bad pattern or interval,
    /// [`ScheduleError::TimeZone`] for a name that is not an IANA zone.
    pub fn parse(schedule: &str, timezone: &str) -> Result<Schedule, ScheduleError> {
        let tz: Tz = timezone
            .trim()
            .parse()
            .map_err(|_| ScheduleError::TimeZone(timezone.to_string()))?;
        let bad = |message: String| ScheduleError::Pattern {
            schedule: schedule.to_string(),
            message,
        };
        let text = schedule.trim();
        if text.is_empty() {
            return Err(bad("empty".into()));
        }
        let lower = text.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("every ") {
            let mut words = rest.split_whitespace();
            let (Some(n), Some(unit), None) = (words.next(), words.next(), words.next()) else {
                return Err(bad("write `every N minutes` or `every N hours`".into()));
            };
            let n: u32 = n
                .parse()
                .map_err(|_| bad(format!("'{n}' is not a whole number")))?;
            let minutes = match unit {
                "minute" | "minutes" | "min" | "mins" => Some(n),
                "hour" | "hours" => n.checked_mul(60),
                other => return Err(bad(format!("unknown unit '{other}' (minutes or hours)"))),
            };
            let minutes = minutes
                .filter(|m| (1..=MAX_EVERY_MINUTES).contains(m))
                .ok_or_else(|| {
                    bad(format!(
                        "the interval must be 1 to {MAX_EVERY_MINUTES} minutes"
                    ))
                })?;
            return Ok(Schedule {
                form: Form::Every(i64::from(minutes) * 60),
                tz,
            });
        }
        let fields = text.split_whitespace().count();
        if !text.starts_with('@') && !(5..=6).contains(&fields) {
            return Err(bad(format!(
                "a cron pattern has 5 fields (minute hour day month weekday), or 6 with seconds first; this has {fields}"
            )));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build()
            .parse(text)
            .map_err(|e| bad(e.to_string()))?;
        Ok(Schedule {
            form: Form::Cron(Box::new(cron)),
            tz,
        })
    }

    /// The time zone.
    pub fn timezone(&self) -> Tz {
        self.tz
    }

    /// The first occurrence strictly after `t`, or `None` when there is none (a pattern that
    /// never matches, e.g. February 30).
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.form {
            Form::Every(secs) => {
                let s = t.timestamp();
                let next = (s.div_euclid(*secs) + 1) * secs;
                DateTime::from_timestamp(next, 0)
            }
            Form::Cron(cron) => cron
                .find_next_occurrence(&t.with_timezone(&self.tz), false)
                .ok()
                .map(|d| d.with_timezone(&Utc)),
        }
    }

    /// The latest occurrence at or before `t`.
    pub fn latest_at_or_before(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.form {
            Form::Every(secs) => {
                DateTime::from_timestamp(t.timestamp().div_euclid(*secs) * secs, 0)
            }
            Form::Cron(cron) => cron
                .find_previous_occurrence(&t.with_timezone(&self.tz), true)
                .ok()
                .map(|d| d.with_timezone(&Utc)),
        }
    }

    /// The next `n` occurrences after `t`.
    pub fn upcoming(&self, t: DateTime<Utc>, n: usize) -> Vec<DateTime<Utc>> {
        let mut out = Vec::with_capacity(n);
        let mut at = t;
        while out.len() < n {
            match self.next_after(at) {
                Some(next) if next > at => {
                    out.push(next);
                    at = next;
                }
                _ => break,
            }
        }
        out
    }

    /// The occurrences in `(after, now]`, or `None` when none is due.
    pub fn due(&self, after: DateTime<Utc>, now: DateTime<Utc>) -> Option<Due> {
        let first = self.next_after(after)?;
        if first > now {
            return None;
        }
        let latest = self.latest_at_or_before(now).filter(|l| *l >= first)?;
        let count = match &self.form {
            Form::Every(secs) => {
                let n = (latest - first).num_seconds() / secs + 1;
                u32::try_from(n).unwrap_or(MAX_COUNTED).min(MAX_COUNTED)
            }
            Form::Cron(_) => {
                let mut count = 1u32;
                let mut at = first;
                while at < latest && count < MAX_COUNTED {
                    match self.next_after(at) {
                        Some(next) if next <= latest => {
                            count += 1;
                            at = next;
                        }
                        _ => break,
                    }
                }
                count
            }
        };
        Some(Due { latest, count })
    }
}

/// `t` as a duration since `since`, zero when before.
pub(crate) fn elapsed(since: DateTime<Utc>, t: DateTime<Utc>) -> std::time::Duration {
    (t - since).to_std().unwrap_or_default()
}

/// `d` as a chrono delta (saturating).
pub(crate) fn delta(d: std::time::Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use pretty_assertions::assert_eq;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .single()
            .unwrap_or_default()
    }

    fn local(schedule: &Schedule, times: &[DateTime<Utc>]) -> Vec<String> {
        times
            .iter()
            .map(|t| {
                t.with_timezone(&schedule.timezone())
                    .format("%Y-%m-%d %H:%M %Z")
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn half_past_two_in_berlin_runs_once_on_the_spring_day_and_once_on_the_autumn_day()
    -> Result<(), ScheduleError> {
        let daily = Schedule::parse("30 2 * * *", "Europe/Berlin")?;
        // 2026-03-29: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist.
        let spring = daily.upcoming(utc(2026, 3, 27, 12, 0), 3);
        assert_eq!(
            local(&daily, &spring),
            [
                "2026-03-28 02:30 CET",
                "2026-03-29 03:00 CEST",
                "2026-03-30 02:30 CEST"
            ]
        );
        // 2026-10-25: 03:00 CEST goes back to 02:00 CET; 02:30 happens twice.
        let autumn = daily.upcoming(utc(2026, 10, 23, 12, 0), 3);
        assert_eq!(
            local(&daily, &autumn),
            [
                "2026-10-24 02:30 CEST",
                "2026-10-25 02:30 CEST",
                "2026-10-26 02:30 CET"
            ]
        );
        Ok(())
    }

    #[test]
    fn every_n_minutes_is_aligned_to_the_clock_and_counts_missed_slots() -> Result<(), ScheduleError>
    {
        let five = Schedule::parse("every 5 minutes", "UTC")?;
        assert_eq!(
            five.next_after(utc(2026, 1, 1, 9, 3)),
            Some(utc(2026, 1, 1, 9, 5))
        );
        assert_eq!(
            five.next_after(utc(2026, 1, 1, 9, 5)),
            Some(utc(2026, 1, 1, 9, 10))
        );
        // Asleep 02:00 to 09:12: 86 slots from 02:05 to 09:10.
        let due = five.due(utc(2026, 1, 1, 2, 0), utc(2026, 1, 1, 9, 12));
        assert_eq!(
            due,
            Some(Due {
                latest: utc(2026, 1, 1, 9, 10),
                count: 86
            })
        );
        let cron = Schedule::parse("*/5 * * * *", "Europe/Berlin")?;
        assert_eq!(cron.due(utc(2026, 1, 1, 2, 0), utc(2026, 1, 1, 9, 12)), due);
        Ok(())
    }

    #[test]
    fn bad_patterns_and_zones_are_refused_with_the_value_named() {
        assert_eq!(
            Schedule::parse("* * *", "UTC").err().map(|e| e.to_string()),
            Some("invalid schedule '* * *': a cron pattern has 5 fields (minute hour day month weekday), or 6 with seconds first; this has 3".to_string())
        );
        assert_eq!(
            Schedule::parse("0 3 * * *", "Mars/Olympus").err(),
            Some(ScheduleError::TimeZone("Mars/Olympus".into()))
        );
        assert!(Schedule::parse("every 0 minutes", "UTC").is_err());
        assert!(Schedule::parse("61 * * * *", "UTC").is_err());
        assert!(
            Schedule::parse("0 */10 * * * *", "UTC").is_ok(),
            "seconds are optional"
        );
    }
}
