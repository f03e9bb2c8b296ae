"""Structural checks of deploy/ that need no Docker engine and no cluster (run by check.sh).

Each check prints `ok: ...` or `FAIL: ...`; the exit status is the number of failures (max 1).
Usage: python3 deploy/check.py   (from anywhere; needs PyYAML, and uses the `dockerfile`
package for the Dockerfile when it is installed).
"""

import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib

import yaml

DEPLOY = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DEPLOY)
failures = []


def check(condition, what):
    print(("ok:   " if condition else "FAIL: ") + what)
    if not condition:
        failures.append(what)
    return condition


def load_yaml(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def every_yaml():
    for base, _dirs, files in os.walk(DEPLOY):
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")):
                yield os.path.join(base, name)


def rel(path):
    return os.path.relpath(path, ROOT)


# ---- every YAML file parses ----
documents = {}
for path in every_yaml():
    try:
        documents[path] = load_yaml(path)
        check(bool(documents[path]), f"{rel(path)} parses ({len(documents[path])} document(s))")
    except yaml.YAMLError as e:
        check(False, f"{rel(path)} parses: {e}")

# ---- rust toolchain and workspace ----
with open(os.path.join(ROOT, "rust-toolchain.toml"), "rb") as f:
    toolchain = tomllib.load(f)["toolchain"]["channel"]
metadata = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--locked", "--no-deps", "--format-version", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
)
binaries = {
    t["name"]: p["name"]
    for p in metadata["packages"]
    for t in p["targets"]
    if "bin" in t["kind"]
}

# ---- Dockerfile ----
dockerfile_path = os.path.join(DEPLOY, "Dockerfile")
try:
    import dockerfile  # the official (BuildKit) parser, through Go bindings

    instructions = [(c.cmd.upper(), list(c.flags), list(c.value)) for c in dockerfile.parse_file(dockerfile_path)]
    check(True, "deploy/Dockerfile parses with the BuildKit parser")
except ImportError:
    # Fallback: join continuation lines, split instruction and arguments.
    instructions = []
    with open(dockerfile_path, encoding="utf-8") as f:
        text = re.sub(r"\\\n", " ", f.read())
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            cmd, _, rest = line.partition(" ")
            flags = re.findall(r"--\S+", rest) if cmd.upper() in ("RUN", "COPY", "HEALTHCHECK") else []
            instructions.append((cmd.upper(), flags, rest.split()))
    print("note: the `dockerfile` package is not installed; checked with a simple parser")

stages = [v for c, _f, v in instructions if c == "FROM"]
check(len(stages) == 2, "Dockerfile: two stages (builder, runtime)")
args = {v[0].split("=")[0]: v[0].partition("=")[2] for c, _f, v in instructions if c == "ARG" and "=" in v[0]}
check(args.get("RUST_VERSION") == toolchain,
      f"Dockerfile: RUST_VERSION {args.get('RUST_VERSION')} = rust-toolchain.toml {toolchain}")
check(stages and stages[0][0].startswith("rust:${RUST_VERSION}"), "Dockerfile: builder is the official rust image of that version")
runtime = max((i for i, (c, _f, _v) in enumerate(instructions) if c == "FROM"), default=None)
final = instructions[runtime:] if runtime is not None else []
users = [v[0] for c, _f, v in final if c == "USER"]
check(bool(users) and users[-1].split(":")[0].isdigit() and users[-1].split(":")[0] != "0",
      f"Dockerfile: the runtime stage runs as a numeric non-root user ({users[-1] if users else 'none'})")
check(any(c == "EXPOSE" and "8080" in v for c, _f, v in final), "Dockerfile: EXPOSE 8080")
check(any(c == "HEALTHCHECK" for c, _f, _v in final), "Dockerfile: HEALTHCHECK")
check(any(c == "VOLUME" and "/var/lib/roomlink" in " ".join(v) for c, _f, v in final), "Dockerfile: a volume for the data")
env_words = " ".join(" ".join(v) for c, _f, v in final if c == "ENV")
check("ROOMLINK__SERVER__BIND" in env_words and "0.0.0.0:8080" in env_words,
      "Dockerfile: ROOMLINK__SERVER__BIND=0.0.0.0:8080")
