# ruff: noqa: RUF001  (the report prints the multiplication and minus signs, as RESULTS.md does)
"""``bench/LINUX.md``: per case and metric, ccsim vs Linux, the paired difference with its
95 % interval, the target and the verdict of ``ccsim_ns3.agreement`` (the same rule as
``bench/DIFFERENTIAL.md``); every miss carries a reason from ``reasons.py`` or "not yet
explained"."""

from __future__ import annotations

import math
import platform
import statistics
import time
from typing import Any

from ccsim_linux.reasons import reason_for
from ccsim_ns3 import agreement

TARGETS = (
    "utilisation within 2 percentage points; each group's goodput share within 5 % relative "
    "(cases with two groups); sojourn p50 and p90 within 15 % or 2 ms, whichever is larger; "
    "drop probability within 20 % relative (when either side has 20 drops or more in all its "
    "runs; fewer is reported without a target)"
)
MARK = {agreement.WITHIN: "✅", agreement.OVERLAP: "✅~", agreement.OUTSIDE: "❌"}
MIN_DROPS = 20


def _ci(d: agreement.PairedDifference, fmt: str) -> str:
    if d.half_width is None:
        return "(1 pair)"
    if math.isinf(d.half_width):
        return "±∞"
    return "±" + format(d.half_width, fmt)


def compare_case(entry: dict[str, Any], n_flows: int) -> list[dict[str, Any]]:
    """One row per metric: values, difference, interval, tolerance, verdict."""
    runs = entry["runs"]
    sim = [r["sim"] for r in runs]
    lin = [r["linux"] for r in runs]
    rows: list[dict[str, Any]] = []

    def absolute(
        metric: str,
        key: str,
        unit: str,
        tol: float | None,
        fmt: str = ".2f",
        diff_unit: str | None = None,
    ) -> None:
        xs, ys = [m[key] for m in sim], [m[key] for m in lin]
        d = agreement.mean_difference(xs, ys)
        du = unit if diff_unit is None else diff_unit
        rows.append(
            {
                "metric": metric,
                "d": d.diff,
                "hw": d.half_width,
                "tol": tol,
                "n": d.n,
                "sim": f"{statistics.fmean(xs):{fmt}}{unit}",
                "linux": f"{statistics.fmean(ys):{fmt}}{unit}",
                "diff": f"{d.diff:+{fmt}}{du}",
                "ci": _ci(d, fmt),
                "target": f"±{tol:{fmt}}{du}" if tol is not None else "·",
                "verdict": agreement.verdict(d.diff, tol, d.half_width)
                if tol is not None
                else None,
            }
        )

    absolute("utilisation", "utilisation_pct", "%", 2.0, diff_unit=" pp")
    n_groups = len(runs[0]["sim"]["group_goodput_mbps"])
    absolute("goodput (sum)", "goodput_mbps", " Mbps", None, ".3f")
    if n_groups > 1:
        for g in range(n_groups):
            xs = [m["group_goodput_mbps"][g] for m in sim]
            ys = [m["group_goodput_mbps"][g] for m in lin]
            dx = [m["goodput_mbps"] for m in sim]
            dy = [m["goodput_mbps"] for m in lin]
            d = agreement.relative_difference(xs, ys, dx, dy)
            share = lambda a, b: sum(a) / sum(b) if sum(b) else 0.0  # noqa: E731
            rows.append(
                {
                    "metric": f"share of group {g}",
                    "d": d.diff,
                    "hw": d.half_width,
                    "tol": 0.05,
                    "n": d.n,
                    "sim": f"{share(xs, dx):.3f}",
                    "linux": f"{share(ys, dy):.3f}",
                    "diff": f"{100 * d.diff:+.1f}%",
                    "ci": _ci(d.scaled(100), ".1f") + ("%" if d.half_width is not None else ""),
                    "target": "±5%",
                    "verdict": agreement.verdict(d.diff, 0.05, d.half_width),
                }
            )
    if n_flows > 1:
        absolute("Jain index", "jain", "", None, ".3f")
    for q in ("p50", "p90"):
        key = f"sojourn_{q}_ms"
        tol = max(2.0, 0.15 * statistics.fmean(m[key] for m in sim))
        absolute(f"sojourn {q}", key, " ms", tol)
    dx, dy = [m["drops"] for m in sim], [m["drops"] for m in lin]
    ax, ay = [m["arrivals"] for m in sim], [m["arrivals"] for m in lin]
    d = agreement.relative_difference(dx, dy, ax, ay)
    targeted = max(sum(dx), sum(dy)) >= MIN_DROPS
    rows.append(
        {
            "metric": "drop probability",
            "d": d.diff,
            "hw": d.half_width,
            "tol": 0.20,
            "n": d.n,
            "sim": f"{100 * sum(dx) / max(1, sum(ax)):.3f}% ({sum(dx)})",
            "linux": f"{100 * sum(dy) / max(1, sum(ay)):.3f}% ({sum(dy)})",
            "diff": "n/a" if math.isinf(d.diff) else f"{100 * d.diff:+.0f}%",
            "ci": ""
            if math.isinf(d.diff)
            else _ci(d.scaled(100), ".0f") + ("%" if d.half_width is not None else ""),
            "target": "±20%" if targeted else "·",
            "verdict": agreement.verdict(d.diff, 0.20, d.half_width) if targeted else None,
        }
    )
    absolute("retransmits", "retransmits", "", None, ".1f")
    return rows


