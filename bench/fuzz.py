"""Scenario fuzzer (issue 33): mutate small valid scenarios and check that every mutant
either runs (exit 0) or is refused in exactly one line with exit 2, never aborts, stays
within the memory the estimate promised, and that accepted runs keep utilisation <= 1
and exact packet conservation.

Mutation classes (the audit's): wrong types, negative/zero/huge/NaN/inf numbers, unknown
and duplicate keys, unicode, long strings, deep nesting, huge counts, extreme rates and
durations, bad distributions, tiny intervals, trace options at extreme loads; and link
models (issue 31): random loss (Bernoulli, Gilbert-Elliott), delay jitter with and without
reordering, and outages (a zero rate in ``rate_changes``), valid and broken, on either
direction of the bottleneck. A fifth of the other mutants also get a valid link model, so
the other mutations meet lossy, jittery links too.

    python bench/fuzz.py --mutants 2000 --seed 1 --jobs 2 --limit-gb 4   # long mode

runs each mutant as ``ccsim run`` in a forked child under ``ulimit -v`` (``--limit-gb``)
and prints a table. ``tests/python/test_fuzz.py`` runs a few hundred in-process (the
CI mode: :func:`check_in_process`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Small valid scenarios the mutations start from (each runs in well under a second).
BASES: list[dict[str, Any]] = [
    {
        "duration": "0.5s",
        "bottleneck": {"rate": "10Mbps", "queue": "pie"},
        "flows": [{"rtt": "20ms", "count": 2}],
    },
    {
        "duration": "0.5s",
        "bottleneck": {"rate": "20Mbps", "queue": "dualpi2"},
        "flows": [{"rtt": "10ms", "cc": "cubic"}],
        "udp": [{"rate": "2Mbps", "rtt": "10ms"}],
    },
    {
        "duration": "0.5s",
        "stats_interval": "50ms",
        "bottleneck": {"rate": "5Mbps", "queue": {"kind": "codel"}},
        "flows": [{"rtt": "40ms", "size": "50KB", "start": "0.1s"}],
        "trace": {"queue_events": True},
    },
    {
        "duration": "0.4s",
        "bottleneck": {"rate": "10Mbps", "queue": "fq_codel"},
        "flows": [{"rtt": "30ms", "cc": {"kind": "newreno", "beta": 0.5}, "trace": True}],
        "trace": {"rtt_samples": True, "qdisc_state": "updates"},
    },
    {
        "duration": "0.5s",
        "stats_interval": "50ms",
        "network": {
            "links": [
                {
                    "name": "ab",
                    "from": "a",
                    "to": "b",
                    "rate": "10Mbps",
                    "delay": "2ms",
                    "both_ways": True,
                    "queue": "codel",
                },
                {
                    "name": "bc",
                    "from": "b",
                    "to": "c",
                    "rate": "8Mbps",
                    "delay": "3ms",
                    "both_ways": True,
                    "queue": "pie",
                },
            ]
        },
        "flows": [{"rtt": "30ms", "from": "a", "to": "c", "count": 2}],
        "udp": [{"rate": "2Mbps", "rtt": "20ms", "from": "b", "to": "c"}],
        "trace": {"queue_events": True},
    },
]

WEIRD_NUMBERS = [0, -1, -1e9, 1e18, 1e300, 2**63, 2**64 + 1, float("nan"), float("inf"), 0.5]
WEIRD_STRINGS = [
    "",
    "0ms",
    "-5ms",
    "1e400s",
    "1ns",
    "999999h",
    "NaNms",
    "10 Mbps",
    "1bps",
    "1000Tbps",
    "ü∂ñî©ødé",
    "x" * 5000,
    "1e-9s",
    "inf",
    "5ms5ms",
]
KEYS = [
    "duration",
    "seed",
    "stats_interval",
    "bottleneck.rate",
    "bottleneck.delay",
    "bottleneck.queue",
    "bottleneck.queue.tupdate",
    "bottleneck.queue.target",
    "bottleneck.queue.limit",
    "flows[0].rtt",
    "flows[0].count",
    "flows[0].start",
    "flows[0].cc",
    "flows[0].cc.beta",
    "flows[0].size",
    "flows[0].mss",
    "flows[0].initial_window",
    "trace.qdisc_state",
    "trace.queue_events",
    "trace.pcap_max_packets",
    "bottleneck.rate_changes",
    "measure",
    "bottleneck.loss",
    "bottleneck.jitter",
    "bottleneck.jitter.dist",
    "bottleneck.reverse_loss",
    "bottleneck.trace",
]

#: Loss models (``bottleneck.loss``, docs/scenario.md "Random loss on a link"): valid
#: ones first (:data:`VALID_LOSSES` of them), then ones the schema must refuse.
LOSSES: list[Any] = [
    0.01,
    0.0,
    0.2,
    {"kind": "bernoulli", "p": 0.05},
    {"kind": "gilbert_elliott", "p": 0.01, "r": 0.3},
    {"kind": "gilbert_elliott", "mean_loss": 0.02, "mean_burst": 3},
    {"kind": "gemodel", "p": 0.05, "r": 0.5, "loss_bad": 0.8, "loss_good": 0.001},
    1.0,  # every packet lost: valid, and nothing ever arrives
    -0.1,
    1.5,
    float("nan"),
    "1%",
    {"kind": "gilbert_elliott", "p": 0.1, "r": 0},
    {"kind": "gilbert_elliott", "mean_loss": 0.9, "mean_burst": 1},
    {"kind": "bogus", "p": 0.1},
]
VALID_LOSSES = 8
#: Jitter (``bottleneck.jitter``, docs/scenario.md "Delay jitter and reordering").
JITTERS: list[Any] = [
    {"dist": {"uniform": ["0ms", "10ms"]}},
    {"dist": {"normal": ["2ms", "1ms"]}, "reorder": False},
    {"dist": "10ms", "reorder_probability": 0.25},
    {"dist": {"exponential": "5ms"}},
    {"dist": {"uniform": ["0ms", "200ms"]}, "reorder": True},
    {"dist": {"uniform": ["5ms", "1ms"]}},
    {"dist": "-1ms"},
    {"dist": "1ms", "reorder": False, "reorder_probability": 0.5},
    {"dist": {"normal": ["-2ms", "1ms"]}},
    {"reorder": True},
]
VALID_JITTERS = 5
#: Outages (a zero rate) and rate steps in ``rate_changes``.
RATE_CHANGES: list[Any] = [
    [{"at": "0.1s", "rate": "0Mbps"}, {"at": "0.25s", "rate": "10Mbps"}],
    [{"at": "0.2s", "rate": "0bps"}],
    [
        {"at": "0.05s", "rate": "1Mbps"},
        {"at": "0.1s", "rate": "0Mbps"},
        {"at": "0.3s", "rate": "50Mbps"},
    ],
    [{"at": "0.1s", "rate": "-1Mbps"}],
]
VALID_RATE_CHANGES = 3
#: Mahimahi traces (``bottleneck.trace``, docs/traces.md): the shipped ones (absolute
#: paths: mutants run from a temporary directory), then files the schema must refuse.
_TRACES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "traces")
TRACES: list[Any] = [
    os.path.normpath(os.path.join(_TRACES_DIR, name))
    for name in ("cellular-outages.trace", "square-24-6mbps.trace", "constant-12mbps.trace")
] + ["/nonexistent/missing.trace", "", 12]
VALID_TRACES = 3


def _link_model(doc: dict[str, Any], rng: random.Random, valid: bool) -> None:
    """Loss, jitter, outages and traces on the bottleneck's directions (or on one link of
    a ``[network]``), each with probability 1/2 (at least one); only valid ones if
    ``valid``."""

    def pick(options: list[Any], n_valid: int) -> Any:
        pool = options[:n_valid] if valid else options
        return json.loads(json.dumps(rng.choice(pool)))  # a copy: mutants are mutated

    kinds = ("loss", "jitter", "rate_changes", "trace")
    chosen = [k for k in kinds if rng.random() < 0.5]
    if valid and "trace" in chosen and "rate_changes" in chosen:
        chosen.remove("rate_changes")  # both set the forward capacity: refused together
    links = doc.get("network", {}).get("links") if isinstance(doc.get("network"), dict) else None
    if isinstance(links, list) and links:
        # a network link's models (both ways with both_ways; its own reverse_trace)
        i = rng.randrange(len(links))
        table, prefix = links[i], f"network.links[{i}]"
        reverse = {"loss": "loss", "jitter": "jitter", "trace": "reverse_trace"}
    else:
        table, prefix = doc.get("bottleneck", {}), "bottleneck"
        reverse = {"loss": "reverse_loss", "jitter": "reverse_jitter", "trace": "reverse_trace"}
    if not isinstance(table, dict):
        table = {}
    for what in chosen or [rng.choice(kinds)]:
        if what == "loss":
            key = rng.choice(["loss", reverse["loss"]])
            _set(doc, f"{prefix}.{key}", pick(LOSSES, VALID_LOSSES))
        elif what == "jitter":
            key = rng.choice(["jitter", reverse["jitter"]])
            _set(doc, f"{prefix}.{key}", pick(JITTERS, VALID_JITTERS))
        elif what == "trace":
            key = rng.choice(["trace", reverse["trace"]])
            if valid:
                table.pop("rate_changes", None)
            _set(doc, f"{prefix}.{key}", pick(TRACES, VALID_TRACES))
        else:
            if valid:
                table.pop("trace", None)
                table.pop("reverse_trace", None)
            _set(doc, f"{prefix}.rate_changes", pick(RATE_CHANGES, VALID_RATE_CHANGES))


def _set(doc: dict[str, Any], key: str, value: Any) -> None:
    node: Any = doc
    parts = key.replace("]", "").replace("[", ".").split(".")
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if part.isdigit():
            while len(node) <= int(part):
                node.append({})
            node = node[int(part)]
            continue
        child = node.get(part)
        if isinstance(child, str) and not nxt.isdigit():  # "pie" -> {kind = "pie"}
            child = {"kind": child}
        if not isinstance(child, (dict, list)):
            child = [] if nxt.isdigit() else {}
        node[part] = child
        node = child
    last = parts[-1]
    if last.isdigit() and isinstance(node, list):
        while len(node) <= int(last):
            node.append({})
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value


def mutate(rng: random.Random) -> tuple[str, dict[str, Any] | str]:
    """(mutation class, the mutant: a dict, or TOML text for the textual classes)."""
    doc = json.loads(json.dumps(rng.choice(BASES)))
    cls = rng.choice(
        [
            "type",
            "number",
            "unknown_key",
            "duplicate_key",
            "unicode",
            "long_string",
            "deep_nesting",
            "huge_count",
            "extreme_rate",
            "extreme_duration",
            "distribution",
            "tiny_interval",
            "trace_load",
            "link_model",
        ]
    )
    key = rng.choice(KEYS)
    if cls != "link_model" and rng.random() < 0.2:
        _link_model(doc, rng, valid=True)
    if cls == "type":
        _set(doc, key, rng.choice([True, [1, 2], {"a": 1}, "text", 3.5, None]))
    elif cls == "number":
        _set(doc, key, rng.choice(WEIRD_NUMBERS))
    elif cls == "unknown_key":
        _set(
            doc,
            rng.choice(["bogus", "flows[0].bogus", "bottleneck.queue.bogus"]),
            rng.choice([1, float("nan"), "x"]),
        )
    elif cls == "duplicate_key":
        text = _toml(doc)
        return cls, text + '\nduration = "1s"\n' if rng.random() < 0.5 else text.replace(
            "[bottleneck]\n", '[bottleneck]\nrate = "1Mbps"\n', 1
        )
    elif cls == "unicode":
        _set(
            doc,
            rng.choice(["flows[0].name", "flows[0].cc", "bottleneck.queue", key]),
            rng.choice(["流量", "ñ", "\u202e", "é" * 100, "🚀"]),
        )
    elif cls == "long_string":
        _set(doc, key, "9" * rng.choice([100, 10_000, 100_000]))
    elif cls == "deep_nesting":
        depth = rng.choice([10, 100, 1000])
        return cls, "x = " + "[" * depth + "]" * depth + "\n" + _toml(doc)
    elif cls == "huge_count":
        _set(doc, "flows[0].count", rng.choice([1000, 100_000, 3_000_000, 67_000_000, 2**32]))
    elif cls == "extreme_rate":
        _set(
            doc,
            rng.choice(["bottleneck.rate", "udp[0].rate"]),
            rng.choice(["1bps", "10Gbps", "1Tbps", "100Gbps"]),
        )
        if rng.random() < 0.5:
            _set(doc, "udp[0].packet_size", "64B")
            _set(doc, "udp[0].rtt", "10ms")
            _set(doc, "udp[0].access_rate", "10Gbps")
    elif cls == "extreme_duration":
        _set(
            doc,
            rng.choice(["duration", "flows[0].rtt", "stats_interval", "bottleneck.delay"]),
            rng.choice(["1ns", "1us", "1000s", "1e6s", "0s", "1h"]),
        )
    elif cls == "distribution":
        _set(
            doc,
            rng.choice(["flows[0].rtt", "flows[0].size", "flows[0].start"]),
            rng.choice(
                [
                    {"dist": "uniform", "min": "5ms", "max": "1ms"},
                    {"dist": "exponential", "mean": "0ms"},
                    {"dist": "pareto", "shape": 0.5, "scale": "10KB"},
                    {"dist": "lognormal", "mu": float("nan"), "sigma": 1},
                    {"dist": "bogus"},
                    {"dist": "uniform"},
                ]
            ),
        )
    elif cls == "tiny_interval":
        _set(
            doc,
            rng.choice(["bottleneck.queue.tupdate", "stats_interval", "bottleneck.queue.interval"]),
            rng.choice(["1ns", "10ns", "1us", "10us", "100us"]),
        )
        _set(doc, "trace.qdisc_state", "updates")
    elif cls == "trace_load":
        _set(doc, "trace.queue_events", True)
        _set(doc, "trace.pcap", ["bottleneck"])
        _set(doc, "trace.pcap_max_packets", rng.choice([1, 1000, 10**8]))
        _set(doc, "udp[0].rate", rng.choice(["100Mbps", "1Gbps"]))
        _set(doc, "udp[0].packet_size", "64B")
        _set(doc, "udp[0].rtt", "10ms")
        _set(doc, "udp[0].access_rate", "10Gbps")
    elif cls == "link_model":
        _link_model(doc, rng, valid=rng.random() < 0.5)
    return cls, doc


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(str(v))


def _toml(doc: dict[str, Any]) -> str:
    lines = [
        f"{json.dumps(k)} = {_toml_value(v)}"
        for k, v in doc.items()
        if not isinstance(v, (dict, list))
        or (isinstance(v, list) and not all(isinstance(x, dict) for x in v))
        or v == []
    ]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{json.dumps(k)}]")
            lines += [f"{json.dumps(a)} = {_toml_value(b)}" for a, b in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                lines.append(f"[[{json.dumps(k)}]]")
                lines += [f"{json.dumps(a)} = {_toml_value(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


def to_text(mutant: dict[str, Any] | str) -> str:
    return mutant if isinstance(mutant, str) else _toml(mutant)


@dataclass
class Outcome:
    cls: str
    verdict: str  # ok, refused, or a failure: abort, multiline, timeout, memory, util, conservation
    detail: str = ""
    events: int | None = None
    estimated_events: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _checks(
    summary: dict[str, Any], packets: list[dict[str, Any]], interval_utilisation: list[Any]
) -> str | None:
    """Utilisation at most 1 (carried over offered bits, issue 31) on the run, on the
    bottleneck, on each link of a network and in every interval of ``queue_series``; and
    exact packet conservation, ``sent = arrived + dropped + lost + in_network`` (``lost``:
    on the wire, present only with a loss model)."""
    figures = [("utilisation", summary.get("utilisation"))]
    figures.append(("bottleneck", (summary.get("bottleneck") or {}).get("utilisation")))
    for link in summary.get("links") or []:
        figures.append((f"link {link.get('name')}", link.get("utilisation")))
    for what, util in figures:
        if util is not None and util > 1.0:
            return f"{what} utilisation {util!r}"
    busiest = max((u for u in interval_utilisation if u is not None and u == u), default=None)
    if busiest is not None and busiest > 1.0:
        return f"queue_series utilisation {busiest!r}"
    for row in packets:
        lost = row.get("lost", 0)
        if row["sent"] != row["arrived"] + row["dropped"] + lost + row["in_network"]:
            return f"conservation flow {row['flow_id']}: {row}"
    return None


#: Bottleneck keys of the link models: a run with one is outside what the estimate models
#: (an outage or heavy loss leaves it idle, jitter stretches its round trips).
LINK_MODEL_KEYS = (
    "loss",
    "reverse_loss",
    "jitter",
    "reverse_jitter",
    "rate_changes",
    "trace",
    "reverse_trace",
)


def has_link_model(mutant: dict[str, Any] | str) -> bool:
    """Whether a mutant's bottleneck has loss, jitter or rate changes."""
    if isinstance(mutant, str):
        return any(f"\n{json.dumps(k)} = " in mutant for k in LINK_MODEL_KEYS)
    bottleneck = mutant.get("bottleneck")
    return isinstance(bottleneck, dict) and any(k in bottleneck for k in LINK_MODEL_KEYS)


