"""Command line: `parsolve run model.py`, `parsolve info FILE`, `parsolve plot FILE`,
`parsolve measure FILE` (packing, stress, ... of regions), `parsolve fclib solve|info FILE`
(FCLIB local problems).

`parsolve run` executes the model script (as `python model.py` would, with `__name__ ==
"__main__"`), also under `mpirun -n P`. Exit codes:
  0  the run finished (or a STOP file ended it after writing a checkpoint);
  1  an unexpected failure (on one rank: all ranks are aborted, never a hang);
  2  bad input, a bad file or a file that cannot be written (a ParsolveError; a full disk:
     a StorageError, which says what the run kept);
  3  SIGTERM or SIGUSR1 (e.g. SLURM's --signal) ended the run after writing a checkpoint:
     run again with --restart auto (or the checkpoint) to continue.
"""
import argparse
import dataclasses
import os
import runpy
import sys

from .io.describe import describe  # noqa: F401  (`parsolve info`; also imported from here)

EXIT_INPUT = 2


def main(argv=None):
    parser = argparse.ArgumentParser(prog="parsolve", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a model script")
    run.add_argument("script")
    run.add_argument("--output", help="results file (overrides the script's default)")
    run.add_argument("--restart", metavar="CKPT",
                     help="continue from this checkpoint, or 'auto': the newest one in the "
                          "checkpoint directory if there is one (else start afresh)")
    run.add_argument("--frames", type=float, metavar="T", help="simulated seconds between "
                     "frames (0: no frames; default: the script's, else the first and last)")
    run.add_argument("--checkpoint-every", type=int, metavar="N", help="steps between checkpoints")
    run.add_argument("--checkpoint-seconds", type=float, metavar="T",
                     help="wall-clock seconds between checkpoints")
    run.add_argument("--checkpoint-keep", type=int, metavar="K", help="how many to keep (3)")
    run.add_argument("--checkpoint-dir", metavar="DIR", help="where (./checkpoints)")
    run.add_argument("--fclib-step", type=int, metavar="N",
                     help="export the contact problem of step N as an FCLIB file (one rank)")
    run.add_argument("--fclib-out", metavar="FILE", help="where (default: stepN.fclib.h5)")
    run.epilog = "Arguments after `--` (or unknown to parsolve) are passed to the script."
    fc = sub.add_parser("fclib", help="solve or describe an FCLIB local problem (HDF5, or "
                        "Siconos' text form for a .dat file)")
    fcs = fc.add_subparsers(dest="fclib_command", required=True)
    solve = fcs.add_parser("solve", help="solve it; print one JSON line")
    solve.add_argument("file")
    solve.add_argument("--solver", default="gs",
                       help="gs, newton, hybrid, ipm (interior point, Newton to polish) "
                            "or auto (the Hybrid for tol <= 1e-6, "
                            "else Gauss-Seidel with omega 1.5)")
    solve.add_argument("--local", default="auto",
                       help="projection, quartic, newton, auto or warm (auto with a warm "
                            "Newton slide)")
    solve.add_argument("--tol", type=float, default=1e-8)
    solve.add_argument("--max-iter", type=int, default=1000)
    solve.add_argument("--omega", type=float, default=1.0)
    solve.add_argument("--adapt", type=int, metavar="K",
                       help="gs: back omega off towards 1 after K sweeps without progress")
    solve.add_argument("--check", type=int, default=1, metavar="K",
                       help="gs: measure the stop criterion every K sweeps (1)")
    solve.add_argument("--stop", default="residual", choices=("residual", "change"),
                       help="gs: stop on the residual (default) or on the reactions' change "
                            "over a sweep (LMGC90's Quad criterion)")
    solve.add_argument("--out", help="write /solution/r and /solution/u here")
    finfo = fcs.add_parser("info", help="sizes, non-zeros, friction range")
    finfo.add_argument("file")
    info = sub.add_parser("info", help="say what a results or checkpoint file holds")
    info.add_argument("file")
    plot = sub.add_parser("plot", help="PNG plots of a results file's history")
    plot.add_argument("file")
    plot.add_argument("--out", help="output folder (default: next to FILE)")
    rend = sub.add_parser("render", help="an offscreen PNG of a frame (needs VTK)")
    rend.add_argument("file")
    rend.add_argument("--frame", type=int, default=-1, help="frame index (default: the last)")
    rend.add_argument("--out", help="the PNG (default: FILE-frameNNNNNN.png)")
    rend.add_argument("--size", default="800x600", help="width x height in pixels")
    rend.add_argument("--color", default="force", choices=("force", "velocity", "none"),
                      help="colour the contact points by force (default) or the bodies by "
                           "speed, with a colour bar")
    rend.add_argument("--chains", type=float, metavar="K", help="draw the force chains: "
                      "contacts above K times the mean normal force")
    meas = sub.add_parser("measure", help="packing, coordination, stress, fabric, forces of "
                          "regions; coarse-grained fields, force chains, masonry joints")
    meas.add_argument("file")
    meas.add_argument("--region", action="append", default=[], metavar="R",
                      help="box:X0,Y0,Z0,X1,Y1,Z1, ball:X,Y,Z,R, grid:X0,..,Z1,NX,NY,NZ or "
                           "slabs:X0,..,Z1,AXIS,N (repeat for several)")
    meas.add_argument("--grid", metavar="G", help="coarse-grain on this grid "
                      "(grid:X0,Y0,Z0,X1,Y1,Z1,NX,NY,NZ)")
    meas.add_argument("--kernel", default="gaussian", help="gaussian or lucy")
    meas.add_argument("--width", type=float, help="the kernel's width [m] (default: twice "
                      "the largest cell side)")
    meas.add_argument("--frames", help="frame indices, comma-separated (default: all)")
    meas.add_argument("--chains", type=float, metavar="K", help="force chains: contacts "
                      "above K times the mean normal force")
    meas.add_argument("--joints", action="store_true", help="masonry joints and thrust points")
    meas.add_argument("--contact-gap", type=float, help="count contacts by gap <= this "
                      "instead of by force")
    meas.add_argument("--contact-force", type=float, default=0.0,
                      help="count contacts whose normal force exceeds this [N] (0)")
    meas.add_argument("--min-contacts", type=int, default=2,
                      help="rattlers have fewer contacts than this (2)")
    meas.add_argument("--kinetic", action="store_true", help="add the kinetic stress")
    meas.add_argument("--out", help="the measures file (default FILE-measures.h5)")
    meas.add_argument("--no-plots", action="store_true")
    dofs = sub.add_parser("dofs", help="the free motions (degrees of freedom) of a model's "
                                       "constrained bodies")
    from .analysis import cli as analysis_cli

    analysis_cli.add_arguments(dofs)
    argv = sys.argv[1:] if argv is None else list(argv)
    ns, rest = parser.parse_known_args(argv)
    if ns.command == "run":
        ns.args = [a for a in rest if a != "--"]
        return _run(ns)
    if ns.command == "info":
        return _guard(lambda: print(describe(ns.file)))
    if ns.command == "fclib":
        return _guard(lambda: _fclib(ns))
    if ns.command == "dofs":
        ns.args = [a for a in rest if a != "--"]
        return _guard(lambda: analysis_cli.run(ns))
    if ns.command == "render":
        from .io.render import render

        return _guard(lambda: print(render(ns.file, ns.frame, ns.out, _size(ns.size),
                                           ns.color, ns.chains)))
    if ns.command == "measure":
        return _guard(lambda: print("\n".join(_measure(ns))))
    if ns.command == "plot":
        from .io.plot import plot_history

        return _guard(lambda: print("\n".join(plot_history(ns.file, ns.out))))
    return 1


def _measure(ns):
    """`parsolve measure FILE ...`: the paths written."""
    from .errors import InputError
    from .io.measures import measure_file

    if not ns.region and ns.grid is None and ns.chains is None and not ns.joints:
        raise InputError("parsolve measure: give --region, --grid, --chains or --joints")
    try:
        frames = None if ns.frames is None else [int(k) for k in ns.frames.split(",")]
    except ValueError:
        raise InputError(f"--frames: expected indices like 0,-1, got {ns.frames!r}") from None
    return measure_file(ns.file, ns.region, ns.grid, frames, ns.kernel, ns.width, ns.chains,
                        ns.joints, ns.out, not ns.no_plots, contact_gap=ns.contact_gap,
                        contact_force=ns.contact_force, min_contacts=ns.min_contacts,
                        kinetic=ns.kinetic)


def _size(text):
    from .errors import InputError

    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InputError(f"--size: expected WIDTHxHEIGHT, got {text!r}") from None
    return w, h


def _run(ns):
    if not os.path.isfile(ns.script):
        print(f"parsolve: error: no model script {ns.script!r}", file=sys.stderr)
        return EXIT_INPUT
    if ns.fclib_step is not None and ns.fclib_out is None:
        ns.fclib_out = f"step{ns.fclib_step}.fclib.h5"
    from .run import simulation

    # the options the command line gives override the script's: every Simulation of the
    # script receives them (parsolve.run.Overrides)
    simulation.COMMAND_LINE = simulation.Overrides(
        **{f.name: getattr(ns, f.name) for f in dataclasses.fields(simulation.Overrides)})
    sys.argv = [ns.script] + list(ns.args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    simulation.catch_stop_signals()   # from here on SIGTERM/SIGUSR1 stop the run, never kill it
    return _guard(lambda: runpy.run_path(ns.script, run_name="__main__"), script=ns.script)


def _guard(fn, script=None):
    """Run `fn`; turn its errors into one message and an exit code, on every rank alike.

    A ParsolveError raised on every rank (collective) is printed once, by rank 0, one line per
    failing rank (exit 2). Any other error: the failing ranks agree on a side channel whether
    all of them failed (then rank 0 prints their messages once) or not (then this rank prints
    its own and aborts the job: a rank left waiting in a collective call would hang). An
    exception of the model script shows the script's own frames only."""
    from .platform import env as _env

    _env.configure()
    from .errors import ParsolveError
    from .parallel.comm import ErrorChannel, abort, world_rank_size

    rank, size = world_rank_size()
    channel = ErrorChannel() if size > 1 else None
    try:
        fn()
    except SystemExit:
        raise
    except BrokenPipeError:          # `parsolve info FILE | head`: the reader left early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except BaseException as exc:
        code = EXIT_INPUT if isinstance(exc, ParsolveError) else 1
        text = str(exc) if isinstance(exc, ParsolveError) else _describe_exception(exc, script)
        if channel is None:
            print(f"parsolve: error: {text}", file=sys.stderr, flush=True)
            return code
        if getattr(exc, "collective", False):
            messages = getattr(exc, "messages", None) or [(None, text)]
        else:
            gathered = channel.agree(text)
            if gathered is None:            # not every rank failed: end them all
                print(f"parsolve: error (rank {rank}): {text}", file=sys.stderr, flush=True)
                abort(code)
            messages = list(enumerate(gathered))
        if rank == 0:
            print(_format_rank_errors(messages, size), file=sys.stderr, flush=True)
        return code
    return 0


def _format_rank_errors(messages, size):
    """One line per distinct message, naming the ranks that raised it."""
    by_text = {}
    for r, text in messages:
        by_text.setdefault(text, []).append(r)
    lines = []
    for text, ranks in by_text.items():
        if ranks == [None] or len(ranks) == size > 1:
            where = "all ranks" if size > 1 else ""
        else:
            where = ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))
        head, _, rest = text.partition("\n")
        lines.append(f"parsolve: error ({where}): {head}" + (f"\n{rest}" if rest else ""))
    return "\n".join(lines)


