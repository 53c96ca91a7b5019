//! The HTML report in a real browser: headless Chromium loads it, runs its chart check, and
//! leaves the DOM and the console for the test to read; then it takes a screenshot. The system
//! tier: without Chromium the tests fail and say how to install it.
//!
//! Chromium writes every console message (errors, warnings, uncaught exceptions alike) to
//! stderr as `...:INFO:CONSOLE:N] "message", source: ...` with `--enable-logging=stderr --v=0`;
//! the report logs nothing when all is well, so any such line is a failure.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longer than Chromium takes to load a page on a slow machine.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The browser: $FSLAB_CHROMIUM, or the first of Debian's and others' names on the PATH; without
/// one the test fails saying how to install it.
fn require_chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("FSLAB_CHROMIUM") {
        return PathBuf::from(p);
    }
    let names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in names {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "this test renders the HTML report in headless Chromium, which is not installed: \
         install it with `apt-get install -y chromium` (Debian), or set FSLAB_CHROMIUM to the browser"
    );
}

/// What Chromium printed.
struct Output {
    stdout: String,
    stderr: String,
}

impl Output {
    /// The console messages the page logged.
    fn console(&self) -> Vec<&str> {
        self.stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
    }
}

/// Runs headless Chromium on `page` with `args`, in a profile of its own under `dir`.
fn run_chromium(chromium: &Path, dir: &Path, page: &Path, args: &[&str]) -> Output {
    let profile = format!("--user-data-dir={}", dir.join("profile").display());
    let url = format!("file://{}", page.display());
    let mut all = vec!["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"];
    all.extend(["--enable-logging=stderr", "--v=0", "--no-first-run", &profile]);
    all.extend(args);
    all.push(&url);
    let run = fslab_testkit::run_binary(chromium, None, &[], &all, TIMEOUT);
    assert_eq!(run.code, 0, "chromium failed:\n{}", run.stderr);
    Output {
        stdout: run.stdout,
        stderr: run.stderr,
    }
}

/// The value of attribute `name` on the dumped DOM's <body>.
fn body_attribute(dom: &str, name: &str) -> Option<usize> {
    let body = dom.split("<body").nth(1)?.split('>').next()?;
    body.split(&format!("{name}=\""))
        .nth(1)?
        .split('"')
        .next()?
        .parse()
        .ok()
}

/// The study's HTML report, written to a file in `dir`.
fn report_file(dir: &Path) -> (PathBuf, usize) {
    let (store, id, _) = fslab_testkit::studies::study_store(dir);
    let data = fslab_report::StudyData::load_key(&store, &id.to_string()).unwrap();
    let html = fslab_report::export::html::page(&data).unwrap();
    let charts = html.matches("<figure class=\"chart").count();
    assert!(charts >= 10, "the report has only {charts} charts");
    let path = dir.join("report.html");
    std::fs::write(&path, html).unwrap();
    (path, charts)
}

#[test]
#[ignore = "system tier: chromium"]
fn every_chart_is_drawn_and_the_console_stays_silent() {
    let chromium = require_chromium();
    let dir = tempfile::tempdir().unwrap();
    let (page, charts) = report_file(dir.path());
    let out = run_chromium(&chromium, dir.path(), &page, &["--window-size=1280,1000", "--dump-dom"]);
    assert!(out.stdout.contains("</html>"), "no DOM was dumped:\n{}", out.stderr);
    assert_eq!(out.console(), Vec::<&str>::new(), "the page logged to the console");
    assert_eq!(
        body_attribute(&out.stdout, "data-charts"),
        Some(charts),
        "the chart check did not run"
    );
    assert_eq!(
        body_attribute(&out.stdout, "data-charts-drawn"),
        Some(charts),
        "a chart has no size on screen"
    );
    assert_eq!(out.stdout.matches("data-drawn=\"yes\"").count(), charts);
}

#[test]
#[ignore = "system tier: chromium"]
fn a_screenshot_of_the_report() {
    let chromium = require_chromium();
    let dir = tempfile::tempdir().unwrap();
    let (page, _) = report_file(dir.path());
    let png = dir.path().join("report.png");
    let shot = format!("--screenshot={}", png.display());
    let out = run_chromium(&chromium, dir.path(), &page, &["--window-size=1280,6000", &shot]);
    assert_eq!(out.console(), Vec::<&str>::new(), "the page logged to the console");
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {}: {e}\n{}", png.display(), out.stderr));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "the screenshot is not a PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 6000));
    // A blank page compresses to a few kilobytes; one with tables and charts does not.
    assert!(
        bytes.len() > 100_000,
        "the screenshot is nearly empty: {} bytes",
        bytes.len()
    );
}

#[test]
#[ignore = "system tier: chromium"]
fn the_check_does_see_a_chart_that_is_not_drawn() {
    let chromium = require_chromium();
    let dir = tempfile::tempdir().unwrap();
    let (page, charts) = report_file(dir.path());
    // Hide the first chart's SVG: the page's check must notice and tell the console.
    let html = std::fs::read_to_string(&page)
        .unwrap()
        .replacen("<svg ", "<svg style=\"display:none\" ", 1);
    std::fs::write(&page, html).unwrap();
    let out = run_chromium(&chromium, dir.path(), &page, &["--window-size=1280,1000", "--dump-dom"]);
    assert_eq!(body_attribute(&out.stdout, "data-charts-drawn"), Some(charts - 1));
    let console = out.console();
    assert_eq!(console.len(), 1, "{console:?}");
    assert!(
        console[0].contains("fslab report: chart chart1 was not drawn"),
        "{console:?}"
    );
}
