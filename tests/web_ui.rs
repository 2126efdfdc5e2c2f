//! The contract browser in a real browser: headless Chromium driven through
//! chromedriver (WebDriver) against `fabdex serve --http` on the corpus.
//!
//! Covered: searching for the inbox task and opening the inbox app, its
//! contract with `db` required, one of its files at a line range (script
//! highlighting `#L32-L41` and a server-side `?lines=`); following a
//! dependency; a doc section and then its parent; keyboard shortcuts and a
//! phone-width layout; and, under a deny release policy with a token and a
//! run, signing in, withheld results with no text, and the run's provenance.
//!
//! Without Chromium and chromedriver the tests say so and pass, unless
//! `$FABDEX_REQUIRE_BROWSER` is set (CI sets it), when that is a failure.
//! `cargo test --test web_ui -- --ignored screenshots` refreshes
//! `docs/screenshots/` (`scripts/screenshots.sh`).

mod common;
mod webdriver;

use common::{Server, Workspace};
use webdriver::Browser;

/// The month picker, a published record the agenda depends on.
const MONTH_PICKER: &str = "ls4nTU0QKIBtQWXO5rIzbHQYasNV3TEQai4XA0ZXFZM";
const AGENDA: &str = "NaKN0VjZq8rMPO0qCxGXTnNhjUFh0cZcYZD2d2dQz-M";
/// Text of the doc section `wish.md#result-shape`.
const RESULT_SHAPE_TEXT: &str = "A wish returns an object with four members";

/// A browser, or `None` (with the reason printed) when there is none and
/// none is required.
fn browser(width: u32, height: u32) -> Option<Browser> {
    match webdriver::find_browser() {
        Ok((chromium, driver)) => Some(Browser::start(&chromium, &driver, width, height)),
        Err(why) if std::env::var_os("FABDEX_REQUIRE_BROWSER").is_some() => {
            panic!("FABDEX_REQUIRE_BROWSER is set but {why}")
        }
        Err(why) => {
            eprintln!("skipping the browser tests: {why}");
            None
        }
    }
}

fn serve(ws: &Workspace, token: Option<&str>, extra: &[&str]) -> Server {
    let mut cmd = common::fabdex_command();
    cmd.args(["--index", ws.index_dir().to_str().unwrap(), "--runs", ws.path("runs").to_str().unwrap()])
        .args(extra)
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("FABDEX_SERVE_TOKEN")
        .env_remove("FABDEX_RUN")
        .env_remove("FABDEX_POLICY");
    if let Some(t) = token {
        cmd.env("FABDEX_SERVE_TOKEN", t);
    }
    Server::start(cmd)
}

#[test]
fn authors_browse_contracts_sources_and_docs() {
    let Some(browser) = browser(1280, 900) else { return };
    let ws = Workspace::with_registry();
    ws.build();
    let inbox = ws.engine().inspect("patterns/mail/inbox.tsx").unwrap().pattern_id;
    let server = serve(&ws, None, &[]);
    search_then_inbox_contract_then_a_file(&browser, &server, &inbox);
    follow_a_dependency(&browser, &server);
    a_section_then_its_parent(&browser, &server);
    keyboard_and_phone(&browser, &server);
}

