"""Shared helpers of the benches: metadata and one JSON record per run in bench/results/."""
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def best_of(solve_once, quick=0.01, repeats=5):
    """solve_once() -> a record with "seconds" (the solver call alone, from R = 0); when it
    took under `quick` seconds it is run `repeats` times in all and the fastest kept, with
    "repeats" and "first_seconds" in the record. The same rule for every peer: a first call
    of well under a millisecond is mostly its process warming up (caches, lazily bound
    code), parsolve's and Siconos' alike."""
    first = best = solve_once()
    if first["seconds"] < quick:
        for _ in range(repeats - 1):
            again = solve_once()
            if again["seconds"] < best["seconds"]:
                best = again
        best = dict(best, repeats=repeats, first_seconds=first["seconds"])
    return best


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


@contextlib.contextmanager
def tree_of(rev):
    """A temporary git worktree of commit `rev` with its kernels built: the path of an earlier
    tree to run beside this one (its benches with its own parsolve: run_in)."""
    root = os.path.dirname(HERE)
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old")
        subprocess.run(["git", "worktree", "add", "-f", "--detach", old, rev], cwd=root,
                       check=True, capture_output=True)
        try:
            subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                           cwd=old, check=True, capture_output=True)
            yield old
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", old], cwd=root,
                           capture_output=True)


def run_in(tree, *args, capture=False):
    """Run `python ARGS` in `tree` with that tree's parsolve first on the path; its stdout
    when capture."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, *args], cwd=tree, check=True, env=env,
                         stdout=subprocess.PIPE if capture else subprocess.DEVNULL, text=True)
    return out.stdout if capture else None


def worker_record(cmd, seconds):
    """Run a worker process `cmd` with a wall-clock limit: the last JSON line it printed, or
    {"failed": why} (a timeout, an exit code with the end of its stderr)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        return {"failed": f"timeout after {seconds:g} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode or not lines:
        return {"failed": f"exit {out.returncode}: {out.stderr.strip()[-300:]}"}
    return json.loads(lines[-1])
