#!/usr/bin/env python3
"""seccomp-profile.py DEFAULT.json > sandbox-seccomp.json

Writes a seccomp profile for the sandbox worker's container that is the
container engine's own default profile (podman's
/usr/share/containers/seccomp.json, or Docker's default.json from moby) with
one change: sethostname is allowed without CAP_SYS_ADMIN. It is the only
call of bubblewrap's that podman's default refuses to a container without
that capability (docs/DEPLOY.md, "The sandbox worker"); with this profile in
place of seccomp=unconfined the sandbox suite passes inside the sandbox image
(deploy/containers/sandbox-suite.sh checks it on every run). The engine's
profile is read, not shipped: it is the engine's, and differs between engines.
"""
import json
import sys

with open(sys.argv[1]) as f:
    profile = json.load(f)
for rule in profile["syscalls"]:
    caps = rule.get("includes", {}).get("caps") or rule.get("excludes", {}).get("caps") or []
    if "sethostname" in rule["names"] and "CAP_SYS_ADMIN" in caps:
        rule["names"] = [n for n in rule["names"] if n != "sethostname"]
profile["syscalls"] = [r for r in profile["syscalls"] if r["names"]]
profile["syscalls"].append({"names": ["sethostname"], "action": "SCMP_ACT_ALLOW", "args": [],
                            "comment": "bubblewrap names its sandbox's UTS namespace", "includes": {}, "excludes": {}})
json.dump(profile, sys.stdout, indent=1)
sys.stdout.write("\n")
