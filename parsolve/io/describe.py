"""`parsolve info FILE`: what a parsolve results or checkpoint file holds, in a few lines."""
import os


def describe(path):
    """A short human description of a parsolve results file."""
    path = os.fspath(path)                        # a str: quoted as one in messages
    from ..errors import FileFormatError
    from .hdf5 import h5py_module

    h5py = h5py_module()
    try:
        f = h5py.File(path, "r")
    except (OSError, FileNotFoundError) as exc:
        raise FileFormatError(f"{path!r}: not a readable HDF5 file ({exc})") from None
    with f:
        kind = f.attrs.get("format", "")
        if kind == "parsolve-checkpoint":
            a = f.attrs
            return (f"{path}: parsolve checkpoint, version {a['version']}, step {a['step']}, "
                    f"t = {a['time']:.6g} s (step size {a['step_size']:g} s), written on "
                    f"{a['ranks']} rank(s)\n  bodies {a['bodies']}, contacts {a['contacts']} "
                    f"(with reactions), model fingerprint {str(a['model_fingerprint'])[:16]}..."
                    f"\n  restart: parsolve run MODEL.py --restart {path}   (any number of "
                    "ranks)")
        if kind != "parsolve-results":
            raise FileFormatError(f"{path!r}: not a parsolve file (format attribute {kind!r})")
        h = f["history"]
        n = h["step"].shape[0]
        lines = [f"{path}: parsolve results, version {f.attrs['version']}, "
                 f"step {f.attrs['step_size']:g} s, written on {f.attrs['ranks']} rank(s)",
                 f"  bodies {f['model/bodies/gid'].shape[0]}, obstacles "
                 f"{f['model/obstacles/point'].shape[0]}, materials "
                 f"{list(f['model/materials'].attrs['labels'])}",
                 f"  history: {n} steps ({', '.join(h)})"]
        if n:
            lines.append(f"  time {h['time'][-1]:.6g} s, kinetic energy {h['kinetic_energy'][-1]:.4g}"
                         f" J, contacts {h['contacts'][-1]}, residual {h['residual'][-1]:.2e}")
        if "connectors" in f:
            c = f["connectors"]
            lines.append(f"  connectors: {c['displacement'].shape[1:]} over {c['step'].shape[0]}"
                         f" steps ({', '.join(k for k in c if k not in ('step', 'time'))})")
        for name, g in (f["events"].items() if "events" in f else ()):
            lines.append(f"  events/{name}: {g['step'].shape[0]} "
                         f"({', '.join(k for k in g if k not in ('step', 'time'))})")
        nf = f["frames/time"].shape[0]
        lines.append(f"  frames: {nf} at t = {', '.join(f'{t:.4g}' for t in f['frames/time'][:8])}"
                     + (" ..." if nf > 8 else ""))
        a = f.attrs
        if "summary_steps" in a:
            lines.append(f"  run: {a['summary_steps']} steps in {a['summary_wall_seconds']:.1f} s "
                         f"on {a['summary_ranks']} rank(s), unconverged steps "
                         f"{a['summary_unconverged_steps']}, final residual "
                         f"{a['summary_final_residual']:.2e}"
                         + (f", ended by {a['summary_stopped_by']}"
                            if a["summary_stopped_by"] else ""))
        elif not a.get("complete", True):
            lines.append("  not closed: the run is going on, or it ended without closing the "
                         "file (killed?): it holds everything up to its last closed segment")
        if "missing_parts" in a:
            lines.append(f"  parts missing (history has a gap): {a['missing_parts']}")
        return "\n".join(lines)
