"""Put the kernel's measurements into an emulated run's tables and summary.

The emulated world's simulated senders never ran, so every figure they would have
produced is replaced: goodput from the receivers' byte counts, cwnd/ssthresh/srtt and
retransmissions from ``TCP_INFO``; tables only a simulated sender can fill (``cc_vars``,
``cc_reductions``, ``rtt_samples``, ``transfers``, ``deadline_control``) are emptied.
Queue tables and per-flow drops and marks come from the emulated network and stay.

UDP sources the kernel played (``udp_plan``) get their goodput from the receiver's count
of IP bytes (datagram + 28, the size a simulated source's packet has on the wire, so the
figure means what a simulated run's does); ``packets_sent`` stays the emulated network's
count of the datagrams that entered it. ``summary["emulation_udp"]`` (moved into
``emulation.udp_sources``) lists, per source, the datagrams sent and received over the
whole run.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

SENDER_ONLY_TABLES = ("cc_vars", "cc_reductions", "rtt_samples", "transfers", "deadline_control")
#: tcpi_snd_ssthresh while ssthresh is still infinite (TCP_INFINITE_SSTHRESH).
INFINITE_SSTHRESH = 0x7FFFFFFF


def _window_goodput(
    bins: list[int], interval_s: float, start: float, end: float
) -> tuple[float, int]:
    """Mbit/s and bytes delivered in the bins inside ``[start, end)``."""
    first, last = round(start / interval_s), round(end / interval_s)
    got = sum(bins[first:last])
    span = (last - first) * interval_s
    return (got * 8 / span / 1e6 if span > 0 else 0.0), got


def _at(samples: list[list[float]], t: float, column: int) -> float:
    """A sampled counter's value at the last sample no later than ``t`` (0 before any)."""
    value = 0.0
    for row in samples:
        if row[0] > t + 1e-6:
            break
        value = row[column]
    return value


def _empty_like(table: pa.Table) -> pa.Table:
    return table.schema.empty_table()


def merge_kernel(
    result: Any,
    plan: list[dict[str, Any]],
    kernel: dict[str, Any],
    interval_s: float,
    udp_plan: list[dict[str, Any]] | None = None,
) -> None:
    s, tables = result.summary, result.tables
    n_tcp = len(plan)
    ms, me = s["measure_start_s"], s["measure_end_s"]
    bins = kernel["recv"]["bins"]
    done_at = kernel["recv"]["done_at"]
    samples = kernel["send"]["samples"]
    mss = plan[0]["mss"] if plan else 1448
    wire = (mss + 52) / mss  # headers of full segments: wire bytes per payload byte
    for i, f in enumerate(s["flows"][:n_tcp]):
        goodput, got = _window_goodput(bins[i], interval_s, ms, me)
        f["goodput_mbps"] = goodput
        f["throughput_mbps"] = goodput * wire
        f["bytes_delivered"] = got
        f["algorithm"] = plan[i]["kernel_cc"] + " (linux)"
        f["retransmits"] = int(_at(samples[i], me, 5) - _at(samples[i], ms, 5))
        f["packets_sent"] = int(_at(samples[i], me, 6) - _at(samples[i], ms, 6))
        # tcpi_total_rto (Linux 6.7+; 0 on older kernels): RTO expirations.
        f["timeouts"] = int(_at(samples[i], me, 8) - _at(samples[i], ms, 8))
        f["fct_s"] = (done_at[i] - plan[i]["start_s"]) if done_at[i] is not None else None
    udp_bins = _merge_udp(s, kernel, n_tcp, udp_plan or [], interval_s)
    tcp_goodputs = [f["goodput_mbps"] for f in s["flows"][:n_tcp]]
    total = sum(f["goodput_mbps"] for f in s["flows"])
    active = [x for x in tcp_goodputs if x > 0]
    if active:
        s["jain_index"] = sum(active) ** 2 / (len(active) * sum(x * x for x in active))
    for g in s.get("groups", []):
        if g["protocol"] != "tcp" and not udp_bins:
            continue
        members = [
            f for f in s["flows"] if f["group"] == g["group"] and f["protocol"] == g["protocol"]
        ]
        g["goodput_mbps"] = sum(f["goodput_mbps"] for f in members)
        g["throughput_mbps"] = sum(f["throughput_mbps"] for f in members)
        g["share"] = g["goodput_mbps"] / total if total > 0 else 0.0
    fcts = [f["fct_s"] for f in s["flows"][:n_tcp] if f["fct_s"] is not None]
    if s.get("fct") is not None and fcts:
        s["fct"]["mean_s"] = sum(fcts) / len(fcts)
    _flows_table(result, n_tcp)
    _flow_series(result, plan, bins, interval_s, wire, udp_bins)
    _cc_trace(result, samples)
    for name in SENDER_ONLY_TABLES:
        if name in tables:
            tables[name] = _empty_like(tables[name])


