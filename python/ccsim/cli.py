"""The ``ccsim`` command: run, emulate, sweep, reproduce, validate, plot, demo, bench, trace.

Bad input (a scenario error, an unreadable file, an unusable output path) prints one line,
``error: ...``, on stderr and exits with status 2 without touching the output directory.

Exit status: 0 ok; 1 a plot (or a write) failed; 2 bad input, nothing written; 3 a sweep
finished with failed runs (their number is in the last line and in ``sweep.json``); 130
interrupted by SIGINT (Ctrl-C), 143 by SIGTERM. Both signals stop a run or a sweep within
about 0.1 s (runs in flight are abandoned), write a sweep's finished runs, remove staging
directories and print one line.

This module imports only the standard library when it loads: numpy, pyarrow and rich
(most of a command's first second) are imported inside :func:`main`, whose handlers turn
Ctrl-C during those imports into one line and 130 like at any later moment.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ccsim.api import ScenarioSource

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_RUNS_FAILED = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + the signal number, as shells report


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C's KeyboardInterrupt so that every cleanup path for an
    interrupt (staging directories, a sweep's last batch, Dask clusters) runs for it too."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def _interrupt_status(exc: KeyboardInterrupt) -> int:
    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def _interrupt_word(exc: KeyboardInterrupt) -> str:
    return "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"


class BadInput(Exception):
    """User input that cannot be used; the message is shown as ``error: <message>``."""


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """``--set KEY=VALUE`` options as ``{"key.path": value}``, in order."""
    from ccsim.scenario import parse_override

    return dict(parse_override(text) for text in getattr(args, "set", None) or [])


def _formats(args: argparse.Namespace) -> tuple[str, ...]:
    """``--format png,pdf,svg`` as a tuple; BadInput naming an unknown format."""
    from ccsim.plots.formats import FormatError, parse_formats

    try:
        return parse_formats(getattr(args, "format", None))
    except FormatError as exc:
        raise BadInput(str(exc)) from exc


def _load(path: str, overrides: dict[str, Any] | None = None) -> ScenarioSource:
    from ccsim import api

    try:
        return api.load_scenario(Path(path), overrides)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise BadInput(f"{path}: cannot read scenario file: {reason}") from exc


def _show_progress(args: argparse.Namespace) -> bool:
    if getattr(args, "quiet", False):
        return False
    return bool(getattr(args, "progress", False)) or sys.stderr.isatty()


def _run_to_dir(source: ScenarioSource, out: Path, args: argparse.Namespace) -> int:
    """Validate, check the output path, simulate, write atomically, plot, report."""
    from ccsim import api
    from ccsim.estimate import estimate, long_run_warning, too_big
    from ccsim.output import OutputDirError, check_output_dir
    from ccsim.results import PlotError, budget_warnings, idle_warning

    if not args.quiet:  # rich only for the report; imported before anything is written
        from ccsim.report import print_report, report_console
    formats = _formats(args)
    # the memory check first: building the network to validate it takes about what the
    # run's flows take, and 3 million flows aborted validation at 7.7 GB (issue 33)
    cost = estimate(source)
    refusal = too_big(cost, source.label)
    if refusal:
        raise BadInput(refusal)
    api.check(source)
    try:
        check_output_dir(out)
    except OutputDirError as exc:
        raise BadInput(str(exc)) from exc
    warning = long_run_warning(cost)
    if warning and not args.quiet:
        print(warning, file=sys.stderr)
    result = api.simulate(source, progress=_show_progress(args))
    status = EXIT_OK
    try:
        result.write(out, plots=not args.no_plots, plot_formats=formats)
    except PlotError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        status = EXIT_FAILED
    for warning in [*budget_warnings(result.summary), idle_warning(result.summary)]:
        if warning:
            print(warning, file=sys.stderr)
    if not args.quiet:
        console = report_console()
        all_links = bool(getattr(args, "all_links", False))
        print_report(result.summary, console, label=source.label, all_links=all_links)
        console.print(f"results in [bold]{out}[/bold]")
    return status


def _output(text: str) -> Path:
    from ccsim.output import OutputDirError, output_path

    try:
        return output_path(text)
    except OutputDirError as exc:
        raise BadInput(str(exc)) from exc


def cmd_run(args: argparse.Namespace) -> int:
    return _run_to_dir(_load(args.scenario, _overrides(args)), _output(args.output), args)


def cmd_demo(args: argparse.Namespace) -> int:
    from importlib import resources

    from ccsim.api import ScenarioSource

    text = resources.files("ccsim").joinpath("scenarios", "demo.toml").read_text("utf-8")
    out = _output(args.output)
    status = _run_to_dir(ScenarioSource(text, "toml", "demo.toml"), out, args)
    files = sorted(p.name for p in out.iterdir() if p.suffix in (".parquet", ".json", ".png"))
    if any(p.suffix in (".pdf", ".svg") for p in out.iterdir()):
        files.append("the plots also as " + "/".join(f for f in _formats(args) if f != "png"))
    print(f"demo results in {out.resolve()}/: {', '.join(files)}")
    print(
        f"next: open {out}/throughput.png, or in Python: "
        f"pyarrow.parquet.read_table('{out}/flow_series.parquet')"
    )
    return status


def cmd_validate(args: argparse.Namespace) -> int:
    from ccsim import api
    from ccsim.estimate import describe, estimate, too_big

    source = _load(args.scenario, _overrides(args))
    cost = estimate(source)
    refusal = too_big(cost, source.label)
    if refusal:  # validating builds the network: it would not fit either
        raise BadInput(f"{refusal} (validating builds the network: it does not fit either)")
    api.check(source)
    print(f"ok: {args.scenario}")
    print(describe(cost))
    from ccsim.network_report import describe_network, network_report

    report = network_report(source)
    if report is not None:
        print(describe_network(report, all_links=bool(getattr(args, "all_links", False))))
    return EXIT_OK


def cmd_plot(args: argparse.Namespace) -> int:
    from ccsim.plots.run import NoResultsError, plot_results

    formats = _formats(args)
    directory = Path(args.directory)
    if not directory.is_dir():
        raise BadInput(f"{directory}: not a directory")
    try:
        written = plot_results(directory, formats)
    except NoResultsError as exc:
        raise BadInput(str(exc)) from exc
    for path in written:
        print(path)
    return EXIT_OK


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def cmd_sweep_dry_run(args: argparse.Namespace) -> int:
    """List the runs of a sweep (validated as for a real sweep) and a time estimate."""
    from ccsim.sweeps.local import cpu_count
    from ccsim.sweeps.spec import estimate_run_s, load_sweep

    sweep = load_sweep(args.sweep)
    axes = [a.name for a in sweep.axes]
    print("\t".join(["run", *axes, "repetition", "seed", "estimate"]))
    total = 0.0
    unknown = 0
    for spec in sweep.runs:
        estimate = estimate_run_s(spec.scenario)
        if estimate is None:
            unknown += 1
        else:
            total += estimate
        values = [json.dumps(v) if not isinstance(v, str) else v for v in spec.axis_values]
        shown = _duration(estimate) if estimate is not None else "?"
        print("\t".join([str(spec.run), *values, str(spec.repetition), str(spec.seed), shown]))
    jobs = args.jobs or cpu_count()
    note = f" ({unknown} runs without an estimate)" if unknown else ""
    print(
        f"{len(sweep.runs)} runs; estimated {_duration(total)} of simulation, about "
        f"{_duration(total / jobs)} on {jobs} core{'s' if jobs != 1 else ''}{note} "
        "(rough: from the bottleneck's packet count; nothing was run or written)"
    )
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    """Exit status: 0 when every run succeeded, 3 when some failed, 1 when only the plot
    failed."""
    from ccsim.report import report_console
    from ccsim.sweeps import runner

    if args.dry_run:
        return cmd_sweep_dry_run(args)
    if not args.output:
        raise BadInput("sweep: -o DIR is required (or --dry-run to list the runs)")
    formats = _formats(args)
    try:
        report = runner.sweep(
            args.sweep,
            args.output,
            jobs=args.jobs,
            dask=args.dask,
            force=args.force,
            retry_failed=args.retry_failed,
            batch_size=args.batch,
            progress=_show_progress(args),
            plot=args.plot,
            plot_formats=formats,
        )
    except KeyboardInterrupt as exc:
        print(
            f"error: {_interrupt_word(exc)}: finished runs are in {args.output}; "
            "run again to resume",
            file=sys.stderr,
        )
        return _interrupt_status(exc)
    if not args.quiet:
        runner.print_summary(report, report_console())
    if report.plot_error:
        print(f"error: {report.plot_error}", file=sys.stderr)
    if report.failed:
        print(
            f"error: {report.failed} of {report.total} runs failed (their errors are in "
            f"{report.out / 'results.parquet'}; --retry-failed runs them again)",
            file=sys.stderr,
        )
    return report.exit_status


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Exit status 0, or 1 when a run failed or a figure could not be drawn; 2 for bad
    input (an unknown experiment name), nothing written."""
    from ccsim.reproduce.command import ReproduceInputError, run_command
    from ccsim.reproduce.runner import Options

    options = Options(
        quick=args.quick,
        jobs=args.jobs,
        dask=args.dask,
        progress=_show_progress(args),
        timing=args.timing,
    )
    say = (lambda line: None) if args.quiet else print
    try:
        return run_command(args.names, args.output, options, args.list, say)
    except ReproduceInputError as exc:
        raise BadInput(str(exc)) from exc


