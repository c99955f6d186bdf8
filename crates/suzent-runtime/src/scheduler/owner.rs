//! Who a scheduler instance is, and whether the instance that claimed a run still lives.
//!
//! An instance id is `host:pid:uuid`. A run whose claiming instance is gone (its process exited,
//! or, in this process, the instance was dropped) and that is still marked running was
//! interrupted.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

fn live() -> &'static Mutex<HashSet<String>> {
    static LIVE: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// This machine's name (for lease records and instance ids).
pub fn host_name() -> String {
    let from_file = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    from_file
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A live scheduler instance of this process; dropping it (or [`Instance::end`]) marks it gone.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) id: String,
    pub(crate) pid: i64,
    pub(crate) host: String,
}

impl Instance {
    pub(crate) fn new() -> Instance {
        let host = host_name();
        let pid = i64::from(std::process::id());
        let id = format!("{host}:{pid}:{}", suzent_core::new_id());
        live()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone());
        Instance { id, pid, host }
    }

    pub(crate) fn end(&self) {
        live()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.end();
    }
}

/// Whether the instance `owner` (process `pid`) may still be running a run.
pub(crate) fn alive(owner: &str, pid: Option<i64>) -> bool {
    let Some(pid) = pid else {
        return false;
    };
    if pid == i64::from(std::process::id()) {
        return live()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(owner);
    }
    let host = owner.split(':').next().unwrap_or_default();
    if host != host_name() {
        // Another machine's instance: its lease expired, which is all we can know.
        return false;
    }
    process_alive(pid)
}

#[cfg(unix)]
fn process_alive(pid: i64) -> bool {
    use nix::errno::Errno;
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    // Signal 0: only checks that the process exists (EPERM: it exists, owned by another user).
    matches!(kill(Pid::from_raw(raw), None), Ok(()) | Err(Errno::EPERM))
}

#[cfg(not(unix))]
fn process_alive(_pid: i64) -> bool {
    // No cheap check here: the expired lease is taken as the end of that process.
    false
}
