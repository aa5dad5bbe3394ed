#!/usr/bin/env python3
"""The composite action .github/actions/airlock-gate and its use in
examples/release-gate.yml, without GitHub: the action's shape (composite,
its inputs, every input reaching a script through env: only, the upload
pinned to a commit), and its scripts run with bash against a stand-in
`airlock` that records its arguments and exits as told -- the gate's
arguments, the status output, a missing policy, the key file, the job
summary.  TAP on stdout.

argv: SOURCE_ROOT"""

import os
import re
import stat
import subprocess
import sys
import tempfile

import yaml

root = sys.argv[1]
action_path = os.path.join(root, ".github", "actions", "airlock-gate", "action.yml")
workflow_path = os.path.join(root, "examples", "release-gate.yml")
n = 0
failed = False


def check(ok, what, detail=""):
    global n, failed
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - {what}")
    if not ok:
        failed = True
        for line in str(detail).splitlines():
            print(f"# {line}")


with open(action_path) as f:
    action = yaml.safe_load(f)
steps = {s["name"]: s for s in action["runs"]["steps"]}

check(action["runs"]["using"] == "composite", "the action is composite")
for name, required in (("image", True), ("arches", False), ("policy", False), ("key", True)):
    check(name in action["inputs"] and bool(action["inputs"][name].get("required")) == required,
          f"input '{name}' exists{' and is required' if required else ''}")
check(action["inputs"]["arches"].get("default") == "all", "arches defaults to all")
for s in action["runs"]["steps"]:
    if "run" in s:
        check(s.get("shell") == "bash", f"step '{s['name']}' says its shell")
        # An input pasted into a script is shell its writer chose.
        check("${{" not in s["run"], f"step '{s['name']}' takes no expression into its script",
              s["run"])
    else:
        check(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", s["uses"]) is not None,
              f"step '{s['name']}' uses an action pinned to a commit", s["uses"])
upload = steps["Upload the bundles"]
check("always()" in upload.get("if", "") and upload["with"]["path"].startswith("${{ inputs.out }}"),
      "the bundles are uploaded whatever the verdict, from the out directory")
check(action["outputs"]["status"]["value"] == "${{ steps.gate.outputs.status }}",
      "the gate's exit status is the action's output")


def run_step(name, env, tmp):
    """Runs one step's script as the runner would: bash -e, its env:
    (expressions resolved by the caller), GITHUB_OUTPUT/ENV/STEP_SUMMARY
    files.  Returns (status, outputs dict, stdout)."""
    step = steps[name]
    for f in ("output", "env", "summary"):
        open(os.path.join(tmp, f), "w").close()
    full = dict(os.environ)
    full.update({
        "PATH": os.path.join(tmp, "bin") + ":" + os.environ["PATH"],
        "GITHUB_OUTPUT": os.path.join(tmp, "output"),
        "GITHUB_ENV": os.path.join(tmp, "env"),
        "GITHUB_STEP_SUMMARY": os.path.join(tmp, "summary"),
        "RUNNER_TEMP": tmp,
    })
    full.update(env)
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step["run"]], env=full, cwd=tmp,
                       capture_output=True, text=True)
    with open(os.path.join(tmp, "output")) as f:
        outputs = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
    return p.returncode, outputs, p.stdout + p.stderr


