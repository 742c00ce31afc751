//! Set-up shared by the BBR v1 (`tests/bbr.rs`) and BBRv3 (`tests/bbr3.rs`) integration
//! tests: run a TOML scenario, find a result table, read one traced controller variable.
#![allow(dead_code)] // each test file uses its own subset

use ccsim_core::api;
use ccsim_core::results::{Column, RunOutput, Table};

/// Run a scenario given as TOML text (it must be valid and run).
pub fn run(text: &str) -> RunOutput {
    api::run(&api::parse(text, "toml").expect("valid scenario"), None).expect("runs")
}

pub fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.tables.iter().find(|t| t.name == name).expect("table")
}

/// `(time, value)` of one traced controller variable of flow 0 (`cc_vars`).
pub fn var(out: &RunOutput, which: &str) -> Vec<(f64, f64)> {
    let v = table(out, "cc_vars");
    let (
        Some(Column::F64(t)),
        Some(Column::U32(id)),
        Some(Column::Str(name)),
        Some(Column::F64(val)),
    ) = (
        v.column("time_s"),
        v.column("flow_id"),
        v.column("name"),
        v.column("value"),
    )
    else {
        panic!("cc_vars columns")
    };
    (0..t.len())
        .filter(|&i| id[i] == 0 && name[i] == which)
        .map(|i| (t[i], val[i]))
        .collect()
}
