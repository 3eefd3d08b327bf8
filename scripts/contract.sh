#!/usr/bin/env bash
# The HTTP contract is part of the tests (issue 14 part 1):
#
#   1. docs/openapi.yaml must validate (openapi-spec-validator, OpenAPI 3.1);
#   2. a property-based contract tester (schemathesis) runs against a real `orthomask serve all`
#      on loopback, once per service (the collector, the provider, right-masking service 0),
#      each run limited to the operations tagged with that service, with every check on: no 5xx,
#      no status code or content type the contract does not list, no answer that breaks its
#      schema, no schema-valid request refused, no schema-invalid request accepted, 401 without
#      the admin token or a peer's signature, 405 for methods a path does not serve.
#
# Before the tester runs, the administrator creates the survey the contract's examples name
# (`health`, basic protocol by invitation) and a share-mode survey (`health-shares`), so the
# examples reach real surveys and cohorts, not only 404s. scripts/contract_hooks.py (a
# schemathesis hook module) gives each operation the credentials its `security` names: the admin
# token, or for peer requests (`/api/peer/`) RFC 9421 signatures made with
# http-message-signatures, an implementation independent of the services' own, by the identity
# the contract's role table names for each endpoint (the collector registers and opens, the
# provider hands over `…/result` and `…/left-masked`, right-masking service i sends
# `…/shares/{i}`, `…/parts/{i}` and `…/hand-on/{i}`), with the seeds `serve all` left in the data
# directory, addressed to the service under test; a request it signed that a service refuses as
# unauthenticated (401) fails the run.
#
# The run is bounded and reproducible: fixed seeds and a fixed number of examples per operation
# (SEEDS and EXAMPLES override them). Two seeds by default (issue 26 §2): a seed explores one
# corner of each schema, and a failure one seed never reaches is still a failure. Exits non-zero
# on any failure.
#
#   bash scripts/contract.sh                       # everything
#   EXAMPLES=200 SEEDS=7 bash scripts/contract.sh  # a longer run with another seed
#   KEEP=DIR bash scripts/contract.sh             # keep the services' data and the reports in DIR
#   ORTHOMASK_BIN=path bash scripts/contract.sh   # test that binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log() { printf '\033[1;32m[contract]\033[0m %s\n' "$*"; }

seeds=${SEEDS:-${SEED:-20261124 1}}
examples=${EXAMPLES:-25}
target_dir=${CARGO_TARGET_DIR:-$root/target}

# The tester at its pinned versions (scripts/setup-python.sh; quick when already installed).
bash scripts/setup-python.sh
venv=$target_dir/py-contract-venv

log "docs/openapi.yaml validates (openapi-spec-validator)"
"$venv/bin/openapi-spec-validator" docs/openapi.yaml

if [ -n "${ORTHOMASK_BIN:-}" ]; then
    bin=$ORTHOMASK_BIN
else
    log "cargo build --release --bin orthomask"
    cargo build --release --locked --bin orthomask
    bin=$target_dir/release/orthomask
fi

work=${KEEP:-}
if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/orthomask-contract.XXXXXX")
    trap 'stop; rm -rf "$work"' EXIT
else
    rm -rf "$work"
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
    trap 'stop' EXIT
fi
pid=
stop() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        wait "$pid" || true
    fi
    pid=
}

log "orthomask serve all on free loopback ports ($work)"
# Rate limits high enough that the tester is never throttled (429 is in the contract anyway).
"$bin" serve all --data-dir "$work/data" --port 0 --no-web \
    --rate-per-second 100000 --rate-burst 100000 >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    [ -s "$work/data/services.json" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; echo "contract: the services did not start" >&2; exit 1; }
    sleep 0.1
done
[ -s "$work/data/services.json" ] || { echo "contract: no services.json after 30 s" >&2; exit 1; }
url() { "$venv/bin/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, d))' "$work/data/services.json" "$1"; }
collector=$(url collector)
msp=$(url msp)
right0=$(url 'rights[0]')
admin_token=$(cat "$work/data/admin-token")

log "the surveys the examples name: health (basic, invitations), health-shares (share mode)"
create() {
    curl -sS --fail-with-body -X POST "$collector/api/admin/surveys" \
        -H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' -d "$1" >/dev/null
}
questions='[{"id": "smoker", "label": "Do you smoke?", "kind": "yes_no"},
            {"id": "age", "label": "Age", "kind": "integer", "min": 18, "max": 90}]'
create '{"id": "health", "title": "Health", "consent": "Masked on this device.",
         "questions": '"$questions"', "cohort_size": 10, "share_mode": false, "invitations": true}'
create '{"id": "health-shares", "title": "Health", "consent": "Masked on this device.",
         "questions": '"$questions"', "cohort_size": 10, "share_mode": true}'
curl -sS --fail-with-body -X POST "$collector/api/admin/surveys/health/invitations" \
    -H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' -d '{"count": 3}' >/dev/null

# The admin token reaches the tester's hooks through the environment, never the command line; so
# do the data directory they read the identity seeds from, and the hook module itself.
export ORTHOMASK_CONTRACT_ADMIN=$admin_token ORTHOMASK_CONTRACT_DATA=$work/data
export SCHEMATHESIS_HOOKS=$root/scripts/contract_hooks.py
# Loading the hook module leaves no scripts/__pycache__/ in the work tree.
export PYTHONDONTWRITEBYTECODE=1
config=$root/scripts/contract.toml

failed=0
for seed in $seeds; do
    for service in collector provider right; do
        # `to`: the name peer requests address the service by (`orthomask-to`).
        case $service in
            collector) base=$collector to=collector ;;
            provider) base=$msp to=provider ;;
            right) base=$right0 to=right-0 ;;
        esac
        log "schemathesis: the $service ($base), seed $seed, $examples examples per operation"
        # Run from the work directory: schemathesis keeps its cache (.schemathesis/) there.
        if ! (cd "$work" && ORTHOMASK_CONTRACT_TO=$to "$venv/bin/schemathesis" --config-file "$config" run "$root/docs/openapi.yaml" \
            --url "$base" --include-tag "$service" \
            --checks all --mode all --seed "$seed" --max-examples "$examples" \
            --no-shrink --workers 1 --request-timeout 20 \
            --report junit --report-dir "$work/reports/$seed/$service" --no-color); then
            failed=1
        fi
    done
done
stop
if [ "$failed" -ne 0 ]; then
    echo "contract: the services and docs/openapi.yaml disagree (see above)" >&2
    exit 1
fi
log "the contract and the services agree"