def check_in_process(
    cls: str, mutant: dict[str, Any] | str, max_events: float, max_memory_bytes: float = 3e8
) -> Outcome:
    """The CI mode: validate and run in this process (skipping runs estimated above
    ``max_events``, which the long mode runs)."""
    import ccsim
    from ccsim import estimate as est
    from ccsim.api import load_scenario

    try:
        source = load_scenario(mutant)
        cost = est.estimate(source)
        if est.too_big(cost, "m") is not None:
            return Outcome(cls, "refused", "memory")
        if cost["memory_bytes"] > max_memory_bytes:  # the long mode builds those
            return Outcome(cls, "skipped", f"{cost['memory_bytes']:.3g} bytes")
        ccsim.validate(mutant)
    except ccsim.ScenarioError as exc:
        message = str(exc)
        if "\n" in message or not message:
            return Outcome(cls, "multiline", message)
        return Outcome(cls, "refused", message)
    if cost["events"] > max_events:
        return Outcome(cls, "skipped", f"{cost['events']:.3g} events")
    result = ccsim.run(mutant)
    failure = _checks(
        result.summary,
        result.tables["flow_packets"].to_pylist(),
        result.tables["queue_series"].column("utilisation").to_pylist(),
    )
    if failure:
        return Outcome(cls, "violation", failure)
    return Outcome(
        cls,
        "ok",
        events=result.summary["events"],
        estimated_events=cost["events"],
        extra={"link_model": has_link_model(mutant)},
    )


