//! start_command / check_command / stop_command with real processes
//! (shared/cases/processes.md cases 1-4 for background commands), bounded output, limits, and
//! sandbox mode under bubblewrap.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, is_alive, live_members, settle};
use serde_json::json;
use suzent_tools::{
    BackgroundCommands, CommandLimits, DEFAULT_SANDBOX_IMAGE, Sandbox, SandboxBackend, ToolError,
};

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// An environment whose context has a command table (with these limits).
fn env_with(limits: CommandLimits) -> (Env, tempfile::TempDir) {
    let mut env = Env::new();
    let out = tempfile::tempdir().unwrap();
    env.ctx.commands = Some(BackgroundCommands::new(out.path(), limits).unwrap());
    (env, out)
}

fn env() -> (Env, tempfile::TempDir) {
    env_with(CommandLimits::default())
}

async fn start(env: &Env, script: &str, timeout: u64) -> String {
    let out = env
        .call(
            "start_command",
            json!({"content": script, "timeout": timeout}),
        )
        .await
        .unwrap();
    out.split_whitespace()
        .find(|w| w.starts_with("cmd-"))
        .unwrap()
        .to_string()
}

async fn check(env: &Env, id: &str, offset: u64, wait: u64) -> String {
    env.call(
        "check_command",
        json!({"command_id": id, "offset": offset, "wait_seconds": wait, "max_bytes": 64000}),
    )
    .await
    .unwrap()
}

