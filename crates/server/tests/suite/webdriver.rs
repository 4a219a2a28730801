//! A small WebDriver client over HTTP: chromedriver driving a headless
//! Chromium, for the UI tests. `Browser::start` is `None` (after a loud
//! skip, a failure in CI) where either program is missing.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How long the `wait_*` helpers wait.
const PATIENCE: Duration = Duration::from_secs(20);

pub(crate) struct Browser {
    http: reqwest::Client,
    /// `http://127.0.0.1:<port>/session/<id>`.
    session: String,
    driver: tokio::process::Child,
    /// Chromium's profile and downloads.
    pub(crate) dir: tempfile::TempDir,
}

/// The first of `names` that runs with `--version`.
fn program(names: &[&str]) -> Option<String> {
    names.iter().find_map(|name| {
        let ok = std::process::Command::new(name)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| (*name).to_owned())
    })
}

impl Browser {
    /// Chromium (headless, a fresh profile) under chromedriver.
    pub(crate) async fn start() -> Option<Self> {
        let chromium = std::env::var("OXISCOPE_CHROMIUM")
            .ok()
            .or_else(|| program(&["chromium", "chromium-browser", "google-chrome"]));
        let driver = std::env::var("OXISCOPE_CHROMEDRIVER")
            .ok()
            .or_else(|| program(&["chromedriver"]));
        let (Some(chromium), Some(driver)) = (chromium, driver) else {
            oxiscope_test_support::skip(
                "no headless browser: install chromium and chromium-driver to run the UI tests",
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = tokio::process::Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // The workspace's reqwest has no default TLS provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        loop {
            let ready = http.get(format!("{base}/status")).send().await;
            if let Ok(res) = ready {
                let status: Value = res.json().await.unwrap();
                if status["value"]["ready"] == true {
                    break;
                }
            }
            assert!(started.elapsed() < PATIENCE, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("profile");
        let downloads = dir.path().join("downloads");
        std::fs::create_dir_all(&downloads).unwrap();
        // Without the background-networking flags Chromium waits on a
        // closed network.
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
            &format!("--user-data-dir={}", profile.display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium_path(&chromium),
                "args": args,
                "prefs": {
                    "download.default_directory": downloads,
                    "download.prompt_for_download": false,
                },
            },
        }}});
        let res: Value = http
            .post(format!("{base}/session"))
            .json(&caps)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = res["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {res}"));
        Some(Self {
            http,
            session: format!("{base}/session/{id}"),
            driver: child,
            dir,
        })
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        match self.try_command(method, path, body).await {
            Ok(value) => value,
            Err(error) => panic!("WebDriver {path}: {error}"),
        }
    }

    /// The command's value, or the WebDriver error it answered.
    async fn try_command(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Value> {
        let mut req = self.http.request(method, format!("{}{path}", self.session));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res: Value = req.send().await.unwrap().json().await.unwrap();
        if res["value"].get("error").is_some() {
            return Err(res["value"].clone());
        }
        Ok(res["value"].clone())
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.command(reqwest::Method::POST, path, Some(body)).await
    }

    pub(crate) async fn goto(&self, url: &str) {
        self.post("/url", json!({"url": url})).await;
    }

    pub(crate) async fn reload(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the
    /// page and returns its value.
    pub(crate) async fn js(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({"script": script, "args": args}))
            .await
    }

    pub(crate) async fn set_size(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
    }

    /// The first element matching `css`, once there is one.
    pub(crate) async fn find(&self, css: &str) -> String {
        let started = Instant::now();
        loop {
            let found = self
                .post("/elements", json!({"using": "css selector", "value": css}))
                .await;
            if let Some(el) = found.as_array().and_then(|a| a.first()) {
                return el[ELEMENT].as_str().unwrap().to_owned();
            }
            assert!(started.elapsed() < PATIENCE, "no element {css:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the element `css`; one the page redraws between finding and
    /// clicking it (a stale reference) is found again.
    pub(crate) async fn click(&self, css: &str) {
        let started = Instant::now();
        loop {
            let el = self.find(css).await;
            // Into the middle of its scroller, clear of sticky headers.
            let scrolled = self
                .try_command(
                    reqwest::Method::POST,
                    "/execute/sync",
                    Some(json!({
                        "script": "arguments[0].scrollIntoView({block: 'center'});",
                        "args": [{ ELEMENT: el }],
                    })),
                )
                .await;
            let clicked = match scrolled {
                Ok(_) => {
                    self.try_command(
                        reqwest::Method::POST,
                        &format!("/element/{el}/click"),
                        Some(json!({})),
                    )
                    .await
                }
                Err(error) => Err(error),
            };
            match clicked {
                Ok(_) => return,
                Err(error) if error["error"] == "stale element reference" => {
                    assert!(started.elapsed() < PATIENCE, "{css:?} kept going stale");
                }
                Err(error) => panic!("WebDriver click {css:?}: {error}"),
            }
        }
    }

    /// Types `text` into the element `css` (`\u{E007}` is Enter).
    pub(crate) async fn type_into(&self, css: &str, text: &str) {
        let el = self.find(css).await;
        self.post(&format!("/element/{el}/value"), json!({"text": text}))
            .await;
    }

    /// Sets a `<select>`'s value as a person would (a change event).
    pub(crate) async fn select(&self, css: &str, value: &str) {
        self.find(&format!("{css} option[value=\"{value}\"]")).await;
        self.js(
            "const s = document.querySelector(arguments[0]); s.value = arguments[1]; \
             s.dispatchEvent(new Event('change'));",
            json!([css, value]),
        )
        .await;
    }

    /// The text of every element matching `css`.
    pub(crate) async fn texts(&self, css: &str) -> Vec<String> {
        let found = self
            .js(
                "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent);",
                json!([css]),
            )
            .await;
        serde_json::from_value(found).unwrap()
    }

    /// Waits until the text of some element matching `css` contains `text`.
    pub(crate) async fn wait_text(&self, css: &str, text: &str) {
        let started = Instant::now();
        loop {
            if self.texts(css).await.iter().any(|t| t.contains(text)) {
                return;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "no {css:?} with {text:?}; the page shows: {:?}",
                self.texts("body").await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits until no element matches `css`.
    pub(crate) async fn wait_gone(&self, css: &str) {
        let started = Instant::now();
        while !self.texts(css).await.is_empty() {
            assert!(started.elapsed() < PATIENCE, "{css:?} stays");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves a screenshot as `target/ui-screenshots/<name>.png`.
    pub(crate) async fn screenshot(&self, name: &str) {
        let png = self
            .command(reqwest::Method::GET, "/screenshot", None)
            .await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), bytes).unwrap();
    }

    /// Ends the browser session (the driver is killed on drop).
    pub(crate) async fn quit(mut self) {
        let _ = self.http.delete(&self.session).send().await;
        let _ = self.driver.kill().await;
    }
}

/// `target/ui-screenshots` of the workspace.
fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target.join("ui-screenshots")
}

/// The absolute path of the program `name`.
fn chromium_path(name: &str) -> String {
    if name.contains('/') {
        return name.to_owned();
    }
    // Debian's `chromium` is a shell wrapper; the driver wants the program.
    let debian = std::path::Path::new("/usr/lib/chromium/chromium");
    if name == "chromium" && debian.is_file() {
        return debian.display().to_string();
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .map_or_else(|| name.to_owned(), |p| p.display().to_string())
}
