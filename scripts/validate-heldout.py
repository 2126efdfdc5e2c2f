#!/usr/bin/env python3
"""Check the frozen held-out evaluation sets in tests/data/heldout/.

Usage: validate-heldout.py [LABS_DIR [PATTERNS_DIR]]

LABS_DIR defaults to ../shared/labs beside the project root; PATTERNS_DIR to
$FABDEX_LABS_PATTERNS, else ../labs-checkout/packages/patterns (the folders
the benches and tests/labs*.rs read). Either may be absent: its checks are
skipped with a message, and the checks that need neither folder still run.

What is checked:
  - each file is a JSON array of the shape the loaders read (`q`/`expect` with
    path, heading, heading_text, anchor, line, level; `task`/`expect` with
    paths), with a `source` naming a commit or an issue;
  - each half holds at least 36 items, no text repeats, no item repeats a
    dev-set question or a tests/data/labs-pattern-tasks.json task, and no
    first expected path leads more than 3 items of one set;
  - the split rule: the two halves together, sorted by the SHA-256 hex of the
    question (task) text, alternate tune, test, tune, test, ...;
  - with LABS_DIR: every expected docs file exists and has the heading at the
    stated line, level, raw text and rendered text, under the stated
    GitHub-style anchor (duplicates numbered -1, -2, ... as fabdex does);
  - with PATTERNS_DIR: every expected pattern file exists.

Exit status 0 when everything checked passed, 1 otherwise. Standard library only.
"""
import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "heldout"
MIN_HALF = 36
MAX_SAME_FIRST = 3
SOURCE = re.compile(r"^(?:[0-9a-f]{7,40}|issue #\d+)$")

failures = []


def fail(msg):
    failures.append(msg)


# ---- Markdown headings, as fabdex's parser (pulldown-cmark) sees them -------


def render(raw, refs=frozenset()):
    """The rendered text of an ATX heading's raw text: code spans and
    backslash escapes literal, links reduced to their text, emphasis,
    strikethrough and inline HTML tags dropped."""
    keep = []

    def stash(x):
        keep.append(x)
        return "\x00%d\x00" % (len(keep) - 1)

    t = re.sub(r"`([^`]*)`", lambda m: stash(m.group(1)), raw)
    t = re.sub(r"\\([!-/:-@\[-`{-~])", lambda m: stash(m.group(1)), t)
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(
        r"\[([^\]]*)\]\[([^\]]*)\]",
        lambda m: m.group(1) if (m.group(2) or m.group(1)).lower() in refs else m.group(0),
        t,
    )
    t = re.sub(r"\[([^\]]+)\]", lambda m: m.group(1) if m.group(1).lower() in refs else m.group(0), t)
    t = re.sub(r"(\*\*|__)(.+?)\1", r"\2", t)
    t = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", t)
    t = re.sub(r"~~(.+?)~~", r"\1", t)
    t = re.sub(r"</?[A-Za-z][A-Za-z0-9-]*(\s[^>]*)?/?>", "", t)
    t = re.sub("\x00(\\d+)\x00", lambda m: keep[int(m.group(1))], t)
    return t.strip()


def github_anchor(text):
    """github-slugger: lowercase; keep letters, numbers, `-`, `_`; space -> `-`."""
    out = []
    for c in text.lower():
        if c == " ":
            out.append("-")
        elif c in "-_" or c.isalnum():
            out.append(c)
    return "".join(out)


