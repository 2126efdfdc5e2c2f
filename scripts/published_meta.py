#!/usr/bin/env python3
"""Join registry metadata with exported program records into a published feed.

Usage: published_meta.py META.json EXPORT_DIR > registry.jsonl
EXPORT_DIR holds <source>.jsonl, one exported record per program folder.
"""
import base64
import hashlib
import json
import sys
from pathlib import Path

meta = json.loads(Path(sys.argv[1]).read_text())
export_dir = Path(sys.argv[2])
ids = {}
records = []
for m in meta["records"]:
    if "source" in m:
        rec = json.loads((export_dir / f"{m['source']}.jsonl").read_text().splitlines()[0])
        prog = rec["program"]
        prog["main"] = "/" + prog["main"].lstrip("/")
        for f in prog["files"]:
            f["name"] = "/" + f["name"].lstrip("/")
        ids[m["source"]] = rec["patternId"]
    else:
        digest = hashlib.sha256(("corpus-record " + m["name"]).encode()).digest()
        rec = {"patternId": base64.urlsafe_b64encode(digest).decode().rstrip("=")}
        ids[m["name"]] = rec["patternId"]
    for key in ("ownerDid", "createdAt", "description", "hashtags", "kind", "quality", "signals",
                "argumentSchema", "resultSchema"):
        if key in m:
            rec[key] = m[key]
    if "declaredResultSchema" in m:
        rec["resultSchema"] = m["declaredResultSchema"]
    records.append((m, rec))
for m, rec in records:
    deps = [ids[d[1:]] if d.startswith("@") else d for d in m.get("dependencies", [])]
    rec["dependencies"] = sorted(set(rec.get("dependencies", []) + deps))
    tamper = m.get("tamper")
    if tamper:
        for f in rec["program"]["files"]:
            if f["name"] == tamper["file"]:
                f["contents"] += tamper["append"]
    print(json.dumps(rec, sort_keys=True, ensure_ascii=False))
