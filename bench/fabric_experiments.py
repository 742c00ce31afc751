"""The fabric experiments of issue 30: incast against N and a permutation's ECMP spread.

Runs ``examples/sweeps/incast.toml`` (N = 1..96 senders x NewReno/CUBIC over DropTail,
DCTCP over step-marking RED, 3 seeds) and ``examples/permutation.toml`` (3 seeds), prints
the numbers the networks docs quote (markdown tables) and draws ``docs/img/incast.png``
and ``docs/img/permutation.png``. About a minute on one core::

    python bench/fabric_experiments.py [-o out/fabric] [--img docs/img]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pyarrow.parquet as pq

import ccsim

ROOT = Path(__file__).resolve().parent.parent
#: The incast's receiver port: where the senders' bursts meet.
RECEIVER_PORT = "leaf0-host0"
TRANSPORTS = ("newreno", "cubic", "dctcp")
#: A block slower than this waited out a 200 ms timer (every other one took < 10 ms).
STALLED_MS = 100.0
LABELS = {
    "newreno": "NewReno, DropTail",
    "cubic": "CUBIC, DropTail",
    "dctcp": "DCTCP, RED step K=65",
}


def incast(out: Path) -> dict[tuple[str, int], dict[str, float]]:
    """Per (transport, N), over the seeds: the worst max and p99 FCT (ms), the mean drops
    at the receiver's port, RTOs, and blocks that waited out a 200 ms timer."""
    sweep_dir = out / "incast-sweep"
    ccsim.sweep(str(ROOT / "examples/sweeps/incast.toml"), str(sweep_dir), jobs=2)
    results = pq.read_table(sweep_dir / "results.parquet").to_pylist()
    case = {r["run"]: (r["transport"], int(r["senders"])) for r in results if r["status"] == "ok"}
    fct: dict[int, list[float]] = defaultdict(list)
    timeouts: dict[int, int] = defaultdict(int)
    for row in ds.dataset(sweep_dir / "series/transfers").to_table().to_pylist():
        fct[row["run"]].append(row["fct_s"])
        timeouts[row["run"]] += row["timeouts"]
    drops = {
        row["run"]: row["drops"]
        for row in ds.dataset(sweep_dir / "series/queues").to_table().to_pylist()
        if row["queue"] == RECEIVER_PORT
    }
    per_case: dict[tuple[str, int], list[int]] = defaultdict(list)
    for run, key in case.items():
        per_case[key].append(run)
    table = {}
    for key, runs in sorted(per_case.items()):
        # An unfinished transfer (NaN) counts as the run's length: it did not finish.
        f = [np.nan_to_num(np.array(fct[r], dtype=float), nan=1.0) * 1e3 for r in runs]
        table[key] = {
            "fct_max_ms": max(float(v.max()) for v in f),
            "fct_p99_ms": max(float(np.quantile(v, 0.99)) for v in f),
            "fct_median_ms": float(np.median([np.median(v) for v in f])),
            "drops": float(np.mean([drops.get(r, 0) for r in runs])),
            "rtos": float(np.mean([timeouts[r] for r in runs])),
            # Blocks that waited out a 200 ms timer: an RTO, or a tail-loss probe with
            # one packet out (Linux arms it at 2 srtt + the 200 ms delayed-ACK allowance).
            "stalled": float(np.mean([int((v > STALLED_MS).sum()) for v in f])),
        }
    return table


def permutation(seeds: list[int]) -> list[dict]:
    """Each seed's fabric-link utilisations, flows per uplink, and flow throughputs."""
    runs = []
    for seed in seeds:
        r = ccsim.run(str(ROOT / "examples/permutation.toml"), overrides={"seed": seed})
        s = r.summary
        util = {link["name"]: link["utilisation"] for link in s["links"]}
        # Which fabric links each flow's data crosses (node pairs along its path).
        load: dict[str, int] = defaultdict(int)
        for path in s["paths"]:
            for a, b in pairwise(path):
                load[f"{a}-{b}"] += 1
        fabric = [n for n in util if "spine" in n]
        runs.append(
            {
                "seed": seed,
                "uplinks": [(util[n], load[n]) for n in fabric if n.startswith("leaf")],
                "downlinks": [(util[n], load[n]) for n in fabric if n.startswith("spine")],
                "throughput_gbps": np.array([f["throughput_mbps"] for f in s["flows"]]) / 1e3,
                "wall_s": s["wall_s"],
                "events": s["events"],
            }
        )
    return runs


