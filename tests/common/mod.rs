//! Shared helpers for the integration tests: a private copy of the corpus, a
//! config over it, and builds into a temporary index.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use fabdex_index::{BuildOptions, Config, IndexReport};
use fabdex_query::Engine;

pub mod real_model;

/// The `fabdex` binary, with a model registry of its own that holds no
/// model: a model the machine's user registered (`fabdex models add`) must
/// not change what the tests index or how long they take.
pub fn fabdex_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fabdex"));
    cmd.env("FABDEX_MODELS", std::env::temp_dir().join("fabdex-tests-no-models"));
    cmd.env_remove("FABDEX_EMBEDDINGS");
    cmd
}

pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder under the test target's scratch space with a fixed name, emptied
/// now: for an index shared by a file's tests through a static, which is
/// never dropped, so a temporary folder would be left behind by every run.
pub fn fresh_scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A temporary workspace holding a copy of `corpus/docs` and `corpus/skills`
/// and a config indexing them as roots `docs` and `skills`.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn with_corpus() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&project_root().join("corpus/docs"), &dir.path().join("docs"));
        copy_dir(&project_root().join("corpus/skills"), &dir.path().join("skills"));
        copy_dir(&project_root().join("corpus/patterns"), &dir.path().join("patterns"));
        fs::write(
            dir.path().join("fabdex.toml"),
            "[[root]]\nname = \"docs\"\npath = \"docs\"\nkind = \"docs\"\norigin = \"docs\"\n\n\
             [[root]]\nname = \"skills\"\npath = \"skills\"\nkind = \"skills\"\norigin = \"skill\"\n\n\
             [[root]]\nname = \"patterns\"\npath = \"patterns\"\nkind = \"patterns\"\norigin = \"local-registry\"\n",
        )
        .unwrap();
        Workspace { dir }
    }

    /// The docs and skills roots only: the corpus the judged questions were written for.
    pub fn docs_only() -> Workspace {
        let ws = Workspace::with_corpus();
        let config = fs::read_to_string(ws.path("fabdex.toml")).unwrap();
        let docs_only = config.split("\n\n[[root]]\nname = \"patterns\"").next().unwrap().to_string();
        fs::write(ws.path("fabdex.toml"), docs_only).unwrap();
        ws
    }

    /// The corpus plus the published records of `corpus/published/` as root
    /// `registry` (origin `remote-index`).
    pub fn with_registry() -> Workspace {
        let ws = Workspace::with_corpus();
        fs::create_dir_all(ws.path("published")).unwrap();
        fs::copy(project_root().join("corpus/published/registry.jsonl"), ws.path("published/registry.jsonl")).unwrap();
        let mut config = fs::read_to_string(ws.path("fabdex.toml")).unwrap();
        config.push_str(
            "\n[[root]]\nname = \"registry\"\npath = \"published/registry.jsonl\"\nkind = \"published\"\norigin = \"remote-index\"\n",
        );
        fs::write(ws.path("fabdex.toml"), config).unwrap();
        ws
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Write `policy.toml`: allow everything but `origin`, withheld from
    /// every consumer. Returns its path.
    pub fn deny_policy(&self, origin: &str) -> PathBuf {
        let path = self.path("policy.toml");
        let text = format!("default = \"allow\"\n[[deny]]\norigins = [\"{origin}\"]\nconsumers = [\"*\"]\n");
        fs::write(&path, text).unwrap();
        path
    }

    pub fn index_dir(&self) -> PathBuf {
        self.dir.path().join("index")
    }

    pub fn config(&self) -> Config {
        Config::load(&self.path("fabdex.toml")).unwrap()
    }

    pub fn build(&self) -> IndexReport {
        fabdex_index::build(&self.config(), &BuildOptions::new(self.index_dir())).unwrap()
    }

    pub fn engine(&self) -> Engine {
        Engine::open_index(&self.index_dir()).unwrap()
    }
}

/// Read an address window by window, following `next`, and return the whole text.
pub fn read_all(engine: &Engine, address: &str, window: u64) -> String {
    let mut text = String::new();
    let mut next = Some(address.to_string());
    let mut first = true;
    while let Some(addr) = next {
        let env = engine.read(&addr, if first { Some(0) } else { None }, Some(window)).unwrap();
        first = false;
        assert_eq!(env.digest, fabdex_model::digest_text(&env.text));
        assert_eq!(env.offset as usize, text.chars().count(), "windows are contiguous");
        assert!(env.text.chars().count() as u64 <= window);
        text.push_str(&env.text);
        assert_eq!(env.truncated, env.next.is_some());
        next = env.next;
    }
    text
}

#[derive(serde::Deserialize)]
pub struct Question {
    pub q: String,
    pub expect: Vec<Expected>,
}

#[derive(serde::Deserialize)]
pub struct Expected {
    #[serde(default)]
    pub root: Option<String>,
    pub path: String,
    pub anchor: String,
}

pub fn load_qrels(path: &Path) -> Vec<Question> {
    read_json(path)
}

/// A JSON file of test data (qrels, pattern tasks), parsed.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A `fabdex serve --http` child, killed on drop.
pub struct Server {
    pub child: std::process::Child,
    /// `http://<addr>`.
    pub url: String,
}

impl Server {
    /// Start `cmd` (a `serve --http 127.0.0.1:0` command) and wait for its "listening on" line.
    pub fn start(mut cmd: std::process::Command) -> Server {
        use std::io::BufRead;
        let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| panic!("{line}")).to_string();
        Server { child, url }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `<host>:<port>`.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// One HTTP/1.1 request; its status and the whole response as text.
    pub fn request_text(&self, method: &str, path: &str, body: &str, token: Option<&str>) -> (u16, String) {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(self.addr()).unwrap();
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).unwrap();
        // A server may answer (413) and close before it reads a body it refuses.
        let _ = stream.write_all(body.as_bytes());
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
        (status, text)
    }

    /// One HTTP/1.1 request; its status and JSON body (`Null` when the body
    /// is not JSON).
    pub fn request(&self, method: &str, path: &str, body: &str, token: Option<&str>) -> (u16, serde_json::Value) {
        let (status, text) = self.request_text(method, path, body, token);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        // Bodies may be chunked: take the JSON between the first `{`/`[` and the last `}`/`]`.
        let start = body.find(['{', '[']).unwrap_or(0);
        let end = body.rfind(['}', ']']).map_or(body.len(), |e| e + 1);
        (status, serde_json::from_str(&body[start..end]).unwrap_or(serde_json::Value::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The snapshot id `CURRENT` names in an index directory.
pub fn current(index_dir: &Path) -> String {
    fs::read_to_string(index_dir.join("CURRENT")).unwrap().trim().to_string()
}

/// What a reader of `index_dir` sees, through separate `fabdex` processes: a
/// search's addresses and scores, and the text of its best hit.
pub fn reader_answers(ws: &Workspace, index_dir: &Path) -> String {
    let run = |args: &[&str]| {
        let out = fabdex_command().current_dir(ws.dir.path()).arg("--index").arg(index_dir).args(args).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let search = run(&["search", "docs", "how do I tell whether a wish found nothing", "--json"]);
    let hits: serde_json::Value = serde_json::from_str(&search).unwrap();
    let best = hits["hits"][0]["address"].as_str().unwrap().to_string();
    let top: Vec<String> =
        hits["hits"].as_array().unwrap().iter().map(|h| format!("{} {}", h["address"], h["score"])).collect();
    format!("{}\n{}", top.join("\n"), run(&["open", &best, "--json"]))
}