/// Search for the task, open the inbox app from its hit, see `db` required,
/// open a file at a line range.
fn search_then_inbox_contract_then_a_file(b: &Browser, server: &Server, inbox: &str) {
    b.goto(&format!("{}/", server.url));
    b.find("#q2").type_text("show my email inbox");
    b.find("form.search button[type=submit]").click();
    b.wait_until("the search results", |b| b.url().contains("/search?q=show+my+email+inbox"));
    let hit = b.find_text(".hit.pattern", "patterns/mail/inbox.tsx");
    let hit_text = hit.text();
    assert!(hit_text.contains("needs input db: Writable<MailDatabase>"), "the hit's fit: {hit_text}");
    assert!(hit_text.contains("why") && hit_text.contains("name: inbox"), "the hit's why: {hit_text}");
    b.find_text(".hit.pattern a.title", "patterns/mail/inbox.tsx").click();
    b.wait_until("the inbox page", |b| b.url().ends_with(&format!("/pattern/{inbox}")));
    assert_eq!(b.find("h1").text(), "patterns/mail/inbox.tsx");

    let db = b.find("#arg-fields tr#arg-db");
    assert_eq!(db.attr("class").as_deref(), Some("required"));
    assert!(db.text().contains("required") && db.text().contains("Writable<MailDatabase>"), "{}", db.text());
    let month = b.find("#arg-fields tr#arg-month");
    assert_eq!(month.attr("class").as_deref(), Some("optional"));
    assert!(month.text().contains("\"2026-11\""), "the default is shown: {}", month.text());

    // The toggle: TypeScript first, JSON Schema on a click.
    let ts = b.find("details.view[data-view=ts]");
    let schema = b.find("details.view[data-view=schema]");
    assert!(ts.displayed() && !schema.displayed(), "TypeScript shows first");
    assert!(ts.text().contains("db: Writable<MailDatabase>;"), "{}", ts.text());
    b.find(".toggle button[data-show=schema]").click();
    assert!(!ts.displayed() && schema.displayed(), "JSON Schema after the toggle");
    assert!(schema.text().contains("\"required\": [\n      \"db\"\n    ]"), "{}", schema.text());

    // A file at a line range: the export's link goes to #L32-L41 of the main file.
    b.find_text("#exports a", "InboxOutput").click();
    b.wait_until("the source viewer", |b| b.url().contains("/file/") && b.url().ends_with("#L32-L41"));
    let highlighted: Vec<String> = b.find_all("#source tr.hl").iter().filter_map(|r| r.attr("id")).collect();
    let expected: Vec<String> = (32..=41).map(|n| format!("L{n}")).collect();
    assert_eq!(highlighted, expected);
    assert!(b.find("#L32").text().contains("export interface InboxOutput {"), "{}", b.find("#L32").text());

    // `#Name` reads that definition.
    b.goto(&format!("{}/file/{inbox}/mail/types.ts#MessageHeader", server.url));
    b.wait_until("the definition", |b| b.url().contains("?symbol=MessageHeader"));
    let first = b.find("#source tr");
    assert!(first.text().contains("export interface MessageHeader"), "{}", first.text());
    assert!(b.find_all("#source tr").len() < 20, "the definition, not the whole file");

    // The same range read by the server: only those lines are on the page.
    b.goto(&format!("{}/file/{inbox}/mail/types.ts?lines=3-6", server.url));
    let rows: Vec<String> = b.find_all("#source tr").iter().filter_map(|r| r.attr("id")).collect();
    assert_eq!(rows, ["L3", "L4", "L5", "L6"]);
    assert!(b.find("#L4").text().contains("export interface MessageHeader"), "{}", b.find("#L4").text());
}

fn follow_a_dependency(b: &Browser, server: &Server) {
    b.goto(&format!("{}/pattern/{AGENDA}", server.url));
    assert!(b.find(".lead").text().contains("A month of agenda items"));
    let dep = b.find("#graph a.dep");
    assert_eq!(dep.attr("href").as_deref(), Some(format!("/pattern/{MONTH_PICKER}").as_str()));
    dep.click();
    b.wait_until("the dependency's page", |b| b.url().ends_with(&format!("/pattern/{MONTH_PICKER}")));
    assert!(b.find(".lead").text().contains("Step through months"), "{}", b.find(".lead").text());
    let users = b.find_text("#graph .cols div", "Used by").text();
    assert!(users.contains(AGENDA), "the month picker lists the agenda as a dependent: {users}");
}