def draw_incast(table: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for t in TRANSPORTS:
        ns = sorted(n for (tt, n) in table if tt == t)
        rows = [table[(t, n)] for n in ns]
        axes[0].plot(ns, [r["fct_max_ms"] for r in rows], "o-", label=LABELS[t])
        axes[0].plot(
            ns, [r["fct_median_ms"] for r in rows], ":", color=axes[0].lines[-1].get_color()
        )
        axes[1].plot(ns, [r["drops"] for r in rows], "o-", label=LABELS[t])
        axes[2].plot(ns, [r["stalled"] for r in rows], "o-", label=LABELS[t])
    axes[0].set_yscale("log")
    axes[0].axhline(200, color="grey", lw=0.8, ls="--")
    axes[0].text(1, 230, "RTO min 200 ms", color="grey", fontsize=8)
    axes[0].set_title("(a) block completion: max (solid), median (dotted)")
    axes[0].set_ylabel("flow completion time (ms)")
    axes[1].set_title(f"(b) drops at the receiver's port {RECEIVER_PORT}")
    axes[1].set_ylabel("packets dropped (mean of 3 seeds)")
    axes[2].set_title("(c) blocks that waited out a 200 ms timer")
    axes[2].set_ylabel(f"blocks slower than {STALLED_MS:.0f} ms (mean of 3 seeds)")
    for ax in axes:
        ax.set_xlabel("senders N (64 KB each)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        "Incast on a 4x8x16 leaf-spine (10/40 Gbit/s, 100-packet ports): N senders to one host",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_permutation(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for i, r in enumerate(runs):
        up = np.array(r["uplinks"])
        jitter = (i - 1) * 0.12
        axes[0].scatter(up[:, 1] + jitter, up[:, 0], s=14, alpha=0.7, label=f"seed {r['seed']}")
        tp = np.sort(r["throughput_gbps"])
        axes[1].step(
            tp, np.arange(1, len(tp) + 1) / len(tp), where="post", label=f"seed {r['seed']}"
        )
    axes[0].set_xlabel("flows ECMP hashed onto the leaf-to-spine link")
    axes[0].set_ylabel("link utilisation (measurement window)")
    axes[0].set_title("(a) the 32 leaf-to-spine uplinks: hash collisions fill some")
    axes[0].axvline(4, color="grey", lw=0.8, ls="--")
    axes[0].text(4.05, 0.15, "4 flows x 10 Gbit/s = 40 Gbit/s", color="grey", fontsize=8)
    axes[1].set_xlabel("flow throughput (Gbit/s)")
    axes[1].set_ylabel("fraction of the 128 flows")
    axes[1].set_title("(b) flow throughput CDF (host line rate 10 Gbit/s)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        "Random permutation of 128 long DCTCP flows on a 4x8x16 leaf-spine with ECMP", fontsize=11
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="out/fabric", help="where the incast sweep goes")
    ap.add_argument("--img", default=str(ROOT / "docs/img"), help="where the figures go")
    ap.add_argument("--seeds", default="1,2,3", help="the permutation's seeds")
    args = ap.parse_args(argv)
    out, img = Path(args.out), Path(args.img)
    table = incast(out)
    print(
        "| N | "
        + " | ".join(f"{t}: max / p99 FCT ms, drops, RTOs, stalled" for t in TRANSPORTS)
        + " |"
    )
    print("| --- |" + " --- |" * len(TRANSPORTS))
    for n in sorted({n for (_, n) in table}):
        cells = []
        for t in TRANSPORTS:
            r = table[(t, n)]
            cells.append(
                f"{r['fct_max_ms']:.1f} / {r['fct_p99_ms']:.1f}, {r['drops']:.0f}, "
                f"{r['rtos']:.1f}, {r['stalled']:.1f}"
            )
        print(f"| {n} | " + " | ".join(cells) + " |")
    draw_incast(table, img / "incast.png")
    runs = permutation([int(s) for s in args.seeds.split(",")])
    print(
        "\n| seed | uplink utilisation min / median / max | flows per uplink min-max | "
        "flow Gbit/s min / p10 / median / max | mean | events, wall s |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for r in runs:
        up = np.array(r["uplinks"])
        tp = r["throughput_gbps"]
        print(
            f"| {r['seed']} | {up[:, 0].min():.2f} / {np.median(up[:, 0]):.2f} / "
            f"{up[:, 0].max():.2f} "
            f"| {int(up[:, 1].min())}-{int(up[:, 1].max())} "
            f"| {tp.min():.2f} / {np.quantile(tp, 0.1):.2f} / {np.median(tp):.2f} / {tp.max():.2f} "
            f"| {tp.mean():.2f} | {r['events'] / 1e6:.1f} M, {r['wall_s']:.1f} |"
        )
    draw_permutation(runs, img / "permutation.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
