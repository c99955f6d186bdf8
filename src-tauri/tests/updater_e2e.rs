//! End-to-end test of signed updates (R2-D04) in the real desktop app (WebDriver under Xvfb,
//! see `support`). A local HTTP server serves `latest.json` manifests and artifacts signed in
//! the test with a throwaway minisign key, in the format `tauri signer sign` writes (the trusted
//! comment names the version); the app (0.1.0, the version in tauri.conf.json) takes that key's
//! public half from `SUZENT_UPDATER_TEST_PUBKEY`, which only a development build reads, and its
//! update feed from `desktop.toml`. In turn the feed offers:
//! (b) an honest older version: the check at start does not offer it;
//! (a) the older artifact and its valid signature announced as 9.9.9: refused after download, the
//!     signed version differs;
//! (c) a newer artifact with one byte flipped: refused, bad signature;
//! (d) a manifest with no build for this system: refused;
//! and then a valid newer version: the dialog shows its notes, the download is verified and kept
//! for the restart. Settings → Updates shows each reason. The app keeps running 0.1.0.
//!
//! What is installed by that test: nothing. The test app is a development binary, not an AppImage,
//! .deb or .rpm, so the verified download is held for the restart and the status says this build
//! does not install it (installing would overwrite the test binary).
//!
//! The install itself is the second test, which `scripts/check-appimage` runs (ignored in a plain
//! `cargo test`: it needs the AppImages that script makes from the debug build): the app started
//! from an AppImage (a copy in a temporary folder) finds a signed 0.2.0 AppImage on the feed at
//! start, downloads it with progress, and "Restart to update" replaces the AppImage file with it
//! (tauri-plugin-updater's AppImage install: the file named by `APPIMAGE`) and starts it; the
//! restarted app runs from the new image (its build stamp says 0.2.0) and paints. The 0.2.0 image
//! holds the same binaries (a second app build would double CI's build time), so the app's own
//! version string stays 0.1.0. A .deb or .rpm install runs `pkexec`/`sudo dpkg -i` (or `rpm -U`),
//! which is not tested here: it would replace the package scripts/check-deb installs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use anyhow::{Context, Result};
use base64::Engine;
use pretty_assertions::assert_eq;
use serde_json::json;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use support::{APP_ENV, Desktop, desktop_test_seeded};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A throwaway minisign key pair and the signatures it makes.
struct Signer {
    pk: minisign::PublicKey,
    sk: minisign::SecretKey,
}

impl Signer {
    fn new() -> Signer {
        let minisign::KeyPair { pk, sk } =
            minisign::KeyPair::generate_unencrypted_keypair().expect("a key pair");
        Signer { pk, sk }
    }

    /// The public key as tauri.conf.json holds it: base64 of the minisign public key file.
    fn public_key(&self) -> String {
        B64.encode(self.pk.to_box().unwrap().to_string())
    }

    /// The manifest's `signature` of `bytes`: base64 of the `.sig` file, whose signed trusted
    /// comment names `version` as the Tauri CLI writes it.
    fn sign(&self, bytes: &[u8], file: &str, version: &str) -> String {
        let trusted = format!("timestamp:1764547200\tfile:{file}\tversion:{version}");
        let signature = minisign::sign(
            Some(&self.pk),
            &self.sk,
            std::io::Cursor::new(bytes),
            Some(&trusted),
            Some("signature from tauri secret key"),
        )
        .unwrap();
        B64.encode(signature.to_string())
    }
}

/// A small HTTP/1.1 server on 127.0.0.1: GET of a path answers the bytes stored for it (404
/// otherwise) and records the path.
#[derive(Clone)]
struct Feed {
    port: u16,
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    gets: Arc<Mutex<Vec<String>>>,
}