fn a_section_then_its_parent(b: &Browser, server: &Server) {
    b.goto(&format!("{}/search?q=wish+result+shape&scope=docs", server.url));
    b.find_text(".hit.doc a.title", "Result Shape").click();
    b.wait_until("the section page", |b| {
        b.url().ends_with("/doc/docs/common/conventions/wish.md?section=result-shape")
    });
    let article = b.find("article.prose").text();
    assert!(article.contains(RESULT_SHAPE_TEXT), "{article}");
    assert!(b.find("article.prose table").text().contains("candidates"), "the Markdown table is rendered");
    let crumbs = b.find("nav.crumbs").text();
    assert!(crumbs.contains("Finding Other Pieces") && crumbs.ends_with("Result Shape"), "{crumbs}");
    b.find("a.parent").click();
    b.wait_until("the parent section", |b| b.url().ends_with("?section=finding-other-pieces"));
    assert_eq!(b.find("nav.crumbs a[aria-current]").text(), "Finding Other Pieces");
    assert!(!b.find("article.prose").text().contains(RESULT_SHAPE_TEXT), "the parent's own text only");
    let children = b.find("nav.related").text();
    assert!(children.contains("Result Shape"), "the parent lists its child: {children}");
}

fn keyboard_and_phone(b: &Browser, server: &Server) {
    b.goto(&format!("{}/search?q=inbox", server.url));
    // A reader clicks into the page before typing: the window then has the keyboard.
    b.find("main h1").click();
    b.wait_until("the page's script", |b| {
        b.script("return document.documentElement.classList.contains('js')", serde_json::json!([])) == true
    });
    b.press("/");
    let focused = b.script("return document.activeElement.id", serde_json::json!([]));
    assert_eq!(focused, "q2", "`/` focuses the search box");
    b.script("document.activeElement.blur()", serde_json::json!([]));
    b.press("j");
    b.press("j");
    let second = b.find_all(".hit a.title")[1].text();
    let focused = b.script("return document.activeElement.textContent", serde_json::json!([]));
    assert_eq!(focused.as_str(), Some(second.as_str()), "j moves to the next hit");

    b.resize(390, 844);
    for path in
        ["/search?q=inbox", &format!("/pattern/{AGENDA}"), "/doc/docs/common/conventions/wish.md?section=result-shape"]
    {
        b.goto(&format!("{}{path}", server.url));
        // Measured once layout has settled (two frames), up to 2 s.
        let mut fits = serde_json::Value::Bool(false);
        for _ in 0..20 {
            fits = b.script(
                "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => \
                 r(document.documentElement.scrollWidth <= window.innerWidth + 1))))",
                serde_json::json!([]),
            );
            if fits == true {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let wide = b.script(
            "var w = window.innerWidth; return [w, document.documentElement.scrollWidth, Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > w + 1).slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))]",
            serde_json::json!([]),
        );
        assert_eq!(fits, true, "{path} has no sideways scroll at phone width: {wide}");
    }
    b.resize(1280, 900);
}

#[test]
fn withheld_results_show_no_text_and_the_run_records_them() {
    let Some(b) = browser(1280, 900) else { return };
    let ws = Workspace::with_registry();
    ws.build();
    ws.deny_policy("docs");
    let run = fabdex_ledger::RunStore::new(ws.path("runs")).new_run(None).unwrap().run;
    let policy = ws.path("policy.toml");
    let server = serve(&ws, Some("s3cret"), &["--policy", policy.to_str().unwrap(), "--run", &run]);

    // Without the token a page asks for it; signing in returns to the page.
    b.goto(&format!("{}/search?q=wish+result+shape", server.url));
    assert!(b.find("h1").text().contains("Sign in"));
    assert!(!b.source().contains(RESULT_SHAPE_TEXT));
    b.find("#token").type_text("s3cret");
    b.find("form.login button").click();
    b.wait_until("the search after signing in", |b| b.find_all(".hit").len() > 1);
    assert!(b.url().ends_with("/search?q=wish+result+shape"), "{}", b.url());

    let withheld = b.find_all(".hit.doc .withheld");
    assert!(!withheld.is_empty(), "docs hits are withheld");
    let source = b.source();
    assert!(!source.contains(RESULT_SHAPE_TEXT) && !source.contains("Result Shape"), "no withheld text on the page");
    assert!(b.find(".hit.pattern").text().len() > 10, "pattern hits (another origin) are released");

    b.goto(&format!("{}/doc/docs/common/conventions/wish.md?section=result-shape", server.url));
    assert!(b.find("article .withheld").text().contains("Withheld"));
    assert!(!b.source().contains(RESULT_SHAPE_TEXT), "a withheld section shows no text");

    // Provenance: the footer counts what the run read; /run lists it.
    let footer = b.find("footer.prov").text();
    assert!(footer.contains(&run) && footer.contains("withheld from docs"), "{footer}");
    b.find("footer.prov a").click();
    b.wait_until("the run page", |b| b.url().ends_with("/run"));
    let records = b.find("ol.records").text();
    assert!(
        records.contains("withheld") && records.contains("doc:docs/common/conventions/wish.md#result-shape"),
        "{records}"
    );
    assert!(records.contains("released"), "pattern hits were released: {records}");
}

/// "Load more" splices the next window in place: a file longer than one
/// read window, and more search hits, without reloading the page.
#[test]
fn load_more_extends_the_page_in_place() {
    let Some(b) = browser(1280, 900) else { return };
    let ws = Workspace::with_corpus();
    let mut long = std::fs::read_to_string(ws.path("patterns/note.tsx")).unwrap();
    let lines_before = long.lines().count();
    for i in 0..1200 {
        long.push_str(&format!("// filler line {i:04} so that the file needs more than one read window\n"));
    }
    std::fs::write(ws.path("patterns/note.tsx"), &long).unwrap();
    let total = lines_before + 1200;
    ws.build();
    let note = ws.engine().inspect("patterns/note.tsx").unwrap().pattern_id;
    let server = serve(&ws, None, &[]);

    b.goto(&format!("{}/file/{note}/note.tsx", server.url));
    let first_window = b.find_all("#source tr").len();
    assert!(first_window > 10 && first_window < total, "one window of {total} lines: {first_window}");
    b.script("window.notReloaded = true", serde_json::json!([]));
    let mut clicks = 0;
    while let Some(more) = b.find_all("a.more[data-more-rows]").into_iter().next() {
        let rows = b.find_all("#source tr").len();
        more.click();
        b.wait_until("the next window", |b| b.find_all("#source tr").len() > rows);
        clicks += 1;
        assert!(clicks < 10, "the file ends");
    }
    assert!(clicks >= 2, "a file of three windows: {clicks} clicks");
    let ids: Vec<String> = b.find_all("#source tr").iter().filter_map(|r| r.attr("id")).collect();
    let expected: Vec<String> = (1..=total).map(|n| format!("L{n}")).collect();
    let misplaced = ids.iter().zip(&expected).find(|(got, want)| got != want);
    assert!(
        ids == expected,
        "every line once, in order: {} rows for {total} lines, first misplaced {misplaced:?}",
        ids.len()
    );
    let last = b.find(&format!("#L{total}")).text();
    assert!(last.contains("filler line 1199 so that"), "{last}");
    let joined = b.find(&format!("#L{first_window}")).text();
    assert!(joined.contains("filler line") && joined.ends_with("read window"), "the cut line is joined: {joined}");
    assert_eq!(b.script("return window.notReloaded === true", serde_json::json!([])), true, "no reload");

    b.goto(&format!("{}/search?q=pattern&scope=docs", server.url));
    assert_eq!(b.find_all(".hit").len(), 10);
    b.script("window.notReloaded = true", serde_json::json!([]));
    b.find("a.more[data-more]").click();
    b.wait_until("ten more hits", |b| b.find_all(".hit").len() == 20);
    assert!(b.url().ends_with("&limit=20"), "the address says what is shown: {}", b.url());
    assert_eq!(b.script("return window.notReloaded === true", serde_json::json!([])), true, "no reload");
}

/// One GET with extra header lines; status, head and body.
fn get(server: &Server, path: &str, headers: &str) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server.addr()).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_string(), body.to_string())
}