def _child(path: Path, out: Path, err: Path, limit_bytes: int) -> None:
    """In a forked child: ``ccsim run`` under ``ulimit -v``, stderr to ``err``."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        from ccsim.cli import main

        code = main(["run", str(path), "-o", str(out), "--no-plots", "--quiet"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 70
    sys.stderr.flush()
    os._exit(code)


def check_forked(cls: str, text: str, work: Path, limit_bytes: int) -> Outcome:
    """The long mode: ``ccsim run`` in a forked child (no interpreter start-up per mutant)
    under ``ulimit -v``, killed if it outlives the estimate's promise."""
    from ccsim import estimate as est
    from ccsim.api import ScenarioSource

    path, out, err = work / "s.toml", work / "out", work / "stderr"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        cost: dict[str, Any] | None = est.estimate(ScenarioSource(text, "toml", str(path)))
    except Exception:  # refused at parse: the CLI must say so in one line
        cost = None
    timeout = 30.0 + 5 * (cost["wall_s"] if cost else 0)
    pid = os.fork()
    if pid == 0:
        _child(path, out, err, limit_bytes)
    deadline = time.monotonic() + timeout
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.wait4(pid, 0)
            return Outcome(cls, "timeout", f"{timeout:.0f} s")
        time.sleep(0.005)
    code = os.waitstatus_to_exitcode(status)
    lines = err.read_text(encoding="utf-8", errors="replace").splitlines() if err.exists() else []
    extra = {"maxrss_bytes": usage.ru_maxrss * 1024}
    if code == 2:
        if len(lines) == 1 and lines[0].startswith("error: "):
            return Outcome(cls, "refused", lines[0], extra=extra)
        return Outcome(cls, "multiline", "\n".join(lines[:5]), extra=extra)
    if code != 0:
        return Outcome(cls, "abort", f"exit {code}: {' | '.join(lines[-3:])}", extra=extra)
    import pyarrow.parquet as pq

    summary = json.loads((out / "summary.json").read_text())
    packets = pq.read_table(out / "flow_packets.parquet").to_pylist()
    series = pq.read_table(out / "queue_series.parquet", columns=["utilisation"])
    failure = _checks(summary, packets, series.column("utilisation").to_pylist())
    if failure:
        return Outcome(cls, "violation", failure, extra=extra)
    # the child is a fork of this process: its peak includes what this one had mapped
    if cost and usage.ru_maxrss * 1024 > cost["memory_bytes"] + _own_rss():
        return Outcome(cls, "memory", f"{usage.ru_maxrss * 1024:.3g} > {cost['memory_bytes']:.3g}")
    return Outcome(
        cls,
        "ok",
        events=summary["events"],
        estimated_events=cost["events"] if cost else None,
        extra=extra,
    )


