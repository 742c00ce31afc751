//! `ccsim._core`: the thin PyO3 layer between Python and `ccsim_core::api`.
//!
//! Everything user-facing (file handling, Arrow tables, Parquet, plots, the CLI) lives in
//! the pure-Python package `ccsim`; this module only parses, validates and runs a scenario.
//!
//! - Scenario errors become `ccsim._core.ScenarioError` (a `ValueError`) carrying the core's
//!   one-line `path: message` text.
//! - Parsing, validation and the simulation itself run with the GIL released. The progress
//!   callback re-attaches only for the call, about every 1% of simulated time; at the same
//!   moment pending signals are checked, so Ctrl-C interrupts a long run.
//! - Building the result tables and turning them into Python objects (millions of rows
//!   in a traced run) looks at the same signals, and at the run's `cancel` callable, between
//!   batches of rows ([`ccsim_core::results::RowBatches`]): SIGINT took 36.6 s to act there
//!   (issue 33). A stop raises what the check raised (`KeyboardInterrupt`, or the CLI's
//!   SIGTERM exception) and returns nothing.
//! - Result columns cross as little-endian `bytes` (one copy, straight into the `bytes`
//!   object) that Python wraps as Arrow buffers without another element-by-element pass.

use std::panic::{self, AssertUnwindSafe};

use ccsim_core::api;
use ccsim_core::api::{FlowState, ParamUpdate, RunError};
use ccsim_core::results::{Column, RunOutput, Table, CANCEL_CHECK_ROWS};
use ccsim_core::scenario::{ParamValue, Scenario, ScenarioError as CoreScenarioError};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(
    ccsim._core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot be run: the message is one line, `path: what was expected`."
);

fn scenario_error(err: CoreScenarioError) -> PyErr {
    ScenarioError::new_err(err.to_string())
}

/// Parse and validate (build without running) with the GIL released.
fn parse_and_validate(py: Python<'_>, text: &str, fmt: &str) -> PyResult<Scenario> {
    py.detach(|| {
        let scenario = api::parse(text, fmt)?;
        api::validate(&scenario)?;
        Ok(scenario)
    })
    .map_err(scenario_error)
}

/// Raise if the run should stop: a pending signal's handler raised (Ctrl-C's
/// `KeyboardInterrupt`), or the run's `cancel` callable did (`ccsim.cancel`: a cancel
/// event set, `ccsim.cancel_runs()`, Ctrl-C heard by the main thread of a run elsewhere).
fn check_cancel(py: Python<'_>, cancel: Option<&Py<PyAny>>) -> PyResult<()> {
    py.check_signals()?;
    if let Some(cancel) = cancel {
        cancel.call0(py)?;
    }
    Ok(())
}

/// Panic payload used to abandon a run when the progress callback raised (or Ctrl-C).
/// Raised with `resume_unwind`, which skips the panic hook, so nothing is printed.
struct Abandoned;

/// Run the simulation; called with the GIL released. Returns the output and the summary
/// serialised as JSON.
/// A flow's state as the dict a Python controller receives.
fn flow_state_to_py<'py>(py: Python<'py>, s: &FlowState) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flow_id", s.flow_id)?;
    d.set_item("group", s.group)?;
    d.set_item("time_s", s.time_s)?;
    d.set_item("bytes_sent", s.bytes_sent)?;
    d.set_item("bytes_acked", s.bytes_acked)?;
    d.set_item("bytes_left", s.bytes_left)?;
    d.set_item("cwnd_pkts", s.cwnd_pkts)?;
    d.set_item("ssthresh_pkts", s.ssthresh_pkts)?;
    d.set_item("srtt_ms", s.srtt_ms)?;
    d.set_item("min_rtt_ms", s.min_rtt_ms)?;
    d.set_item("active", s.active)?;
    Ok(d)
}

/// Read a controller's answer: an iterable of `(flow_id, name, value)` triples (or
/// dicts with those keys); `None` means no change.
fn updates_from_py(answer: &Bound<'_, PyAny>) -> PyResult<Vec<ParamUpdate>> {
    let mut updates = Vec::new();
    if answer.is_none() {
        return Ok(updates);
    }
    for item in answer.try_iter()? {
        let item = item?;
        let (flow_id, name, value): (u32, String, Bound<'_, PyAny>) =
            if let Ok(d) = item.cast::<PyDict>() {
                let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
                    d.get_item(k)?.ok_or_else(|| {
                        PyValueError::new_err(format!("controller update misses key {k:?}"))
                    })
                };
                (
                    get("flow_id")?.extract()?,
                    get("name")?.extract()?,
                    get("value")?,
                )
            } else {
                item.extract()?
            };
        let value = if let Ok(b) = value.extract::<bool>() {
            ParamValue::Bool(b)
        } else if let Ok(x) = value.extract::<f64>() {
            ParamValue::Number(x)
        } else if let Ok(s) = value.extract::<String>() {
            ParamValue::Str(s)
        } else {
            return Err(PyValueError::new_err(format!(
                "controller update for flow {flow_id} {name:?}: expected a number, bool or string"
            )));
        };
        updates.push(ParamUpdate {
            flow_id,
            name,
            value,
        });
    }
    Ok(updates)
}

