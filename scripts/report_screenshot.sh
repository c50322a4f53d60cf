#!/usr/bin/env bash
# Renders a bench report (report.html) to PNG in headless Chromium and checks the PNG's size:
#   scripts/report_screenshot.sh DIR/report.html [OUT.png]   (WINDOW=1400,8000 for the whole page)
# Needs Debian's `chromium` (apt-get install chromium). The report is self-contained, so
# Chromium is started with networking features off; a blank or truncated render gives a small
# PNG, which fails the check. The test suite does not need this script
# (tests/report_html_self_contained.rs checks the HTML itself).
set -euo pipefail
report="${1:?usage: $0 DIR/report.html [OUT.png]}"
out="${2:-${report%.html}.png}"
min_bytes="${MIN_BYTES:-100000}"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$browser" ]]; then
    echo "chromium not found (apt-get install chromium)" >&2
    exit 2
fi
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
rm -f "$out"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$out" --window-size="${WINDOW:-1400,4000}" \
    "file://$(realpath "$report")" >/dev/null 2>&1 || true
if [[ ! -s "$out" ]]; then
    echo "no screenshot written to $out" >&2
    exit 1
fi
bytes="$(stat -c %s "$out")"
if (( bytes < min_bytes )); then
    echo "screenshot $out is only $bytes bytes (< $min_bytes): blank or broken render?" >&2
    exit 1
fi
echo "wrote $out ($bytes bytes)"