impl Feed {
    fn start() -> Result<Feed> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let feed = Feed {
            port: listener.local_addr()?.port(),
            files: Arc::default(),
            gets: Arc::default(),
        };
        let server = feed.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let server = server.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request = String::new();
                    if reader.read_line(&mut request).is_err() {
                        return;
                    }
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                            break;
                        }
                    }
                    let path = request.split_whitespace().nth(1).unwrap_or("/").to_string();
                    server.gets.lock().unwrap().push(path.clone());
                    let body = server.files.lock().unwrap().get(&path).cloned();
                    let mut stream = stream;
                    let _ = match body {
                        Some(body) => stream
                            .write_all(
                                format!(
                                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                    body.len()
                                )
                                .as_bytes(),
                            )
                            .and_then(|()| write_paced(&mut stream, &body)),
                        None => stream.write_all(
                            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        ),
                    };
                });
            }
        });
        Ok(feed)
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn put(&self, path: &str, bytes: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_string(), bytes);
    }

    /// Serves `latest.json` announcing `version` with one platform entry.
    fn manifest(&self, version: &str, platform: &str, artifact: &str, signature: &str) {
        let manifest = json!({
            "version": version,
            "notes": format!("What is new in {version}:\n- faster start\n- signed updates"),
            "pub_date": "2026-12-01T12:00:00Z",
            "platforms": { platform: { "signature": signature, "url": self.url(artifact) } }
        });
        self.put("/latest.json", serde_json::to_vec(&manifest).unwrap());
    }

    fn got(&self, path: &str) -> bool {
        self.gets.lock().unwrap().iter().any(|p| p == path)
    }
}

/// Writes `body`; a body over 1 MiB goes out 1 MiB every 30 ms, so a download lasts long enough
/// for the app to report its progress (the app sends at most ten progress events a second).
fn write_paced(stream: &mut std::net::TcpStream, body: &[u8]) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 20;
    if body.len() <= CHUNK {
        return stream.write_all(body);
    }
    for chunk in body.chunks(CHUNK) {
        stream.write_all(chunk)?;
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    Ok(())
}

/// An artifact's bytes (an AppImage would be an ELF file; the signature does not care).
fn artifact(version: &str) -> Vec<u8> {
    let mut bytes = format!("\x7fELF Suzent {version} AppImage").into_bytes();
    bytes.resize(256 * 1024, 0x5a);
    bytes
}

fn platform() -> String {
    format!("linux-{}", std::env::consts::ARCH)
}

/// Opens Settings → Updates and brings it into view.
async fn open_updates(d: &Desktop) -> Result<()> {
    d.click("[data-testid=nav-settings]").await?;
    d.wait_css("[data-testid=settings-updates]").await?;
    d.js("document.querySelector('[data-testid=settings-updates]').scrollIntoView({block: 'start'}); return true;")
        .await?;
    Ok(())
}

/// Checks now, then downloads from the dialog the check opens.
async fn check_and_download(d: &Desktop, version: &str) -> Result<()> {
    d.click("[data-testid=update-check]").await?;
    d.wait_text("[data-testid=update-dialog]", version).await?;
    d.click("[data-testid=update-dialog-download]").await?;
    d.wait_gone("[data-testid=update-dialog]").await
}

