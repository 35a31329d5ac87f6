"""Fault injection for tests of how runs fail: kill, stop, delay or break a rank at a named
point of the run, chosen by the environment variable PARSOLVE_FAULTS (read once at import).

    PARSOLVE_FAULTS="kill@solve:rank=1:step=30"          SIGKILL rank 1 in step 30's solve
    PARSOLVE_FAULTS="signal@step:rank=0:step=12:sig=USR1" send SIGUSR1 to rank 0 at step 12
    PARSOLVE_FAULTS="delay@checkpoint-dataset:seconds=0.3" sleep while writing each dataset
    PARSOLVE_FAULTS="raise@detect:rank=1:step=5"         raise RuntimeError on rank 1
    PARSOLVE_FAULTS="oserror@segment-write:rank=1:step=40"  a write fails: the disk is full
Several faults are separated by ';'. A fault without rank= fires on every rank, without step=
at every step. The points are the names passed to `point()`: "step" (start of a step),
"detect", "solve", "update", "output" (end of a step, before frames and checkpoints),
"frame", "checkpoint" (before writing one), "checkpoint-dataset" (after each dataset's write),
"segment-write" (each write of a results segment: a frame's dataset, the history's rows),
"segment" (before closing a results segment), "index" (rank 0 writing the results index),
"close" (end of the run). `oserror` raises OSError(errno) as a failed write would (errno=
ENOSPC by default; EIO, EDQUOT, ...). Adding a point is one call `faults.point(name, step,
rank)`; without PARSOLVE_FAULTS it does nothing.
"""
import errno
import os
import signal
import time

ACTIONS = ("kill", "signal", "delay", "raise", "oserror")


class FaultSpecError(ValueError):
    pass


def parse(text):
    """The faults of a PARSOLVE_FAULTS string: a list of dicts (action, point, options)."""
    faults = []
    for item in filter(None, (s.strip() for s in (text or "").split(";"))):
        head, *options = item.split(":")
        action, _, where = head.partition("@")
        if action not in ACTIONS or not where:
            raise FaultSpecError(f"PARSOLVE_FAULTS: {item!r}: expected ACTION@POINT[:k=v...] "
                                 f"with ACTION one of {', '.join(ACTIONS)}")
        fault = {"action": action, "point": where}
        for opt in options:
            key, _, value = opt.partition("=")
            fault[key] = value
        faults.append(fault)
    return faults


FAULTS = parse(os.environ.get("PARSOLVE_FAULTS"))


def point(name, step=None, rank=None):
    """Fire the faults registered for point `name` at this step on this rank."""
    if not FAULTS:
        return
    for f in FAULTS:
        if f["point"] != name or ("rank" in f and rank is not None and int(f["rank"]) != rank):
            continue
        if "step" in f and step is not None and int(f["step"]) != step:
            continue
        _fire(f, name, step, rank)


def _fire(f, name, step, rank):
    action = f["action"]
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "signal":
        os.kill(os.getpid(), getattr(signal, "SIG" + f.get("sig", "USR1")))
    elif action == "delay":
        time.sleep(float(f.get("seconds", "1")))
    elif action == "raise":
        raise RuntimeError(f"fault injected at {name} (step {step}, rank {rank})")
    elif action == "oserror":
        code = getattr(errno, f.get("errno", "ENOSPC"))
        raise OSError(code, f"{os.strerror(code)} (fault injected at {name}, step {step}, "
                            f"rank {rank})")