def cmd_emulate(args: argparse.Namespace) -> int:
    """Run the scenario's network in real time with kernel TCP flows (ccsim.emulate)."""
    from ccsim import api
    from ccsim.emulate import EmulationError, Refusal, emulate
    from ccsim.output import OutputDirError, check_output_dir
    from ccsim.results import PlotError

    source = _load(args.scenario, _overrides(args))
    out = _output(args.output)
    formats = _formats(args)
    api.check(source)
    try:
        check_output_dir(out)
    except OutputDirError as exc:
        raise BadInput(str(exc)) from exc
    progress = None
    if _show_progress(args):

        def progress(fraction: float) -> None:
            print(f"\r  emulating {source.label}: {fraction:4.0%}", end="", file=sys.stderr)

    try:
        result = emulate(source, progress=progress, udp=args.udp)
    except Refusal as exc:
        raise BadInput(str(exc)) from exc
    except (EmulationError, OSError) as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if progress is not None:
            print(file=sys.stderr)
    status = EXIT_OK
    try:
        result.write(out, plots=not args.no_plots, plot_formats=formats)
    except PlotError as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        status = EXIT_FAILED
    t = result.summary["emulation"]
    line = (
        f"emulator timing error (release lateness): p50 {t['p50_us']:.0f} us, p99 "
        f"{t['p99_us']:.0f} us, max {t['max_us']:.0f} us over {t['releases']} packets; "
        f"tolerance {t['tolerance_us']:.0f} us (half a 1500 B packet at the bottleneck)"
    )
    if not t["within_tolerance"]:
        line = "warning: " + line + ": exceeded, the emulated queue's timing is off"
    print(line, file=sys.stderr)
    if not args.quiet:
        from ccsim.report import print_report, report_console

        console = report_console()
        print_report(result.summary, console, label=source.label + " (emulated)")
        console.print(f"results in [bold]{out}[/bold]")
    return status


