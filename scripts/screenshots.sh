#!/usr/bin/env bash
# Refresh the web UI's screenshots in docs/screenshots/ (search, pattern,
# file view, section, and the pattern page at phone width). The ignored test
# `screenshots` in tests/web_ui.rs indexes corpus/ into a temporary folder,
# starts `fabdex serve --http`, and drives headless Chromium through
# chromedriver (Debian: apt-get install chromium chromium-driver).
set -euo pipefail
cd "$(dirname "$0")/.."
FABDEX_REQUIRE_BROWSER=1 cargo test --locked --test web_ui -- --ignored --exact screenshots --nocapture
ls -l docs/screenshots/
