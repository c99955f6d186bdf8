//! The desktop test harness shared by the e2e tests and the startup benchmark: Xvfb,
//! tauri-driver (in a private D-Bus session), the app under WebDriver with a private
//! `SUZENT_HOME` pointing at the scripted model server, screenshots, and waits.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use anyhow::{Context, Result, anyhow, bail};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use suzent_tests::{ScriptedServer, Turn};

/// One app at a time: the machine is small and each app runs WebKit.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// Extra environment variables of the apps this test binary starts (e.g. the updater test's
/// throwaway public key); set before the first app starts.
pub static APP_ENV: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The program WebDriver launches instead of this build's `suzent-desktop` (the updater test's
/// AppImage).
pub static APP_BINARY: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Longest wait for something to appear in the window.
pub const UI_TIMEOUT: Duration = Duration::from_secs(40);

/// Longest a whole desktop scenario may take (the longest pass in about 3 minutes).
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(600);

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = PathBuf::from(program);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".cargo/bin"));
    }
    dirs.into_iter()
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why the desktop tests cannot run here, if they cannot.
pub fn missing_prerequisites() -> Option<String> {
    if !cfg!(target_os = "linux") {
        return Some("the desktop e2e tests drive WebKitGTK and run on Linux only".into());
    }
    if !cfg!(feature = "custom-protocol") {
        return Some(
            "the app was built without the custom-protocol feature (it would load the dev server); \
             run `cargo test -p suzent-desktop --features custom-protocol` after building the UI, \
             as ./scripts/test does"
                .into(),
        );
    }
    let mut missing = Vec::new();
    for tool in [
        "Xvfb",
        "xvfb-run",
        "tauri-driver",
        "/usr/bin/WebKitWebDriver",
    ] {
        if which(tool).is_none() {
            missing.push(tool);
        }
    }
    if !missing.is_empty() {
        return Some(format!(
            "missing {} (apt-get install xvfb xauth webkit2gtk-driver; cargo install tauri-driver --version '^2' --locked)",
            missing.join(", ")
        ));
    }
    let index = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist/index.html");
    match std::fs::read_to_string(&index) {
        Ok(html) if html.contains("The UI is not built") => Some(format!(
            "{} is the placeholder page: build the UI first (npm --prefix ui ci && npm --prefix ui run build)",
            index.display()
        )),
        Ok(_) => None,
        Err(e) => Some(format!("{}: {e}", index.display())),
    }
}

/// Runs `scenario` against a fresh app, or explains why it cannot run (and fails in CI).
pub fn desktop_test<F>(name: &str, turns: Vec<Turn>, scenario: F)
where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test(name, turns, None, "", scenario);
}

/// Like [`desktop_test`], with `extra` (top-level `key = value` lines) added to the generated
/// `config.toml`.
#[allow(dead_code)]
pub fn desktop_test_with_extra_config<F>(name: &str, turns: Vec<Turn>, extra: &str, scenario: F)
where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test(name, turns, None, extra, scenario);
}

/// Like [`desktop_test`], with this `config.toml` instead of the generated one, in which
/// `{openai_base}` stands for the scripted server's OpenAI base URL and `{workspace}` for the
/// test's workspace folder.
#[allow(dead_code)]
pub fn desktop_test_with_config_and_turns<F>(
    name: &str,
    turns: Vec<Turn>,
    config: &str,
    scenario: F,
) where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test(name, turns, Some(config.to_string()), "", scenario);
}

/// Like [`desktop_test`], with this `config.toml` instead of the generated one.
pub fn desktop_test_with_config<F>(name: &str, config: &str, scenario: F)
where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test(name, Vec::new(), Some(config.to_string()), "", scenario);
}

/// Files put into the app's `SUZENT_HOME` before it starts (e.g. a model in the models folder).
pub type Seed = Box<dyn FnOnce(&Path) -> Result<()> + Send>;

/// Like [`desktop_test_with_config`], with `seed` filling the app's `SUZENT_HOME` first.
pub fn desktop_test_seeded<F>(name: &str, config: &str, seed: Seed, scenario: F)
where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test_seeded(
        name,
        Vec::new(),
        Some(config.to_string()),
        "",
        Some(seed),
        scenario,
    );
}