#[test]
fn the_updater_refuses_downgrades_mislabeled_and_tampered_artifacts_and_takes_a_signed_newer_one() {
    let signer = Signer::new();
    let feed = Feed::start().expect("the feed server");
    APP_ENV
        .lock()
        .unwrap()
        .push(("SUZENT_UPDATER_TEST_PUBKEY".into(), signer.public_key()));

    // (b) at start: an honest older release.
    let old = artifact("0.0.9");
    let old_sig = signer.sign(&old, "Suzent_0.0.9_amd64.AppImage", "0.0.9");
    feed.put("/Suzent_0.0.9.AppImage", old.clone());
    feed.manifest("0.0.9", &platform(), "/Suzent_0.0.9.AppImage", &old_sig);

    let endpoint = feed.url("/latest.json");
    let seed: support::Seed = Box::new(move |home| {
        std::fs::write(
            home.join("config/desktop.toml"),
            format!("updateEndpoint = {endpoint:?}\ncheckForUpdates = true\n"),
        )?;
        Ok(())
    });
    let config = "default_model = \"openai/gpt-4.1\"\nworkspace = \"{workspace}\"\n[providers.openai]\nbase_url = \"{openai_base}\"\n";
    desktop_test_seeded("updater", config, seed, move |d| {
        Box::pin(async move {
            d.wait_for_app().await?;
            open_updates(d).await?;
            d.wait_text(
                "[data-testid=update-state]",
                "The feed offers 0.0.9, which is not newer than 0.1.0: not offered (downgrades are refused).",
            )
            .await
            .context("the check at start")?;
            assert_eq!(d.count("[data-testid=update-dialog]").await?, 0);
            assert!(
                !feed.got("/Suzent_0.0.9.AppImage"),
                "a downgrade was downloaded"
            );
            d.screenshot("downgrade-not-offered").await?;

            // (a) the 0.0.9 artifact and its valid signature, announced as 9.9.9.
            feed.manifest("9.9.9", &platform(), "/Suzent_0.0.9.AppImage", &old_sig);
            check_and_download(d, "9.9.9").await?;
            d.wait_text(
                "[data-testid=update-state]",
                "refused: the manifest announces version 9.9.9, but the download is signed as version 0.0.9",
            )
            .await
            .context("the mislabeled release")?;
            d.screenshot("mislabeled-refused").await?;

            // (c) a newer artifact with one byte flipped after signing.
            let newer = artifact("0.4.0");
            let newer_sig = signer.sign(&newer, "Suzent_0.4.0_amd64.AppImage", "0.4.0");
            let mut flipped = newer.clone();
            flipped[100] ^= 0x01;
            feed.put("/Suzent_0.4.0.AppImage", flipped);
            feed.manifest("0.4.0", &platform(), "/Suzent_0.4.0.AppImage", &newer_sig);
            check_and_download(d, "0.4.0").await?;
            d.wait_text(
                "[data-testid=update-state]",
                "refused: the download does not match its signature from the release key (bad signature",
            )
            .await
            .context("the tampered artifact")?;
            d.screenshot("bad-signature-refused").await?;

            // (d) no build for this system.
            feed.manifest(
                "0.4.0",
                "windows-x86_64",
                "/Suzent_0.4.0.AppImage",
                &newer_sig,
            );
            d.click("[data-testid=update-check]").await?;
            d.wait_text(
                "[data-testid=update-state]",
                &format!(
                    "refused: the manifest has no build for this system ({})",
                    platform()
                ),
            )
            .await
            .context("the wrong target")?;
            d.screenshot("wrong-target-refused").await?;

            // A valid newer release: notes in the dialog, then downloaded and verified.
            let good = artifact("0.2.0");
            let good_sig = signer.sign(&good, "Suzent_0.2.0_amd64.AppImage", "0.2.0");
            feed.put("/Suzent_0.2.0.AppImage", good);
            feed.manifest("0.2.0", &platform(), "/Suzent_0.2.0.AppImage", &good_sig);
            d.click("[data-testid=update-check]").await?;
            d.wait_text("[data-testid=update-notes]", "What is new in 0.2.0:")
                .await?;
            d.screenshot("update-dialog").await?;
            d.click("[data-testid=update-dialog-download]").await?;
            d.wait_text(
                "[data-testid=update-state]",
                "Suzent 0.2.0 is downloaded and verified.",
            )
            .await
            .context("the valid release")?;
            assert!(feed.got("/Suzent_0.2.0.AppImage"));
            d.screenshot("verified-and-held").await?;
            // Still 0.1.0 running.
            d.wait_text("[data-testid=settings-updates]", "This is Suzent 0.1.0.")
                .await?;
            Ok(())
        })
    });
}

/// The processes (pid, exe) of the AppImage's app whose `HOME` is `home`.
fn apps_with_home(home: &std::path::Path) -> Vec<(u32, std::path::PathBuf)> {
    let wanted = format!("HOME={}", home.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(exe) = std::fs::read_link(entry.path().join("exe")) else {
            continue;
        };
        if !exe.ends_with("usr/bin/suzent-desktop") {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            found.push((pid, exe));
        }
    }
    found
}

