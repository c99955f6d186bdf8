//! `suzent channels` end to end: the real binary over a private SUZENT_HOME whose database
//! holds a stranger's request (recorded the way the channel service records it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use support::Env;

fn record_request(env: &Env) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = suzent_store::Store::open(&env.home.join("data/suzent.db"))
            .await
            .unwrap();
        store
            .record_channel_request("telegram", "7", "Eve", "7")
            .await
            .unwrap();
        store.close().await;
    });
}

#[test]
fn channels_approve_moves_a_pending_request_onto_the_allow_list() {
    let env = Env::new(Vec::new());
    env.write_config(
        "[[channels]]\nname = \"telegram\"\nplatform = \"telegram\"\nallowed_users = [\"42\"]\n",
    );
    record_request(&env);
    let listed = env.run(&["channels", "requests", "--json"]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let requests: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(requests[0]["status"], "pending");
    assert_eq!(requests[0]["userId"], "7");

    let approved = env.run(&["channels", "approve", "telegram", "7"]);
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let listed = env.run(&["channels", "list", "--json"]);
    let channels: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        channels[0]["config"]["allowed_users"],
        serde_json::json!(["42", "7"])
    );
    assert_eq!(channels[0]["hasToken"], false);
    assert_eq!(channels[0]["status"]["state"], "no_token");
    let config = std::fs::read_to_string(env.home.join("config/config.toml")).unwrap();
    assert!(config.contains("\"7\""), "{config}");

    // An unknown request is a clear error naming it.
    let unknown = env.run(&["channels", "approve", "telegram", "8"]);
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("telegram/8"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
}
