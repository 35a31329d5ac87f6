"""PNG plots of a results file's history (matplotlib, no display needed): energies and the
energy balance, contacts, solver iterations with the cap, the residual on a log axis with the
tolerance, and the wall time per phase."""
import os


def plot_history(path, out=None):
    """Write the plots next to `path` (or in `out`); returns the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .describe import describe
    from .hdf5 import h5py_module
    from .results import read_history

    h5py = h5py_module()
    describe(path)                                    # refuses foreign or corrupt files
    h = read_history(path)
    with h5py.File(path, "r") as f:
        attrs = dict(f.attrs)
    tol, cap = attrs.get("summary_tolerance"), attrs.get("summary_max_iter")
    t = h["time"]
    title = os.path.basename(path)
    out = out or os.path.splitext(path)[0] + "-plots"
    os.makedirs(out, exist_ok=True)
    total = h["kinetic_energy"] + h["potential_energy"]
    figures = {
        "energy": ("energy [J]", [("kinetic", h["kinetic_energy"]),
                                  ("potential", h["potential_energy"]), ("total", total)]),
        "energy-balance": ("energy [J]", [
            ("kinetic + potential", total), ("work of loads", h.get("work_loads")),
            ("dissipated by contacts", h.get("dissipated")),
            ("balance error", h.get("energy_error"))]),
        "contacts": ("contacts", [("contacts", h["contacts"])]),
        "iterations": ("solver iterations per step", [("iterations", h["iterations"])]),
        "residual": ("residual", [("residual", h["residual"])]),
    }
    written = []
    for name, (ylabel, curves) in figures.items():
        fig, ax = plt.subplots(figsize=(7, 4))
        for label, y in curves:
            if y is not None:
                ax.plot(t, y, label=label, lw=1)
        if name == "residual":                       # steps without contacts have none
            positive = h["residual"] > 0
            ax.cla()
            ax.semilogy(t[positive], h["residual"][positive], ".", ms=2, label="residual")
            if tol:
                ax.axhline(tol, color="red", ls="--", lw=1, label=f"tolerance {tol:g}")
        if name == "iterations" and cap:
            ax.axhline(cap, color="red", ls="--", lw=1, label=f"cap {cap}")
        ax.set_title(f"{title}: {name.replace('-', ' ')}")
        ax.set_xlabel("time [s]")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        written.append(_save(fig, out, name))
    phases = [k for k in h if k.startswith("t_")]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.stackplot(t, *[h[k] for k in phases], labels=[k[2:] for k in phases])
    ax.set_title(f"{title}: wall time per phase")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("wall seconds per step")
    ax.legend(fontsize=7, loc="upper left")
    written.append(_save(fig, out, "phases"))
    with h5py.File(path, "r") as f:                   # connectors: q, v, f_SD per step
        if "connectors" in f and f["connectors/step"].shape[0]:
            c = {k: f["connectors"][k][()] for k in ("time", "displacement", "velocity",
                                                     "force")}
            fig, axes = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
            for ax, (k, unit) in zip(axes, (("displacement", "m"), ("velocity", "m/s"),
                                            ("force", "N"))):
                ax.plot(c["time"], c[k], lw=1)
                ax.set_ylabel(f"{k} [{unit}]")
                ax.grid(alpha=0.3)
            axes[0].set_title(f"{title}: connectors")
            axes[-1].set_xlabel("time [s]")
            written.append(_save(fig, out, "connectors"))
    plt.close("all")
    return written


def _save(fig, out, name):
    path = os.path.join(out, f"{name}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