/// A process's environment variable.
fn env_of(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ.split(|b| *b == 0).find_map(|var| {
        String::from_utf8_lossy(var)
            .strip_prefix(&prefix)
            .map(str::to_string)
    })
}

#[test]
#[ignore = "needs the AppImages scripts/check-appimage makes from the debug build; that script runs it"]
fn an_appimage_installs_a_signed_newer_appimage_over_itself_and_restarts_into_it() {
    let current = std::env::var_os("SUZENT_TEST_APPIMAGE")
        .expect("SUZENT_TEST_APPIMAGE: the AppImage to start (scripts/check-appimage sets it)");
    let next = std::env::var_os("SUZENT_TEST_APPIMAGE_NEXT")
        .expect("SUZENT_TEST_APPIMAGE_NEXT: the 0.2.0 AppImage (scripts/check-appimage sets it)");
    let next = std::fs::read(next).unwrap();
    // The installed AppImage: a copy the update may replace.
    let apps = tempfile::tempdir().unwrap();
    let installed = apps.path().join("Suzent.AppImage");
    std::fs::copy(&current, &installed).unwrap();
    let before = std::fs::read(&installed).unwrap();
    let unpacked = apps.path().join("tmp");
    std::fs::create_dir_all(&unpacked).unwrap();
    assert_ne!(before, next, "the two AppImages are the same file");

    let signer = Signer::new();
    let feed = Feed::start().expect("the feed server");
    let artifact = "/Suzent_0.2.0_amd64.AppImage";
    feed.put(artifact, next.clone());
    feed.manifest(
        "0.2.0",
        &format!("{}-appimage", platform()),
        artifact,
        &signer.sign(&next, "Suzent_0.2.0_amd64.AppImage", "0.2.0"),
    );
    APP_ENV.lock().unwrap().extend([
        (
            "SUZENT_UPDATER_TEST_PUBKEY".to_string(),
            signer.public_key(),
        ),
        // No FUSE here: the runtime unpacks the image to a temporary folder and runs it from there.
        ("APPIMAGE_EXTRACT_AND_RUN".to_string(), "1".to_string()),
        // ... into a folder of this test's, removed with it.
        ("TMPDIR".to_string(), unpacked.display().to_string()),
    ]);
    *support::APP_BINARY.lock().unwrap() = Some(installed.clone());

    let endpoint = feed.url("/latest.json");
    let seed: support::Seed = Box::new(move |home| {
        std::fs::write(
            home.join("config/desktop.toml"),
            format!("updateEndpoint = {endpoint:?}\ncheckForUpdates = true\n"),
        )?;
        Ok(())
    });
    let config = "default_model = \"openai/gpt-4.1\"\nworkspace = \"{workspace}\"\n[providers.openai]\nbase_url = \"{openai_base}\"\n";
    let size = next.len() as u64;
    desktop_test_seeded("updater-appimage", config, seed, move |d| {
        Box::pin(async move {
            d.wait_for_app().await?;
            let home = d.home.path().to_path_buf();
            let first = apps_with_home(&home);
            assert_eq!(first.len(), 1, "one app runs: {first:?}");
            let (first_pid, first_exe) = first[0].clone();
            assert_eq!(
                env_of(first_pid, "APPIMAGE").map(std::path::PathBuf::from),
                Some(installed.clone()),
                "the app runs from the AppImage"
            );

            // The check at start offers 0.2.0; download it from the dialog.
            d.wait_text("[data-testid=update-notes]", "What is new in 0.2.0:")
                .await
                .context("the check at start")?;
            d.screenshot("update-dialog").await?;
            d.click("[data-testid=update-dialog-download]").await?;
            open_updates(d).await?;

            // Progress: the bar counts the bytes received of the whole.
            let mut progress: Vec<(u64, u64)> = Vec::new();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
            loop {
                let seen = d
                    .js(
                        "const p = document.querySelector('[data-testid=update-progress]'); \
                         const s = document.querySelector('[data-testid=update-state]'); \
                         return [p ? [p.value, p.max] : null, s ? s.textContent : ''];",
                    )
                    .await?;
                if let Some([value, max]) =
                    seen[0].as_array().map(|a| [a[0].as_f64(), a[1].as_f64()])
                    && let (Some(value), Some(max)) = (value, max)
                {
                    if progress.is_empty() {
                        d.screenshot("downloading").await?;
                    }
                    progress.push((value as u64, max as u64));
                }
                if seen[1]
                    .as_str()
                    .unwrap_or("")
                    .contains("downloaded and verified")
                {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    anyhow::bail!("the download did not finish within 90 s: {seen}");
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            assert!(!progress.is_empty(), "no download progress was shown");
            assert!(
                progress
                    .iter()
                    .all(|(received, total)| *total == size && *received <= size)
                    && progress.iter().any(|(received, _)| *received < size),
                "progress of {size} bytes: {progress:?}"
            );
            assert!(
                progress.windows(2).all(|w| w[0].0 <= w[1].0),
                "progress went backwards: {progress:?}"
            );
            d.wait_text(
                "[data-testid=update-state]",
                "Suzent 0.2.0 is downloaded and verified; it is installed when Suzent restarts.",
            )
            .await?;
            assert_eq!(
                std::fs::read(&installed)?,
                before,
                "installed before the restart"
            );
            d.screenshot("ready-to-restart").await?;

            // Restart to update: the AppImage file is replaced and the new one starts. The
            // WebDriver session ends with the old app, so the click's answer may be an error.
            let _ = d.click("[data-testid=update-restart]").await;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            let restarted = loop {
                let now = apps_with_home(&home);
                if let Some(app) = now.iter().find(|(pid, _)| *pid != first_pid)
                    && now.iter().all(|(pid, _)| *pid != first_pid)
                {
                    break app.clone();
                }
                if std::time::Instant::now() > deadline {
                    anyhow::bail!(
                        "no restarted app within 120 s (running: {now:?}); log:\n{}",
                        d.logs()
                    );
                }
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            };
            let replaced = std::fs::read(&installed)?;
            assert!(
                replaced == next,
                "the AppImage file was not replaced by the 0.2.0 one"
            );
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&installed)?.permissions().mode() & 0o777,
                0o755
            );
            let (pid, exe) = restarted;
            assert_ne!(exe, first_exe, "the restarted app runs from the new image");
            let stamp = exe
                .parent()
                .and_then(|bin| bin.parent())
                .map(|usr| usr.join("share/suzent/build-stamp"))
                .ok_or_else(|| anyhow::anyhow!("no image folder above {}", exe.display()))?;
            assert_eq!(std::fs::read_to_string(&stamp)?, "0.2.0\n");
            assert_eq!(
                env_of(pid, "APPIMAGE").map(std::path::PathBuf::from),
                Some(installed.clone())
            );

            // It paints (no WebDriver session: a screenshot of its display).
            let display = env_of(pid, "DISPLAY").context("the restarted app's DISPLAY")?;
            // xvfb-run's display takes its cookie.
            let xauthority = env_of(pid, "XAUTHORITY").unwrap_or_default();
            let shot = d.shots.join("restarted-0.2.0.png");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            loop {
                let _ = std::process::Command::new("import")
                    .env("XAUTHORITY", &xauthority)
                    .args(["-display", &display, "-window", "root"])
                    .arg(&shot)
                    .status();
                let colors = std::process::Command::new("convert")
                    .arg(&shot)
                    .args(["-format", "%k", "info:"])
                    .output()
                    .ok()
                    .and_then(|o| {
                        String::from_utf8_lossy(&o.stdout)
                            .trim()
                            .parse::<u32>()
                            .ok()
                    })
                    .unwrap_or(0);
                if colors > 8 {
                    break;
                }
                if std::time::Instant::now() > deadline {
                    anyhow::bail!(
                        "the restarted app did not paint within 60 s ({})",
                        shot.display()
                    );
                }
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
            Ok(())
        })
    });
}