def headings(path):
    """{line: heading} for every ATX heading outside fenced code (and front
    matter), headings inside block quotes included."""
    lines = path.read_text(encoding="utf-8").split("\n")
    refs = frozenset(
        m.group(1).lower() for line in lines for m in [re.match(r"^ {0,3}\[([^\]]+)\]:\s*\S", line)] if m
    )
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
    found, used, fence = {}, {}, None
    for i in range(start, len(lines)):
        line = re.sub(r"^( {0,3}> ?)+", "", lines[i])
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if m:
            f = m.group(1)
            if fence is None:
                fence = f
            elif f[0] == fence[0] and len(f) >= len(fence) and line.strip() == f:
                fence = None
            continue
        if fence:
            continue
        m = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*(\s#+\s*)?$", line)
        if not m:
            continue
        raw = m.group(2).strip()
        text = render(raw, refs)
        base = github_anchor(text)
        if base in used:
            used[base] += 1
            anchor = f"{base}-{used[base]}"
        else:
            used[base] = 0
            anchor = base
        found[i + 1] = {"level": len(m.group(1)), "heading": raw, "heading_text": text, "anchor": anchor}
    return found


# ---- the checks ---------------------------------------------------------------


def load(name):
    path = DATA / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        fail(f"{name}: cannot read: {e}")
        return []
    if not isinstance(data, list):
        fail(f"{name}: not a JSON array")
        return []
    return data


def check_shape(name, items, key):
    for n, item in enumerate(items):
        where = f"{name}[{n}]"
        if not isinstance(item, dict):
            fail(f"{where}: not an object")
            continue
        if not isinstance(item.get(key), str) or not item[key].strip():
            fail(f"{where}: `{key}` missing or empty")
        if not isinstance(item.get("source"), str) or not SOURCE.match(item["source"]):
            fail(f"{where}: `source` should be a commit sha or 'issue #N', got {item.get('source')!r}")
        expect = item.get("expect")
        if not isinstance(expect, list) or not expect:
            fail(f"{where}: `expect` missing or empty")
            continue
        if key == "q":
            if len(expect) > 3:
                fail(f"{where}: more than 3 expected sections")
            for e in expect:
                fields = {"path": str, "heading": str, "heading_text": str, "anchor": str, "line": int, "level": int}
                if not isinstance(e, dict) or any(not isinstance(e.get(k), t) for k, t in fields.items()):
                    fail(f"{where}: expected section lacks one of {sorted(fields)}: {e!r}")
        elif any(not isinstance(e, str) or not e.endswith((".tsx", ".ts")) for e in expect):
            fail(f"{where}: `expect` must be pattern paths ending .tsx/.ts: {expect!r}")


def first_path(item, key):
    e = item.get("expect") or [None]
    return e[0].get("path") if key == "q" and isinstance(e[0], dict) else e[0]


def check_set(label, tune_name, test_name, key, exclude):
    tune, test = load(tune_name), load(test_name)
    check_shape(tune_name, tune, key)
    check_shape(test_name, test, key)
    for name, half in ((tune_name, tune), (test_name, test)):
        if len(half) < MIN_HALF:
            fail(f"{name}: {len(half)} items, fewer than {MIN_HALF}")
    texts = [i.get(key) for i in tune + test if isinstance(i, dict)]
    for text, count in Counter(texts).items():
        if count > 1:
            fail(f"{label}: repeated {key!r}: {text!r}")
    for text in set(texts) & exclude:
        fail(f"{label}: reuses a dev/tuning item: {text!r}")
    for path, count in Counter(first_path(i, key) for i in tune + test if isinstance(i, dict)).items():
        if count > MAX_SAME_FIRST:
            fail(f"{label}: {count} items lead with {path} (at most {MAX_SAME_FIRST})")
    # The split rule: sorted by sha256 of the text, even positions tune, odd test.
    digest = lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest()
    ordered = sorted((t for t in texts if isinstance(t, str)), key=digest)
    want_tune, want_test = ordered[0::2], ordered[1::2]
    if [i.get(key) for i in tune] != want_tune or [i.get(key) for i in test] != want_test:
        fail(f"{label}: the halves do not follow the sha256 alternation rule (tune, test, tune, ...)")
    print(f"{label}: {len(tune)} tune + {len(test)} test; shape and split rule checked")
    return tune + test


def check_docs_against(labs, items):
    cache, checked = {}, 0
    for item in items:
        for e in item.get("expect", []):
            if not isinstance(e, dict):
                continue
            path = labs / e.get("path", "")
            if not path.is_file():
                fail(f"docs: {e.get('path')} does not exist under {labs}")
                continue
            if path not in cache:
                cache[path] = headings(path)
            h = cache[path].get(e.get("line"))
            checked += 1
            if h is None:
                fail(f"docs: no heading at {e['path']}:{e['line']} (expected {e.get('heading')!r})")
                continue
            for k in ("level", "heading", "heading_text", "anchor"):
                if h[k] != e.get(k):
                    fail(f"docs: {e['path']}:{e['line']} {k} is {h[k]!r}, the set says {e.get(k)!r}")
    print(f"docs: {checked} expected sections checked against {labs}")


def check_patterns_against(patterns, items):
    checked = 0
    for item in items:
        for e in item.get("expect", []):
            if isinstance(e, str):
                checked += 1
                if not (patterns / e).is_file():
                    fail(f"patterns: {e} does not exist under {patterns}")
    print(f"patterns: {checked} expected files checked against {patterns}")


def main(argv):
    if any(a in ("-h", "--help") for a in argv) or len(argv) > 2:
        print(__doc__.strip())
        return 0 if len(argv) <= 2 else 2
    labs = Path(argv[0]) if len(argv) > 0 else ROOT.parent / "shared" / "labs"
    env = os.environ.get("FABDEX_LABS_PATTERNS")
    patterns = (
        Path(argv[1]) if len(argv) > 1 else Path(env) if env else ROOT.parent / "labs-checkout" / "packages" / "patterns"
    )

    dev_questions, old_tasks = set(), set()
    dev = ROOT.parent / "shared" / "eval" / "docs-qrels.dev.json"
    if dev.is_file():
        dev_questions = {q.get("q") for q in json.loads(dev.read_text(encoding="utf-8"))}
    else:
        print(f"note: {dev} absent; not checking overlap with the dev questions")
    old = ROOT / "tests" / "data" / "labs-pattern-tasks.json"
    if old.is_file():
        old_tasks = {t.get("task") for t in json.loads(old.read_text(encoding="utf-8"))}

    docs = check_set("docs-qrels", "docs-qrels.tune.json", "docs-qrels.test.json", "q", dev_questions)
    tasks = check_set("pattern-tasks", "pattern-tasks.tune.json", "pattern-tasks.test.json", "task", old_tasks)

    if labs.is_dir():
        check_docs_against(labs, docs)
    else:
        print(f"skipping docs heading checks: {labs} is not a folder (pass LABS_DIR)")
    if patterns.is_dir():
        check_patterns_against(patterns, tasks)
    else:
        print(f"skipping pattern file checks: {patterns} is not a folder (pass PATTERNS_DIR or set FABDEX_LABS_PATTERNS)")

    for msg in failures:
        print(f"FAIL {msg}", file=sys.stderr)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
