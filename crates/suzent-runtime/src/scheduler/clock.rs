//! The scheduler's clock: wall-clock time and waiting for a moment, behind a trait so tests move
//! time by hand instead of sleeping.

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::watch;

/// Environment variable naming a file that holds the time (RFC 3339) a test wants this process
/// to see. The scheduler of `suzent serve` and the desktop app reads its time from there when it
/// is set; for tests of real processes only.
pub const TEST_CLOCK_ENV: &str = "SUZENT_TEST_CLOCK_FILE";

/// Wall-clock time for the scheduler.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;

    /// Resolves once [`Clock::now`] is at or after `deadline`; also when the wall clock jumps
    /// past it (the machine slept).
    fn sleep_until(&self, deadline: DateTime<Utc>) -> BoxFuture<'static, ()>;
}

/// The longest the system clock's sleep waits before looking at the wall clock again: the
/// monotonic timer does not advance while the machine sleeps, the wall clock does.
const WALL_CHECK: Duration = Duration::from_secs(30);

/// The system clock. A sleep is cut into pieces of at most 30 s so that a jump of the wall
/// clock (the machine slept, the time was set) is seen within 30 s.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn sleep_until(&self, deadline: DateTime<Utc>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            loop {
                let left = (deadline - Utc::now()).to_std().unwrap_or(Duration::ZERO);
                if left.is_zero() {
                    return;
                }
                tokio::time::sleep(left.min(WALL_CHECK)).await;
            }
        })
    }
}

/// A clock that only moves when told ([`ManualClock::advance`], [`ManualClock::set`]): tests
/// of schedules across days, DST changes and sleeps run in milliseconds.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<watch::Sender<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: DateTime<Utc>) -> ManualClock {
        let (tx, _) = watch::channel(start);
        ManualClock { now: Arc::new(tx) }
    }

    /// Moves the time forward by `by` and wakes the sleepers whose deadline passed.
    pub fn advance(&self, by: Duration) {
        let by = chrono::TimeDelta::from_std(by).unwrap_or(chrono::TimeDelta::zero());
        self.now.send_modify(|now| *now += by);
    }

    /// Sets the time (forward or back: a jump of the wall clock).
    pub fn set(&self, to: DateTime<Utc>) {
        self.now.send_replace(to);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.borrow()
    }

    fn sleep_until(&self, deadline: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let mut rx = self.now.subscribe();
        Box::pin(async move {
            // An error means the clock is gone: nothing will ever move it, so never wake.
            if rx.wait_for(|now| *now >= deadline).await.is_err() {
                futures::future::pending::<()>().await;
            }
        })
    }
}

/// A clock read from a file ([`TEST_CLOCK_ENV`]), so a test can move the time of real
/// processes. Re-read every 20 ms while sleeping; an unreadable file reads as the last good time.
#[derive(Debug)]
pub struct FileClock {
    path: PathBuf,
    last: Mutex<DateTime<Utc>>,
}

const FILE_POLL: Duration = Duration::from_millis(20);

impl FileClock {
    /// The clock of `path`.
    pub fn new(path: PathBuf) -> FileClock {
        let clock = FileClock {
            path,
            last: Mutex::new(Utc::now()),
        };
        clock.now();
        clock
    }

    fn read(path: &std::path::Path) -> Option<DateTime<Utc>> {
        let text = std::fs::read_to_string(path).ok()?;
        DateTime::parse_from_rfc3339(text.trim())
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }
}

impl Clock for FileClock {
    fn now(&self) -> DateTime<Utc> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = FileClock::read(&self.path) {
            *last = t;
        }
        *last
    }

    fn sleep_until(&self, deadline: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let path = self.path.clone();
        Box::pin(async move {
            loop {
                if FileClock::read(&path).is_some_and(|t| t >= deadline) {
                    return;
                }
                tokio::time::sleep(FILE_POLL).await;
            }
        })
    }
}

/// The clock a scheduler of this process uses: the file of [`TEST_CLOCK_ENV`] when set, else
/// the system clock.
pub fn from_env() -> Arc<dyn Clock> {
    match std::env::var_os(TEST_CLOCK_ENV) {
        Some(path) if !path.is_empty() => Arc::new(FileClock::new(path.into())),
        _ => Arc::new(SystemClock),
    }
}
