"""Shared helpers of the benches: metadata and one JSON record per run in bench/results/."""
import json
import os
import platform
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def metadata(ranks=1, **extra):
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(),
            "cpu": platform.processor() or platform.machine(), "ranks": ranks,
            "git_commit": commit, **extra}


def write(name, record, echo=True):
    """Append `record` to bench/results/<name>.json (and print it unless echo is False)."""
    out = os.path.join(HERE, "results")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{name}.json")
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
    if echo:
        print(json.dumps(record, indent=1))
    return path
