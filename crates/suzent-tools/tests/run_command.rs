//! run_command with real processes (shared/cases/processes.md cases 1-4).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, is_alive, live_members, settle};
use serde_json::json;
use suzent_tools::ToolError;

fn read_pgid(env: &Env) -> i32 {
    std::fs::read_to_string(env.ws().join("pgid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_background_child_holding_the_pipe_does_not_block_and_is_stopped() {
    let env = Env::new();
    let out = env
        .call(
            "run_command",
            json!({"content": "echo $$ > pgid; echo BEFORE && sleep 300 & echo AFTER", "timeout": 10}),
        )
        .await
        .unwrap();
    assert!(out.contains("BEFORE"), "{out}");
    assert!(out.contains("AFTER"), "{out}");
    assert!(out.ends_with("exit code: 0"), "{out}");
    assert!(out.contains("background processes"), "{out}");
    let pgid = read_pgid(&env);
    settle(|| live_members(pgid).is_empty());
    assert_eq!(live_members(pgid), Vec::<i32>::new());
}

#[tokio::test]
async fn stdin_is_empty_so_readers_do_not_wait() {
    let env = Env::new();
    let out = env
        .call(
            "run_command",
            json!({"content": "cat; echo \"cat:$?\"; read line; echo \"read:$?\"", "timeout": 10}),
        )
        .await
        .unwrap();
    assert!(out.contains("cat:0"), "{out}");
    assert!(out.contains("read:1"), "{out}");
}

#[tokio::test]
async fn a_timeout_kills_the_whole_tree() {
    let env = Env::new();
    let r = env
        .call(
            "run_command",
            json!({
                "content": "echo $$ > pgid; sh -c 'sleep 1000 & echo $! >> pids; sleep 1000 & echo $! >> pids; echo $$ >> pids; wait'",
                "timeout": 1
            }),
        )
        .await;
    let Err(ToolError::Failed(msg)) = r else {
        panic!("expected a timeout, got {r:?}")
    };
    assert!(msg.starts_with("command timed out after 1 s"), "{msg}");
    assert!(msg.contains("exit code:"), "{msg}");
    let pids: Vec<i32> = std::fs::read_to_string(env.ws().join("pids"))
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
    settle(|| live_members(pgid).is_empty());
    assert_eq!(live_members(pgid), Vec::<i32>::new());
}

#[tokio::test]
async fn cancelling_the_turn_kills_the_tree() {
    let env = Env::new();
    let cancel = env.ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        cancel.cancel();
    });
    let r = env
        .call(
            "run_command",
            json!({"content": "echo $$ > pgid; sleep 1000 & sleep 1000; echo never", "timeout": 60}),
        )
        .await;
    assert_eq!(r, Err(ToolError::Cancelled));
    let pgid = read_pgid(&env);
    settle(|| live_members(pgid).is_empty());
    assert_eq!(live_members(pgid), Vec::<i32>::new());
}

#[tokio::test]
async fn git_prompts_and_editors_fail_fast() {
    let env = Env::new();
    let script = "git init -q repo && cd repo \
        && git -c user.name=t -c user.email=t@e commit -q --allow-empty -m init; \
        git rebase --continue; echo \"rebase:$?\"; \
        git push https://127.0.0.1:9/x.git HEAD; echo \"push:$?\"; \
        echo \"prompt=$GIT_TERMINAL_PROMPT editor=$GIT_EDITOR pager=$PAGER\"";
    let out = env
        .call("run_command", json!({"content": script, "timeout": 60}))
        .await
        .unwrap();
    assert!(
        out.contains("rebase:") && !out.contains("rebase:0"),
        "{out}"
    );
    assert!(out.contains("push:") && !out.contains("push:0"), "{out}");
    assert!(out.contains("prompt=0 editor=true pager=cat"), "{out}");
}

#[tokio::test]
async fn the_command_runs_in_its_own_session_in_the_workspace() {
    let env = Env::new();
    let out = env
        .call(
            "run_command",
            json!({"content": "echo \"pid=$$\"; echo \"sid=$(awk '{print $6}' /proc/$$/stat)\"; pwd"}),
        )
        .await
        .unwrap();
    let pid = out.lines().find_map(|l| l.strip_prefix("pid=")).unwrap();
    let sid = out.lines().find_map(|l| l.strip_prefix("sid=")).unwrap();
    assert_eq!(pid, sid, "{out}");
    assert!(out.contains(&env.ws().display().to_string()), "{out}");
}

#[tokio::test]
async fn the_exit_code_and_interleaved_stderr_are_reported() {
    let env = Env::new();
    let out = env
        .call(
            "run_command",
            json!({"content": "echo out1; echo err1 >&2; echo out2; exit 3"}),
        )
        .await
        .unwrap();
    assert_eq!(out, "out1\nerr1\nout2\nexit code: 3");
    let out = env
        .call("run_command", json!({"content": "true"}))
        .await
        .unwrap();
    assert_eq!(out, "(no output)\nexit code: 0");
    let out = env
        .call("run_command", json!({"content": "kill -9 $$"}))
        .await
        .unwrap();
    assert!(
        out.ends_with("exit code: none (killed by signal 9)"),
        "{out}"
    );
}

#[tokio::test]
async fn long_output_keeps_the_tail_with_a_marker() {
    let env = Env::new();
    let out = env
        .call(
            "run_command",
            json!({"content": "for i in $(seq 1 20000); do echo line$i; done"}),
        )
        .await
        .unwrap();
    assert!(
        out.starts_with("[output truncated: the first "),
        "{}",
        &out[..200]
    );
    assert!(out.contains("line20000\nexit code: 0"));
    assert!(!out.contains("\nline1\n"));
    assert!(out.len() < 30_300);
}

#[tokio::test]
async fn a_timeout_out_of_range_is_an_invalid_argument() {
    let env = Env::new();
    for timeout in [0, 601, 5000] {
        let r = env
            .call(
                "run_command",
                json!({"content": "true", "timeout": timeout}),
            )
            .await;
        let Err(ToolError::InvalidArguments(m)) = r else {
            panic!("{r:?}")
        };
        assert!(m.contains("timeout"), "{m}");
    }
}

#[tokio::test]
async fn access_reports_the_command_and_the_workspace() {
    use suzent_permissions::ToolAccess;
    let env = Env::new();
    let tool = suzent_tools::default_registry().get("run_command").unwrap();
    assert_eq!(
        tool.access(
            &json!({"content": "ls -la", "description": "list"}),
            &env.ctx
        )
        .unwrap(),
        ToolAccess::Command {
            command: "ls -la".into(),
            cwd: env.ws()
        }
    );
}

#[tokio::test]
async fn a_tree_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let env = Env::new();
    let r = env
        .call(
            "run_command",
            json!({"content": "trap '' TERM; echo $$ > pgid; sleep 1000 & sleep 1000 & wait", "timeout": 1}),
        )
        .await;
    assert!(
        matches!(r, Err(ToolError::Failed(ref m)) if m.contains("timed out")),
        "{r:?}"
    );
    let pgid = read_pgid(&env);
    settle(|| live_members(pgid).is_empty());
    assert_eq!(live_members(pgid), Vec::<i32>::new());
}
