//! `suzent skills` and `suzent memory`: built-in, external and user skill folders with their
//! precedence and enable/disable; archival memory and core blocks from the command line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::path::Path;
use support::Env;
use suzent_tests::minilm_model_dir;

fn skill(root: &Path, dir: &str, name: &str, description: &str) {
    let d = root.join(dir);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\n\nDo the steps.\n"),
    )
    .unwrap();
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn skills_come_from_built_in_external_and_user_folders_and_can_be_disabled() {
    let env = Env::new(vec![]);
    let external = env.dir.path().join("team-skills");
    skill(&external, "deploy", "deploy", "Team deploy steps");
    skill(&external, "lint", "lint", "Run the linters");
    skill(
        &env.home.join("config/skills"),
        "my-deploy",
        "deploy",
        "My deploy steps",
    );
    let run = |args: &[&str]| {
        env.command(args)
            .env("SUZENT_SKILL_DIRS", &external)
            .output()
            .unwrap()
    };
    ok(&run(&["skills", "disable", "lint"]));
    let listed: Value = serde_json::from_str(&ok(&run(&["skills", "list", "--json"]))).unwrap();
    let rows: Vec<(String, String, String, bool)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["source"].as_str().unwrap().to_string(),
                s["description"].as_str().unwrap().to_string(),
                s["enabled"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("deploy".into(), "user".into(), "My deploy steps".into(), true),
            ("lint".into(), "external".into(), "Run the linters".into(), false),
            (
                "skill-authoring".into(),
                "built_in".into(),
                "Write a new Suzent skill (a folder with SKILL.md and optional scripts) when the user asks to save a procedure for later.".into(),
                true
            ),
        ]
    );
    let out = run(&["skills", "enable", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no skill named 'nope'"));
}

#[test]
fn memories_added_from_the_command_line_are_found_and_core_blocks_are_editable() {
    let env = Env::new(vec![]);
    assert!(
        ok(&env.run(&["memory", "add", "The spare key is under the blue flowerpot"]))
            .starts_with("stored memory ")
    );
    let out = env.run(&["memory", "search", "where is the spare key"]);
    let found = ok(&out);
    assert!(
        found.contains("The spare key is under the blue flowerpot  [text]"),
        "{found}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("full-text search only: no embedding model at"),
        "{stderr}"
    );
    ok(&env.run(&["memory", "set-block", "user", "Name: Ola. Works nights."]));
    assert_eq!(
        ok(&env.run(&["memory", "blocks"])),
        "[user]\nName: Ola. Works nights.\n\n"
    );
    let out = env.run(&["memory", "set-block", "mood", "x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown block 'mood'"));
}

/// Stops the file server when the test ends, however it ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn download_model_gives_memories_stored_before_it_their_vectors_before_exiting() {
    let env = Env::new(vec![]);
    ok(&env.run(&[
        "memory",
        "add",
        "My dog loves chasing tennis balls in the park",
    ]));
    ok(&env.run(&["memory", "add", "Invoice 4471 from the plumber is unpaid"]));
    // A real HTTP server holding the model files (Python's standard one).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _server = Server(
        std::process::Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(minilm_model_dir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = ok(&env.run(&[
        "memory",
        "download-model",
        "--from",
        &format!("http://127.0.0.1:{port}"),
    ]));
    assert!(
        out.starts_with("downloaded the embedding model into "),
        "{out}"
    );
    // The older memory was embedded before the command exited: found by meaning alone.
    let found = ok(&env.run(&["memory", "search", "puppy playing fetch outside"]));
    assert!(
        found.contains("My dog loves chasing tennis balls in the park  [vector]"),
        "{found}"
    );
}