with tempfile.TemporaryDirectory(prefix="airlock-test-action-") as tmp:
    os.mkdir(os.path.join(tmp, "bin"))
    args_file = os.path.join(tmp, "airlock-args")
    stub = os.path.join(tmp, "bin", "airlock")
    with open(stub, "w") as f:
        f.write('#!/bin/sh\nprintf "%s\\n" "$@" > "' + args_file + '"\nexit "${STUB_STATUS:-0}"\n')
    os.chmod(stub, 0o755)
    policy = os.path.join(tmp, "policy.txt")
    with open(policy, "w") as f:
        f.write("allow udp any port 53 dns=example.com\n")
    gate_env = {"IMAGE": "oci-archive:image.tar", "ARCHES": "arm64", "POLICY": policy,
                "POLICY_OPTIONAL": "false", "TIMEOUT": "45", "OUT": "bundle",
                "AIRLOCK_GATE_KEY_FILE": os.path.join(tmp, "k")}

    # The key: written as given, no newline, this user's alone; an empty
    # one stops the action before anything runs.
    status, _, out = run_step("Write the bundle key", {"AIRLOCK_BUNDLE_KEY": "0123456789abcdef0123"}, tmp)
    with open(os.path.join(tmp, "env")) as f:
        key_line = f.read().strip()
    key_file = key_line.split("=", 1)[1] if "=" in key_line else ""
    check(status == 0 and key_line.startswith("AIRLOCK_GATE_KEY_FILE=") and os.path.isfile(key_file),
          "the key is written to a file named in GITHUB_ENV", out)
    if os.path.isfile(key_file):
        with open(key_file, "rb") as f:
            check(f.read() == b"0123456789abcdef0123", "the key file holds the secret's bytes exactly")
        check(stat.S_IMODE(os.stat(key_file).st_mode) == 0o600, "the key file is 0600")
    status, _, out = run_step("Write the bundle key", {"AIRLOCK_BUNDLE_KEY": ""}, tmp)
    check(status == 1 and "bundle key is empty" in out, "an empty key fails the step, naming the input", out)

    # The gate's arguments, and its status through.
    status, outputs, out = run_step("airlock gate", gate_env, tmp)
    with open(args_file) as f:
        args = f.read().split("\n")[:-1]
    want = ["gate", "--image", "oci-archive:image.tar", "--arch", "arm64", "--timeout", "45",
            "--out", "bundle", "--key-file", gate_env["AIRLOCK_GATE_KEY_FILE"], "--policy", policy]
    check(status == 0 and args == want, "airlock gate gets the image, arch, timeout, out, key and policy",
          f"status {status}, args {args}\n{out}")
    check(outputs.get("status") == "0", "a pass is status 0", outputs)
    os.remove(args_file)
    status, outputs, out = run_step("airlock gate", dict(gate_env, STUB_STATUS="1"), tmp)
    check(status == 1 and outputs.get("status") == "1" and "::error title=airlock arm64::fail" in out,
          "a failed gate fails the step with its status and says so", f"{status} {outputs}\n{out}")
    os.remove(args_file)
    missing = os.path.join(tmp, "no-policy.txt")
    status, outputs, out = run_step("airlock gate", dict(gate_env, POLICY=missing), tmp)
    check(status == 2 and not os.path.exists(args_file) and missing in out,
          "a policy file that does not exist stops the gate, naming it", out)
    status, outputs, out = run_step("airlock gate", dict(gate_env, POLICY=missing, POLICY_OPTIONAL="true"), tmp)
    with open(args_file) as f:
        args = f.read().split("\n")[:-1]
    check(status == 0 and "--policy" not in args and "no egress is admitted" in out,
          "with policy-optional, no policy file gates with no egress admitted", f"{args}\n{out}")

    # The job summary: each arch's summary.md, or why there is none.
    os.makedirs(os.path.join(tmp, "bundle", "amd64"))
    with open(os.path.join(tmp, "bundle", "amd64", "summary.md"), "w") as f:
        f.write("### airlock amd64: pass\n")
    status, _, out = run_step("Job summary", {"ARCHES": "all", "OUT": "bundle", "GATE_STATUS": "1"}, tmp)
    with open(os.path.join(tmp, "summary")) as f:
        summary = f.read()
    check(status == 0 and "### airlock amd64: pass" in summary and "### airlock arm64: no summary" in summary,
          "the job summary has each arch's summary.md, or says there is none", summary + out)
    status, outputs, _ = run_step("Name the artifact", {"ARCHES": "amd64,arm64", "NAME": ""}, tmp)
    check(outputs.get("name") == "bundle-amd64-arm64", "the artifact is bundle-ARCHES by default", outputs)

# The example workflow gates through the action, with the inputs its
# publish job relies on: the artifact it downloads, signed under the key it
# verifies with.
with open(workflow_path) as f:
    workflow = yaml.safe_load(f)
gate_steps = [s for s in workflow["jobs"]["gate"]["steps"]
              if s.get("uses", "").endswith(".github/actions/airlock-gate")]
check(len(gate_steps) == 1, "the gate job runs the airlock-gate action once")
if gate_steps:
    w = gate_steps[0]["with"]
    check(gate_steps[0]["uses"] == "./airlock-src/.github/actions/airlock-gate",
          "the action comes from the pinned airlock checkout", gate_steps[0]["uses"])
    check(w.get("image") == "oci-archive:image.tar" and w.get("arches") == "${{ matrix.arch }}",
          "it gates image.tar on the matrix's arch", w)
    check(w.get("key") == "${{ secrets.AIRLOCK_BUNDLE_KEY }}", "it signs with the AIRLOCK_BUNDLE_KEY secret", w)
    check(w.get("policy") == "src/${{ env.AIRLOCK_POLICY }}", "it takes the committed policy", w)
    downloads = [s["with"]["name"] for s in workflow["jobs"]["publish"]["steps"]
                 if s.get("uses", "").startswith("actions/download-artifact")]
    check(w.get("artifact-name") == "bundle-${{ matrix.arch }}"
          and {"bundle-amd64", "bundle-arm64"} <= set(downloads),
          "its artifact is what publish downloads", f"{w.get('artifact-name')} {downloads}")
    check(w.get("out") == "bundle", "the bundles go to bundle/ (ARCH/ and set.json)", w)

print(f"1..{n}")
sys.exit(1 if failed else 0)
