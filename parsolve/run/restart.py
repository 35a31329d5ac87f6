"""Continuing a run from a checkpoint: which one (for "auto", the newest intact one, so that a
damaged file does not end a job chain), the warm start on another step size, and the name of
the continued leg's results file."""
import os

from ..errors import CollectiveError


def resume(sim, path, say):
    """Restore Simulation `sim` from checkpoint `path`, or the newest intact one of its
    checkpoint directory for "auto". Returns (the checkpoint read, the results segments that
    hold the history up to it), or None for a fresh start ("auto" and no checkpoint yet);
    say(text): a line on rank 0."""
    from ..io import checkpoint

    policy = sim.checkpoints
    candidates = [path]
    if path == "auto":
        candidates = checkpoint.existing(policy.directory, policy.name)[::-1]
        if not candidates:                       # nothing to continue from: a fresh start
            say(f"--restart auto: no checkpoint in {policy.directory}/, starting afresh")
            return None
    for k, path in enumerate(candidates):
        try:
            bodies, contacts, step, t, attrs = checkpoint.read(path, sim.comm,
                                                               sim.model.fingerprint())
            break
        except (checkpoint.CorruptCheckpoint, CollectiveError) as exc:
            # read's errors are collective: the ranks that found the damage raise
            # CorruptCheckpoint, the others a CollectiveError; a checkpoint of another
            # model (a FileFormatError everywhere alike) is never skipped
            if k == len(candidates) - 1:
                raise
            say(f"warning: --restart auto: skipping a damaged checkpoint: {exc}")
    old_h = float(attrs["step_size"])
    if old_h != sim.h:
        # reactions are impulses over a step: the warm start scales with the step, and the
        # step count restarts from the checkpoint's time on the new step
        contacts["R"] = contacts["R"] * (sim.h / old_h)
        say(f"warning: {path} was written with step {old_h:g} s, this run uses {sim.h:g} s: "
            "continuing with the new step (the warm start scaled; the trajectory is no longer "
            "the one of either step)")
        step = int(round(t / sim.h))
    sim.restore(bodies, contacts, step, t, attrs.get("energy"))
    say(f"restarting from {path} at step {step}, t = {t:.6g} s")
    return path, attrs["results_parts"]


def leg_output(output, step):
    """The results file of a leg restarted at `step`: NAME.restart-STEP.h5, so that the
    results of the run it continues are kept."""
    stem, ext = os.path.splitext(output)
    return f"{stem}.restart-{step:09d}{ext or '.h5'}"