/// Without a browser: the token rules of pages, and index text as text.
#[test]
fn pages_need_the_token_and_show_index_text_as_text() {
    let ws = Workspace::with_corpus();
    std::fs::write(
        ws.path("docs/evil.md"),
        "# Evil <img src=x onerror=alert(1)>\n\nText <script>alert(\"x\")</script> and [click](javascript:alert(1)).\n",
    )
    .unwrap();
    ws.build();
    let server = serve(&ws, Some("s3cret"), &[]);

    let (status, head, body) = get(&server, "/doc/docs/evil.md", "");
    assert_eq!(status, 401, "{head}");
    assert!(body.contains("<form class=\"login\"") && !body.contains("Evil"), "a sign-in page, nothing else");
    let (status, _, _) = get(&server, "/doc/docs/evil.md?token=wrong", "");
    assert_eq!(status, 401);
    let (status, head, _) = get(&server, "/doc/docs/evil.md?token=s3cret", "");
    assert_eq!(status, 303, "{head}");
    assert!(head.contains("location: /doc/docs/evil.md\r\n"), "the token leaves the address: {head}");
    let cookie = head.lines().find_map(|l| l.strip_prefix("set-cookie: ")).expect("a cookie").to_string();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();

    let (status, head, body) = get(&server, "/doc/docs/evil.md", &format!("Cookie: {pair}\r\n"));
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-security-policy: default-src 'none'; script-src 'self'"), "{head}");
    assert!(body.contains("&lt;script&gt;</code>alert(&quot;x&quot;)"), "raw HTML shows as text: {body}");
    assert!(!body.contains("<script>alert") && !body.contains("<img") && !body.contains("href=\"javascript"), "{body}");
    let (status, _, body) = get(&server, "/search?q=evil", "Authorization: Bearer s3cret\r\n");
    assert_eq!(status, 200);
    assert!(body.contains("doc:docs/evil.md#evil") && !body.contains("<img") && !body.contains("<script>"), "{body}");
    let bearer = "Authorization: Bearer s3cret\r\n";
    let (status, _, body) = get(&server, "/pattern/patterns/mail/inbox.tsx", bearer);
    assert_eq!(status, 200, "an alias names a pattern");
    assert!(body.contains("<h1 class=\"pattern\">patterns/mail/inbox.tsx</h1>"), "{body}");
    let (status, _, body) = get(&server, "/pattern/nope", bearer);
    assert_eq!(status, 404);
    assert!(body.contains("class=\"error\"") && body.contains("not-found"), "{body}");
    let (status, _, _) = get(&server, "/search?q=evil", "Cookie: fabdex_token=wrong\r\n");
    assert_eq!(status, 401);
    let (status, head, body) = get(&server, "/assets/style.css", "");
    assert_eq!(status, 200, "assets need no token");
    assert!(head.contains("content-type: text/css") && body.contains(":focus-visible"), "{head}");
}

