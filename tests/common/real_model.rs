//! A real OpenAI-compatible model server for the tests and benches that need
//! one: llama-cpp-python's server (`python3 -m llama_cpp.server`) with
//! SmolLM2-135M-Instruct, both from PyPI (`scripts/get-chat-model.sh`), on
//! loopback, with a recording proxy in front so a test can assert every
//! request fabdex sent and every answer it got.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The window the server runs with: SmolLM2-135M's own limit.
pub const CONTEXT_TOKENS: u32 = 8192;

/// The GGUF file: `FABDEX_CHAT_MODEL`, else where `scripts/get-chat-model.sh` puts it.
pub fn model_file() -> PathBuf {
    if let Some(path) = std::env::var_os("FABDEX_CHAT_MODEL") {
        return PathBuf::from(path);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share"));
    data.join("fabdex/chat/SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// Why the real server cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    let model = model_file();
    if !model.is_file() {
        return Some(format!("no model file at {} (run scripts/get-chat-model.sh)", model.display()));
    }
    let server = Command::new("python3").args(["-c", "import llama_cpp.server"]).output();
    match server {
        Ok(out) if out.status.success() => None,
        _ => Some("python3 cannot import llama_cpp.server (run scripts/get-chat-model.sh)".into()),
    }
}

/// True when the test should run; false (after saying why) when it skips.
/// Under `FABDEX_REQUIRE_REAL_MODEL` a missing server fails instead.
pub fn available_or_skip(test: &str) -> bool {
    match unavailable() {
        None => true,
        Some(why) if std::env::var_os("FABDEX_REQUIRE_REAL_MODEL").is_some() => {
            panic!("{test}: FABDEX_REQUIRE_REAL_MODEL is set but {why}")
        }
        Some(why) => {
            eprintln!("skipping {test}: {why}");
            false
        }
    }
}

/// One request through the proxy and the server's answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    pub path: String,
    pub request: String,
    pub status: u16,
    pub response: String,
}

/// The server and the proxy in front of it; the server stops on drop.
pub struct RealModel {
    server: Child,
    /// The server itself, behind the proxy.
    upstream: String,
    /// The proxy's `/v1` base URL: what fabdex is pointed at.
    pub base_url: String,
    pub exchanges: Arc<Mutex<Vec<Exchange>>>,
}

impl RealModel {
    pub fn start() -> RealModel {
        let port = free_port();
        let server = Command::new("python3")
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(model_file())
            .args(["--n_ctx", &CONTEXT_TOKENS.to_string(), "--chat_format", "chatml-function-calling"])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m llama_cpp.server starts");
        let upstream = format!("http://127.0.0.1:{port}");
        let mut model =
            RealModel { server, upstream: upstream.clone(), base_url: String::new(), exchanges: Arc::default() };
        model.wait_until_up(&upstream);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        model.base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let exchanges = model.exchanges.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (exchanges, upstream) = (exchanges.clone(), upstream.clone());
                std::thread::spawn(move || {
                    if let Some(exchange) = forward(stream, &upstream) {
                        exchanges.lock().unwrap().push(exchange);
                    }
                });
            }
        });
        model
    }

    fn wait_until_up(&mut self, upstream: &str) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(180) {
            if let Some(status) = self.server.try_wait().unwrap() {
                panic!("the model server exited ({status}) before it answered");
            }
            if http(upstream, "GET", "/v1/models", "", None).is_some_and(|(status, _)| status == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        panic!("the model server did not answer within 180 s");
    }

    /// Tokens of `text` by the model's own tokenizer (llama-cpp-python's
    /// `/extras/tokenize/count`), not through the proxy.
    pub fn count_tokens(&self, text: &str) -> u64 {
        let body = serde_json::json!({ "input": text }).to_string();
        let (status, answer) = http(&self.upstream, "POST", "/extras/tokenize/count", &body, None).unwrap();
        assert_eq!(status, 200, "{answer}");
        serde_json::from_str::<serde_json::Value>(&answer).unwrap()["count"].as_u64().unwrap()
    }

    /// An endpoint for fabdex through the proxy: one attempt per turn with
    /// a long timeout (a CPU-bound local model can take minutes to answer,
    /// and a retried generation would queue behind the one still running).
    pub fn endpoint(&self) -> fabdex_research::Endpoint {
        let mut endpoint = fabdex_research::Endpoint::new(&self.base_url, "smollm2-135m");
        endpoint.timeout = Duration::from_secs(600);
        endpoint.attempts = 1;
        endpoint
    }

    /// The chat completions exchanged so far.
    pub fn completions(&self) -> Vec<Exchange> {
        self.exchanges.lock().unwrap().iter().filter(|e| e.path.ends_with("/chat/completions")).cloned().collect()
    }
}

impl Drop for RealModel {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Pass one HTTP/1.1 request on to the server and its answer back, closing
/// the connection after it; returns what was exchanged.
fn forward(mut stream: TcpStream, upstream: &str) -> Option<Exchange> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let mut parts = first.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut length = 0usize;
    let mut auth = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => auth = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    let request = String::from_utf8_lossy(&body).into_owned();
    let (status, response) = http(upstream, &method, &path, &request, auth.as_deref())
        .unwrap_or_else(|| (502, "{\"error\": \"proxy: no answer from the model server\"}".into()));
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        response.len()
    );
    let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(response.as_bytes()));
    Some(Exchange { method, path, request, status, response })
}

/// One HTTP/1.1 request to `upstream` (`http://host:port`), the
/// connection closed after it: the status and the body (chunked bodies
/// decoded). `None` when the server cannot be reached.
fn http(upstream: &str, method: &str, path: &str, body: &str, auth: Option<&str>) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(upstream.trim_start_matches("http://")).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(900))).ok()?;
    let auth = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    Some((status, if chunked { dechunk(rest) } else { rest.to_string() }))
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}
