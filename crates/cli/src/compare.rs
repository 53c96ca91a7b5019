//! `fslab compare BASELINE CANDIDATE`: two studies, or two configurations (STUDY:CONFIG), figure
//! by figure, with Welch's t-test; `--fail-above 5%` makes a significant regression fail CI.

use crate::report::{failure, open_existing};
use crate::Failure;
use anyhow::anyhow;
use fslab_report::compare::{self, Side, Verdict};
use fslab_report::StudyData;
use fslab_store::Store;
use std::path::PathBuf;
use std::process::ExitCode;

/// The exit status of `--fail-above` when nothing could be tested.
const NOTHING_TESTED: u8 = 4;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The baseline: a study (id or name), or one configuration of it as STUDY:CONFIG (`3:xfs`).
    baseline: String,
    /// The candidate, named the same way. With a configuration on one side only, the other side
    /// takes the same configuration.
    candidate: String,
    /// The results store (SQLite). Default: $FSLAB_DB, else $XDG_DATA_HOME/fslab/fslab.db, else
    /// ~/.local/share/fslab/fslab.db.
    #[arg(long)]
    db: Option<PathBuf>,
    /// The smallest change that counts as significant, besides p < 0.05 (`2%`, or `2`).
    #[arg(long, value_name = "PERCENT", default_value = "1%", value_parser = percent)]
    min_effect: f64,
    /// Exit with status 1 when a figure is significantly worse by more than PERCENT (`5%`), and
    /// with status 4 when no figure could be tested (fewer than 2 runs a side): a gate that
    /// cannot judge does not pass.
    #[arg(long, value_name = "PERCENT", value_parser = percent)]
    fail_above: Option<f64>,
    /// Print one JSON document (with a schema_version) instead of the table.
    #[arg(long)]
    json: bool,
}

/// `5%` or `5` as 5.0.
fn percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a percentage (write it as 5% or 5)")),
    }
}

pub fn main(args: Args) -> Result<ExitCode, Failure> {
    let store = open_existing(args.db)?;
    let (base_key, base_config) = split(&store, &args.baseline)?;
    let (cand_key, cand_config) = split(&store, &args.candidate)?;
    let base_config = base_config.or(cand_config.clone());
    let cand_config = cand_config.or(base_config.clone());
    let base = StudyData::load_key(&store, &base_key).map_err(failure)?;
    let cand = StudyData::load_key(&store, &cand_key).map_err(failure)?;
    let baseline = Side::new(&base, base_config.as_deref()).map_err(failure)?;
    let candidate = Side::new(&cand, cand_config.as_deref()).map_err(failure)?;
    let comparison = compare::compare(baseline, candidate, args.min_effect).map_err(failure)?;
    if args.json {
        let doc = serde_json::to_string_pretty(&comparison.document()).expect("the comparison serialises");
        println!("{doc}");
    } else {
        print!("{}", comparison.text());
    }
    let Some(limit) = args.fail_above else {
        return Ok(ExitCode::SUCCESS);
    };
    if !comparison.tested_any() {
        eprintln!(
            "fslab: no figure has 2 runs or more on both sides: nothing could be tested, so --fail-above {limit}% cannot \
             pass or fail (exit 4)"
        );
        return Ok(ExitCode::from(NOTHING_TESTED));
    }
    let untested = comparison
        .lines
        .iter()
        .filter(|l| l.verdict == Verdict::NotTested)
        .count();
    if untested > 0 {
        eprintln!(
            "fslab: {untested} figure(s) have fewer than 2 runs on a side: no t-test, so --fail-above cannot judge them"
        );
    }
    let worse = comparison.regressions_above(limit);
    if worse.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let list: Vec<String> = worse
        .iter()
        .map(|l| format!("{} {} {:+.1}%", l.cell, l.metric, l.change_pct.unwrap_or(0.0)))
        .collect();
    Err(Failure::Run(anyhow!(
        "{} figure(s) significantly worse by more than {limit}%: {}",
        worse.len(),
        list.join("; ")
    )))
}

/// A side as the user named it: a study, or STUDY:CONFIG (a study whose own name holds a colon
/// is taken whole first).
fn split(store: &Store, text: &str) -> Result<(String, Option<String>), Failure> {
    let known = |key: &str| {
        store
            .study(key)
            .map(|s| s.is_some())
            .map_err(|e| Failure::Environment(e.into()))
    };
    if known(text)? {
        return Ok((text.to_string(), None));
    }
    match text.rsplit_once(':') {
        Some((study, config)) if !study.is_empty() && !config.is_empty() => {
            Ok((study.to_string(), Some(config.to_string())))
        }
        _ => Ok((text.to_string(), None)),
    }
}