fn run_desktop_test<F>(
    name: &str,
    turns: Vec<Turn>,
    config: Option<String>,
    extra_config: &str,
    scenario: F,
) where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    run_desktop_test_seeded(name, turns, config, extra_config, None, scenario);
}

fn run_desktop_test_seeded<F>(
    name: &str,
    turns: Vec<Turn>,
    config: Option<String>,
    extra_config: &str,
    seed: Option<Seed>,
    scenario: F,
) where
    F: for<'a> FnOnce(&'a mut Desktop) -> std::pin::Pin<Box<dyn Future<Output = Result<()>> + 'a>>,
{
    if let Some(reason) = missing_prerequisites() {
        if in_ci() {
            panic!("desktop e2e test '{name}' cannot run in CI: {reason}");
        }
        eprintln!("skipping desktop e2e test '{name}': {reason}");
        return;
    }
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = ScriptedServer::start_blocking(turns);
    runtime.block_on(async move {
        let mut desktop = Desktop::start_seeded(name, server, config, extra_config, seed)
            .await
            .unwrap_or_else(|e| panic!("starting the app for '{name}': {e:#}"));
        // A WebDriver call has no deadline of its own: a scenario that never ends fails here
        // with the app's output instead of holding the whole test run.
        let result = match tokio::time::timeout(SCENARIO_TIMEOUT, scenario(&mut desktop)).await {
            Ok(result) => result,
            Err(_) => Err(anyhow::anyhow!(
                "the scenario did not finish within {SCENARIO_TIMEOUT:?} (a WebDriver call never answered?); the last screenshot is step {}",
                desktop.step
            )),
        };
        if let Err(e) = &result {
            let _ = tokio::time::timeout(Duration::from_secs(20), desktop.screenshot("failure")).await;
            let logs = desktop.logs();
            let _ = tokio::time::timeout(Duration::from_secs(20), desktop.stop()).await;
            panic!("{name}: {e:#}\n--- app and driver output ---\n{logs}");
        }
        let _ = tokio::time::timeout(Duration::from_secs(20), desktop.stop()).await;
    });
}

/// A child process group that is terminated when dropped.
pub struct Group {
    /// The group leader.
    pub child: Child,
}

impl Group {
    pub fn spawn(mut command: Command) -> Result<Group> {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
        let child = command
            .spawn()
            .with_context(|| format!("spawning {command:?}"))?;
        Ok(Group { child })
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let pgid = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args(["-TERM", "--", &pgid])
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &pgid])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

/// The app under test with its private directories.
pub struct Desktop {
    pub client: Option<Client>,
    pub server: ScriptedServer,
    pub home: tempfile::TempDir,
    pub workspace: tempfile::TempDir,
    pub driver: Group,
    pub log_file: PathBuf,
    pub shots: PathBuf,
    pub step: usize,
    /// From the WebDriver session request (which launches the app) to its first screen.
    pub first_paint: Duration,
    /// tauri-driver's WebDriver endpoint (`http://127.0.0.1:PORT`); a new session relaunches the app.
    pub webdriver_url: String,
}

pub fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

pub fn screenshot_root() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("e2e-screenshots")
}

impl Desktop {
    /// Starts Xvfb + tauri-driver (in a private D-Bus session) and the app through WebDriver.
    /// `config` replaces the generated `config.toml` when given.
    pub async fn start(
        name: &str,
        server: ScriptedServer,
        config: Option<String>,
    ) -> Result<Desktop> {
        Desktop::start_with_extra_config(name, server, config, "").await
    }

    /// Like [`Desktop::start`], with `extra` (top-level `key = value` lines) added to the
    /// generated `config.toml` (ignored when `config` replaces it).
    pub async fn start_with_extra_config(
        name: &str,
        server: ScriptedServer,
        config: Option<String>,
        extra: &str,
    ) -> Result<Desktop> {
        Desktop::start_seeded(name, server, config, extra, None).await
    }

