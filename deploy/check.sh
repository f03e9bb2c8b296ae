#!/usr/bin/env bash
# Checks deploy/ with what a machine without a Docker engine or a Kubernetes cluster has:
#   - every YAML parses; structural checks of all four deployments (deploy/check.py);
#   - compose.yaml against the Compose specification's JSON schema;
#   - the Kubernetes manifests against the Kubernetes OpenAPI schemas (strict);
#   - the systemd unit with `systemd-analyze verify` and `security --offline`;
#   - the Dockerfile's build command (`cargo build --locked -p ...`, debug profile here);
#   - the image's runtime set-up, simulated with the built binaries: its environment
#     variables, its health-check script, SIGTERM; the ConfigMap's and the systemd example's
#     roomlink.toml read by the real binary.
# Exits non-zero when any check fails. Missing Python tools are installed with pip
# (DEPLOY_CHECK_NO_INSTALL=1 to refuse). SKIP_BUILD=1 uses the existing target/debug binaries.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
failed=()
step() { printf '\n== %s\n' "$*"; }
pass() { printf 'ok:   %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; failed+=("$*"); }
run() { # run DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/roomlink-deploy-check.XXXXXX")
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

step "tools"
ensure_python() { # ensure_python MODULE PIP-PACKAGE
  python3 -c "import $1" 2>/dev/null && return 0
  [ "${DEPLOY_CHECK_NO_INSTALL:-0}" = 1 ] && return 1
  python3 -m pip install --quiet --disable-pip-version-check "$2" >/dev/null 2>&1
  python3 -c "import $1" 2>/dev/null
}
run "python3 has PyYAML" ensure_python yaml pyyaml
run "kubernetes-validate (bundled Kubernetes schemas, offline)" ensure_python kubernetes_validate kubernetes-validate
run "check-jsonschema (bundled Compose schema, offline)" ensure_python check_jsonschema check-jsonschema
ensure_python dockerfile dockerfile || echo "note: no BuildKit Dockerfile parser; check.py falls back to its own"
command -v systemd-analyze >/dev/null || fail "systemd-analyze is installed (apt-get install systemd)"

step "YAML, structure (deploy/check.py)"
run "deploy/check.py" python3 deploy/check.py

step "compose.yaml against the Compose specification"
run "compose.yaml matches the compose-spec schema" \
  check-jsonschema --builtin-schema vendor.compose-spec deploy/compose.yaml

step "Kubernetes manifests against the Kubernetes schemas"
manifests=()
for f in deploy/k8s/*.yaml; do [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f"); done
for version in 1.29 1.33; do
  run "manifests valid (strict) for Kubernetes $version" \
    kubernetes-validate --quiet --strict -k "$version" "${manifests[@]}"
done
if command -v kubectl >/dev/null; then
  # What `kubectl apply -k` would send (namespace, labels and image applied), validated too.
  run "kubectl kustomize deploy/k8s renders" sh -c "kubectl kustomize deploy/k8s >'$WORK/rendered.yaml'"
  run "the rendered manifests are valid (strict) for Kubernetes 1.33" \
    kubernetes-validate --quiet --strict -k 1.33 "$WORK/rendered.yaml"
else
  echo "note: no kubectl here: kustomization.yaml checked by check.py only"
fi

step "Dockerfile build command"
# The image's binaries (the Dockerfile's list, in its order), and roomlinkctl once crates/cli exists.
bins=(--bin roomlink --bin roomlink-listener --bin roomlink-listener-sim --bin roomlink-device-emu)
[ -f crates/cli/Cargo.toml ] && bins+=(--bin roomlinkctl)
# The RUN line itself, under sh, with a stand-in cargo that records its arguments.
dry_run_build() {
  local dry=$WORK/dry-build
  mkdir -p "$dry/bin" "$dry/src/crates"
  [ -f crates/cli/Cargo.toml ] && mkdir -p "$dry/src/crates/cli" && touch "$dry/src/crates/cli/Cargo.toml"
  cat >"$dry/bin/cargo" <<'SHIM'
#!/bin/sh
echo "$*" >"$DRY/cargo-args"
mkdir -p target/dist
while [ $# -gt 0 ]; do [ "$1" = --bin ] && touch "target/dist/$2"; shift; done
SHIM
  chmod +x "$dry/bin/cargo"
  python3 - "$dry/run.sh" <<'PY' || return 1
import sys
try:
    import dockerfile
    runs = [c.value[0] for c in dockerfile.parse_file("deploy/Dockerfile") if c.cmd.upper() == "RUN"]
except ImportError:
    import re
    text = re.sub(r"\\\n", " ", open("deploy/Dockerfile").read())
    runs = [re.sub(r"^RUN (--\S+ )*", "", l) for l in text.splitlines() if l.startswith("RUN ")]
build = next(r for r in runs if "cargo build" in r)
open(sys.argv[1], "w").write(build.replace("/out", "$DRY/out"))
PY
  (cd "$dry/src" && DRY=$dry PATH="$dry/bin:$PATH" sh -e "$dry/run.sh" >/dev/null 2>&1) || return 1
  echo "  cargo $(cat "$dry/cargo-args")"
  echo "  /out: $(ls "$dry/out" | tr '\n' ' ')"
  [ "$(cat "$dry/cargo-args")" = "build --profile dist --locked --workspace ${bins[*]}" ] &&
    for b in "${bins[@]}"; do [ "$b" = --bin ] || [ -f "$dry/out/$b" ] || return 1; done
}
run "the Dockerfile's build RUN line (sh, stand-in cargo) builds and copies ${bins[*]}" dry_run_build
run "Cargo.lock is up to date (cargo metadata --locked)" \
  sh -c 'cargo metadata --locked --format-version 1 >/dev/null'
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  # The image builds the same binaries with the dist profile; the debug profile saves time here.
  run "cargo build --locked --workspace ${bins[*]} (debug profile)" \
    cargo build --locked --workspace "${bins[@]}"
fi
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug
for exe in roomlink roomlink-listener-sim; do
  [ -x "$BIN/$exe" ] || fail "$BIN/$exe exists (build it, or unset SKIP_BUILD)"
done

step "systemd unit"
# verify insists that ExecStart's binary exists: check a copy that names the built one.
sed "s|/usr/local/bin/roomlink|$BIN/roomlink|g" deploy/systemd/roomlink.service >"$WORK/roomlink.service"
run "systemd-analyze verify roomlink.service" \
  sh -c "systemd-analyze verify '$WORK/roomlink.service' 2>&1 | tee '$WORK/verify.log'; ! grep -q . '$WORK/verify.log'"
run "systemd-analyze security: exposure at most 2.0" \
  sh -c "systemd-analyze security --offline=yes --threshold=20 '$WORK/roomlink.service' >/dev/null"

step "runtime set-up (the image's environment, simulated with the built binaries)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for PROBE-ARGS...: http-probe until it answers 200, for 30 s at most.
wait_for() {
  for _ in $(seq 150); do deploy/docker/http-probe "$@" 2>/dev/null && return 0; sleep 0.2; done
  return 1
}
# stop PID: SIGTERM, then it must exit 0 within 35 s.
stop() {
  kill -TERM "$1" 2>/dev/null || return 1
  for _ in $(seq 350); do
    if ! kill -0 "$1" 2>/dev/null; then wait "$1"; return $?; fi
    sleep 0.1
  done
  return 1
}
if [ -x "$BIN/roomlink" ] && [ -x "$BIN/roomlink-listener-sim" ]; then
  port=$(free_port)
  mkdir -p "$WORK/volume" "$WORK/etc"
  (
    cd "$WORK/etc" &&
      # shellcheck disable=SC2046 # one `-u NAME` pair per ROOMLINK__ variable of the caller
      exec env -u RUST_LOG $(env | sed -n 's/^\(ROOMLINK__[^=]*\)=.*/-u \1/p') \
        ROOMLINK__SERVER__BIND="0.0.0.0:$port" \
        ROOMLINK__DATABASE__URL="sqlite://$WORK/volume/roomlink.db" \
        ROOMLINK__LOG__FORMAT=json \
        "$BIN/roomlink" serve
  ) >"$WORK/serve.log" 2>&1 &
  serve_pid=$!
  PIDS+=("$serve_pid")
  run "roomlink serve with the image's environment answers http-probe (/readyz)" \
    wait_for "$port" /readyz
  run "http-probe reads the port from ROOMLINK__SERVER__BIND" \
    env ROOMLINK__SERVER__BIND="0.0.0.0:$port" deploy/docker/http-probe
  run "http-probe $port /healthz" deploy/docker/http-probe "$port" /healthz
  run "http-probe fails on a 404" sh -c "! deploy/docker/http-probe $port /no-such-path 2>/dev/null"
  run "the sealing key is created in the volume, mode 0600" \
    sh -c "[ \"\$(stat -c %a '$WORK/volume/roomlink.key')\" = 600 ]"
  run "roomlink stops cleanly (exit 0) on SIGTERM" stop "$serve_pid"
  run "roomlink logged JSON lines" sh -c "grep -q '\"roomlink is listening\"' '$WORK/serve.log'"

  sim_port=$(free_port)
  "$BIN/roomlink-listener-sim" --bind "0.0.0.0:$sim_port" >"$WORK/sim.log" 2>&1 &
  sim_pid=$!
  PIDS+=("$sim_pid")
  run "the listener simulator answers http-probe $sim_port /sim/stats" wait_for "$sim_port" /sim/stats
  run "the listener simulator stops on SIGTERM" stop "$sim_pid"

  # The configuration files as the real binary reads them (migrate: the database part).
  python3 - "$WORK/configmap.toml" <<'PY'
import sys, yaml
cm = yaml.safe_load(open("deploy/k8s/configmap.yaml"))
open(sys.argv[1], "w").write(cm["data"]["roomlink.toml"])
PY
  run "the ConfigMap's roomlink.toml is accepted by roomlink" \
    env ROOMLINK__DATABASE__URL="sqlite://$WORK/cm.db" "$BIN/roomlink" --config "$WORK/configmap.toml" migrate
  run "the systemd example roomlink.toml is accepted by roomlink" \
    env ROOMLINK__DATABASE__URL="sqlite://$WORK/sd.db" "$BIN/roomlink" --config deploy/systemd/roomlink.toml migrate
  # With PostgreSQL at hand (as in CI): compose's roomlink environment (PostgreSQL, the key
  # from a file) on a scratch database: the migrate step, then serve until /readyz and SIGTERM.
  if [ -n "${ROOMLINK_TEST_DATABASE_URL:-}" ] && command -v psql >/dev/null &&
    psql "$ROOMLINK_TEST_DATABASE_URL" -qtAc 'SELECT 1' >/dev/null 2>&1; then
    db="roomlink_deploy_check_$$"
    pg_url="${ROOMLINK_TEST_DATABASE_URL%/*}/$db"
    psql "$ROOMLINK_TEST_DATABASE_URL" -qc "CREATE DATABASE $db" >/dev/null
    head -c32 /dev/urandom | base64 >"$WORK/service_key"
    pg_env=(ROOMLINK__DATABASE__URL="$pg_url" ROOMLINK__SECURITY__SERVICE_KEY_FILE="$WORK/service_key"
      ROOMLINK__LOG__FORMAT=json ROOMLINK__SERVER__BIND="0.0.0.0:$port")
    run "compose's migrate step: roomlink migrate on PostgreSQL" env "${pg_env[@]}" "$BIN/roomlink" migrate
    (cd "$WORK/etc" && exec env "${pg_env[@]}" "$BIN/roomlink" serve) >"$WORK/serve-pg.log" 2>&1 &
    pg_pid=$!
    PIDS+=("$pg_pid")
    run "compose's roomlink service on PostgreSQL answers http-probe (/readyz)" wait_for "$port" /readyz
    run "... and stops cleanly on SIGTERM" stop "$pg_pid"
    run "without a service key, PostgreSQL is refused" \
      sh -c "! env ROOMLINK__DATABASE__URL='$pg_url' '$BIN/roomlink' serve >/dev/null 2>&1"
    psql "$ROOMLINK_TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
  else
    echo "note: no PostgreSQL (ROOMLINK_TEST_DATABASE_URL): compose's database set-up not run"
  fi
fi

step "not exercised here"
echo "docker build / docker compose up (no Docker engine), kubectl apply (no cluster),"
echo "systemctl start (systemd is not PID 1): see deploy/README.md"

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "deploy/check.sh: all checks passed"
else
  echo "deploy/check.sh: ${#failed[@]} check(s) failed:"
  printf '  - %s\n' "${failed[@]}"
  exit 1
fi