check("sqlite:///var/lib/roomlink/" in env_words, "Dockerfile: the SQLite database lives in the volume")
runs = " ".join(" ".join(v) for c, _f, v in instructions if c == "RUN")
build = re.search(r"cargo build ([^;&]*)", runs)
check(build is not None and "--profile dist" in build.group(1) and "--locked" in build.group(1),
      "Dockerfile: cargo build --profile dist --locked (the release build, stripped)")
profiles = tomllib.loads(open("Cargo.toml").read()).get("profile", {})
check(profiles.get("dist", {}).get("inherits") == "release",
      "Cargo.toml: the dist profile inherits the release profile")
listed = re.search(r'bins="([^"$]*)"', runs)
always = listed.group(1).split() if listed else []
check({"roomlink", "roomlink-listener", "roomlink-listener-sim", "roomlink-device-emu"} <= set(always), f"Dockerfile: always builds {', '.join(always)}")
for name in always:
    check(name in binaries, f"Dockerfile: binary {name} exists in the workspace (package {binaries.get(name)})")
check("--bin %s" in build.group(1) if build else False, "Dockerfile: builds exactly the listed binaries (--bin)")
check("for bin in $bins" in runs, "Dockerfile: copies every built binary to /out")
conditional = re.search(r'if \[ -f (\S+) \]; then bins="\$bins (\S+)"', runs)
check(conditional is not None, "Dockerfile: adds roomlinkctl when its crate exists")
if conditional:
    manifest, name = conditional.groups()
    present = os.path.exists(os.path.join(ROOT, manifest))
    check(present == (name in binaries),
          f"Dockerfile: {manifest} {'exists' if present else 'is absent'} and binary {name} "
          f"{'is' if name in binaries else 'is not'} in the workspace (image ships it: {present})")

# COPY sources exist and the build context keeps them (.dockerignore).
with open(os.path.join(ROOT, ".dockerignore"), encoding="utf-8") as f:
    ignored = [line.strip() for line in f if line.strip() and not line.startswith("#")]


def dockerignored(path):
    for pattern in ignored:
        pattern = pattern.lstrip("/").rstrip("/")
        candidates = [path] + [path[: m.start()] for m in re.finditer("/", path)]
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or (
                pattern.startswith("**/") and fnmatch.fnmatch(candidate.split("/")[-1], pattern[3:])
            ):
                return True
    return False


for c, flags, v in instructions:
    if c == "COPY" and not any(f.startswith("--from") for f in flags) and v[0] != ".":
        for source in v[:-1]:
            check(os.path.exists(os.path.join(ROOT, source)) and not dockerignored(source),
                  f"Dockerfile: COPY source {source} is in the build context")
for needed in ("Cargo.toml", "Cargo.lock", "rust-toolchain.toml", "crates/server/Cargo.toml",
               "crates/store/migrations", "xtask/Cargo.toml", "deploy/docker/http-probe"):
    check(not dockerignored(needed), f".dockerignore keeps {needed}")
for dropped in ("target/debug/roomlink", ".git/HEAD", "roomlink.db"):
    check(dockerignored(dropped), f".dockerignore drops {dropped}")

# ---- compose ----
compose_path = os.path.join(DEPLOY, "compose.yaml")
compose = documents.get(compose_path, [{}])[0]
services = compose.get("services", {})
check({"postgres", "migrate", "roomlink", "listener-sim"} <= set(services),
      "compose: postgres, migrate, roomlink and listener-sim services")
for name, service in services.items():
    for dependency, how in (service.get("depends_on") or {}).items():
        check(dependency in services, f"compose: {name} depends on an existing service ({dependency})")
        target = services.get(dependency, {})
        if how.get("condition") == "service_healthy":
            check("healthcheck" in target and not target["healthcheck"].get("disable"),
                  f"compose: {dependency} has a health check for {name} to wait on")
    for secret in service.get("secrets", []):
        secret = secret if isinstance(secret, str) else secret["source"]
        check(secret in compose.get("secrets", {}), f"compose: secret {secret} of {name} is defined")
    if name != "migrate":
        check("healthcheck" in service, f"compose: {name} has a health check")
    if "build" in service:
        check(os.path.exists(os.path.join(DEPLOY, service["build"]["context"], service["build"]["dockerfile"])),
              f"compose: {name} builds from deploy/Dockerfile")