fn simulate(
    scenario: &Scenario,
    callback: Option<&Py<PyAny>>,
    controller: Option<(&Py<PyAny>, u64)>,
    cancel: Option<&Py<PyAny>>,
) -> PyResult<(RunOutput, String)> {
    let raised: std::cell::RefCell<Option<PyErr>> = std::cell::RefCell::new(None);
    let abandon = |err: PyErr| -> ! {
        *raised.borrow_mut() = Some(err);
        panic::resume_unwind(Box::new(Abandoned));
    };
    let outcome = {
        let mut on_progress = |fraction: f64| {
            let result = Python::attach(|py| -> PyResult<()> {
                py.check_signals()?;
                if let Some(callback) = callback {
                    callback.call1(py, (fraction,))?;
                }
                Ok(())
            });
            if let Err(err) = result {
                abandon(err);
            }
        };
        let mut on_control = |states: &[FlowState]| -> Vec<ParamUpdate> {
            let (callable, _) = controller.expect("only called with a controller");
            let result = Python::attach(|py| -> PyResult<Vec<ParamUpdate>> {
                let list = PyList::empty(py);
                for s in states {
                    list.append(flow_state_to_py(py, s)?)?;
                }
                let answer = callable.call1(py, (list,))?;
                updates_from_py(answer.bind(py))
            });
            result.unwrap_or_else(|err| abandon(err))
        };
        let control = controller.map(|(_, interval_ns)| api::Control {
            interval_ns,
            callback: &mut on_control,
        });
        // asked between row batches while the tables are built
        let mut stop = || match Python::attach(|py| check_cancel(py, cancel)) {
            Ok(()) => false,
            Err(err) => {
                *raised.borrow_mut() = Some(err);
                true
            }
        };
        panic::catch_unwind(AssertUnwindSafe(|| {
            api::run_cancellable(scenario, Some(&mut on_progress), control, &mut stop)
        }))
    };
    let mut raised = raised.into_inner();
    match outcome {
        Ok(Ok(output)) => {
            let summary = serde_json::to_string(&output.summary).map_err(|err| {
                PyValueError::new_err(format!("cannot serialise the run summary: {err}"))
            })?;
            Ok((output, summary))
        }
        Ok(Err(RunError::Scenario(err))) => Err(scenario_error(err)),
        Ok(Err(RunError::Cancelled(_))) => Err(raised
            .take()
            .expect("a cancelled run records the Python error")),
        Err(payload) if payload.is::<Abandoned>() => Err(raised
            .take()
            .expect("an abandoned run records the Python error")),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// `n` little-endian values of `WIDTH` bytes each, written straight into a new `bytes`,
/// checking for a cancellation between batches of rows.
fn le_bytes<'py, T: Copy, const WIDTH: usize>(
    py: Python<'py>,
    values: &[T],
    to_le: fn(T) -> [u8; WIDTH],
    cancel: Option<&Py<PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * WIDTH, |buf| {
        let batches = buf
            .chunks_mut(CANCEL_CHECK_ROWS * WIDTH)
            .zip(values.chunks(CANCEL_CHECK_ROWS));
        for (bytes, batch) in batches {
            for (chunk, value) in bytes.chunks_exact_mut(WIDTH).zip(batch) {
                chunk.copy_from_slice(&to_le(*value));
            }
            check_cancel(py, cancel)?;
        }
        Ok(())
    })
}

/// `data` as a new `bytes` (the pcap capture), checking for a cancellation between
/// batches.
fn bytes_to_py<'py>(
    py: Python<'py>,
    data: &[u8],
    cancel: Option<&Py<PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    // a batch of bytes, not of rows: a capture's bytes copy faster than rows are built
    const BATCH_BYTES: usize = CANCEL_CHECK_ROWS * 64;
    PyBytes::new_with(py, data.len(), |buf| {
        for (to, from) in buf.chunks_mut(BATCH_BYTES).zip(data.chunks(BATCH_BYTES)) {
            to.copy_from_slice(from);
            check_cancel(py, cancel)?;
        }
        Ok(())
    })
}

