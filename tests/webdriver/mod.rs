//! A small WebDriver client (JSON over HTTP/1.1 on loopback, no TLS, no
//! client crate): enough to drive headless Chromium through `chromedriver`
//! (navigate, find, click, type, read the DOM, run a script, press keys,
//! screenshots).
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Chromium and chromedriver, from `$FABDEX_CHROMIUM`/`$FABDEX_CHROMEDRIVER`
/// or the Debian packages' paths; the reason when either is missing.
pub fn find_browser() -> Result<(PathBuf, PathBuf), String> {
    let pick = |var: &str, names: &[&str]| -> Option<PathBuf> {
        if let Some(p) = std::env::var_os(var) {
            return Some(PathBuf::from(p)).filter(|p| p.is_file());
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        names.iter().flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n))).find(|p| p.is_file())
    };
    let chromium = pick("FABDEX_CHROMIUM", &["chromium", "chromium-browser", "google-chrome"]);
    let driver = pick("FABDEX_CHROMEDRIVER", &["chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Ok((c, d)),
        (c, d) => Err(format!(
            "no headless browser: chromium {}, chromedriver {} (apt-get install chromium chromium-driver, or set $FABDEX_CHROMIUM and $FABDEX_CHROMEDRIVER)",
            if c.is_some() { "found" } else { "missing" },
            if d.is_some() { "found" } else { "missing" }
        )),
    }
}

/// A chromedriver process and one headless Chromium session; both end on drop.
pub struct Browser {
    driver: Child,
    /// `127.0.0.1:<port>` of chromedriver.
    addr: String,
    /// `/session/<id>` once the session is made.
    base: String,
    _profile: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Browser {
    /// Start chromedriver and a headless session at `width`×`height`.
    pub fn start(chromium: &PathBuf, chromedriver: &PathBuf, width: u32, height: u32) -> Browser {
        let port = free_port();
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let profile = tempfile::tempdir().unwrap();
        let mut browser = Browser { driver, addr: format!("127.0.0.1:{port}"), base: String::new(), _profile: profile };
        let started = Instant::now();
        while http(&browser.addr, "GET", "/status", None).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "chromedriver did not answer in 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        // This machine has no network: without these flags Chromium stalls on start.
        let args = vec![
            "--headless".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-quic".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--disable-dev-shm-usage".into(),
            "--hide-scrollbars".into(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", browser._profile.path().display()),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args}
        }}});
        let session = browser.call("POST", "/session", Some(caps));
        let id = session["sessionId"].as_str().expect("a session id").to_string();
        browser.base = format!("/session/{id}");
        browser
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = if method == "POST" { Some(body.unwrap_or(json!({}))) } else { None };
        let text = http(&self.addr, method, &format!("{}{path}", self.base), body)
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if let Some(err) = value["value"].get("error") {
            panic!("{method} {path}: {err}: {}", value["value"]["message"]);
        }
        value.get("value").cloned().unwrap_or(Value::Null)
    }

    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({"url": url})));
    }

    pub fn url(&self) -> String {
        self.call("GET", "/url", None).as_str().unwrap_or("").to_string()
    }

    /// The DOM as HTML (after scripts ran).
    pub fn source(&self) -> String {
        self.call("GET", "/source", None).as_str().unwrap_or("").to_string()
    }

    /// Every element matching a CSS selector.
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.call("POST", "/elements", Some(json!({"using": "css selector", "value": css})));
        found
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| Element {
                browser: self,
                id: e[ELEMENT].as_str().unwrap_or_else(|| panic!("{css}: {e}")).to_string(),
            })
            .collect()
    }

    /// The first element matching a CSS selector; panics when there is none.
    pub fn find(&self, css: &str) -> Element<'_> {
        self.find_all(css).into_iter().next().unwrap_or_else(|| panic!("no `{css}` on {}", self.url()))
    }

    /// The first element matching `css` whose text contains `text`.
    pub fn find_text(&self, css: &str, text: &str) -> Element<'_> {
        self.find_all(css)
            .into_iter()
            .find(|e| e.text().contains(text))
            .unwrap_or_else(|| panic!("no `{css}` with text `{text}` on {}", self.url()))
    }

    pub fn script(&self, script: &str, args: Value) -> Value {
        self.call("POST", "/execute/sync", Some(json!({"script": script, "args": args})))
    }

    /// Press and release one key (the page's focused element receives it).
    pub fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}
        ]}]});
        self.call("POST", "/actions", Some(actions));
    }

    pub fn resize(&self, width: u32, height: u32) {
        self.call("POST", "/window/rect", Some(json!({"width": width, "height": height})));
    }

    /// The viewport as PNG bytes.
    pub fn screenshot(&self) -> Vec<u8> {
        base64_decode(self.call("GET", "/screenshot", None).as_str().unwrap_or(""))
    }

    /// Wait up to 10 s for `ok`.
    pub fn wait_until(&self, what: &str, ok: impl Fn(&Browser) -> bool) {
        let started = Instant::now();
        while !ok(self) {
            assert!(started.elapsed() < Duration::from_secs(10), "timed out waiting for {what} (at {})", self.url());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(&self.addr, "DELETE", &self.base, None);
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// One element of the current page.
pub struct Element<'a> {
    browser: &'a Browser,
    id: String,
}

impl Element<'_> {
    fn path(&self, rest: &str) -> String {
        format!("/element/{}{rest}", self.id)
    }

    pub fn click(&self) {
        self.browser.call("POST", &self.path("/click"), Some(json!({})));
    }

    pub fn text(&self) -> String {
        self.browser.call("GET", &self.path("/text"), None).as_str().unwrap_or("").to_string()
    }

    pub fn attr(&self, name: &str) -> Option<String> {
        self.browser.call("GET", &self.path(&format!("/attribute/{name}")), None).as_str().map(str::to_string)
    }

    pub fn displayed(&self) -> bool {
        self.browser.call("GET", &self.path("/displayed"), None).as_bool().unwrap_or(false)
    }

    pub fn type_text(&self, text: &str) {
        self.browser.call("POST", &self.path("/value"), Some(json!({"text": text})));
    }
}

/// One request on a fresh connection; the response body (read by its
/// `Content-Length`: chromedriver keeps connections open).
fn http(addr: &str, method: &str, path: &str, body: Option<Value>) -> std::io::Result<String> {
    use std::io::{BufRead, Read, Write};
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reader = std::io::BufReader::new(stream);
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut raw = Vec::new();
    match length {
        Some(n) => {
            raw.resize(n, 0);
            reader.read_exact(&mut raw)?;
        }
        None => {
            reader.read_to_end(&mut raw)?;
        }
    }
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let digits: Vec<u8> = text.bytes().filter_map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, d)| acc | (u32::from(*d) << (18 - 6 * i)));
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}
