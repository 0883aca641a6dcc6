#!/usr/bin/env bash
# soak.sh: synaxi-proxyd under load on loopback (e2e/cmd/synaxi-soak):
# SOAK_SESSIONS concurrent synthetic sessions (default 64) for SOAK_DURATION
# (default 10m) against the fake upstream, beside a direct baseline group in
# the same run. Bounded: it stops by itself, on loopback only. A broken
# request or a proxy that does not exit 0 on SIGTERM fails the section.
set -euo pipefail

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd proxyd && go build -trimpath -o "$tmp/synaxi-proxyd" ./cmd/synaxi-proxyd)
(cd e2e && go build -o "$tmp/soak" ./cmd/synaxi-soak)
duration=${SOAK_DURATION:-10m}
sessions=${SOAK_SESSIONS:-64}
direct=${SOAK_DIRECT:-16}

echo "## Proxy: load and soak"
echo
"$tmp/soak" -proxyd "$tmp/synaxi-proxyd" -duration "$duration" -sessions "$sessions" -direct "$direct"
echo
echo "Measured by \`scripts/bench.d/soak.sh\` (\`e2e/cmd/synaxi-soak\`; \`SOAK_DURATION\`, \`SOAK_SESSIONS\`,"
echo "\`SOAK_DIRECT\` set the run). Each session is a conversation that grows by a 1.5 KB user turn per"
echo "request (24 requests, then a new conversation), streamed, with a pause of 0.5–1.5 s between"
echo "requests; half carry the synaxi-worker marker and are gated (projected, probed, written to the"
echo "ledger). The fake upstream runs in the soak process. The direct sessions send the same requests"
echo "straight to it at the same time, so both paths see the same machine load; \"p99 added\" is the"
echo "proxy path's p99 time to first byte minus the direct path's. On a shared machine the p99s"
echo "carry the load of everything else running; the load average is at the top of this file."