/// `(dtype, data)` for one column.
fn column_to_py<'py>(
    py: Python<'py>,
    column: &Column,
    cancel: Option<&Py<PyAny>>,
) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match column {
        Column::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes, cancel)?.into_any()),
        Column::U64(v) => ("u64", le_bytes(py, v, u64::to_le_bytes, cancel)?.into_any()),
        Column::U32(v) => ("u32", le_bytes(py, v, u32::to_le_bytes, cancel)?.into_any()),
        Column::Str(v) => {
            let list = PyList::empty(py);
            for batch in v.chunks(CANCEL_CHECK_ROWS) {
                for text in batch {
                    list.append(text)?;
                }
                check_cancel(py, cancel)?;
            }
            ("str", list.into_any())
        }
    })
}

/// `{table_name: {column_name: (dtype, data)}}`, tables and columns in the core's order.
/// A column of millions of rows takes a while: Ctrl-C and `cancel` are heard between
/// batches of its rows (SIGINT took 36.6 s to act while 19 M rows were converted, issue 33).
fn tables_to_py<'py>(
    py: Python<'py>,
    tables: &[Table],
    cancel: Option<&Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for table in tables {
        let columns = PyDict::new(py);
        for (name, column) in &table.columns {
            columns.set_item(name, column_to_py(py, column, cancel)?)?;
        }
        out.set_item(&table.name, columns)?;
        check_cancel(py, cancel)?;
    }
    Ok(out)
}

/// Parse and validate a scenario (`fmt` is "toml" or "json"); raise `ScenarioError` if it
/// cannot be run.
#[pyfunction]
fn parse_check(py: Python<'_>, text: &str, fmt: &str) -> PyResult<()> {
    parse_and_validate(py, text, fmt).map(|_| ())
}

/// A scenario's `[network]` as built, as JSON (nodes, links with the flows each carries
/// and whether it is a congestion candidate; see `ccsim_core::sim::NetworkReport`), or
/// `None` for a dumbbell. Raises `ScenarioError` if it does not build.
#[pyfunction]
fn network_report(py: Python<'_>, text: &str, fmt: &str) -> PyResult<Option<String>> {
    let report = py
        .detach(|| api::network_report(&api::parse(text, fmt)?))
        .map_err(scenario_error)?;
    Ok(report.map(|r| serde_json::to_string(&r).expect("a report serialises")))
}

/// Parse, validate and simulate a scenario.
///
/// Returns `(summary_json, tables, pcap)` with `tables = {name: {column: (dtype, data)}}`,
/// dtype one of "f64", "u64", "u32" (data: little-endian `bytes`) or "str" (data: `list[str]`),
/// and `pcap` the pcapng capture's `bytes` when `[trace] pcap` asked for one, else `None`.
/// `progress`, if given, is called with the fraction of simulated time done. `cancel`, if
/// given, is called without arguments between batches of rows while the results are built
/// and converted: an exception it raises (`KeyboardInterrupt`) stops the run and is
/// re-raised, as one from `progress` or a signal handler is.
#[pyfunction]
#[pyo3(signature = (text, fmt, progress = None, controller = None, control_interval_ns = 100_000_000, cancel = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    progress: Option<Py<PyAny>>,
    controller: Option<Py<PyAny>>,
    control_interval_ns: u64,
    cancel: Option<Py<PyAny>>,
) -> PyResult<(String, Bound<'py, PyDict>, Option<Bound<'py, PyBytes>>)> {
    let scenario = parse_and_validate(py, text, fmt)?;
    let control = controller.as_ref().map(|c| (c, control_interval_ns));
    let cancel = cancel.as_ref();
    let (output, summary) =
        py.detach(|| simulate(&scenario, progress.as_ref(), control, cancel))?;
    let tables = tables_to_py(py, &output.tables, cancel)?;
    let pcap = match output.pcap.as_deref() {
        Some(bytes) => Some(bytes_to_py(py, bytes, cancel)?),
        None => None,
    };
    Ok((summary, tables, pcap))
}

