#!/usr/bin/env python3
"""Derives xapi-subset.json (beside this script) from Cisco's published xAPI schemas.

Cisco publishes the xAPI of each codec software release as JSON in the public repository
cisco-ce/roomos.cisco.com, folder schemas/. This keeps, for three generations, only what the
emulated codec and the drivers use: the commands (roles, parameters, value spaces, whether a
multiline payload is taken) and the status paths under the subtrees they read (roles, value
spaces), and the configurations the Cisco mapping of template settings writes (issue #36:
roles that may write and read them, value spaces, the products that have them, the backend).
Facts only: descriptions and defaults are left out.

    git clone https://github.com/cisco-ce/roomos.cisco.com /tmp/roomos
    python3 crates/device-emu/xapi/derive.py /tmp/roomos
    # or from a bare copy of the repository, at a given commit:
    python3 crates/device-emu/xapi/derive.py --git /path/to/repo.git COMMIT
"""

import json
import pathlib
import subprocess
import sys

GENERATIONS = [
    ("CE 9.15", "schemas/9.15.17.4.json"),
    ("RoomOS 11.27", "schemas/11.27.2.0.json"),
    ("RoomOS 26.4", "schemas/26.4.1 March 2026.json"),
]
COMMANDS = [
    "Dial",
    "Call Disconnect",
    "Call DTMFSend",
    "Audio Microphones Mute",
    "Audio Microphones Unmute",
    "Audio Microphones ToggleMute",
    "Bookings Put",
    "Bookings List",
    "Bookings Clear",
]
STATUS_SUBTREES = ["Call", "SystemUnit", "Audio Microphones Mute", "Network", "Peripherals", "Cameras"]
# What crates/listener/src/drivers/cisco_config.rs maps template settings to.
CONFIGURATIONS = [
    "Time Zone",
    "Standby Delay",
    "Audio DefaultVolume",
    "SIP DisplayName",
    "Proximity Mode",
    "Conference AutoAnswer Mode",
    "Conference AutoAnswer Mute",
    "UserInterface OSD HalfwakeMessage",
    "SystemUnit Name",
]
# Raw paths (issue #36's escape hatch) the emulated codec also holds, for end-to-end tests.
RAW_CONFIGURATIONS = [
    "Audio Ultrasound MaxVolume",
    "Audio SoundsAndAlerts RingVolume",
    "UserInterface Language",
]
# The template setting each mapped configuration is written by: a raw path naming one of these
# is refused in favour of the setting.
MAPPED = {
    "Time Zone": "time_zone",
    "Standby Delay": "standby.delay_minutes",
    "Audio DefaultVolume": "audio.default_volume",
    "SIP DisplayName": "sip.display_name",
    "Proximity Mode": "proximity.mode",
    "Conference AutoAnswer Mode": "auto_answer.mode",
    "Conference AutoAnswer Mute": "auto_answer.mute",
    "UserInterface OSD HalfwakeMessage": "welcome.message",
    "SystemUnit Name": "system.name",
}


def words_without_index(path):
    return [w.split("[")[0] for w in path.split(" ")]


def under(path, subtree):
    words, top = words_without_index(path), subtree.split(" ")
    return words[: len(top)] == top


def space(valuespace):
    return {k: v for k, v in (valuespace or {}).items() if k != "description"}


def derive(read, name, file):
    objects = json.loads(read(file))["objects"]
    commands = {}
    statuses = {}
    configurations = {}
    products = set()
    for o in objects:
        products.update(o.get("products", []))
        a = o["attributes"]
        if o["type"] == "Command" and o["path"] in COMMANDS:
            variant = {
                "access": a.get("access"),
                "roles": sorted(a.get("role", [])),
                "multiline": a.get("multiline") == "True",
                "params": {
                    p["name"]: {"required": p.get("required") is True, "space": space(p.get("valuespace"))}
                    for p in a.get("params", [])
                },
            }
            variants = commands.setdefault(o["path"], [])
            if variant not in variants:  # products differ in some bounds (Dial CallRate)
                variants.append(variant)
        elif o["type"] == "Status" and any(under(o["path"], s) for s in STATUS_SUBTREES):
            statuses[o["path"]] = {"roles": sorted(a.get("role", [])), "space": space(a.get("valuespace"))}
        elif o["type"] == "Configuration" and o["path"] in CONFIGURATIONS + RAW_CONFIGURATIONS:
            variant = {
                "access": a.get("access"),
                "roles": sorted(a.get("role", [])),
                "read": sorted(a.get("read", [])),
                "backend": a.get("backend"),
                "space": space(a.get("valuespace")),
            }
            variants = configurations.setdefault(o["path"], [])
            # Variants differing only in their default (dropped) are one, for all their products.
            same = next((v for v in variants if {k: x for k, x in v.items() if k != "products"} == variant), None)
            if same is None:
                variants.append(dict(variant, products=sorted(o.get("products", []))))
            else:
                same["products"] = sorted(set(same["products"]) | set(o.get("products", [])))
    missing = [c for c in COMMANDS if c not in commands] + [
        c for c in CONFIGURATIONS + RAW_CONFIGURATIONS if c not in configurations
    ]
    return {
        "name": name,
        "file": file,
        "missing": missing,
        "commands": dict(sorted(commands.items())),
        "statuses": dict(sorted(statuses.items())),
        "products": sorted(products),
        "configurations": dict(sorted(configurations.items())),
    }


