#!/usr/bin/env bash
# The Python environments the tests use, in target/ (idempotent: each is checked first, and
# installed or repaired only when something is missing):
#
#   target/py-test-venv      jsonschema (the survey schema check), pandas and statsmodels (the
#                            analyst view's exported Python script, run by the web tests),
#                            openpyxl (writes the XLSForms orthomask-xlsform's tests import);
#                            frictionless (a release's data package, scripts/check_datapackage.py);
#   target/py-contract-venv  schemathesis and openapi-spec-validator at pinned versions (the
#                            HTTP contract test: a new tester release may add checks, so an
#                            upgrade is made on purpose), and http-message-signatures with
#                            cryptography, the RFC 9421 implementation that signs the tester's
#                            peer requests (scripts/contract_hooks.py), pinned likewise.
#
# Mostly network: scripts/test.sh runs it while cargo compiles (issue 28).
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
log() { printf '\033[1;34m[setup-python]\033[0m %s\n' "$*"; }

# A venv with `pins` (name==version) installed: created when missing, rebuilt when it was moved
# from another path (its entry points would name the old one), installed into when a pin is not met.
venv_with() {
    local venv=$1
    shift
    if [ -x "$venv/bin/python" ] && ! head -n1 "$venv/bin/pip" | grep -qF "$venv/bin/python"; then
        rm -rf "$venv"
    fi
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if ! "$venv/bin/python" - "$@" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
def met(pin):
    name, _, wanted = pin.partition("==")
    try:
        installed = version(name)
    except PackageNotFoundError:
        return False
    return wanted in ("", installed)
sys.exit(0 if all(met(p) for p in sys.argv[1:]) else 1)
PY
    then
        log "pip install into $venv: $*"
        "$venv/bin/pip" install -q "$@"
    fi
}

venv_with "$target_dir/py-test-venv" jsonschema pandas statsmodels pyyaml openpyxl frictionless
venv_with "$target_dir/py-contract-venv" schemathesis==4.32.5 openapi-spec-validator==0.9.0 hypothesis==6.170.15 \
    http-message-signatures==3.0.0 cryptography==50.0.2
log "ready"
