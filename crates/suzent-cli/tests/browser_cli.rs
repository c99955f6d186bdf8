//! `suzent browser extension-path|zip|status|revoke`, and the bridge `suzent serve` runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::Value;
use std::io::Read;
use support::Env;

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn the_zip_and_the_unpacked_folder_are_the_bundled_extension() {
    let env = Env::new(vec![]);
    let zip_path = env.dir.path().join("ext.zip");
    let printed = ok(&env.run(&["browser", "zip", "--out", zip_path.to_str().unwrap()]));
    assert_eq!(printed, zip_path.display().to_string());
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&zip_path).unwrap()).unwrap();
    let mut names: Vec<String> = zip.file_names().map(|n| n.unwrap().into_owned()).collect();
    names.sort();
    for needed in [
        "manifest.json",
        "background.js",
        "popup.html",
        "popup.js",
        "agent.js",
        "_locales/en/messages.json",
        "_locales/zh_CN/messages.json",
    ] {
        assert!(
            names.contains(&needed.to_string()),
            "{needed} missing from {names:?}"
        );
    }
    let mut manifest = String::new();
    zip.by_name("manifest.json")
        .unwrap()
        .read_to_string(&mut manifest)
        .unwrap();
    let manifest: Value = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest["manifest_version"], 3);

    let folder = ok(&env.run(&["browser", "extension-path"]));
    let unpacked: Value = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(&folder).join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(unpacked, manifest);
    // A second call finds the same folder.
    assert_eq!(ok(&env.run(&["browser", "extension-path"])), folder);
}

#[test]
fn status_shows_pairings_and_revoke_revokes_one() {
    let env = Env::new(vec![]);
    let status: Value =
        serde_json::from_str(&ok(&env.run(&["browser", "status", "--json"]))).unwrap();
    assert_eq!(status["state"], "notInstalled");
    assert_eq!(status["port"], Value::Null);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = suzent_store::Store::open(&env.home.join("data/suzent.db"))
            .await
            .unwrap();
        store
            .add_browser_pairing(&suzent_store::NewBrowserPairing {
                id: "p1".into(),
                extension_id: "mkppgeflpnljcodnkejndlmnggmhgmme".into(),
                browser: "Chromium".into(),
                browser_version: "156".into(),
                extension_version: "0.1.0".into(),
                credential_hash: "a".repeat(64),
            })
            .await
            .unwrap();
    });
    let status: Value =
        serde_json::from_str(&ok(&env.run(&["browser", "status", "--json"]))).unwrap();
    assert_eq!(status["state"], "paired");
    assert_eq!(status["pairings"][0]["pairing"]["id"], "p1");
    let text = ok(&env.run(&["browser", "status"]));
    assert!(text.contains("paired, not connected"), "{text}");
    assert_eq!(ok(&env.run(&["browser", "revoke", "p1"])), "p1: revoked");
    let status: Value =
        serde_json::from_str(&ok(&env.run(&["browser", "status", "--json"]))).unwrap();
    assert_eq!(status["state"], "notInstalled");
    let unknown = env.run(&["browser", "revoke", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("browser pairing 'nope' not found"));
}

#[test]
fn serve_runs_the_bridge_on_loopback_and_status_sees_it() {
    let env = Env::new(vec![]);
    let mut child = env.spawn(&["serve"], &[("SUZENT_BROWSER_PORT", "0")]);
    let stderr = support::stderr_until(&mut child, "suzent: serving");
    let port: u16 = stderr
        .split("browser bridge on 127.0.0.1:")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no bridge port in {stderr}"));
    // A request without the extension's Origin is refused.
    let refused = std::net::TcpStream::connect(("127.0.0.1", port)).and_then(|mut s| {
        use std::io::Write;
        write!(
            s,
            "GET /v1/bridge HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )?;
        let mut answer = String::new();
        s.read_to_string(&mut answer)?;
        Ok(answer)
    });
    assert!(refused.unwrap().starts_with("HTTP/1.1 403"));
    let mut status = Value::Null;
    for _ in 0..50 {
        status = serde_json::from_str(&ok(&env.run(&["browser", "status", "--json"]))).unwrap();
        if status["port"] == port {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(status["port"], port);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_chats_browser_mode_is_shown_set_and_returned_to_the_default() {
    let env = Env::new(vec![suzent_tests::Turn::text("Hi.")]);
    let chat = support::chat_id(&env.run_task("Say hi", &[], 0));
    let mode = |extra: &[&str]| {
        let mut args = vec!["browser", "mode", "--chat", chat.as_str()];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    assert_eq!(
        ok(&mode(&[])),
        "extension (from [browser] mode in config.toml)"
    );
    assert_eq!(ok(&mode(&["managed"])), "managed (chosen for this chat)");
    // Kept in the store: a new process shows it.
    assert_eq!(ok(&mode(&[])), "managed (chosen for this chat)");
    assert_eq!(
        ok(&mode(&["default"])),
        "extension (from [browser] mode in config.toml)"
    );

    let bad = mode(&["firefox"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("unknown browser mode 'firefox'"), "{err}");

    let unknown = env.run(&["browser", "mode", "--chat", "no-such-chat", "cdp"]);
    assert!(!unknown.status.success());
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert!(err.contains("no-such-chat"), "{err}");
}
