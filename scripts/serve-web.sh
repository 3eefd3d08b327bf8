#!/usr/bin/env bash
# Build the web app (release) and serve it on http://127.0.0.1:${PORT:-8080}/ until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PWD/target/web-tools/bin:$PWD/target/web-tools/node_modules/.bin:$PATH"
bash scripts/build-web.sh
port=${PORT:-8080}
echo "Orthomask is at http://127.0.0.1:$port/  (classroom: http://127.0.0.1:$port/#/classroom)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory dist
