"""Plot paper 003's Fig. 2 from a sweep of examples/sweeps/abe_fig2.toml.

    ccsim sweep examples/sweeps/abe_fig2.toml -o out/abe-fig2
    python examples/sweeps/plot_abe_fig2.py out/abe-fig2     # -> out/abe-fig2/abe_fig2.png

Simulated utilisation against the buffer size b (in BDPs), one line per beta, with the
model of Eqs. (5)-(6) (delta = 1 BDP) as dashed lines of the same colour.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ccsim.sweep_store import read_results


def model_utilisation(b: np.ndarray, beta: float, delta: float = 1.0) -> np.ndarray:
    """Eq. (5)/(6): utilisation of one AIMD flow with backoff beta and buffer b."""
    b = np.asarray(b, dtype=float)
    u = 1 - (delta - beta * (b + delta)) ** 2 / (2 * delta * (1 - beta) * (b + delta))
    return np.where(b >= delta * (1 - beta) / beta, 1.0, u)


def main(out: str) -> Path:
    table = read_results(out)
    table = table.filter(pc.equal(table.column("status"), "ok"))
    b = np.asarray(table.column("buffer_bdp").to_pylist(), dtype=float)
    betas = np.asarray(table.column("beta").to_pylist(), dtype=float)
    util = np.asarray(table.column("utilisation").to_pylist(), dtype=float)

    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    grid = np.linspace(0.0, 1.0, 201)
    for i, beta in enumerate(sorted(set(betas))):
        colour = f"C{i}"
        sel = betas == beta
        xs = np.unique(b[sel])
        ys = [util[sel & (b == x)].mean() for x in xs]
        ax.plot(xs, ys, "o-", color=colour, ms=4, label=f"β = {beta:g} (simulation)")
        ax.plot(grid, model_utilisation(grid, beta), "--", color=colour, lw=1, alpha=0.8)
    ax.plot([], [], "k--", lw=1, label="model, Eq. (5)/(6)")
    ax.set_xlabel("buffer b / BDP")
    ax.set_ylabel("bottleneck utilisation")
    ax.set_title("Single NewReno flow @ 10 Mbit/s, RTT 100 ms (paper 003, Fig. 2)")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(min(0.7, float(util.min()) - 0.02), 1.01)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    path = Path(out) / "abe_fig2.png"
    fig.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python examples/sweeps/plot_abe_fig2.py SWEEP_DIR")
    print(main(sys.argv[1]))