/// Run a scenario in real time with its TCP flows played by kernel sockets (see
/// `ccsim_core::emulate`). Builds the scenario (raising `ScenarioError` before anything
/// is created), creates TUN devices `sender_tun` and `receiver_tun`, calls `ready()`, which
/// wires them into the namespaces, starts the traffic and returns time zero as a
/// `time.monotonic()` value, then runs to the scenario's end. `progress(fraction)` is
/// called about every 100 ms (signals are checked there too); an exception it raises
/// stops the run and is re-raised. With `udp_base_port` the UDP sources are played by
/// kernel sockets too (source `u` sends to port `udp_base_port + u`); without, they stay
/// simulated. Returns `(summary_json, tables, timing, pcap)`, `pcap` the capture's
/// bytes when `[trace] pcap` asked for one (the kernel's packets' real headers).
#[pyfunction]
#[pyo3(signature = (text, fmt, sender_tun, receiver_tun, base_port, ready, progress, udp_base_port=None))]
#[allow(clippy::too_many_arguments)]
fn emulate<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    sender_tun: &str,
    receiver_tun: &str,
    base_port: u16,
    ready: Py<PyAny>,
    progress: Py<PyAny>,
    udp_base_port: Option<u16>,
) -> PyResult<(
    String,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Option<Bound<'py, PyBytes>>,
)> {
    use ccsim_core::emulate::{self, tun::Tun};
    let scenario = parse_and_validate(py, text, fmt)?;
    let world = ccsim_core::sim::build(&scenario).map_err(scenario_error)?;
    let rate_bps = world.bottleneck_rate_bps();
    let open = |name: &str| {
        Tun::open(name).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot create TUN device {name}: {e}"))
        })
    };
    let tuns = [open(sender_tun)?, open(receiver_tun)?];
    let start_s: f64 = ready.call0(py)?.extract(py)?;
    let start_ns = (start_s * 1e9) as u64;
    let mut raised: Option<PyErr> = None;
    let mut on_progress = |fraction: f64| -> bool {
        let result = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            progress.call1(py, (fraction,))?;
            Ok(())
        });
        match result {
            Ok(()) => true,
            Err(err) => {
                raised = Some(err);
                false
            }
        }
    };
    let outcome = py.detach(|| {
        emulate::run(
            world,
            [&tuns[0], &tuns[1]],
            emulate::Ports {
                tcp_base: base_port,
                udp_base: udp_base_port,
            },
            start_ns,
            &mut on_progress,
        )
    });
    drop(tuns);
    if let Some(err) = raised {
        return Err(err);
    }
    let out =
        outcome.map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("emulator I/O: {e}")))?;
    let summary = serde_json::to_string(&out.output.summary)
        .map_err(|err| PyValueError::new_err(format!("cannot serialise the run summary: {err}")))?;
    let tables = tables_to_py(py, &out.output.tables, None)?;
    let t = &out.timing;
    let timing = PyDict::new(py);
    timing.set_item("releases", t.releases)?;
    timing.set_item("p50_us", t.p50_ns as f64 / 1e3)?;
    timing.set_item("p99_us", t.p99_ns as f64 / 1e3)?;
    timing.set_item("max_us", t.max_ns as f64 / 1e3)?;
    timing.set_item("injected", t.injected)?;
    timing.set_item("injected_udp", t.injected_udp)?;
    timing.set_item("ignored", t.ignored)?;
    timing.set_item("write_failures", t.write_failures)?;
    timing.set_item("max_packet_bytes", t.max_packet_bytes)?;
    timing.set_item("wall_s", t.wall_s)?;
    timing.set_item("realtime_priority", t.realtime_priority)?;
    timing.set_item("bottleneck_rate_bps", rate_bps)?;
    let pcap = out.output.pcap.as_deref().map(|b| PyBytes::new(py, b));
    Ok((summary, tables, timing, pcap))
}