rl = services.get("roomlink", {})
check(rl.get("depends_on", {}).get("migrate", {}).get("condition") == "service_completed_successfully",
      "compose: roomlink starts after the migration completed")
environment = rl.get("environment", {})
check(str(environment.get("ROOMLINK__DATABASE__URL", "")).startswith("postgres://"), "compose: roomlink uses PostgreSQL")
check("ROOMLINK__SECURITY__SERVICE_KEY_FILE" in environment or "ROOMLINK__SECURITY__SERVICE_KEY" in environment,
      "compose: PostgreSQL gets an explicit service key")
grace = rl.get("stop_grace_period", "10s")
check(int(grace.rstrip("s")) > 30, f"compose: stop_grace_period {grace} exceeds the 30 s shutdown timeout")
# Several instances: NATS joins them (docs/cluster.md); replicas cannot share a fixed host port.
replicas = (rl.get("deploy") or {}).get("replicas", 1)
nats_url = str(environment.get("ROOMLINK__CLUSTER__NATS_URL", ""))
nats_host = re.fullmatch(r"nats://([^:/@]+):(\d+)", nats_url)
check(replicas < 2 or nats_host is not None,
      f"compose: {replicas} roomlink replicas join through NATS (ROOMLINK__CLUSTER__NATS_URL {nats_url or 'unset'})")
if nats_host:
    bus = services.get(nats_host.group(1), {})
    check(bool(bus) and str(bus.get("image", "")).startswith("nats:"),
          f"compose: the NATS URL names a service of the official nats image ({nats_host.group(1)})")
    check(not bus.get("ports"), f"compose: {nats_host.group(1)} publishes no port")
    check(nats_host.group(1) in (rl.get("depends_on") or {}), f"compose: roomlink depends on {nats_host.group(1)}")
    command = " ".join(str(c) for c in bus.get("command") or [])
    check(not re.search(r"(^| )(-js|--jetstream)( |$)", command), "compose: NATS runs without JetStream (a bus only)")
for port in rl.get("ports", []):
    published = re.match(r"(?:[\d.]+:)?(\d+)(?:-(\d+))?:\d+", str(port))
    span = int(published.group(2) or published.group(1)) - int(published.group(1)) + 1 if published else 0
    check(span >= replicas, f"compose: roomlink's published host ports {port} suffice for {replicas} replica(s)")
check("container_name" not in rl or replicas < 2, "compose: replicated roomlink sets no container_name")

# ---- Kubernetes ----
k8s = os.path.join(DEPLOY, "k8s")
kustomization = documents.get(os.path.join(k8s, "kustomization.yaml"), [{}])[0]
resources = kustomization.get("resources", [])
for resource in resources:
    check(os.path.exists(os.path.join(k8s, resource)), f"k8s: kustomization resource {resource} exists")
listed = {os.path.join(k8s, r) for r in resources}
for path in every_yaml():
    if os.path.dirname(path) == k8s and not path.endswith("kustomization.yaml"):
        check(path in listed, f"k8s: {rel(path)} is listed in kustomization.yaml")
objects = {}
for path in listed:
    for doc in documents.get(path, []):
        check(all(k in doc for k in ("apiVersion", "kind", "metadata")) and "name" in doc["metadata"],
              f"k8s: {rel(path)} has apiVersion, kind, metadata.name")
        objects[(doc["kind"], doc["metadata"]["name"])] = doc
kinds = {kind for kind, _ in objects}
check({"Deployment", "Service", "ConfigMap", "Secret", "Job"} <= kinds, f"k8s: kinds {sorted(kinds)}")
deployments = {n: d for (k, n), d in objects.items() if k == "Deployment"}
deployment = deployments.get("roomlink", {})
check(bool(deployment), "k8s: a Deployment named roomlink")
pod = deployment.get("spec", {}).get("template", {}).get("spec", {})
containers = pod.get("containers", [])
check(deployment.get("spec", {}).get("selector", {}).get("matchLabels", {}).items()
      <= deployment.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {}).items(),
      "k8s: the Deployment's selector matches its pod labels")
