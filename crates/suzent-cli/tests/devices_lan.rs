//! LAN discovery only suggests devices: two network namespaces joined by a veth pair (made by
//! this test; nothing leaves the machine) stand for two hosts on a LAN. A and B pair over their
//! LAN addresses; then a third install C on B's host advertises itself with B's name. A lists
//! it as a different, unpaired device (another key), and B stays the only paired one.
//!
//! Needs root (network namespaces); it fails, naming why, where it cannot create them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use support::Env;

struct Namespaces {
    a: String,
    b: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("ip {args:?}: {e}"));
    assert!(
        out.status.success(),
        "ip {args:?} failed (this test needs root to make network namespaces): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Namespaces {
    fn new() -> Namespaces {
        let id = std::process::id();
        let ns = Namespaces {
            a: format!("szlan-a-{id}"),
            b: format!("szlan-b-{id}"),
        };
        ip(&["netns", "add", &ns.a]);
        ip(&["netns", "add", &ns.b]);
        ip(&[
            "-n", &ns.a, "link", "add", "lan0", "type", "veth", "peer", "name", "lan1", "netns",
            &ns.b,
        ]);
        for (n, dev, addr) in [
            (&ns.a, "lan0", "10.203.0.1/24"),
            (&ns.b, "lan1", "10.203.0.2/24"),
        ] {
            ip(&["-n", n, "link", "set", "lo", "up"]);
            ip(&["-n", n, "addr", "add", addr, "dev", dev]);
            ip(&["-n", n, "link", "set", dev, "up"]);
            ip(&["-n", n, "route", "add", "default", "dev", dev]);
        }
        ns
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

struct Host {
    env: Env,
    ns: String,
}

impl Host {
    fn new(ns: &str, name: &str, addr: &str) -> Host {
        let env = Env::new(vec![]);
        env.write_config(&format!(
            "default_model = \"openai/gpt-test\"\n\n[devices]\nname = \"{name}\"\nrelay = false\ndiscovery = true\nbind = [\"{addr}:0\"]\n"
        ));
        Host {
            env,
            ns: ns.to_string(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.ns, env!("CARGO_BIN_EXE_suzent")])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.env.dir.path())
            .env("SUZENT_HOME", &self.env.home)
            .current_dir(&self.env.ws)
            .stdin(Stdio::null());
        cmd
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.command(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn home(&self) -> &Path {
        &self.env.home
    }
}

fn spawn_talk(
    host: &Host,
    args: &[&str],
) -> (
    Child,
    std::process::ChildStdin,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
) {
    let mut child = host
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, stdin, lines)
}

fn event(lines: &mut std::io::Lines<BufReader<std::process::ChildStdout>>) -> Value {
    serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap()
}

#[test]
fn a_lan_advert_with_a_paired_device_s_name_and_another_key_is_listed_as_a_different_unpaired_device()
 {
    let ns = Namespaces::new();
    let a = Host::new(&ns.a, "Laptop A", "10.203.0.1");
    let b = Host::new(&ns.b, "Desktop B", "10.203.0.2");
    let (mut host, mut host_in, mut host_out) = spawn_talk(&a, &["devices", "pair", "--json"]);
    let code = event(&mut host_out)["code"].as_str().unwrap().to_string();
    let (mut joiner, mut joiner_in, mut joiner_out) =
        spawn_talk(&b, &["devices", "join", &code, "--json"]);
    let words_b = event(&mut joiner_out);
    let words_a = event(&mut host_out);
    assert_eq!(words_a["words"], words_b["words"]);
    writeln!(host_in, "y").unwrap();
    writeln!(joiner_in, "y").unwrap();
    assert!(host.wait().unwrap().success());
    assert!(joiner.wait().unwrap().success());

    let b_id = b.json(&["devices", "list", "--json"])["thisDevice"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // C, on B's host, calls itself "Desktop B" too.
    let c = Host::new(&ns.b, "Desktop B", "10.203.0.2");
    let mut c_serve: Child = c
        .command(&["serve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let c_id = c.json(&["devices", "list", "--json"])["thisDevice"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(c_id != b_id);

    let seen = a.json(&["devices", "list", "--json", "--nearby", "8"]);
    let _ = c_serve.kill();
    let _ = c_serve.wait();
    let nearby = seen["nearby"].as_array().unwrap();
    let impostor = nearby
        .iter()
        .find(|n| n["id"] == c_id.as_str())
        .unwrap_or_else(|| panic!("C's advert not seen: {seen:#}"));
    assert_eq!(
        (impostor["name"].as_str(), impostor["paired"].as_bool()),
        (Some("Desktop B"), Some(false))
    );
    // The paired list still names only B, by its own key.
    let devices = seen["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0]["device"]["id"], b_id.as_str());
    assert!(devices[0]["device"]["fingerprint"] != impostor["fingerprint"]);
    let _ = (a.home(), PathBuf::new());
}