/// What an emulation of the scenario must play with kernel sockets: one dict per TCP flow
/// (flow ids in order) with `group`, `cc` (the algorithm's name), `cc_params` (names of
/// parameters set beside `kind`), `start_s`, `stop_s` (or None), `rtt_ms`, `sizes_bytes`
/// (empty for bulk), `ecn`, `sack`, `delayed_ack`, `pacing`, `mss`, `initial_window`,
/// `deadline`, `ppv`, `changes` (how many scheduled parameter changes). Raises
/// `ScenarioError` if the scenario does not build.
#[pyfunction]
fn emulation_plan<'py>(py: Python<'py>, text: &str, fmt: &str) -> PyResult<Bound<'py, PyList>> {
    let sc = parse_and_validate(py, text, fmt)?;
    ccsim_core::sim::build(&sc).map_err(scenario_error)?;
    let out = PyList::empty(py);
    for (gi, g) in sc.flows.iter().enumerate() {
        for d in &g.drawn {
            let f = PyDict::new(py);
            f.set_item("group", gi)?;
            f.set_item("cc", &g.cc.kind)?;
            f.set_item("cc_params", g.cc.params.keys().collect::<Vec<_>>())?;
            f.set_item("start_s", d.start.ns as f64 / 1e9)?;
            f.set_item("stop_s", g.stop.map(|s| s.ns as f64 / 1e9))?;
            f.set_item("rtt_ms", d.rtt.ns as f64 / 1e6)?;
            f.set_item(
                "sizes_bytes",
                d.sizes.iter().map(|b| b.bytes).collect::<Vec<_>>(),
            )?;
            f.set_item("ecn", g.ecn)?;
            f.set_item("sack", g.sack)?;
            f.set_item("delayed_ack", g.delayed_ack)?;
            f.set_item("pacing", g.pacing)?;
            f.set_item("mss", g.mss)?;
            f.set_item("initial_window", g.initial_window)?;
            f.set_item("deadline", g.deadline.is_some())?;
            f.set_item("ppv", g.ppv.is_some())?;
            f.set_item("changes", g.changes.len())?;
            out.append(f)?;
        }
    }
    Ok(out)
}

/// The UDP sources an emulation plays with kernel sockets: one dict per source (in flow
/// order, after the TCP flows) with `group`, `rate_bps`, `packet_size` (bytes of IP
/// packet), `pattern` (`"cbr"` or `"poisson"`), `start_s`, `stop_s` (or None), `ecn`,
/// `ppv`. Raises `ScenarioError` if the scenario does not build.
#[pyfunction]
fn emulation_udp_plan<'py>(py: Python<'py>, text: &str, fmt: &str) -> PyResult<Bound<'py, PyList>> {
    let sc = parse_and_validate(py, text, fmt)?;
    ccsim_core::sim::build(&sc).map_err(scenario_error)?;
    let out = PyList::empty(py);
    for (gi, g) in sc.udp.iter().enumerate() {
        for d in &g.drawn {
            let f = PyDict::new(py);
            f.set_item("group", gi)?;
            f.set_item("rate_bps", d.rate.bps)?;
            f.set_item("packet_size", g.packet_size.bytes)?;
            f.set_item(
                "pattern",
                match g.pattern {
                    ccsim_core::scenario::UdpPattern::Cbr => "cbr",
                    ccsim_core::scenario::UdpPattern::Poisson => "poisson",
                },
            )?;
            f.set_item("start_s", d.start.ns as f64 / 1e9)?;
            f.set_item("stop_s", g.stop.map(|s| s.ns as f64 / 1e9))?;
            f.set_item("ecn", g.ecn)?;
            f.set_item("ppv", g.ppv.is_some())?;
            out.append(f)?;
        }
    }
    Ok(out)
}

/// What running a scenario will cost, estimated before building it: a dict with
/// `flows`, `bottleneck_packets`, `events`, `wall_s`, `series_rows`, `memory_bytes`,
/// `offered_packets`, `qdisc_updates`, `trace_rows` (`{key: rows}`) and `largest`
/// (`(key, bytes)`: the scenario key costing the most memory) (see `ccsim_core::sim::estimate`). Raises `ScenarioError` if it does not parse.
#[pyfunction]
fn estimate<'py>(py: Python<'py>, text: &str, fmt: &str) -> PyResult<Bound<'py, PyDict>> {
    let scenario = api::parse(text, fmt).map_err(scenario_error)?;
    let e = ccsim_core::sim::estimate(&scenario);
    let d = PyDict::new(py);
    d.set_item("flows", e.flows)?;
    d.set_item("bottleneck_packets", e.bottleneck_packets)?;
    d.set_item("events", e.events)?;
    d.set_item("wall_s", e.wall_s)?;
    d.set_item("series_rows", e.series_rows)?;
    d.set_item("memory_bytes", e.memory_bytes)?;
    d.set_item("offered_packets", e.offered_packets)?;
    d.set_item("qdisc_updates", e.qdisc_updates)?;
    let traces = PyDict::new(py);
    for (key, rows) in &e.trace_rows {
        traces.set_item(*key, *rows)?;
    }
    d.set_item("trace_rows", traces)?;
    d.set_item("largest", (e.largest.0, e.largest.1))?;
    Ok(d)
}

/// The version of the simulator core.
/// Parse a duration with units (`"100ms"`) the way scenario files do; `key` names it in
/// the error.
#[pyfunction]
fn duration_ns(text: &str, key: &str) -> PyResult<u64> {
    ccsim_core::scenario::SimDuration::parse(text)
        .map(|d| d.ns)
        .map_err(|msg| ScenarioError::new_err(format!("{key}: {msg}")))
}

