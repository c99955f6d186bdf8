//! What the OS says about a process: its identity (pid, start time, boot) and the checked stop
//! of a process group a killed runtime left behind (issue 13 item 8).
//!
//! A pid alone names nothing after its process is gone: the kernel hands it out again. A process
//! is named here by its pid *and* its start time in clock ticks after boot (`/proc/PID/stat`
//! field 22) *and* the boot (`/proc/sys/kernel/random/boot_id`); a recorded process counts as
//! alive only when all three match. Linux only: elsewhere the start time is unknown, nothing
//! counts as verified and [`stop_recorded_group`] kills nothing.

/// A process as recorded at spawn: pid, start time, boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessIdentity {
    /// The pid.
    pub pid: u32,
    /// Start time in clock ticks after boot (`/proc/PID/stat` field 22); `None` off Linux or
    /// when the process is already gone.
    pub start_ticks: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id`; `None` off Linux.
    pub boot_id: Option<String>,
}

impl ProcessIdentity {
    /// The identity of the live process `pid` (start time `None` when it is gone).
    pub fn of(pid: u32) -> ProcessIdentity {
        ProcessIdentity {
            pid,
            start_ticks: stat(pid).map(|s| s.start_ticks),
            boot_id: boot_id(),
        }
    }

    /// This process.
    pub fn current() -> ProcessIdentity {
        ProcessIdentity::of(std::process::id())
    }

    /// Whether this very process still runs: same boot, the pid runs and started at the
    /// recorded time. `false` when anything is unknown (the caller must not act on it as alive
    /// or dead; see [`ProcessIdentity::verifiable`]).
    pub fn is_running(&self) -> bool {
        let (Some(start), Some(boot)) = (self.start_ticks, self.boot_id.as_deref()) else {
            return false;
        };
        boot_id().as_deref() == Some(boot) && stat(self.pid).is_some_and(|s| s.start_ticks == start)
    }

    /// Whether start time and boot are known, so [`ProcessIdentity::is_running`] means what it
    /// says.
    pub fn verifiable(&self) -> bool {
        self.start_ticks.is_some() && self.boot_id.is_some() && boot_id().is_some()
    }
}

/// The fields of `/proc/PID/stat` used here.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    pgid: u32,
    start_ticks: u64,
}

/// Parses `/proc/PID/stat`. The command name (field 2) is in parentheses and may contain spaces
/// and parentheses itself, so fields are counted from the last `)`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `fields[0]` is field 3 (state): field N is fields[N - 3].
    Some(Stat {
        pgid: fields.get(5 - 3)?.parse().ok()?,
        start_ticks: fields.get(22 - 3)?.parse().ok()?,
    })
}

#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_stat(&text)?;
    // A zombie has given up its group; it is harmless and cannot be killed anyway.
    let state = text[text.rfind(')')? + 1..].split_whitespace().next()?;
    (state != "Z" && state != "X").then_some(stat)
}

#[cfg(not(target_os = "linux"))]
fn stat(_pid: u32) -> Option<Stat> {
    None
}

#[cfg(target_os = "linux")]
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(not(target_os = "linux"))]
fn boot_id() -> Option<String> {
    None
}

/// What [`stop_recorded_group`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupStop {
    /// Processes of the recorded group were still running and got SIGKILL.
    Stopped {
        /// How many processes were killed.
        processes: usize,
    },
    /// Nothing of the group runs any more.
    Gone,
    /// The pid runs again, but as another process (other start time or boot): nothing was
    /// killed.
    Reused,
    /// Start time or boot unknown (not Linux, or not recorded): nothing was killed.
    Unverifiable,
}

impl GroupStop {
    /// One line for logs and records.
    pub fn describe(&self) -> String {
        match self {
            GroupStop::Stopped { processes } => {
                format!("{processes} process(es) of its group were still running and were killed")
            }
            GroupStop::Gone => "nothing of its process group was running any more".into(),
            GroupStop::Reused => {
                "its pid now belongs to another process, which was left alone".into()
            }
            GroupStop::Unverifiable => {
                "its start time cannot be checked here, so nothing was killed".into()
            }
        }
    }
}

/// Stops what is left of a process group recorded at spawn: `leader` is the group leader as
/// recorded (its pid is the group id). The group is killed (SIGKILL) only when it is verifiably
/// the recorded one:
/// - the leader runs with the recorded start time and boot: the whole group is killed;
/// - no process runs under the leader's pid: the group id cannot have been handed out again
///   (Linux does not reuse a pid while a group of that id exists), so every process still in
///   that group is a leftover of the recorded one and is killed — provided the boot is the same;
/// - the pid runs as another process: nothing is killed ([`GroupStop::Reused`]).
pub fn stop_recorded_group(leader: &ProcessIdentity) -> GroupStop {
    if !leader.verifiable() {
        return GroupStop::Unverifiable;
    }
    if boot_id() != leader.boot_id {
        // Another boot: nothing of that time runs any more.
        return GroupStop::Gone;
    }
    let pgid = leader.pid;
    match stat(leader.pid) {
        Some(s) if Some(s.start_ticks) != leader.start_ticks => return GroupStop::Reused,
        _ => {}
    }
    let members = group_members(pgid);
    if members.is_empty() {
        return GroupStop::Gone;
    }
    kill_group(pgid);
    GroupStop::Stopped {
        processes: members.len(),
    }
}

/// Live processes whose group id is `pgid`.
#[cfg(target_os = "linux")]
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| stat(*pid).is_some_and(|s| s.pgid == pgid))
        .collect()
}

#[cfg(not(target_os = "linux"))]
fn group_members(_pgid: u32) -> Vec<u32> {
    Vec::new()
}

#[cfg(unix)]
fn kill_group(pgid: u32) {
    // pgid > 1 never addresses init or every process.
    if let Ok(pgid) = i32::try_from(pgid)
        && pgid > 1
    {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: u32) {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_stat_line_is_read_past_a_command_name_with_spaces_and_parentheses() {
        let line = "4242 (we ird) (x)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                pgid: 4240,
                start_ticks: 987_654
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_running_and_a_changed_start_time_is_not() {
        let me = ProcessIdentity::current();
        assert!(me.verifiable());
        assert!(me.is_running());
        let other = ProcessIdentity {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me.clone()
        };
        assert!(!other.is_running());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_live_process_whose_recorded_start_time_differs_is_not_killed() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("600.271")
            .process_group(0)
            .spawn()
            .unwrap();
        let live = ProcessIdentity::of(child.id());
        let recorded = ProcessIdentity {
            start_ticks: live.start_ticks.map(|t| t.saturating_sub(5)),
            ..live.clone()
        };
        assert_eq!(stop_recorded_group(&recorded), GroupStop::Reused);
        assert!(live.is_running(), "the unrelated process still runs");
        // The recorded one itself is stopped.
        assert_eq!(
            stop_recorded_group(&live),
            GroupStop::Stopped { processes: 1 }
        );
        child.wait().unwrap();
        assert!(!live.is_running());
        assert_eq!(stop_recorded_group(&live), GroupStop::Gone);
    }
}
