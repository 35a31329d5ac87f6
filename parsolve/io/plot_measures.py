"""PNG plots of a measures file (parsolve/io/measures.py), matplotlib without a display: per
region, its measures against time (one line per cell, at most 8), a profile along the one
axis a grid of slabs is cut across (at the last frame), and the distribution of the normal
contact forces in units of their mean."""
import os

import numpy as np

CELLS_DRAWN = 8


def plot_measures(path):
    """Write the plots next to the measures file `path`; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .hdf5 import h5py_module as _h5py

    base = os.path.splitext(path)[0]
    written = []
    with _h5py().File(path, "r") as f:
        t = f["frames/time"][()]
        for name in sorted(k for k in f if k.startswith("region")):
            g = f[name]
            data = {k: g[k][()] for k in g}
            ncells = data["packing"].shape[1]
            cells = range(min(ncells, CELLS_DRAWN))
            panels = (("packing", "packing fraction"),
                      ("coordination", "coordination number"),
                      ("pressure", "pressure (Love-Weber) [Pa]"),
                      ("mean_force", "mean normal contact force [N]"))
            if len(t) > 1:
                fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
                for ax, (key, label) in zip(axes.ravel(), panels):
                    for c in cells:
                        ax.plot(t, data[key][:, c], label=f"cell {c}" if ncells > 1 else None)
                    ax.set_ylabel(label)
                    ax.grid(alpha=0.3)
                for ax in axes[1]:
                    ax.set_xlabel("time [s]")
                if ncells > 1:
                    axes[0, 0].legend(fontsize="small")
                fig.suptitle(f"{os.path.basename(path)}: {name}")
                written.append(_save(fig, plt, f"{base}-{name}.png"))
            shape = g.attrs.get("shape")
            if shape is not None and np.sum(np.asarray(shape) > 1) == 1:
                axis = int(np.argmax(shape))
                lo, hi = g.attrs["lo"][axis], g.attrs["hi"][axis]
                n = int(shape[axis])
                z = lo + (np.arange(n) + 0.5) * (hi - lo) / n
                fig, axes = plt.subplots(1, 3, figsize=(12, 4.5), sharey=True)
                axes[0].plot(data["packing"][-1], z, "o-")
                axes[0].set_xlabel("packing fraction")
                axes[1].plot(data["coordination"][-1], z, "o-", label="all")
                axes[1].plot(data["coordination_mechanical"][-1], z, "s--",
                             label="without rattlers")
                axes[1].set_xlabel("coordination number")
                axes[1].legend(fontsize="small")
                for i, c in enumerate("xyz"):
                    axes[2].plot(data["stress"][-1][:, i, i], z, "o-", label=f"sigma_{c}{c}")
                axes[2].set_xlabel("stress, compression positive [Pa]")
                axes[2].legend(fontsize="small")
                axes[0].set_ylabel(f"{'xyz'[axis]} [m]")
                for ax in axes:
                    ax.grid(alpha=0.3)
                fig.suptitle(f"{os.path.basename(path)}: {name}, profile at t = {t[-1]:.6g} s")
                written.append(_save(fig, plt, f"{base}-{name}-profile.png"))
            if "force_histogram" in data and data["force_histogram"][-1].sum() > 0:
                edges = g.attrs["force_edges"]
                counts = data["force_histogram"][-1].sum(axis=0)
                width = np.diff(edges[:-1])[0]
                fig, ax = plt.subplots(figsize=(7, 4.5))
                ax.bar(edges[:-1], counts / counts.sum() / width, width=width, align="edge")
                ax.set_xlabel("normal force / mean (last bin: above 5)")
                ax.set_ylabel("probability density")
                ax.set_yscale("log")
                ax.set_title(f"{os.path.basename(path)}: {name}, t = {t[-1]:.6g} s")
                written.append(_save(fig, plt, f"{base}-{name}-forces.png"))
    return written


def _save(fig, plt, out):
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
