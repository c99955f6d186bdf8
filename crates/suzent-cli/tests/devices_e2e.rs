//! Two installs on this machine (two SUZENT_HOMEs, relays off, direct loopback addresses), each
//! a real `suzent` process with its own scripted model server: pairing through the CLI with
//! matching words; A's agent sends to peer:B; B is stopped, A sends three more, B restarts:
//! each is delivered once, in order, and A sees it read; A is SIGKILLed right after a send
//! (before it recorded the answer) and the message is delivered once after its restart
//! (R2-P07); nothing secret is in clear in any file (R2-P02).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout};
use std::time::{Duration, Instant};
use support::Env;
use suzent_core::ChatMessage;
use suzent_tests::Turn;

fn install(name: &str, turns: Vec<Turn>) -> Env {
    let env = Env::new(turns);
    env.write_config(&format!(
        "default_model = \"openai/gpt-test\"\ntools = [\"AgentTool\", \"ReadFileTool\"]\n\n[devices]\nname = \"{name}\"\nrelay = false\ndiscovery = false\nbind = [\"127.0.0.1:0\"]\n"
    ));
    env
}

struct Talk {
    child: Child,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

fn talk(env: &Env, args: &[&str]) -> Talk {
    let mut cmd = env.command(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut child = cmd.spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    Talk {
        child,
        stdin,
        lines,
    }
}

impl Talk {
    fn event(&mut self) -> Value {
        let line = self.lines.next().expect("the process ended").unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }
    fn answer(&mut self, text: &str) {
        writeln!(self.stdin, "{text}").unwrap();
    }
}

fn json_of(env: &Env, args: &[&str]) -> Value {
    let out = env.run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn outbox(env: &Env) -> Vec<(String, String)> {
    json_of(env, &["devices", "outbox", "--json"])
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["text"].as_str().unwrap().to_string(),
                m["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("timed out waiting for {what}");
}

fn stop(mut child: Child) {
    let _ = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status();
    let _ = child.wait();
}

fn serve(env: &Env, extra: &[(&str, &str)]) -> Child {
    let mut env_vars = vec![("SUZENT_LOG", "debug"), ("SUZENT_PEER_LEASE_MS", "1500")];
    env_vars.extend_from_slice(extra);
    let mut child = env.spawn(&["serve"], &env_vars);
    // Wait until the device endpoint is up.
    let stderr = child.stderr.take().unwrap();
    let mut reader = BufReader::new(stderr);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "serve ended before the device endpoint was up"
        );
        if line.contains("reachable for paired devices") {
            break;
        }
    }
    // Keep draining stderr so the process never blocks on a full pipe; forward hold markers.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for l in reader.lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    HOLDS.with(|h| h.borrow_mut().push(rx));
    child
}

thread_local! {
    static HOLDS: std::cell::RefCell<Vec<std::sync::mpsc::Receiver<String>>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn wait_for_hold(name: &str) {
    let needle = format!("holding at {name}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let seen = HOLDS.with(|h| {
            h.borrow()
                .iter()
                .any(|rx| rx.try_iter().any(|l| l.contains(&needle)))
        });
        if seen {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no '{needle}'");
}

fn send_turns(to: &str, text: &str, id: &str) -> Vec<Turn> {
    vec![
        Turn::tool_call(
            id,
            "agent_send",
            serde_json::json!({"agent_id": to, "message": text}).to_string(),
        ),
        Turn::text("queued"),
    ]
}

fn peer_texts(env: &Env, chat: &str) -> Vec<String> {
    env.transcript(chat)
        .into_iter()
        .filter_map(|m| match m {
            ChatMessage::User { text, .. }
                if text.starts_with("[message from the paired device") =>
            {
                Some(text.rsplit('\n').next().unwrap_or_default().to_string())
            }
            _ => None,
        })
        .collect()
}

/// Every file under `root` whose bytes contain `needle`.
fn files_containing(root: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn two_installs_pair_on_the_cli_and_deliver_each_message_once_in_order_across_restarts_and_a_crash()
{
    let a = install("Laptop A", vec![]);
    let b = install("Desktop B", vec![]);

    // Pairing: A shows a code, B enters it, both show the same words, both users say yes.
    let mut host = talk(&a, &["devices", "pair", "--json"]);
    let offer = host.event();
    assert_eq!(offer["event"], "code");
    let code = offer["code"].as_str().unwrap().to_string();
    let mut joiner = talk(&b, &["devices", "join", &code, "--json"]);
    let b_words = joiner.event();
    let a_words = host.event();
    assert_eq!(
        (a_words["event"].as_str(), b_words["event"].as_str()),
        (Some("confirm"), Some("confirm"))
    );
    assert_eq!(a_words["words"], b_words["words"]);
    assert_eq!(a_words["words"].as_array().unwrap().len(), 4);
    host.answer("y");
    joiner.answer("y");
    assert_eq!(joiner.event()["event"], "paired");
    assert_eq!(host.event()["event"], "paired");
    assert!(host.child.wait().unwrap().success());
    assert!(joiner.child.wait().unwrap().success());
    // A used code does not work twice.
    let again = b.run(&["devices", "join", &code]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already used")
            || String::from_utf8_lossy(&again.stderr).contains("unreachable"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    let a_list = json_of(&a, &["devices", "list", "--json"]);
    let b_list = json_of(&b, &["devices", "list", "--json"]);
    let a_short = a_list["thisDevice"]["shortId"]
        .as_str()
        .unwrap()
        .to_string();
    let b_short = b_list["thisDevice"]["shortId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(a_list["devices"][0]["device"]["name"], "Desktop B");
    assert_eq!(
        a_list["devices"][0]["device"]["fingerprint"],
        b_list["thisDevice"]["fingerprint"]
    );
    assert_eq!(b_list["devices"][0]["device"]["name"], "Laptop A");
    assert_eq!(
        a_list["thisDevice"]["keyInKeychain"], false,
        "tests run without a keychain: the key file is used"
    );

    // Both serve; A's agent sends message 0 to peer:B.
    let to = format!("peer:{b_short}");
    b.server
        .push_turns((0..5).map(|i| Turn::text(format!("got {i}"))).collect());
    let a_serve = serve(&a, &[]);
    let mut b_serve = serve(&b, &[]);
    a.server.push_turns(send_turns(&to, "message 0", "s0"));
    let events = a.run_task("send message 0 to B", &[], 0);
    assert!(!events.is_empty());
    wait_until("message 0 read", Duration::from_secs(60), || {
        outbox(&a).first().is_some_and(|m| m.1 == "read")
    });

    // B stops; three more wait in A's outbox.
    stop(b_serve);
    for i in 1..4 {
        a.server
            .push_turns(send_turns(&to, &format!("message {i}"), &format!("s{i}")));
        a.run_task(&format!("send message {i}"), &[], 0);
    }
    let waiting = outbox(&a);
    assert!(
        waiting[1..]
            .iter()
            .all(|m| m.1 == "queued" || m.1 == "sending"),
        "{waiting:?}"
    );
    // B restarts: each arrives once, in order, and A sees each read.
    b_serve = serve(&b, &[]);
    wait_until("all four read", Duration::from_secs(120), || {
        let o = outbox(&a);
        o.len() == 4 && o.iter().all(|m| m.1 == "read")
    });
    let b_chat = json_of(&b, &["devices", "list", "--json"])["devices"][0]["device"]["inboxChat"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        peer_texts(&b, &b_chat),
        vec!["message 0", "message 1", "message 2", "message 3"]
    );

    // A is killed right after sending message 4, before it recorded B's answer.
    stop(a_serve);
    let mut a_held = serve(&a, &[("SUZENT_TEST_HOLD_AT", "peer_sent")]);
    a.server.push_turns(send_turns(&to, "message 4", "s4"));
    a.run_task("send message 4", &[], 0);
    wait_for_hold("peer_sent");
    a_held.kill().unwrap();
    a_held.wait().unwrap();
    assert_eq!(outbox(&a)[4].1, "sending");
    let a_serve = serve(&a, &[]);
    wait_until("message 4 read", Duration::from_secs(60), || {
        outbox(&a).get(4).is_some_and(|m| m.1 == "read")
    });
    assert_eq!(
        peer_texts(&b, &b_chat),
        vec![
            "message 0",
            "message 1",
            "message 2",
            "message 3",
            "message 4"
        ]
    );
    // B's model ran one turn per message.
    assert_eq!(b.server.requests().len(), 5);
    stop(a_serve);
    stop(b_serve);

    // Nothing secret in clear: the device keys are only in their 0600 key files (no keychain
    // here), the pairing code nowhere.
    for (env, short) in [(&a, &a_short), (&b, &b_short)] {
        let key_file = env.home.join("data/devices/secret/device-key");
        let secret = std::fs::read_to_string(&key_file).unwrap();
        assert_eq!(
            files_containing(&env.home, secret.trim().as_bytes()),
            vec![key_file.clone()],
            "{short}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode =
                |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(
                (mode(&key_file), mode(key_file.parent().unwrap())),
                (0o600, 0o700)
            );
        }
        let compact: String = code.chars().filter(|c| *c != '-').collect();
        assert_eq!(
            files_containing(&env.home, code.as_bytes()),
            Vec::<std::path::PathBuf>::new()
        );
        assert_eq!(
            files_containing(&env.home, compact[4..].as_bytes()),
            Vec::<std::path::PathBuf>::new()
        );
        // The logs were written (debug level) and hold neither.
        assert!(
            env.home
                .join("data/logs")
                .read_dir()
                .unwrap()
                .next()
                .is_some()
        );
    }
}