def render(data: dict[str, Any], cases: list[Any], command: str, started: str, load: str) -> str:
    by_name = {c.name: c for c in cases}
    meta = data.get("_meta", {})
    lines = [
        "# ccsim vs the Linux kernel: the same scenarios, simulated and emulated",
        "",
        f"Generated by `{command}` — do not edit.",
        "",
        f"- **date**: runs {meta.get('started', started)} to {meta.get('ended', started)}",
        f"- **machine**: {platform.machine()}, kernel {platform.release()}, "
        f"{meta.get('load', load)}",
        "- **sides**: *ccsim* simulates the scenario; *Linux* runs it through `ccsim emulate`: "
        "the kernel's `reno`, `cubic` and `bbr` (set per socket with `TCP_CONGESTION`) in two "
        "network namespaces, joined through TUN devices by ccsim's engine in real time, so "
        "the bottleneck, its queue discipline and the reverse path are ccsim's on both sides "
        "and the comparison isolates the TCP senders and receivers",
        "- **runs**: paired; run *i* of a case has the same seed and the same jittered flow "
        "starts (0-100 ms) on both sides; 12 s each, measured from 4 s",
        f"- **targets**: {TARGETS}",
        "- **rule** (`bench/ns3/ccsim_ns3/agreement.py`, as `bench/DIFFERENTIAL.md`): a metric "
        "agrees when the paired mean difference is within the target (✅), or when its 95 % "
        "confidence interval overlaps the target band while being no wider than three bands "
        "(✅~); else ❌. A case agrees when every metric with a target does.",
        "",
    ]
    summary_rows = []
    body = []
    agreeing = 0
    measured = 0
    for name, entry in data.items():
        if name == "_meta" or not entry["runs"] or name not in by_name:
            continue
        measured += 1
        rows = compare_case(entry, len(by_name[name].group_of_flow()))
        misses = [r for r in rows if r["verdict"] == agreement.OUTSIDE]
        ok = not misses
        agreeing += ok
        timing = [r["timing"] for r in entry["runs"]]
        p99 = max(t["p99_us"] for t in timing)
        mx = max(t["max_us"] for t in timing)
        tol = timing[0]["tolerance_us"]
        sim_wall = statistics.fmean(r["sim_wall_s"] for r in entry["runs"])
        dur = entry["runs"][0]["duration_s"]
        summary_rows.append(
            f"| {name} | {entry['describe']} | {len(entry['runs'])} | {'✅' if ok else '❌'} | "
            f"{p99:.0f} / {mx:.0f} µs ({'ok' if p99 <= tol else 'over'} {tol:.0f}) | "
            f"{dur / sim_wall:,.0f}× |"
        )
        body.append(f"### {name}: {entry['describe']}")
        body.append("")
        body.append("| metric | ccsim | Linux | Linux − ccsim | 95% CI | target | |")
        body.append("| --- | ---: | ---: | ---: | ---: | ---: | :---: |")
        for r in rows:
            mark = MARK.get(r["verdict"], "·")
            body.append(
                f"| {r['metric']} | {r['sim']} | {r['linux']} | {r['diff']} | {r['ci']} | "
                f"{r['target']} | {mark} |"
            )
        body.append("")
        for r in misses:
            why = reason_for(by_name[name], r["metric"], r, entry)
            body.append(f"- **{r['metric']}** ({r['diff']}): {why}")
        if entry.get("failures"):
            body.append(f"- failed runs: {'; '.join(entry['failures'])}")
        if misses or entry.get("failures"):
            body.append("")
    lines += [
        "## Summary",
        "",
        f"**{agreeing} of {measured} cases agree on every metric with a target** "
        f"({100 * agreeing / max(1, measured):.0f} %).",
        "",
        "Timing: the emulator's release lateness (p99 / max over the case's runs) against "
        "its tolerance, half a 1500-byte packet's serialisation time at the bottleneck. "
        "Speed: simulated seconds per wall-clock second of ccsim's simulation (the emulation "
        "runs at 1×).",
        "",
        "| case | scenario | pairs | agrees | timing p99 / max (tolerance) | ccsim speed |",
        "| --- | --- | ---: | :---: | --- | ---: |",
        *summary_rows,
        "",
        "## Per case",
        "",
        *body,
    ]
    lines += NOTES
    return "\n".join(lines) + "\n"


