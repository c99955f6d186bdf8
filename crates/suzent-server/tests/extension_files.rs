//! The extension's source files: every locale has the same message keys as English, the
//! generated bridge types are up to date, and the manifest asks only for what the bridge needs.

use pretty_assertions::assert_eq;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn extension_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../extensions/browser")
}

fn keys(locale: &str) -> anyhow::Result<BTreeSet<String>> {
    let path = extension_dir()
        .join("static/_locales")
        .join(locale)
        .join("messages.json");
    let text = std::fs::read_to_string(&path)?;
    let messages: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)?;
    for (key, value) in &messages {
        anyhow::ensure!(
            value["message"]
                .as_str()
                .is_some_and(|m| !m.trim().is_empty()),
            "{locale}: '{key}' has no message"
        );
    }
    Ok(messages.keys().cloned().collect())
}

#[test]
fn zh_cn_has_every_message_key_of_en_and_no_other() -> anyhow::Result<()> {
    assert_eq!(keys("zh_CN")?, keys("en")?);
    Ok(())
}

#[test]
fn every_locale_folder_matches_english() -> anyhow::Result<()> {
    let en = keys("en")?;
    for entry in std::fs::read_dir(extension_dir().join("static/_locales"))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        assert_eq!(keys(&name)?, en, "locale {name}");
    }
    Ok(())
}

#[test]
fn every_i18n_key_the_popup_and_manifest_use_exists() -> anyhow::Result<()> {
    let en = keys("en")?;
    let mut used = BTreeSet::new();
    let manifest = std::fs::read_to_string(extension_dir().join("static/manifest.json"))?;
    let html = std::fs::read_to_string(extension_dir().join("static/popup.html"))?;
    let popup = std::fs::read_to_string(extension_dir().join("src/popup.ts"))?;
    let background = std::fs::read_to_string(extension_dir().join("src/background.ts"))?;
    for (text, open, close) in [
        (&manifest, "__MSG_", "__"),
        (&html, "data-i18n=\"", "\""),
        (&popup, "t(\"", "\""),
        (&background, "getMessage(\"", "\""),
    ] {
        let mut rest = text.as_str();
        while let Some(at) = rest.find(open) {
            rest = &rest[at + open.len()..];
            if let Some(end) = rest.find(close) {
                used.insert(rest[..end].to_string());
                rest = &rest[end..];
            }
        }
    }
    let missing: Vec<&String> = used.difference(&en).collect();
    assert_eq!(missing, Vec::<&String>::new());
    Ok(())
}

#[test]
fn extension_bindings_are_up_to_date() -> anyhow::Result<()> {
    let path = extension_dir().join("src/bindings.ts");
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = suzent_server::protocol::typescript_bindings().map_err(anyhow::Error::msg)?;
    assert!(
        checked_in == generated,
        "extensions/browser/src/bindings.ts is out of date: run `cargo run -p suzent-server --example gen-extension-bindings`"
    );
    Ok(())
}

#[test]
fn the_manifest_key_gives_the_shipped_extension_id() -> anyhow::Result<()> {
    use sha2::Digest;
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        extension_dir().join("static/manifest.json"),
    )?)?;
    let key = manifest["key"].as_str().unwrap_or_default();
    let der = base64_decode(key)?;
    let digest = sha2::Sha256::digest(&der);
    let id: String = digest[..16]
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .map(|n| (b'a' + n) as char)
        .collect();
    assert_eq!(id, suzent_server::SHIPPED_EXTENSION_ID);
    Ok(())
}

#[test]
fn the_manifest_asks_for_no_file_access_and_runs_no_remote_code() -> anyhow::Result<()> {
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        extension_dir().join("static/manifest.json"),
    )?)?;
    assert_eq!(manifest["manifest_version"], 3);
    assert_eq!(
        manifest["host_permissions"],
        serde_json::json!(["http://*/*", "https://*/*"])
    );
    let csp = manifest["content_security_policy"]["extension_pages"]
        .as_str()
        .unwrap_or_default();
    assert!(csp.starts_with("script-src 'self';"), "{csp}");
    assert!(!csp.contains("unsafe-eval"));
    assert_eq!(manifest["externally_connectable"], serde_json::Value::Null);
    Ok(())
}

fn base64_decode(text: &str) -> anyhow::Result<Vec<u8>> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes().filter(|c| *c != b'=') {
        let v = ALPHABET
            .iter()
            .position(|a| *a == c)
            .ok_or_else(|| anyhow::anyhow!("bad base64 '{}'", c as char))?;
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}