    /// Like [`Desktop::start_with_extra_config`], with `seed` filling `SUZENT_HOME` first.
    pub async fn start_seeded(
        name: &str,
        server: ScriptedServer,
        config: Option<String>,
        extra: &str,
        seed: Option<Seed>,
    ) -> Result<Desktop> {
        let home = tempfile::tempdir()?;
        let workspace = tempfile::tempdir()?;
        let suzent_home = home.path().join("suzent");
        std::fs::create_dir_all(suzent_home.join("config"))?;
        let config = config
            .map(|c| {
                c.replace("{openai_base}", &server.openai_base())
                    .replace("{workspace}", &workspace.path().display().to_string())
            })
            .unwrap_or_else(|| {
            format!(
                "default_model = \"openai/gpt-4.1\"\nworkspace = {:?}\n{extra}\n[providers.openai]\nbase_url = {:?}\n",
                workspace.path().display().to_string(),
                server.openai_base(),
            )
        });
        std::fs::write(suzent_home.join("config/config.toml"), config)?;
        if let Some(seed) = seed {
            seed(&suzent_home)?;
        }
        // No update checks against the real feed, and closing the window quits (the tray test
        // turns keeping it in the tray on), unless the seed wrote its own desktop preferences.
        let prefs = suzent_home.join("config/desktop.toml");
        if !prefs.exists() {
            std::fs::write(
                &prefs,
                "checkForUpdates = false\nkeepRunningInTray = false\n",
            )?;
        }

        let shots = screenshot_root().join(name);
        let _ = std::fs::remove_dir_all(&shots);
        std::fs::create_dir_all(&shots)?;
        let log_file = shots.join("app-and-driver.log");
        let log = std::fs::File::create(&log_file)?;

        let port = free_port()?;
        let native_port = free_port()?;
        let tauri_driver =
            which("tauri-driver").ok_or_else(|| anyhow!("tauri-driver not found"))?;
        let mut command = Command::new("xvfb-run");
        command.args(["-a", "-s", "-screen 0 1280x860x24 -nolisten tcp"]);
        if which("dbus-run-session").is_some() {
            command.args(["dbus-run-session", "--"]);
        }
        command
            .arg(tauri_driver)
            .args(["--port", &port.to_string()])
            .args(["--native-port", &native_port.to_string()])
            .args(["--native-driver", "/usr/bin/WebKitWebDriver"])
            .env("SUZENT_HOME", &suzent_home)
            .env("OPENAI_API_KEY", "sk-e2e-test")
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join("xdg-config"))
            .env("XDG_DATA_HOME", home.path().join("xdg-data"))
            .env("XDG_CACHE_HOME", home.path().join("xdg-cache"))
            .env("XDG_STATE_HOME", home.path().join("xdg-state"))
            .env("SUZENT_LOG", "info")
            .envs(APP_ENV.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .env_remove("OPENAI_BASE_URL")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let driver = Group::spawn(command)?;

        let status_url = format!("http://127.0.0.1:{port}/status");
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(&status_url).send().await
                && r.status().is_success()
            {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "tauri-driver did not answer {status_url} within 30 s; log:\n{}",
                    std::fs::read_to_string(&log_file).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        let webdriver_url = format!("http://127.0.0.1:{port}");
        let launched = Instant::now();
        let client = launch_app(&webdriver_url, &log_file).await?;
        let mut desktop = Desktop {
            client: Some(client),
            server,
            home,
            workspace,
            driver,
            log_file,
            shots,
            step: 0,
            first_paint: Duration::ZERO,
            webdriver_url,
        };
        desktop.wait_for_app().await?;
        desktop.first_paint = launched.elapsed();
        Ok(desktop)
    }

    /// Quits the app (ends the WebDriver session, which ends the app process) and starts it again
    /// with the same home, workspace and model server, as a user reopening Suzent would.
    pub async fn restart(&mut self) -> Result<()> {
        let exe = Path::new(env!("CARGO_BIN_EXE_suzent-desktop"));
        if tree_memory(self.driver.child.id(), exe).is_none() {
            bail!("no running app process under tauri-driver to restart");
        }
        if let Some(client) = self.client.take() {
            client
                .close()
                .await
                .context("closing the WebDriver session (quitting the app)")?;
        }
        // The single-instance plugin hands a second start over to a running app: wait for the
        // old process to be gone first.
        let deadline = Instant::now() + Duration::from_secs(20);
        // Also an app the driver let go of (reparented while it exits): it still holds the
        // single-instance name on this test's session bus.
        while tree_memory(self.driver.child.id(), exe).is_some()
            || app_alive_with_home(exe, self.home.path())
        {
            if Instant::now() > deadline {
                bail!("the app was still running 20 s after its WebDriver session was closed");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.client = Some(launch_app(&self.webdriver_url, &self.log_file).await?);
        self.wait_for_app()
            .await
            .context("the restarted app did not render its first screen")
    }

    pub fn client(&self) -> &Client {
        self.client
            .as_ref()
            .expect("the session is open until stop()")
    }

    /// Waits until the UI rendered its navigation (or a first-run or error screen).
    pub async fn wait_for_app(&mut self) -> Result<()> {
        self.wait_css(
            "[data-testid=chat-list], [data-testid=first-run], [data-testid=error-banner]",
        )
        .await
        .context("the app did not render its first screen")?;
        Ok(())
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log_file).unwrap_or_default()
    }

    pub async fn stop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
    }

    /// Saves a screenshot of the window as `NN-step.png`.
    pub async fn screenshot(&mut self, step: &str) -> Result<PathBuf> {
        if self.client.is_none() {
            bail!("no WebDriver session to take the screenshot '{step}' with");
        }
        self.step += 1;
        // Let the page paint what the last step changed before capturing it (a timer: a script
        // waiting for animation frames never returns from a page WebKit does not repaint).
        tokio::time::sleep(Duration::from_millis(120)).await;
        let png = self.client().screenshot().await?;
        let path = self.shots.join(format!("{:02}-{step}.png", self.step));
        std::fs::write(&path, png)?;
        eprintln!("screenshot: {}", path.display());
        Ok(path)
    }

    pub async fn find(&self, css: &str) -> Result<fantoccini::elements::Element> {
        self.client()
            .find(Locator::Css(css))
            .await
            .with_context(|| format!("no element matches {css}"))
    }

    pub async fn count(&self, css: &str) -> Result<usize> {
        Ok(self.client().find_all(Locator::Css(css)).await?.len())
    }

    /// Waits until an element matching `css` is displayed.
    pub async fn wait_css(&self, css: &str) -> Result<fantoccini::elements::Element> {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            if let Ok(found) = self.client().find_all(Locator::Css(css)).await {
                for element in found {
                    if element.is_displayed().await.unwrap_or(false) {
                        return Ok(element);
                    }
                }
            }
            if Instant::now() > deadline {
                bail!("nothing displayed matches {css} after {UI_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Waits until some element matching `css` contains `text`.
    pub async fn wait_text(&self, css: &str, text: &str) -> Result<()> {
        let deadline = Instant::now() + UI_TIMEOUT;
        let mut seen = Vec::new();
        loop {
            seen.clear();
            if let Ok(found) = self.client().find_all(Locator::Css(css)).await {
                for element in found {
                    let t = element.text().await.unwrap_or_default();
                    if t.contains(text) {
                        return Ok(());
                    }
                    seen.push(t);
                }
            }
            if Instant::now() > deadline {
                bail!("no {css} contains {text:?} after {UI_TIMEOUT:?}; seen: {seen:?}");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Waits until `css` matches nothing displayed.
    pub async fn wait_gone(&self, css: &str) -> Result<()> {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let mut shown = false;
            if let Ok(found) = self.client().find_all(Locator::Css(css)).await {
                for element in found {
                    shown |= element.is_displayed().await.unwrap_or(false);
                }
            }
            if !shown {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{css} is still displayed after {UI_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    /// Waits until no displayed element matching `css` contains `text`.
    pub async fn wait_text_gone(&self, css: &str, text: &str) -> Result<()> {
        let deadline = Instant::now() + UI_TIMEOUT;
        loop {
            let mut shown = Vec::new();
            if let Ok(found) = self.client().find_all(Locator::Css(css)).await {
                for element in found {
                    let t = element.text().await.unwrap_or_default();
                    if t.contains(text) && element.is_displayed().await.unwrap_or(false) {
                        shown.push(t);
                    }
                }
            }
            if shown.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("{css} still shows {text:?} after {UI_TIMEOUT:?}: {shown:?}");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    }

    pub async fn click(&self, css: &str) -> Result<()> {
        let element = self.wait_css(css).await?;
        // Bring it to the middle of its scrolling pane first: an element at the pane's very
        // edge (under the scrollbar) cannot take a click. The pane is scrolled, never the
        // window's overflow-hidden root.
        self.client()
            .execute(
                "const el = document.querySelector(arguments[0]); \
                 let p = el && el.parentElement; \
                 while (p && p.scrollHeight <= p.clientHeight) p = p.parentElement; \
                 if (el && p) { \
                   const r = el.getBoundingClientRect(), q = p.getBoundingClientRect(); \
                   if (r.top < q.top + 40 || r.bottom > q.bottom - 40) \
                     p.scrollTop += r.top - q.top - p.clientHeight / 2; \
                 } \
                 return true;",
                vec![serde_json::Value::String(css.into())],
            )
            .await
            .with_context(|| format!("scrolling {css} into view"))?;
        element
            .click()
            .await
            .with_context(|| format!("clicking {css}"))
    }

    /// Creates a chat from the chat list and waits for its composer.
    pub async fn new_chat(&self) -> Result<()> {
        let before = self.count("[data-testid=chat-item]").await?;
        self.click("[data-testid=nav-chat]").await?;
        self.click("[data-testid=chat-new]").await?;
        let deadline = Instant::now() + UI_TIMEOUT;
        while self.count("[data-testid=chat-item]").await? <= before {
            if Instant::now() > deadline {
                bail!("chat-new did not add a chat-item");
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        self.wait_css("[data-testid=composer-input]").await?;
        Ok(())
    }

    /// Runs `script` in the window and returns its value (`return ...` at the top level).
    #[allow(dead_code)]
    pub async fn js(&self, script: &str) -> Result<Value> {
        Ok(self.client().execute(script, Vec::new()).await?)
    }

    /// Presses keys (WebDriver key codes, e.g. `"\u{E004}"` for Tab) on the focused element.
    #[allow(dead_code)]
    pub async fn keys(&self, keys: &str) -> Result<()> {
        let active = self.client().active_element().await?;
        active.send_keys(keys).await?;
        Ok(())
    }

    /// Types `text` into the composer and sends it.
    pub async fn send(&self, text: &str) -> Result<()> {
        let input = self.wait_css("[data-testid=composer-input]").await?;
        input.click().await?;
        input.send_keys(text).await?;
        self.click("[data-testid=composer-send]").await?;
        self.wait_text("[data-testid=message-user]", text).await
    }

    /// The request bodies the model server received.
    pub fn requests(&self) -> Vec<Value> {
        self.server.requests()
    }

    pub fn workspace(&self) -> &Path {
        self.workspace.path()
    }
}

/// Opens a WebDriver session through tauri-driver at `webdriver_url`, which launches the app.
/// How long a WebDriver session request may take to launch the app and open its window (an app
/// that exits at start would otherwise leave the request waiting for ever).
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(90);

async fn launch_app(webdriver_url: &str, log_file: &Path) -> Result<Client> {
    match tokio::time::timeout(LAUNCH_TIMEOUT, launch_app_once(webdriver_url, log_file)).await {
        Ok(result) => result,
        Err(_) => bail!(
            "the app did not open its window within {} s (see {})",
            LAUNCH_TIMEOUT.as_secs(),
            log_file.display()
        ),
    }
}

async fn launch_app_once(webdriver_url: &str, log_file: &Path) -> Result<Client> {
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), json!("wry"));
    let application = APP_BINARY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_suzent-desktop")));
    caps.insert(
        "tauri:options".into(),
        json!({ "application": application }),
    );
    // Ignored when a provider is installed already (another test of this binary did it).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ClientBuilder::rustls()?
        .capabilities(caps)
        .connect(webdriver_url)
        .await
        .with_context(|| {
            format!(
                "creating the WebDriver session; log:\n{}",
                std::fs::read_to_string(log_file).unwrap_or_default()
            )
        })
}

/// Memory of a process tree, from `/proc`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeMemory {
    /// Each process: command name and RSS in KiB.
    pub each: Vec<(String, u64)>,
    /// Processes counted.
    pub processes: usize,
    /// Sum of resident set sizes, KiB (shared pages counted once per process).
    pub rss_kib: u64,
    /// Sum of proportional set sizes, KiB (shared pages split between the processes).
    pub pss_kib: u64,
}

fn proc_parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may contain spaces and parentheses: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn proc_kib(pid: u32, file: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The memory of the process running `exe` under `ancestor` and of all its descendants (for
/// the app: the app itself plus the WebKit web and network processes it starts).
/// Whether a process of `exe` runs with `HOME` set to `home` (this test's app, whoever its
/// parent is now).
pub fn app_alive_with_home(exe: &Path, home: &Path) -> bool {
    let Ok(exe) = std::fs::canonicalize(exe) else {
        return false;
    };
    let wanted = format!("HOME={}", home.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let dir = entry.path();
        std::fs::read_link(dir.join("exe")).is_ok_and(|e| e == exe)
            && std::fs::read(dir.join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == wanted.as_slice()))
            && !std::fs::read_to_string(dir.join("stat")).is_ok_and(|stat| {
                stat.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
    })
}

/// The pid and environment of this test's app (the process of `exe` whose `HOME` is `home`):
/// a second launch with the same environment reaches the same session bus, display and data
/// folder, as a second double-click would.
pub fn app_process(
    exe: &Path,
    home: &Path,
) -> Option<(u32, Vec<(std::ffi::OsString, std::ffi::OsString)>)> {
    use std::os::unix::ffi::OsStrExt;
    let exe = std::fs::canonicalize(exe).ok()?;
    let wanted = format!("HOME={}", home.display()).into_bytes();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        if !std::fs::read_link(dir.join("exe")).is_ok_and(|e| e == exe) {
            continue;
        }
        let Ok(environ) = std::fs::read(dir.join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = environ
            .split(|b| *b == 0)
            .filter(|v| !v.is_empty())
            .collect();
        if !vars.contains(&wanted.as_slice()) {
            continue;
        }
        let env = vars
            .iter()
            .filter_map(|v| {
                let at = v.iter().position(|b| *b == b'=')?;
                Some((
                    std::ffi::OsStr::from_bytes(&v[..at]).to_os_string(),
                    std::ffi::OsStr::from_bytes(&v[at + 1..]).to_os_string(),
                ))
            })
            .collect();
        return Some((pid, env));
    }
    None
}

pub fn tree_memory(ancestor: u32, exe: &Path) -> Option<TreeMemory> {
    let mut parents = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        if let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            && let Some(ppid) = proc_parent(pid)
        {
            parents.insert(pid, ppid);
        }
    }
    let descends = |mut pid: u32, from: u32| {
        while let Some(&p) = parents.get(&pid) {
            if p == from {
                return true;
            }
            if p <= 1 {
                return false;
            }
            pid = p;
        }
        false
    };
    let exe = std::fs::canonicalize(exe).ok()?;
    let root = parents.keys().copied().find(|&pid| {
        descends(pid, ancestor)
            && std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe)
    })?;
    let mut memory = TreeMemory::default();
    for &pid in parents.keys() {
        if pid == root || descends(pid, root) {
            memory.processes += 1;
            let rss = proc_kib(pid, "status", "VmRSS:");
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            memory.each.push((name.trim().to_string(), rss));
            memory.rss_kib += rss;
            memory.pss_kib += proc_kib(pid, "smaps_rollup", "Pss:");
        }
    }
    Some(memory)
}