#[pyfunction]
fn version() -> &'static str {
    ccsim_core::VERSION
}

/// How this extension was compiled: `pgo` is the decision of the build backend
/// (`pgo/ccsim_build.py`) on profile-guided optimisation, as one line.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "pgo",
        option_env!("CCSIM_BUILD_PGO").unwrap_or("off (not built by pgo/ccsim_build.py)"),
    )?;
    Ok(d)
}

/// ccsim's simulator core (Rust).
/// Every table a run produces, in order (the one list Python's output and sweeps use).
#[pyfunction]
fn table_names() -> Vec<&'static str> {
    ccsim_core::sim::TABLE_NAMES.to_vec()
}

/// Every congestion control and queue discipline with its parameter table (the tables
/// that check scenario files): `name`, `aliases`, `family` ("congestion control" or
/// "queue discipline"), `summary`, `reference`, and `params`, each with `name`, `unit`,
/// `default`, `accepts` and `help`.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let mut out = Vec::new();
    for algo in ccsim_core::params::all() {
        let d = PyDict::new(py);
        d.set_item("name", algo.name)?;
        d.set_item("aliases", algo.aliases.to_vec())?;
        d.set_item("family", algo.family.label())?;
        d.set_item("summary", algo.summary)?;
        d.set_item("reference", algo.reference)?;
        let mut params = Vec::new();
        for p in &algo.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            pd.set_item("unit", p.kind.unit())?;
            pd.set_item("default", p.default)?;
            pd.set_item("accepts", p.kind.accepts())?;
            pd.set_item("help", p.help)?;
            params.push(pd);
        }
        d.set_item("params", params)?;
        out.push(d);
    }
    Ok(out)
}

/// A throughput-value function from a preset name or `[[rate_bps, value], ...]` points.
fn tvf_from_py(spec: &Bound<'_, PyAny>) -> PyResult<ccsim_core::ppv::tvf::Tvf> {
    use ccsim_core::ppv::tvf::{Tvf, PRESETS};
    if let Ok(name) = spec.extract::<String>() {
        return Tvf::preset(&name.trim().to_lowercase()).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown value function {name:?} (known: {})",
                PRESETS.join(", ")
            ))
        });
    }
    let expected = || {
        PyValueError::new_err(
            "expected a value function name like \"gold\" or [[rate_bps, value], ...] points",
        )
    };
    // Lists or tuples of two numbers each.
    let rows: Vec<Vec<f64>> = spec.extract().map_err(|_| expected())?;
    let points = rows
        .iter()
        .map(|r| match r.as_slice() {
            [rate, value] => Ok((*rate, *value)),
            _ => Err(expected()),
        })
        .collect::<PyResult<Vec<(f64, f64)>>>()?;
    Tvf::from_points(&points).map_err(PyValueError::new_err)
}

/// `V(x)` of a throughput-value function at each throughput (bit/s).
#[pyfunction]
fn tvf_values(spec: &Bound<'_, PyAny>, rates_bps: Vec<f64>) -> PyResult<Vec<f64>> {
    let tvf = tvf_from_py(spec)?;
    Ok(rates_bps.into_iter().map(|x| tvf.value(x)).collect())
}