def cmd_bench(args: argparse.Namespace) -> int:
    from ccsim import bench
    from ccsim.report import report_console

    console = report_console()
    results = bench.run_all(console, quick=args.quick)
    network_results = bench.run_network_bench(console, quick=args.quick)
    sweep_results = bench.run_sweep_bench(console, quick=args.quick)
    loop_results = bench.run_loop_bench(console, quick=args.quick)
    gym_records: list[dict[str, object]] = []
    try:
        import gymnasium  # noqa: F401  (the environment's rows need the `rl` extra)
    except ImportError:
        console.print("gym: skipped (gymnasium not installed: pip install 'ccsim[rl]')")
    else:
        from ccsim.gym import bench as gym_bench

        gym_records = gym_bench.gym_records(gym_bench.run_gym_bench(console, quick=args.quick))
    if args.json:
        records = bench.as_records(results) + bench.network_records(network_results)
        records += bench.sweep_records(sweep_results)
        records += bench.loop_records(loop_results) + gym_records
        Path(args.json).write_text(json.dumps(records, indent=2) + "\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from ccsim import __version__

    parser = argparse.ArgumentParser(
        prog="ccsim",
        description="Packet-level network simulator for congestion-control and AQM research.",
    )
    parser.add_argument("--version", action="version", version=f"ccsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def format_option(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument(
            "--format",
            metavar="FORMATS",
            help=f"{what} in these formats, comma-separated among png, pdf, svg "
            "(default: png; --format png,pdf,svg for all three)",
        )

    def set_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--set",
            action="append",
            metavar="KEY=VALUE",
            help="set a scenario value by key path, as a sweep's [set] does: "
            "--set 'flows[0].cc.g=6' --set seed=3 --set 'flows[0].rtt=50ms' (the value is "
            "read as TOML, else as a string); repeatable, applied in order, recorded in "
            "summary.json",
        )

    def output_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--no-plots", action="store_true", help="write no plots")
        format_option(p, "write the plots")
        p.add_argument("--quiet", action="store_true", help="no progress bar and no report")
        p.add_argument(
            "--all-links",
            action="store_true",
            help="with a [network]: report every congested link, not the busiest few",
        )
        p.add_argument(
            "--progress",
            action="store_true",
            help="show the progress bar even when stderr is not a terminal",
        )

    p = sub.add_parser(
        "run",
        help="simulate a scenario file and write its results",
        description="Simulate a scenario and write DIR: summary.json, one Parquet table "
        "per kind of record (every table always, empty on purpose when the scenario cannot "
        "fill it, e.g. deadline_control.parquet without a deadline controller: the same "
        "files and schemas in every result directory) and the plots as PNG "
        "(--format png,pdf,svg for PDF and SVG too; --no-plots for none).",
    )
    p.add_argument("scenario", help="scenario file (.toml, or .json)")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="result directory (Parquet tables, summary.json, plots)",
    )
    set_option(p)
    output_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "emulate",
        help="run a scenario's network in real time with the kernel's TCP as its flows",
        description="Emulate a scenario: its TCP flows are played by this machine's kernel "
        "(each flow's congestion control set per socket) in two network namespaces joined "
        "through TUN devices by ccsim's engine, which runs the scenario's links, queue "
        "disciplines and reverse path at wall-clock time. Writes DIR as `ccsim run` does "
        "(queue tables from the emulated queue, goodput from the receivers, cwnd and srtt "
        "from TCP_INFO) and reports the emulator's timing error. Needs root (CAP_NET_ADMIN) "
        "and /dev/net/tun; exit 2 with one line otherwise.",
    )
    p.add_argument("scenario", help="scenario file (.toml, or .json)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="result directory")
    p.add_argument(
        "--udp",
        choices=("kernel", "simulated"),
        default="kernel",
        help="who plays the scenario's UDP sources: kernel UDP sockets in the senders' "
        "namespace (default) or ccsim's simulated sources inside the emulator",
    )
    set_option(p)
    output_options(p)
    p.set_defaults(func=cmd_emulate)

    p = sub.add_parser(
        "sweep",
        help="run every scenario of a sweep file (resumable)",
        description="Run a parameter sweep; exit status 0 if every run succeeded, 3 if some "
        "failed (the count is in the last line and in DIR/sweep.json), 1 if only the plot "
        "failed, 2 for bad input, 130 on Ctrl-C and 143 on SIGTERM (finished runs are kept).",
    )
    p.add_argument("sweep", help="sweep file (.toml): a base scenario plus axes")
    p.add_argument(
        "-o", "--output", metavar="DIR", help="result directory (required unless --dry-run)"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the sweep, list its runs (axis values, repetition, seed) and a rough "
        "time estimate; run and write nothing",
    )
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="local threads (default: all cores)")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a dask.distributed scheduler (tcp://host:8786), or local:N for a "
        "LocalCluster of N worker processes",
    )
    p.add_argument("--batch", type=int, metavar="N", help="runs per Dask task (default: auto)")
    p.add_argument(
        "--force", action="store_true", help="discard results of a different sweep in DIR"
    )
    p.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    p.add_argument(
        "--plot",
        action="store_true",
        help="draw the sweep's [plot] to DIR/sweep.png (and .pdf/.svg with --format)",
    )
    format_option(p, "--plot draws")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar even when stderr is not a terminal",
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "reproduce",
        help="run the papers' experiments: figures, paper-vs-ccsim verdicts, report",
        description="Run experiments of the papers (003:fig2, a paper 003, or all) into DIR: "
        "each one's sweep (resumable), figure.png/.pdf and a row per quoted number in "
        "DIR/report.md and DIR/index.html. Exit status 0, 1 if a run or a figure failed, "
        "2 for bad input.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="003:fig2, 003 or all")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    p.add_argument("-o", "--output", metavar="DIR", help="output directory")
    p.add_argument(
        "--quick", action="store_true", help="fewer repetitions, shorter runs, a coarser grid"
    )
    p.add_argument("--timing", action="store_true", help="report the wall time per experiment")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="local threads (default: all cores)")
    p.add_argument(
        "--dask", metavar="ADDRESS", help="run on a dask.distributed scheduler, or local:N"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary lines")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show the progress bar even when stderr is not a terminal",
    )
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser(
        "validate",
        help="check a scenario file without running it",
        description="Read and check a scenario (every key, unit and value, drawing its "
        "random values) without running it: 'ok: FILE' and exit status 0, or one line "
        "'error: key.path: ...' and exit status 2. A sweep file is checked with "
        "'ccsim sweep FILE --dry-run'.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml, or .json)")
    set_option(p)
    p.add_argument(
        "--all-links",
        action="store_true",
        help="with a [network]: list every link, not the busiest few",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "plot",
        help="draw the plots of a result directory again",
        description="Draw the figures of a run's result directory (written by 'ccsim run' "
        "or RunResult.write) from its Parquet tables into the same directory: "
        "throughput, queue_delay, sojourn_cdf, and cwnd (flows with trace = true) and rtt "
        "([trace] rtt_samples = true) when those tables have rows. Prints the files written.",
    )
    p.add_argument(
        "directory", metavar="DIR", help="result directory holding flow_series.parquet etc."
    )
    format_option(p, "write the figures")
    p.set_defaults(func=cmd_plot)

    from ccsim import algorithms  # ccsim algorithms [NAME]: the parameter tables

    algorithms.add_parser(sub)

    from ccsim import traces  # ccsim trace KIND|show: Mahimahi link traces

    traces.add_parser(sub)

    p = sub.add_parser("demo", help="run the bundled demo scenario and plot it")
    p.add_argument(
        "-o",
        "--output",
        default="demo-out",
        metavar="DIR",
        help="result directory (default: demo-out)",
    )
    output_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("bench", help="run the standard speed benchmarks and report")
    p.add_argument(
        "--quick",
        action="store_true",
        help="simulate a tenth of each duration (targets scaled alike)",
    )
    p.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    p.set_defaults(func=cmd_bench)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # SIGTERM (kill, a batch scheduler's timeout) gets the same cleanup as Ctrl-C; only
    # the main thread may install a handler (main() may be called from another thread).
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return _main(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    try:
        return _dispatch(argv)
    except KeyboardInterrupt as exc:
        print(f"error: {_interrupt_word(exc)}", file=sys.stderr)
        return _interrupt_status(exc)
    except MemoryError:
        print("error: out of memory", file=sys.stderr)  # one line, not a traceback
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_FAILED


def _dispatch(argv: Sequence[str] | None) -> int:
    # The first imports of numpy, pyarrow and rich happen from here on, under _main()'s
    # handlers: Ctrl-C during them is one line and 130, not a traceback.
    from ccsim._core import ScenarioError
    from ccsim.scenario import SweepError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except (ScenarioError, SweepError, BadInput) as exc:
        print(f"error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