for container in containers:
    name = container["name"]
    check(container.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz", f"k8s: {name} readiness probe GET /readyz")
    check(container.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz", f"k8s: {name} liveness probe GET /healthz")
    check({"requests", "limits"} <= set(container.get("resources", {})), f"k8s: {name} has resource requests and limits")
    security = {**pod.get("securityContext", {}), **container.get("securityContext", {})}
    check(security.get("runAsNonRoot") is True and security.get("runAsUser", 0) != 0
          and security.get("allowPrivilegeEscalation") is False,
          f"k8s: {name} runs as non-root without privilege escalation")
    port_names = {p.get("name") for p in container.get("ports", [])}
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        port = container.get(probe, {}).get("httpGet", {}).get("port")
        if port is not None:
            check(port in port_names or isinstance(port, int), f"k8s: {name} {probe} port {port} is declared")
    check("serve" in container.get("args", []), f"k8s: {name} runs `roomlink serve`")
grace_period = pod.get("terminationGracePeriodSeconds", 30)
config_maps = [d for (k, _), d in objects.items() if k == "ConfigMap"]
settings = {}
for cm in config_maps:
    for key, text in cm.get("data", {}).items():
        if key.endswith(".toml"):
            try:
                settings = tomllib.loads(text)
                check(True, f"k8s: ConfigMap {cm['metadata']['name']}/{key} is valid TOML")
            except tomllib.TOMLDecodeError as e:
                check(False, f"k8s: ConfigMap {key} is valid TOML: {e}")
shutdown = settings.get("server", {}).get("shutdown_timeout_secs", 30)
check(grace_period > shutdown, f"k8s: terminationGracePeriodSeconds {grace_period} > shutdown_timeout_secs {shutdown}")
for service in (d for (k, _), d in objects.items() if k == "Service"):
    selector = service["spec"].get("selector", {})
    selected = [n for n, d in deployments.items()
                if selector and selector.items() <= d.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {}).items()]
    check(len(selected) == 1, f"k8s: Service {service['metadata']['name']} selects the pods of one Deployment ({', '.join(selected) or 'none'})")
    if len(selected) == 1:
        pod_ports = {p.get("name"): p.get("containerPort")
                     for c in deployments[selected[0]]["spec"]["template"]["spec"].get("containers", [])
                     for p in c.get("ports", [])}
        for port in service["spec"].get("ports", []):
            target = port.get("targetPort", port.get("port"))
            check(target in pod_ports or target in pod_ports.values(),
                  f"k8s: Service {service['metadata']['name']} port {port.get('port')} targets a declared port ({target})")
# Every pod template meets Pod Security "restricted" (namespace.yaml enforces it).
for (kind, name), doc in sorted(objects.items()):
    pod_spec = doc.get("spec", {}).get("template", {}).get("spec")
    if pod_spec is None:
        continue
    for container in pod_spec.get("containers", []):
        security = {**pod_spec.get("securityContext", {}), **container.get("securityContext", {})}
        check(security.get("runAsNonRoot") is True and security.get("runAsUser", 0) != 0
              and security.get("allowPrivilegeEscalation") is False
              and security.get("seccompProfile", {}).get("type") in ("RuntimeDefault", "Localhost")
              and "ALL" in security.get("capabilities", {}).get("drop", []),
              f"k8s: {kind} {name}, container {container['name']}: Pod Security restricted (non-root, no escalation, seccomp, no capabilities)")
# Several replicas join through NATS: the ConfigMap's cluster.nats_url names a Service here
# (or an external server) and its port.
k8s_replicas = deployment.get("spec", {}).get("replicas", 1)
k8s_nats = settings.get("cluster", {}).get("nats_url", "")
check(k8s_replicas < 2 or bool(k8s_nats), f"k8s: {k8s_replicas} roomlink replicas join through NATS (cluster.nats_url {k8s_nats or 'unset'})")
k8s_nats_host = re.fullmatch(r"nats://([^:/@.]+):(\d+)", k8s_nats)
if k8s_nats_host:
    name, port = k8s_nats_host.group(1), int(k8s_nats_host.group(2))
    bus_service = objects.get(("Service", name), {})
    check(any(p.get("port") == port for p in bus_service.get("spec", {}).get("ports", [])),
          f"k8s: cluster.nats_url names Service {name} port {port}")
    bus = deployments.get(name, {})
    bus_pod = bus.get("spec", {}).get("template", {}).get("spec", {})
    bus_containers = bus_pod.get("containers", [])
    check(bool(bus_containers) and all(c.get("image", "").startswith("nats:") for c in bus_containers),
          f"k8s: Deployment {name} runs the official nats image")
    check(bus.get("spec", {}).get("replicas", 1) == 1 and bus.get("spec", {}).get("strategy", {}).get("type") == "Recreate",
          f"k8s: Deployment {name}: one server, replaced without overlap (Recreate: never two unclustered servers)")
    for container in bus_containers:
        check("readinessProbe" in container and "livenessProbe" in container, f"k8s: {container['name']} has readiness and liveness probes")
        check({"requests", "limits"} <= set(container.get("resources", {})), f"k8s: {container['name']} has resource requests and limits")
        words = container.get("command", []) + container.get("args", [])
        check(not {"-js", "--jetstream"} & set(words), f"k8s: {container['name']} runs without JetStream (a bus only)")
secrets = [d for (k, _), d in objects.items() if k == "Secret"]
for secret in secrets:
    values = {**secret.get("stringData", {}), **secret.get("data", {})}
    check(all("REPLACE-ME" in str(v) for v in values.values()), f"k8s: Secret {secret['metadata']['name']} holds only marked placeholders")
referenced = set()
for doc in objects.values():
    for container in doc.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                referenced.add((ref["name"], ref["key"]))
    for volume in doc.get("spec", {}).get("template", {}).get("spec", {}).get("volumes", []):
        if "secret" in volume:
            for item in volume["secret"].get("items", []):
                referenced.add((volume["secret"]["secretName"], item["key"]))
for name, key in sorted(referenced):
    secret = next((s for s in secrets if s["metadata"]["name"] == name), None)
    check(secret is not None and key in {**secret.get("stringData", {}), **secret.get("data", {})},
          f"k8s: secret key {name}/{key} is defined")
job = next((d for (k, _), d in objects.items() if k == "Job"), {})
job_containers = job.get("spec", {}).get("template", {}).get("spec", {}).get("containers", [])
check(any("migrate" in c.get("args", []) for c in job_containers), "k8s: the Job runs `roomlink migrate`")

# ---- systemd ----
unit_path = os.path.join(DEPLOY, "systemd", "roomlink.service")
unit = {}
with open(unit_path, encoding="utf-8") as f:
    for line in f:
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            unit.setdefault(key, []).append(value)
for key, expected in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("Restart", "on-failure"),
                      ("KillSignal", "SIGTERM"), ("DynamicUser", "yes"), ("StateDirectory", "roomlink")):
    check(unit.get(key, [None])[-1] == expected, f"systemd: {key}={expected}")
with open(os.path.join(DEPLOY, "systemd", "roomlink.toml"), "rb") as f:
    example = tomllib.load(f)
stop = int(unit.get("TimeoutStopSec", ["90"])[-1].rstrip("s"))
example_shutdown = example.get("server", {}).get("shutdown_timeout_secs", 30)
check(stop > example_shutdown, f"systemd: TimeoutStopSec {stop} > shutdown_timeout_secs {example_shutdown}")
check(example.get("database", {}).get("url", "").startswith("sqlite:///var/lib/roomlink/"),
      "systemd: the example keeps SQLite in the StateDirectory")
with open(os.path.join(DEPLOY, "systemd", "roomlink.env"), encoding="utf-8") as f:
    lines = [ln.strip().lstrip("#") for ln in f if "=" in ln and ln.strip().lstrip("#").startswith("ROOMLINK")]
check(lines and all(re.fullmatch(r"ROOMLINK__[A-Z0-9_]+__[A-Z0-9_]+=\S*", ln) for ln in lines),
      "systemd: roomlink.env holds only ROOMLINK__SECTION__KEY=VALUE lines")

print()
print(f"{len(failures)} structural check(s) failed" if failures else "all structural checks passed")
sys.exit(1 if failures else 0)
