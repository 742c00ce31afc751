"""BBRv3 (`cc = "bbr3"`) beside BBR v1 (`cc = "bbr"`) in the three set-ups of issue 37.

    python examples/bbr3/bbr3_vs_bbr.py -o out/bbr3            # 3 seeds, 60 s runs
    python examples/bbr3/bbr3_vs_bbr.py -o out/bbr3 --quick    # 1 seed, 30 s runs

(a) Shallow buffer: 2 flows of one version, 50 Mbit/s, 40 ms, DropTail of 0.25 and 0.5
    BDP: retransmissions per packet sent (v3's `bbr_loss_thresh` is 2 %).
(b) Against CUBIC: one BBR flow and one CUBIC flow, 50 Mbit/s, 40 ms, DropTail of 1, 2, 4
    and 8 BDP: the BBR flow's share of the throughput.
(c) ECN at a short RTT: 2 flows of one version, 1 Gbit/s, 1 ms base RTT, step-marking RED
    (mark at an instantaneous queue of K = 20, 40, 80 packets; limit 400 packets), ECN on:
    mean and p99 queueing delay against the threshold's own delay K x 12 µs.

Writes `bbr3_vs_bbr.png` and `bbr3_vs_bbr.json` (every number) to the output directory and
prints the table; the copies beside this script are from the full run (3 seeds, 60 s).
The integration test `crates/ccsim-core/tests/bbr3.rs` runs one short point of each set-up.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import ccsim

CCS = ("bbr", "bbr3")
LABEL = {"bbr": "BBR v1", "bbr3": "BBRv3"}


def scenario(duration: str, measure: str, seed: int, rate: str, queue: dict, flows: list) -> dict:
    return {
        "duration": duration,
        "seed": seed,
        "measure": {"start": measure},
        "bottleneck": {"rate": rate, "queue": queue},
        "flows": flows,
    }


def retrans_rate(summary: dict) -> float:
    flows = summary["flows"]
    return sum(f["retransmits"] for f in flows) / max(1, sum(f["packets_sent"] for f in flows))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", type=Path, default=Path("out/bbr3"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    seeds = [1] if a.quick else [1, 2, 3]
    dur, meas = ("30s", "10s") if a.quick else ("60s", "20s")
    start = {"uniform": ["0s", "1s"]}
    res: dict = {"shallow": [], "cubic": [], "ecn": []}

    for bdp in (0.25, 0.5):
        for cc in CCS:
            rates, utils = [], []
            for seed in seeds:
                s = ccsim.run(scenario(dur, meas, seed, "50Mbps",
                                       {"kind": "droptail", "limit": f"{bdp}bdp"},
                                       [{"count": 2, "cc": cc, "rtt": "40ms", "start": start}]))
                rates.append(retrans_rate(s.summary))
                utils.append(s.summary["bottleneck"]["utilisation"])
            res["shallow"].append({"buffer_bdp": bdp, "cc": cc,
                                   "retrans_rate": statistics.mean(rates),
                                   "utilisation": statistics.mean(utils)})

    for bdp in (1, 2, 4, 8):
        for cc in CCS:
            shares = []
            for seed in seeds:
                s = ccsim.run(scenario(dur, meas, seed, "50Mbps",
                                       {"kind": "droptail", "limit": f"{bdp}bdp"},
                                       [{"cc": cc, "rtt": "40ms", "start": start},
                                        {"cc": "cubic", "rtt": "40ms", "start": start}]))
                shares.append(s.summary["groups"][0]["share"])
            res["cubic"].append({"buffer_bdp": bdp, "cc": cc,
                                 "bbr_share": statistics.mean(shares)})

    for k in (20, 40, 80):
        for cc in CCS:
            s = ccsim.run(scenario("6s", "2s", 1, "1Gbps",
                                   {"kind": "red", "mode": "step", "threshold": f"{k}p",
                                    "ecn": True, "limit": "400p"},
                                   [{"count": 2, "cc": cc, "rtt": "1ms", "ecn": True,
                                     "start": {"uniform": ["0s", "10ms"]}}]))
            b = s.summary["bottleneck"]
            res["ecn"].append({"k_packets": k, "k_ms": k * 1500 * 8 / 1e9 * 1e3, "cc": cc,
                               "sojourn_mean_ms": b["sojourn_mean_ms"],
                               "sojourn_p99_ms": b["sojourn_p99_ms"],
                               "utilisation": s.summary["utilisation"],
                               "retrans_rate": retrans_rate(s.summary)})

    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "bbr3_vs_bbr.json").write_text(json.dumps(res, indent=1) + "\n")
    for part, rows in res.items():
        print(f"[{part}]")
        for r in rows:
            print("  " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                   for k, v in r.items()))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    width = 0.35
    for i, cc in enumerate(CCS):
        rows = [r for r in res["shallow"] if r["cc"] == cc]
        xs = [j + (i - 0.5) * width for j in range(len(rows))]
        ax[0].bar(xs, [100 * r["retrans_rate"] for r in rows], width, label=LABEL[cc])
        ax[0].set_xticks(range(len(rows)), [f"{r['buffer_bdp']} BDP" for r in rows])
        rows = [r for r in res["cubic"] if r["cc"] == cc]
        ax[1].plot([r["buffer_bdp"] for r in rows], [r["bbr_share"] for r in rows], "o-",
                   label=LABEL[cc])
        rows = [r for r in res["ecn"] if r["cc"] == cc]
        ax[2].plot([r["k_ms"] for r in rows], [r["sojourn_mean_ms"] for r in rows], "o-",
                   label=f"{LABEL[cc]} mean")
        ax[2].plot([r["k_ms"] for r in rows], [r["sojourn_p99_ms"] for r in rows], "x--",
                   label=f"{LABEL[cc]} p99")
    ax[0].axhline(2.0, color="grey", ls=":", label="bbr_loss_thresh 2 %")
    ax[0].set(title="(a) 2 flows, 50 Mbit/s, 40 ms, DropTail", ylabel="retransmissions (%)")
    ax[1].axhline(0.5, color="grey", ls=":", label="equal share")
    ax[1].set(title="(b) 1 BBR + 1 CUBIC, 50 Mbit/s, 40 ms", xlabel="buffer (BDP)",
              ylabel="BBR share of throughput", xscale="log", ylim=(0, 1))
    ax[1].set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
    ax[1].minorticks_off()
    ks = [r["k_ms"] for r in res["ecn"] if r["cc"] == "bbr3"]
    ax[2].plot(ks, ks, color="grey", ls=":", label="marking threshold K")
    ax[2].set(title="(c) 2 flows, 1 Gbit/s, 1 ms, step-marking RED", xlabel="K (ms)",
              ylabel="queueing delay (ms)", yscale="log")
    for x in ax:
        x.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out / "bbr3_vs_bbr.png", dpi=120)
    print(f"figure: {a.out / 'bbr3_vs_bbr.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