/// The ideal PPV allocation of `capacity_bps` among `classes` = `[(spec, flows), ...]`:
/// `(congestion threshold value, [per-flow bit/s of each class])`.
#[pyfunction]
fn tvf_ideal_shares(
    classes: Vec<(Bound<'_, PyAny>, i64)>,
    capacity_bps: f64,
) -> PyResult<(f64, Vec<f64>)> {
    if let Some((_, n)) = classes
        .iter()
        .find(|(_, n)| !(1..=i64::from(u32::MAX)).contains(n))
    {
        return Err(PyValueError::new_err(format!(
            "flows: expected a whole number of flows >= 1 per class, got {n}"
        )));
    }
    if !(capacity_bps.is_finite() && capacity_bps > 0.0) {
        return Err(PyValueError::new_err(format!(
            "capacity_bps: expected a positive number, got {capacity_bps}"
        )));
    }
    let tvfs = classes
        .iter()
        .map(|(spec, _)| tvf_from_py(spec))
        .collect::<PyResult<Vec<_>>>()?;
    let pairs: Vec<_> = tvfs
        .iter()
        .zip(&classes)
        .map(|(t, (_, n))| (t, *n as u32))
        .collect();
    Ok(ccsim_core::ppv::tvf::ideal_shares(&pairs, capacity_bps))
}

/// Names of the numbers `Stepper.stats()` gives per TCP flow, in order.
const STAT_FIELDS: [&str; 23] = [
    "flow_id",
    "group",
    "start_ns",
    "end_ns",
    "bytes_sent",
    "bytes_acked",
    "bytes_delivered",
    "bytes_lost",
    "packets_dropped",
    "packets_marked",
    "rtt_samples",
    "rtt_first_ns",
    "rtt_min_ns",
    "rtt_mean_ns",
    "rtt_last_ns",
    "rtt_slope",
    "srtt_ns",
    "min_rtt_ns",
    "cwnd_pkts",
    "mss_bytes",
    "delivery_rate_bps",
    "send_rate_bps",
    "active",
];

fn interval_row(s: &api::FlowInterval) -> [f64; 23] {
    [
        f64::from(s.flow_id),
        f64::from(s.group),
        s.start_ns as f64,
        s.end_ns as f64,
        s.bytes_sent as f64,
        s.bytes_acked as f64,
        s.bytes_delivered as f64,
        s.bytes_lost as f64,
        s.packets_dropped as f64,
        s.packets_marked as f64,
        s.rtt_samples as f64,
        s.rtt_first_ns as f64,
        s.rtt_min_ns as f64,
        s.rtt_mean_ns as f64,
        s.rtt_last_ns as f64,
        s.rtt_slope,
        s.srtt_ns as f64,
        s.min_rtt_ns as f64,
        f64::from(s.cwnd_pkts),
        f64::from(s.mss_bytes),
        s.delivery_rate_bps,
        s.send_rate_bps,
        f64::from(u8::from(s.active)),
    ]
}

/// A run advanced from Python one interval at a time (`ccsim.gym`): `advance(until_ns)`
/// simulates with the GIL released, `stats()` gives every TCP flow's numbers since the
/// last call (one list per flow, in `STAT_FIELDS` order), `set_param(flow, name, value)`
/// commands a flow's congestion control, `finish()` runs to the end and returns what
/// `run` returns.
/// `unsendable`: a queue discipline keeps a `RefCell`, so a run stays on the thread that
/// built it (it still simulates with the GIL released).
#[pyclass(module = "ccsim._core", unsendable)]
struct Stepper {
    inner: Option<Box<api::Stepper>>,
    started: std::time::Instant,
}

impl Stepper {
    fn get(&self) -> PyResult<&api::Stepper> {
        self.inner
            .as_deref()
            .ok_or_else(|| PyValueError::new_err("this run has finished"))
    }
    fn get_mut(&mut self) -> PyResult<&mut api::Stepper> {
        self.inner
            .as_deref_mut()
            .ok_or_else(|| PyValueError::new_err("this run has finished"))
    }
}

#[pymethods]
impl Stepper {
    #[classattr]
    const STAT_FIELDS: [&'static str; 23] = STAT_FIELDS;

    /// Parse, validate and build a scenario (`fmt`: "toml" or "json") at time 0.
    #[new]
    fn new(py: Python<'_>, text: &str, fmt: &str) -> PyResult<Self> {
        let stepper = py
            .detach(|| {
                let scenario = api::parse(text, fmt)?;
                api::Stepper::new(&scenario)
            })
            .map_err(scenario_error)?;
        Ok(Stepper {
            inner: Some(Box::new(stepper)),
            started: std::time::Instant::now(),
        })
    }

    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        Ok(self.get()?.now_ns())
    }

    #[getter]
    fn duration_ns(&self) -> PyResult<u64> {
        Ok(self.get()?.duration_ns())
    }

    #[getter]
    fn tcp_flows(&self) -> PyResult<usize> {
        Ok(self.get()?.tcp_flows())
    }

    /// Each TCP flow's base RTT (propagation and serialisation), ns.
    fn path_rtt_ns(&self) -> PyResult<Vec<u64>> {
        Ok(self.get()?.path_rtt_ns())
    }

    /// Simulate up to `until_ns` with the GIL released; whether time is left.
    fn advance(&mut self, py: Python<'_>, until_ns: u64) -> PyResult<bool> {
        let inner = self.get_mut()?;
        Ok(py.detach(|| inner.advance(until_ns)))
    }

    /// Every TCP flow's statistics since the last call, `STAT_FIELDS` order.
    fn stats(&mut self) -> PyResult<Vec<[f64; 23]>> {
        Ok(self
            .get_mut()?
            .interval_stats()
            .iter()
            .map(interval_row)
            .collect())
    }

    /// Flow `flow_id`'s statistics since its last read (only its interval restarts).
    fn flow_stats(&mut self, flow_id: usize) -> PyResult<[f64; 23]> {
        let inner = self.get_mut()?;
        if flow_id >= inner.tcp_flows() {
            return Err(PyValueError::new_err(format!("no TCP flow {flow_id}")));
        }
        Ok(interval_row(&inner.flow_interval(flow_id)))
    }

    /// Set parameter `name` of flow `flow_id`'s congestion control (a number, bool or
    /// string, as in a scenario file).
    fn set_param(&mut self, flow_id: u32, name: &str, value: Bound<'_, PyAny>) -> PyResult<()> {
        let value = if let Ok(b) = value.extract::<bool>() {
            ParamValue::Bool(b)
        } else if let Ok(x) = value.extract::<f64>() {
            ParamValue::Number(x)
        } else {
            ParamValue::Str(value.extract::<String>()?)
        };
        self.get_mut()?
            .set_param(flow_id, name, value)
            .map_err(scenario_error)
    }

    /// Run to the end; `(summary_json, tables, pcap)` as `run` returns them.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(String, Bound<'py, PyDict>, Option<Bound<'py, PyBytes>>)> {
        let inner = self
            .inner
            .take()
            .ok_or_else(|| PyValueError::new_err("this run has finished"))?;
        let wall_s = self.started.elapsed().as_secs_f64();
        let output = py.detach(move || inner.finish(wall_s));
        let summary = serde_json::to_string(&output.summary).map_err(|err| {
            PyValueError::new_err(format!("cannot serialise the run summary: {err}"))
        })?;
        let tables = tables_to_py(py, &output.tables, None)?;
        let pcap = output.pcap.as_deref().map(|b| PyBytes::new(py, b));
        Ok((summary, tables, pcap))
    }
}