def _merge_udp(
    s: dict[str, Any],
    kernel: dict[str, Any],
    n_tcp: int,
    udp_plan: list[dict[str, Any]],
    interval_s: float,
) -> list[list[int]]:
    """The kernel-played UDP sources' summary figures; returns their receivers' bins."""
    if not udp_plan:
        return []
    ms, me = s["measure_start_s"], s["measure_end_s"]
    udp_bins = kernel["recv"]["udp_bins"]
    sent = kernel["send"]["udp_sent"]
    received = kernel["recv"]["udp_datagrams"]
    for u, f in enumerate(s["flows"][n_tcp : n_tcp + len(udp_plan)]):
        goodput, got = _window_goodput(udp_bins[u], interval_s, ms, me)
        f["goodput_mbps"] = goodput
        f["throughput_mbps"] = goodput
        f["bytes_delivered"] = got
        f["algorithm"] = f["algorithm"] + " (linux)"
    s["emulation_udp"] = [
        {"datagrams_sent": sent[u][0], "bytes_sent": sent[u][1], "datagrams_received": received[u]}
        for u in range(len(udp_plan))
    ]
    return udp_bins


def _flows_table(result: Any, n_tcp: int) -> None:
    old = result.tables["flows"]
    flows = result.summary["flows"]
    cols = {}
    for name in old.column_names:
        typ = old.schema.field(name).type
        values = []
        for f in flows:
            v = f.get(name)
            if name == "group_name":
                v = v or ""
            elif name == "size_bytes":
                v = v or 0
            elif name == "fct_s" and v is None:
                v = float("nan")
            values.append(v)
        cols[name] = pa.array(values, type=typ)
    result.tables["flows"] = pa.table(cols, schema=old.schema)


def _flow_series(
    result: Any,
    plan: list[dict[str, Any]],
    bins: list[list[int]],
    interval_s: float,
    wire: float,
    udp_bins: list[list[int]],
) -> None:
    old = result.tables["flow_series"]
    n_tcp = len(plan)
    every = bins + udp_bins
    rows = old.to_pylist()
    by_key = {(round(r["time_s"], 9), r["flow_id"]): r for r in rows}
    for r in rows:
        if r["flow_id"] < len(every):
            k = round(r["time_s"] / interval_s) - 1
            got = every[r["flow_id"]][k] if 0 <= k < len(every[r["flow_id"]]) else 0
            r["goodput_mbps"] = got * 8 / interval_s / 1e6
            r["throughput_mbps"] = r["goodput_mbps"] * (wire if r["flow_id"] < n_tcp else 1.0)
            r["bytes_delivered"] = got
    del by_key
    result.tables["flow_series"] = pa.Table.from_pylist(rows, schema=old.schema)
    gs = result.tables.get("group_series")
    if gs is not None and gs.num_rows:
        flows = result.summary["flows"]
        fs = {}
        for r in rows:
            if r["flow_id"] < len(every):
                f = flows[r["flow_id"]]
                key = (round(r["time_s"], 9), f["protocol"], f["group"])
                fs[key] = fs.get(key, 0.0) + r["goodput_mbps"]
        grows = gs.to_pylist()
        for r in grows:
            key = (round(r["time_s"], 9), r["protocol"], r["group"])
            if r["protocol"] == "tcp" or (r["protocol"] == "udp" and udp_bins):
                r["goodput_mbps"] = fs.get(key, 0.0)
                r["throughput_mbps"] = r["goodput_mbps"] * (wire if r["protocol"] == "tcp" else 1.0)
        result.tables["group_series"] = pa.Table.from_pylist(grows, schema=gs.schema)


def _cc_trace(result: Any, samples: list[list[list[float]]]) -> None:
    old = result.tables["cc_trace"]
    rows = []
    for i, flow_samples in enumerate(samples):
        for t, cwnd, ssthresh, rtt_us, in_flight, *_ in flow_samples:
            rows.append(
                {
                    "time_s": round(t, 3),
                    "flow_id": i,
                    "cwnd_pkts": float(cwnd),
                    "ssthresh_pkts": float("nan")
                    if ssthresh >= INFINITE_SSTHRESH
                    else float(ssthresh),
                    "srtt_ms": rtt_us / 1000.0,
                    "inflight_pkts": float(in_flight),
                }
            )
    result.tables["cc_trace"] = pa.Table.from_pylist(rows, schema=old.schema)