def _own_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def table(outcomes: list[Outcome]) -> str:
    verdicts = sorted({o.verdict for o in outcomes})
    by_class = Counter((o.cls, o.verdict) for o in outcomes)
    classes = sorted({o.cls for o in outcomes})
    head = "| class | " + " | ".join(verdicts) + " |"
    rows = [head, "|" + "---|" * (len(verdicts) + 1)]
    for c in classes:
        rows.append(f"| {c} | " + " | ".join(str(by_class[(c, v)]) for v in verdicts) + " |")
    total = Counter(o.verdict for o in outcomes)
    rows.append("| **all** | " + " | ".join(str(total[v]) for v in verdicts) + " |")
    ran = [o for o in outcomes if o.events and o.estimated_events]
    if ran:
        upper = sum(o.estimated_events >= o.events for o in ran)
        within = sum(
            o.estimated_events <= 10 * o.events and o.estimated_events >= o.events / 10 for o in ran
        )
        rows.append(
            f"\nestimate vs measured events over {len(ran)} runs: upper bound "
            f"{upper / len(ran):.1%}, within 10x {within / len(ran):.1%}"
        )
    return "\n".join(rows)


def summarise(log: Path) -> str:
    """The table of a ``--log`` file (a long run cut short still has its outcomes)."""
    lines = log.read_text(encoding="utf-8").splitlines()
    return table([Outcome(**json.loads(line)) for line in lines])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit-gb", type=float, default=4.0)
    ap.add_argument("--log", type=Path, help="append each outcome as a JSON line here")
    a = ap.parse_args()
    log_lock = threading.Lock()
    rng = random.Random(a.seed)
    mutants = [mutate(rng) for _ in range(a.mutants)]
    limit = int(a.limit_gb * (1 << 30))
    started = time.monotonic()

    def one(item: tuple[str, Any]) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="ccsim-fuzz-") as tmp:
            try:
                outcome = check_forked(item[0], to_text(item[1]), Path(tmp), limit)
            except Exception as exc:  # the harness itself
                outcome = Outcome(item[0], "harness", repr(exc))
        if a.log is not None:
            with log_lock, open(a.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(outcome.__dict__) + "\n")
        return outcome

    with ThreadPoolExecutor(a.jobs) as pool:
        outcomes = list(pool.map(one, mutants))
    print(table(outcomes))
    print(
        f"\n{len(outcomes)} mutants in {time.monotonic() - started:.0f} s, "
        f"ulimit -v {a.limit_gb:g} GB, seed {a.seed}"
    )
    bad = [o for o in outcomes if o.verdict not in ("ok", "refused")]
    for o in bad[:20]:
        print(f"{o.verdict} [{o.cls}]: {o.detail[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