/// Advance several steppers, each to its own time, in one call with the GIL released
/// (a vector environment's step). Returns whether each has time left.
#[pyfunction]
fn advance_many(
    py: Python<'_>,
    mut steppers: Vec<PyRefMut<'_, Stepper>>,
    until_ns: Vec<u64>,
) -> PyResult<Vec<bool>> {
    if steppers.len() != until_ns.len() {
        return Err(PyValueError::new_err(
            "advance_many: one time per stepper expected",
        ));
    }
    let mut inners = Vec::with_capacity(steppers.len());
    for s in steppers.iter_mut() {
        inners.push(
            s.inner
                .take()
                .ok_or_else(|| PyValueError::new_err("this run has finished"))?,
        );
    }
    let (inners, left) = py.detach(move || {
        let mut inners = inners;
        let left: Vec<bool> = inners
            .iter_mut()
            .zip(&until_ns)
            .map(|(s, &t)| s.advance(t))
            .collect();
        (inners, left)
    });
    for (s, inner) in steppers.iter_mut().zip(inners) {
        s.inner = Some(inner);
    }
    Ok(left)
}

/// A Mahimahi trace's opportunity times in ms, as little-endian `u64` `bytes`, parsed by
/// the core's parser (the one the links use), from the file's `data` (`name` names it in
/// errors) or, with `data = None`, read from the file `name`. `ValueError` with the
/// core's one-line message naming the file and line otherwise.
#[pyfunction]
#[pyo3(signature = (name, data=None))]
fn mahimahi_trace<'py>(
    py: Python<'py>,
    name: &str,
    data: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    use ccsim_core::net::link_model::mahimahi::MahimahiTrace;
    let trace = py
        .detach(|| match data {
            Some(bytes) => MahimahiTrace::parse_bytes(bytes, name),
            None => MahimahiTrace::from_file(std::path::Path::new(name)),
        })
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    le_bytes(py, &trace.opportunities_ms, u64::to_le_bytes, None)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(parse_check, m)?)?;
    m.add_function(wrap_pyfunction!(network_report, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulation_plan, m)?)?;
    m.add_function(wrap_pyfunction!(emulation_udp_plan, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(table_names, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(tvf_values, m)?)?;
    m.add_function(wrap_pyfunction!(tvf_ideal_shares, m)?)?;
    m.add_class::<Stepper>()?;
    m.add_function(wrap_pyfunction!(advance_many, m)?)?;
    m.add_function(wrap_pyfunction!(mahimahi_trace, m)?)?;
    m.add("__version__", ccsim_core::VERSION)?;
    Ok(())
}
