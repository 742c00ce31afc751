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
//! - Result columns cross as little-endian `bytes` (one copy, straight into the `bytes`
//!   object) that Python wraps as Arrow buffers without another element-by-element pass.

use std::panic::{self, AssertUnwindSafe};

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};
use ccsim_core::scenario::{Scenario, ScenarioError as CoreScenarioError};
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

/// Panic payload used to abandon a run when the progress callback raised (or Ctrl-C).
/// Raised with `resume_unwind`, which skips the panic hook, so nothing is printed.
struct Abandoned;

/// Run the simulation; called with the GIL released. Returns the output and the summary
/// serialised as JSON.
fn simulate(scenario: &Scenario, callback: Option<&Py<PyAny>>) -> PyResult<(RunOutput, String)> {
    let mut raised: Option<PyErr> = None;
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
                raised = Some(err);
                panic::resume_unwind(Box::new(Abandoned));
            }
        };
        panic::catch_unwind(AssertUnwindSafe(|| {
            api::run(scenario, Some(&mut on_progress))
        }))
    };
    match outcome {
        Ok(Ok(output)) => {
            let summary = serde_json::to_string(&output.summary).map_err(|err| {
                PyValueError::new_err(format!("cannot serialise the run summary: {err}"))
            })?;
            Ok((output, summary))
        }
        Ok(Err(err)) => Err(scenario_error(err)),
        Err(payload) if payload.is::<Abandoned>() => Err(raised
            .take()
            .expect("an abandoned run records the Python error")),
        Err(payload) => panic::resume_unwind(payload),
    }
}

/// `n` little-endian values of `WIDTH` bytes each, written straight into a new `bytes`.
fn le_bytes<'py, T: Copy, const WIDTH: usize>(
    py: Python<'py>,
    values: &[T],
    to_le: fn(T) -> [u8; WIDTH],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * WIDTH, |buf| {
        for (chunk, value) in buf.chunks_exact_mut(WIDTH).zip(values) {
            chunk.copy_from_slice(&to_le(*value));
        }
        Ok(())
    })
}

/// `(dtype, data)` for one column.
fn column_to_py<'py>(
    py: Python<'py>,
    column: &Column,
) -> PyResult<(&'static str, Bound<'py, PyAny>)> {
    Ok(match column {
        Column::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes)?.into_any()),
        Column::U64(v) => ("u64", le_bytes(py, v, u64::to_le_bytes)?.into_any()),
        Column::U32(v) => ("u32", le_bytes(py, v, u32::to_le_bytes)?.into_any()),
        Column::Str(v) => ("str", PyList::new(py, v)?.into_any()),
    })
}

/// `{table_name: {column_name: (dtype, data)}}`, tables and columns in the core's order.
fn tables_to_py<'py>(py: Python<'py>, tables: &[Table]) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for table in tables {
        let columns = PyDict::new(py);
        for (name, column) in &table.columns {
            columns.set_item(name, column_to_py(py, column)?)?;
        }
        out.set_item(&table.name, columns)?;
    }
    Ok(out)
}

/// Parse and validate a scenario (`fmt` is "toml" or "json"); raise `ScenarioError` if it
/// cannot be run.
#[pyfunction]
fn parse_check(py: Python<'_>, text: &str, fmt: &str) -> PyResult<()> {
    parse_and_validate(py, text, fmt).map(|_| ())
}

/// Parse, validate and simulate a scenario.
///
/// Returns `(summary_json, tables)` with `tables = {name: {column: (dtype, data)}}`,
/// dtype one of "f64", "u64", "u32" (data: little-endian `bytes`) or "str" (data: `list[str]`).
/// `progress`, if given, is called with the fraction of simulated time done.
#[pyfunction]
#[pyo3(signature = (text, fmt, progress = None))]
fn run<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, Bound<'py, PyDict>)> {
    let scenario = parse_and_validate(py, text, fmt)?;
    let (output, summary) = py.detach(|| simulate(&scenario, progress.as_ref()))?;
    let tables = tables_to_py(py, &output.tables)?;
    Ok((summary, tables))
}

/// The version of the simulator core.
#[pyfunction]
fn version() -> &'static str {
    ccsim_core::VERSION
}

/// ccsim's simulator core (Rust).
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(parse_check, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("__version__", ccsim_core::VERSION)?;
    Ok(())
}