/// Refresh `docs/screenshots/` (run by `scripts/screenshots.sh`).
#[test]
#[ignore]
fn screenshots() {
    let Some(b) = browser(1280, 900) else { return };
    let ws = Workspace::with_registry();
    ws.build();
    let inbox = ws.engine().inspect("patterns/mail/inbox.tsx").unwrap().pattern_id;
    let server = serve(&ws, None, &[]);
    let out = common::project_root().join("docs/screenshots");
    std::fs::create_dir_all(&out).unwrap();
    let shots = [
        ("search.png", "/search?q=show+my+email+inbox".to_string(), 1280, 1000),
        ("pattern.png", format!("/pattern/{inbox}"), 1280, 1300),
        ("file.png", format!("/file/{inbox}/mail/inbox.tsx#L21-L29"), 1280, 900),
        ("section.png", "/doc/docs/common/conventions/wish.md?section=result-shape".to_string(), 1280, 1000),
        ("phone.png", format!("/pattern/{inbox}"), 390, 844),
    ];
    for (name, path, width, height) in shots {
        b.resize(width, height);
        b.goto(&format!("{}{path}", server.url));
        assert!(!b.find("main").text().is_empty(), "{path} has content");
        // A fresh window paints after the load event; wait for two frames and a moment.
        b.script(
            "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))",
            serde_json::json!([]),
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::write(out.join(name), b.screenshot()).unwrap();
        println!("wrote docs/screenshots/{name}");
    }
}
