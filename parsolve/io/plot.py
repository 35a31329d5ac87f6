"""PNG plots of a results file's history (matplotlib, no display needed)."""
import os

import numpy as np


def plot_history(path, out=None):
    """Write energy, contacts, iterations, residual and phase-time plots; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..cli import describe
    from .results import read_history

    describe(path)                                    # refuses foreign or corrupt files
    h = read_history(path)
    t = h["time"]
    out = out or os.path.splitext(path)[0] + "-plots"
    os.makedirs(out, exist_ok=True)
    figures = {
        "energy": [("kinetic", h["kinetic_energy"]), ("potential", h["potential_energy"]),
                   ("total", h["kinetic_energy"] + h["potential_energy"])],
        "contacts": [("contacts", h["contacts"])],
        "iterations": [("solver iterations", h["iterations"])],
        "residual": [("residual", h["residual"])],
    }
    units = {"energy": "J", "contacts": "", "iterations": "", "residual": ""}
    written = []
    for name, curves in figures.items():
        fig, ax = plt.subplots(figsize=(7, 4))
        for label, y in curves:
            ax.plot(t, y, label=label, lw=1)
        if name == "residual" and np.all(h["residual"] > 0):
            ax.set_yscale("log")
        ax.set_xlabel("time [s]")
        ax.set_ylabel(f"{name} [{units[name]}]" if units[name] else name)
        ax.legend()
        ax.grid(alpha=0.3)
        written.append(_save(fig, out, name))
    phases = [k for k in h if k.startswith("t_")]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.stackplot(t, *[h[k] for k in phases], labels=[k[2:] for k in phases])
    ax.set_xlabel("time [s]")
    ax.set_ylabel("wall seconds per step")
    ax.legend(fontsize=7, loc="upper left")
    written.append(_save(fig, out, "phases"))
    plt.close("all")
    return written


def _save(fig, out, name):
    path = os.path.join(out, f"{name}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path