NOTES = [
    "## Notes",
    "",
    "1. **cubic-droptail-5M-200ms, run 0, traced** (cwnd, ssthresh and srtt from "
    "`TCP_INFO` against ccsim's `cc_trace`; drops per 100 ms from the emulated queue). The "
    "two agree closely: neither side's HyStart ends slow start (both overshoot to cwnd "
    "312-314 and drop 21+42+42+42+14-22 packets at 1.2-1.8 s), the second episode drops "
    "17-18+42 and ssthresh becomes 164 (ccsim) and 160 (Linux), the third 7-8 packets with "
    "ssthresh 122 and 121. Two timing differences move the third episode across the "
    "window's start: (a) Linux sends its first data one RTT late, after the SYN handshake "
    "(`tcp_connect`; ccsim's sender starts sending at the flow's start), so its first two "
    "episodes come 200 ms later; (b) after the second episode ccsim holds cwnd at ssthresh "
    "(164) from 2.7 s to 3.5 s while Linux grows from 3.0 s, so Linux's third episode comes "
    "400 ms *earlier* (3.6-4.0 s against 4.0-4.4 s). (b) is not yet traced to a function; "
    "a longer recovery in ccsim, which detects a lost retransmission only by RTO or partial "
    "ACK while Linux's RACK (`net/ipv4/tcp_recovery.c`, `tcp_recovery=1`) detects it "
    "within an RTT, is the candidate to check once RACK-TLP is modelled.",
    "2. **Handshake.** Every Linux flow starts one RTT after the ccsim flow of the same "
    "scenario (SYN, SYN-ACK). Measured from 4 s this matters only for 200 ms paths and late "
    "starters; the comparison does not shift it.",
    "3. **Undecided misses.** Most misses are intervals wider than three target bands with "
    "three pairs: the kernel's (and, with jittered starts, ccsim's) run-to-run spread of "
    "few-flow shares and of drop counts in 8 s is larger than the targets. More pairs per "
    "case (`--runs`) narrow them; they are reported as measured.",
    "4. **What is not compared.** The kernel's `timeouts` (`tcpi_total_rto`, read since "
    "these runs were stored) and "
    "per-flow wire throughput (estimated from goodput) are not compared; utilisation, "
    "sojourn and drops come from the same emulated queue code on both sides.",
    "5. **BBR's TSO-sized bursts, measured with the emulated capture** (`[trace] pcap` on "
    "each sender's access link, where a simulated run captures too; run 0 of "
    "bbr-codel-30M-10ms, bbr-fqcodel-20M-50ms-2, random-19 and random-15 re-run for 8 s "
    "(the same seed and starts, so the first 8 s are the same scenario), one pair each, on a "
    "machine loaded by five other jobs (load 4-6; the emulator's p99 lateness stayed within "
    "tolerance: 125, 105, 84 and 88 µs); `python -m ccsim_linux.bursts DIR --from 4 --to 8`, "
    "a burst being data packets starting less than 150 µs apart). Linux sends BBR's data in "
    "back-to-back bursts where ccsim sends single packets: at 30 Mbit/s 4100 bursts of 2 "
    "and 586 of 3 among 4696 (ccsim: 10000 of 1); bbr-fqcodel-20M-50ms-2 1204 and 1273 "
    "pairs among 2172 and 2107 bursts per flow; random-19's first BBR flow 2659 pairs among "
    "3180. Source: with no fq qdisc the kernel paces internally, per skb "
    "(`tcp_update_skb_after_send()` in `net/ipv4/tcp_output.c` spaces skbs by their length "
    "over `sk_pacing_rate`), and an skb holds `tcp_tso_segs()` segments: "
    "`tcp_tso_autosize()` sizes it to `sk_pacing_rate >> sk_pacing_shift`, about 1 ms of "
    "data (its min-RTT allowance `sk_gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)` is 0 "
    "at these RTTs), but at least `bbr_min_tso_segs()` = 2 segments at pacing rates of 1.2 "
    "Mbit/s or more (`net/ipv4/tcp_bbr.c`); the TUN device has no TSO, so software GSO cuts "
    "the skb into MTU-sized packets written back to back. At 30 Mbit/s that is 3662 bytes: "
    "2 segments, 3 in the 5/4 gain phase (one phase in eight, as 12 % of the bursts are 3). "
    "ccsim paces packet by packet (`cc/bbr.rs`, departures from Linux). Consequence in "
    "bbr-codel-30M-10ms: Linux's sojourn mean 3.5 ms against 2.7 ms, p90 5.8 against 4.1 "
    "ms in 4-8 s; ccsim's per-100 ms minimum stays at 1.9-2.0 ms and maximum at 5.2-5.3 ms "
    "(no drop), while Linux's 5 drops fall in 7.45-8.0 s after its per-100 ms minimum "
    "sojourn rose to 4.1-5.6 ms (in flight 34 to 45 from 7.3 s), above CoDel's 5 ms target "
    "for an interval. That the bursts alone make this episode is not established: what "
    "raised Linux's in flight at 7.3 s is not traced (TCP_INFO shows no BBR state), and "
    "ccsim with TSO-sized bursts has not been run (it needs a pacing model change). In "
    "random-19 the Linux side also holds a longer queue (sojourn p50 46 ms against 12 ms, "
    "the BBR flows' in flight 220 and 255 packets against 128 and 198, drops 1162 against "
    "264 in 4-8 s), which squeezes the CUBIC flows; the step from the bursts to that queue "
    "is not traced. random-15's BBR flows (about 1.2 Mbit/s each, below "
    "`bbr_min_tso_rate`) send single packets on both sides (512 and 227 bursts of 1), so "
    "its share miss is not this and stays not yet explained.",
    "6. **random-26's bursts after the drain, measured with the emulated capture and "
    "10 ms `TCP_INFO` samples** (run 0 re-run briefly, one pair: 5 s for the capture of "
    "the access link, 1.55-2.8 s, gap 300 µs, `python -m ccsim_linux.bursts DIR --from "
    '1.55 --to 2.8 --gap-us 300`; 3 s with `stats_interval = "10ms"` for '
    "`tcpi_ca_state`, `tcpi_snd_ssthresh` and `tcpi_total_rto`). Both sides end their "
    "first Recovery by setting cwnd to ssthresh (`tcp_end_cwnd_reduction()` in "
    "`net/ipv4/tcp_input.c`, ccsim's `end_cwnd_reduction`): a 173-packet burst at 1.570 s "
    "in ccsim, 168 packets at 1.574 s in Linux. Linux then stays in Recovery until 2.41 s "
    "(`tcpi_ca_state` 3 in every sample, no RTO): at the end of each episode it re-enters "
    "Recovery on the same ACK (`tcp_fastretrans_alert()`: the exit in step D, then "
    "`tcp_time_to_recover()` true because `lost_out` > 0), so ssthresh halves from the "
    "cwnd just reset to it, 311, 155, 77, 38, 19, 9 (at 2.04, 2.13, 2.21, 2.25 and 2.38 "
    "s), and PRR (`tcp_cwnd_reduction()`, in `tcp_cong_control()` on that ACK) brings cwnd "
    "back to in flight + sndcnt before anything is sent: no burst above 8 packets after "
    "1.574 s. ccsim does the same at the end of its first episode (ssthresh 331 to 165) "
    "but not at the end of its second, at 2.178 s: there its `open_state_alert` (Linux's "
    "`tcp_time_to_recover()` with RACK) finds no lost segment, it stays Open with cwnd = "
    "ssthresh = 165 and sends 156 packets back to back, and once more 68 packets at 2.521 "
    "s after the next episode (ssthresh 82). These bursts are where ccsim's 1353 packets "
    "and 547 drops in 1.55-2.8 s come from against Linux's 969 and 288 in this run, and so "
    "the higher PIE probability at 4 s behind random-26's misses. Why Linux has a segment "
    "marked lost when its episodes end and ccsim none at the end of its second is not yet "
    "established.",
    "",
]


def now_utc() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