fn read_pgid(env: &Env) -> i32 {
    std::fs::read_to_string(env.ws().join("pgid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_background_child_holding_the_pipe_is_stopped_when_the_command_exits() {
    let (env, _out) = env();
    let id = start(
        &env,
        "echo $$ > pgid; echo BEFORE && sleep 300 & echo AFTER",
        10,
    )
    .await;
    let out = check(&env, &id, 0, 20).await;
    assert!(out.contains("exited with code 0"), "{out}");
    assert!(out.contains("BEFORE") && out.contains("AFTER"), "{out}");
    let pgid = read_pgid(&env);
    settle(|| live_members(pgid).is_empty());
    assert_eq!(live_members(pgid), Vec::<i32>::new());
}

#[tokio::test]
async fn stdin_of_a_background_command_is_empty() {
    let (env, _out) = env();
    let id = start(
        &env,
        "cat; echo \"cat:$?\"; read line; echo \"read:$?\"",
        10,
    )
    .await;
    let out = check(&env, &id, 0, 20).await;
    assert!(out.contains("cat:0") && out.contains("read:1"), "{out}");
}

#[tokio::test]
async fn stop_command_kills_the_whole_tree() {
    let (env, _out) = env();
    let id = start(
        &env,
        "echo $$ > pgid; sh -c 'sleep 1000 & echo $! >> pids; sleep 1000 & echo $! >> pids; echo $$ >> pids; wait'",
        600,
    )
    .await;
    let pids_file = env.ws().join("pids");
    settle(|| {
        std::fs::read_to_string(&pids_file)
            .map(|t| t.lines().count() == 3)
            .unwrap_or(false)
    });
    let out = env
        .call("stop_command", json!({"command_id": id}))
        .await
        .unwrap();
    assert!(out.contains("stopped"), "{out}");
    let pids: Vec<i32> = std::fs::read_to_string(&pids_file)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 3);
    settle(|| pids.iter().all(|&p| !is_alive(p)));
    for pid in pids {
        assert!(!is_alive(pid), "process {pid} of the tree is still running");
    }
    let pgid = read_pgid(&env);
    assert_eq!(live_members(pgid), Vec::<i32>::new());
    let after = check(&env, &id, 0, 0).await;
    assert!(after.contains("stopped"), "{after}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_tree() {
    let (env, _out) = env();
    let id = start(
        &env,
        "echo $$ > pgid; sh -c 'sleep 1000 & echo $! >> pids; sleep 1000 & echo $! >> pids; wait'",
        1,
    )
    .await;
    let out = check(&env, &id, 0, 30).await;
    assert!(out.contains("timed out"), "{out}");
    let pids: Vec<i32> = std::fs::read_to_string(env.ws().join("pids"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    settle(|| pids.iter().all(|&p| !is_alive(p)));
    for pid in &pids {
        assert!(
            !is_alive(*pid),
            "process {pid} of the tree is still running"
        );
    }
    assert_eq!(live_members(read_pgid(&env)), Vec::<i32>::new());
}

#[tokio::test]
async fn git_prompts_and_editors_fail_fast_in_the_background_too() {
    let (env, _out) = env();
    let script = "git init -q repo && cd repo \
        && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m init; \
        git rebase --continue; echo \"rebase:$?\"; \
        git push https://127.0.0.1:9/x.git HEAD; echo \"push:$?\"; \
        echo \"prompt=$GIT_TERMINAL_PROMPT editor=$GIT_EDITOR pager=$PAGER\"";
    let id = start(&env, script, 60).await;
    let out = check(&env, &id, 0, 60).await;
    assert!(out.contains("exited with code 0"), "{out}");
    assert!(
        out.contains("rebase:") && !out.contains("rebase:0"),
        "{out}"
    );
    assert!(out.contains("push:") && !out.contains("push:0"), "{out}");
    assert!(out.contains("prompt=0 editor=true pager=cat"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_of_output_keeps_memory_flat_and_the_tail_can_be_paged() {
    let (env, out_dir) = env();
    let before = rss_kib();
    let id = start(
        &env,
        "head -c 1073741824 /dev/zero | tr '\\0' 'x'; echo; echo END-OF-OUTPUT-MARKER",
        600,
    )
    .await;
    let first = check(&env, &id, 0, 60).await;
    let mut waited = 0;
    let mut status = first.clone();
    while !status.contains("exited with code") && waited < 10 {
        status = check(&env, &id, 0, 60).await;
        waited += 1;
    }
    let after = rss_kib();
    eprintln!("RSS of the test process: {before} KiB before, {after} KiB after 1 GiB of output");
    assert!(status.contains("exited with code 0"), "{}", &status[..200]);
    assert!(
        after < before + 64 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    // The head is gone and that is reported; the kept part starts where the spool starts.
    assert!(status.contains("[output truncated:"), "{}", &status[..300]);
    let total: u64 = 1_073_741_824 + 1 + "END-OF-OUTPUT-MARKER\n".len() as u64;
    assert!(
        status.contains(&format!("of {total}")),
        "{}",
        &status[..300]
    );
    // Page from the first kept byte to the end.
    let header = status.lines().nth(2).unwrap().to_string();
    let start: u64 = header
        .strip_prefix("output bytes ")
        .and_then(|r| r.split("..").next())
        .unwrap()
        .parse()
        .unwrap();
    let mut offset = start;
    let mut last = String::new();
    let mut pages = 0;
    while offset < total {
        let page = check(&env, &id, offset, 0).await;
        let next: u64 = page
            .split("next_offset: ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(next > offset);
        offset = next;
        last = page;
        pages += 1;
    }
    assert!(pages > 1);
    assert!(last.contains("END-OF-OUTPUT-MARKER"), "{last}");
    // On disk only the last segments are kept.
    let kept: u64 = std::fs::read_dir(out_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(kept <= 2 * 1024 * 1024, "{kept} bytes kept on disk");
}

#[tokio::test]
async fn the_active_command_limit_is_an_error_that_says_what_to_do() {
    let (env, _out) = env_with(CommandLimits {
        max_active_per_chat: 2,
        ..CommandLimits::default()
    });
    let a = start(&env, "sleep 30", 60).await;
    let b = start(&env, "sleep 30", 60).await;
    let r = env
        .call("start_command", json!({"content": "sleep 30"}))
        .await;
    let Err(ToolError::Failed(msg)) = r else {
        panic!("expected the limit, got {r:?}")
    };
    assert!(msg.contains("already runs 2 background commands"), "{msg}");
    assert!(msg.contains("stop_command"), "{msg}");
    for id in [a, b] {
        env.call("stop_command", json!({"command_id": id}))
            .await
            .unwrap();
    }
    start(&env, "true", 60).await;
}

#[tokio::test]
async fn finished_commands_beyond_the_retention_limit_are_forgotten() {
    let (env, _out) = env_with(CommandLimits {
        max_retained: 2,
        ..CommandLimits::default()
    });
    let mut ids = Vec::new();
    for i in 0..3 {
        let id = start(&env, &format!("echo {i}"), 60).await;
        check(&env, &id, 0, 30).await;
        ids.push(id);
    }
    // Retention is updated right after the end is recorded.
    settle(|| env.ctx.commands.as_ref().unwrap().list().len() == 2);
    let r = env
        .call("check_command", json!({"command_id": ids[0]}))
        .await;
    let Err(ToolError::Failed(msg)) = r else {
        panic!("expected unknown, got {r:?}")
    };
    assert!(msg.contains("no background command"), "{msg}");
    let out = check(&env, &ids[2], 0, 0).await;
    assert!(out.contains('2'), "{out}");
}

#[tokio::test]
async fn without_a_command_table_start_command_says_to_use_run_command() {
    let env = Env::new();
    let r = env.call("start_command", json!({"content": "true"})).await;
    let Err(ToolError::Failed(msg)) = r else {
        panic!("{r:?}")
    };
    assert!(msg.contains("use run_command"), "{msg}");
}

fn sandboxed(env: &mut Env, network: bool) {
    env.ctx.sandbox = Some(Sandbox {
        workspace: env.ctx.workspace_root.clone(),
        persistence: env.ctx.persistence_dir.clone(),
        shared: env.ctx.shared_dir.clone(),
        network,
        backend: SandboxBackend::Bubblewrap,
        image: DEFAULT_SANDBOX_IMAGE.into(),
        hidden: Vec::new(),
    });
}

#[tokio::test]
async fn in_the_sandbox_writing_outside_the_workspace_fails_inside_the_command() {
    let (mut env, _out) = env();
    sandboxed(&mut env, false);
    let outside = env.outside.join("escaped.txt");
    let script = format!(
        "echo in > inside.txt; echo \"ws:$?\"; echo out > {}; echo \"outside:$?\"; \
         echo p > {}/p.txt; echo \"persist:$?\"; touch /etc/suzent-sandbox-probe; echo \"etc:$?\"",
        outside.display(),
        env.ctx.persistence_dir.display()
    );
    let out = env
        .call("run_command", json!({"content": script, "timeout": 30}))
        .await
        .unwrap();
    assert!(out.contains("ws:0"), "{out}");
    assert!(out.contains("persist:0"), "{out}");
    assert!(out.contains("outside:1"), "{out}");
    assert!(out.contains("etc:1"), "{out}");
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(env.ws().join("inside.txt").exists());
    assert!(!outside.exists());
    // Background commands run in the same sandbox.
    let id = start(&env, &format!("echo bg > {}", outside.display()), 30).await;
    let out = check(&env, &id, 0, 30).await;
    assert!(out.contains("exited with code 1"), "{out}");
    assert!(!outside.exists());
}

#[tokio::test]
async fn in_the_sandbox_the_network_is_off_unless_allowed() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            drop(conn);
        }
    });
    let script = format!("echo hi > /dev/tcp/127.0.0.1/{port}; echo \"net:$?\"");
    let (mut env, _out) = env();
    // On the host the listener is reachable.
    let host = env
        .call("run_command", json!({"content": script, "timeout": 30}))
        .await
        .unwrap();
    assert!(host.contains("net:0"), "{host}");
    sandboxed(&mut env, false);
    let off = env
        .call("run_command", json!({"content": script, "timeout": 30}))
        .await
        .unwrap();
    assert!(off.contains("net:1"), "{off}");
    sandboxed(&mut env, true);
    let on = env
        .call("run_command", json!({"content": script, "timeout": 30}))
        .await
        .unwrap();
    assert!(on.contains("net:0"), "{on}");
}

#[tokio::test]
async fn the_docker_backend_without_an_engine_refuses_instead_of_running_on_the_host() {
    let engine = std::process::Command::new("docker").arg("info").output();
    let expected = match &engine {
        Ok(o) if o.status.success() => {
            eprintln!("a Docker engine answers here; the refusal is shown where none does");
            return;
        }
        Ok(_) => "the Docker engine does not answer",
        Err(_) => "the docker CLI is not installed",
    };
    let (mut env, _out) = env();
    sandboxed(&mut env, false);
    if let Some(sb) = env.ctx.sandbox.as_mut() {
        sb.backend = SandboxBackend::Docker;
    }
    let marker = env.ws().join("ran-on-the-host.txt");
    let script = format!("touch {}", marker.display());
    for tool in ["run_command", "start_command"] {
        let r = env
            .call(tool, json!({"content": script, "timeout": 30}))
            .await;
        let Err(ToolError::Failed(msg)) = r else {
            panic!("{tool}: expected a refusal, got {r:?}")
        };
        assert!(msg.contains("no sandbox is available"), "{msg}");
        assert!(msg.contains("sandbox_backend = \"docker\""), "{msg}");
        assert!(msg.contains(expected), "{msg}");
        assert!(msg.contains("not run on the host"), "{msg}");
    }
    assert!(!marker.exists(), "the command ran on the host");
}