def _describe_exception(exc, script):
    """The compiler's message for a syntax error in the model script; for an exception the
    script raised, a traceback of the script's frames only; for one raised inside parsolve
    (a bug to report), the frames from the script on (never the command line's or runpy's)."""
    import traceback

    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    frames = traceback.extract_tb(exc.__traceback__)
    if script is not None:
        mine = [os.path.abspath(f.filename) == os.path.abspath(script) for f in frames]
        if any(mine):
            frames = frames[mine.index(True):]
            if mine[-1]:
                frames = [f for f, m in zip(frames, mine[mine.index(True):]) if m]
    return ("Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
            + "".join(traceback.format_exception_only(type(exc), exc))).rstrip()


def _fclib(ns):
    """`parsolve fclib solve|info FILE`."""
    import json

    from .io import fclib

    problem = fclib.read(ns.file)
    if ns.fclib_command == "info":
        print(f"{ns.file}: FCLIB local problem, {problem.n} contacts, W {3 * problem.n} x "
              f"{3 * problem.n} with {len(problem.blocks)} blocks of 3 x 3, mu in "
              f"[{problem.mu.min() if problem.n else 0:g}, "
              f"{problem.mu.max() if problem.n else 0:g}]"
              + (f"\n  {problem.title}" if problem.title else "")
              + (f"\n  {problem.description}" if problem.description else ""))
        return
    gs = {k: v for k, v, off in (("adapt", ns.adapt, None), ("check", ns.check, 1),
                                 ("stop", ns.stop, "residual")) if v != off}
    R, U, report = fclib.solve(problem, ns.solver, ns.local, ns.tol, ns.max_iter, ns.omega,
                               **gs)
    if ns.out:
        fclib.write_solution(ns.out, R, U)
    record = {"contacts": problem.n, "solver": ns.solver,
              "local": ns.local if ns.solver in ("gs", "hybrid") else None,
              "iterations": int(report.iterations), "residual": float(report.residual),
              "seconds": float(report.seconds), "converged": bool(report.converged),
              "events": dict(report.events)}        # solver events: fallbacks, proximal steps
    for extra in ("ksp_iterations", "stages"):
        if hasattr(report, extra):
            record[extra] = getattr(report, extra)
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    sys.exit(main())