def is_secret(path):
    """A password or community name: roomlink shows template values, plans and what a job
    replaced, so a secret must never be a template's value."""
    last = path.split(" ")[-1]
    return "Password" in last or last == "CommunityName"


def raw_paths(read):
    """The domain's catalog of raw Cisco paths: every configuration without instances (`[n]`)
    that an Admin may write in some generation, secrets left out, with the union of its value
    spaces over generations and products and the generations that have it."""
    paths = {}
    for name, file in GENERATIONS:
        for o in json.loads(read(file))["objects"]:
            path, a = o["path"], o["attributes"]
            if o["type"] != "Configuration" or "[" in path or is_secret(path):
                continue
            if "Admin" not in a.get("role", []) or a.get("access") != "public-api":
                continue
            entry = paths.setdefault(path, {"schemas": [], "spaces": []})
            if name not in entry["schemas"]:
                entry["schemas"].append(name)
            vs = space(a.get("valuespace"))
            if vs not in entry["spaces"]:
                entry["spaces"].append(vs)
    out = []
    for path, entry in sorted(paths.items()):
        if path in MAPPED:
            out.append({"path": path, "setting": MAPPED[path]})
            continue
        spaces = entry["spaces"]
        kind = {s["type"] for s in spaces}
        assert len(kind) == 1, (path, spaces)
        kind = kind.pop()
        if kind == "Integer":
            merged = {"type": "integer", "min": min(int(s["Min"]) for s in spaces),
                      "max": max(int(s["Max"]) for s in spaces)}
        elif kind == "String":
            merged = {"type": "text", "minChars": min(int(s["MinLength"]) for s in spaces),
                      "maxChars": max(int(s["MaxLength"]) for s in spaces)}
        elif kind == "Literal":
            values = []
            for s in spaces:
                values += [v for v in s["Values"] if v.lower() not in [x.lower() for x in values]]
            merged = {"type": "literal", "values": values}
        else:
            continue
        out.append({"path": path, "space": merged, "schemas": entry["schemas"]})
    return out


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def main():
    if sys.argv[1] == "--git":
        repo, commit = sys.argv[2], git("-C", sys.argv[2], "rev-parse", sys.argv[3]).strip()

        def read(file):
            return git("-C", repo, "show", f"{commit}:{file}")

    else:
        checkout = pathlib.Path(sys.argv[1])
        commit = git("-C", str(checkout), "rev-parse", "HEAD").strip()

        def read(file):
            return (checkout / file).read_text()

    subset = {
        "source": {
            "repository": "https://github.com/cisco-ce/roomos.cisco.com",
            "commit": commit,
            "derivedBy": "crates/device-emu/xapi/derive.py",
        },
        "generations": [derive(read, name, file) for name, file in GENERATIONS],
    }
    out = pathlib.Path(__file__).with_name("xapi-subset.json")
    out.write_text(json.dumps(subset, indent=1, sort_keys=False) + "\n")
    print(f"{out}: {out.stat().st_size} bytes from {commit}")
    catalog = {
        "source": subset["source"],
        "about": "Raw Cisco configuration paths a template may set (issue #36): no instances, "
        "an Admin may write them, no passwords; value spaces merged over products and generations.",
        "paths": raw_paths(read),
    }
    domain = pathlib.Path(__file__).parents[2] / "domain/src/template/cisco_paths.json"
    domain.write_text(json.dumps(catalog, separators=(",", ":")) + "\n")
    print(f"{domain}: {domain.stat().st_size} bytes, {len(catalog['paths'])} paths")


if __name__ == "__main__":
    main()
