//! Spawns tool processes so that they die with the runtime (issue 13 item 8).
//!
//! Linux: the group leader (the shell) gets `PR_SET_PDEATHSIG(SIGKILL)`. The kernel sends that
//! signal when the *thread* that forked the child exits, not the process: a child forked from a
//! Tokio worker or blocking-pool thread (blocking threads exit after 10 s idle) would be killed
//! when that thread goes away while the runtime is alive. So every tool process is forked from
//! one dedicated spawner thread that lives as long as the process; it dies only with the whole
//! process (exit, crash, SIGKILL), and then the kernel kills the leaders. What a leader started
//! itself (a shell's children) does not get the signal; those are found at the next start by
//! the sweep of recorded process groups (`os.rs`, the runtime's `processes` service).
//!
//! Windows: the shell is placed in a job object with kill-on-close (`JobObject` + `KillOnDrop`
//! of `process-wrap`); the job's last handle is ours, so when the runtime dies for any reason
//! the OS closes it and ends every process in the job.
//!
//! macOS and other Unix systems: no parent-death signal; the sweep at the next start is all.

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// The spawner thread's queue, started on first use.
fn queue() -> Option<mpsc::Sender<Job>> {
    static QUEUE: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
    QUEUE
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("suzent-spawner".into())
                .spawn(move || {
                    // Lives until the process ends: the receiver's sender is never dropped.
                    for job in rx {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
        .map(|tx| tx.lock().unwrap_or_else(PoisonError::into_inner).clone())
}

/// Asks the kernel to SIGKILL the child when the thread that forked it (the spawner thread, so:
/// this process) dies.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // `pre_exec` is unsafe by signature; the closure is async-signal-safe
fn die_with_parent(command: &mut CommandWrap) {
    use nix::sys::signal::Signal;
    let parent = nix::unistd::Pid::this();
    // SAFETY: the closure runs in the forked child before exec; it allocates nothing, takes no
    // lock and only makes the async-signal-safe system calls prctl, getppid and kill.
    unsafe {
        command.command_mut().pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            // The parent died between fork and prctl: no signal would come.
            if nix::unistd::getppid() != parent {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::this(), Signal::SIGKILL);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut CommandWrap) {}

/// Spawns `command` from the spawner thread (in the current Tokio runtime, which owns the
/// child's reaping). Falls back to spawning here if the thread cannot be started.
pub(crate) fn spawn(mut command: CommandWrap) -> std::io::Result<Box<dyn ChildWrapper>> {
    die_with_parent(&mut command);
    #[cfg(windows)]
    command.wrap(process_wrap::tokio::KillOnDrop);
    let handle = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
    let Some(queue) = queue() else {
        return command.spawn();
    };
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _entered = handle.enter();
        let _ = tx.send(command.spawn());
    });
    if queue.send(job).is_err() {
        return Err(std::io::Error::other("the process spawner thread is gone"));
    }
    // A fork and exec: short enough to wait for on an async thread.
    rx.recv()
        .map_err(|_| std::io::Error::other("the process spawner thread is gone"))?
}
