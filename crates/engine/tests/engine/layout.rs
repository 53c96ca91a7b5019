//! `RunOptions::layout`: the files a run's setup makes and the bytes it writes into them,
//! counted for a caller to poll (`fslab run`'s progress bar).

use crate::common::{try_run_opts, workload};
use fslab_engine::fileset::Layout;
use fslab_engine::RunOptions;
use fslab_testkit::tempdir;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

const TEXT: &str = r#"name = "l"
stop = { ops = 4 }

[[fileset]]
name = "full"
files = 3
size = "10000"
setup_bs = "4k"
reuse = true

[[fileset]]
name = "empty"
files = 2
size = "8k"
prealloc = false

[[group]]
name = "g"
fileset = "full"

[[group.op]]
op = "stat"
"#;

fn counted(dir: &std::path::Path) -> [u64; 4] {
    let layout = Arc::new(Layout::default());
    let opts = RunOptions {
        dir: dir.to_path_buf(),
        layout: Some(layout.clone()),
        ..RunOptions::default()
    };
    try_run_opts(&workload(TEXT), opts).unwrap_or_else(|e| panic!("{e}"));
    [
        &layout.planned_files,
        &layout.files,
        &layout.planned_bytes,
        &layout.bytes,
    ]
    .map(|c| c.load(Relaxed))
}

#[test]
fn the_layout_counts_each_file_made_and_each_byte_written() {
    let dir = tempdir();
    // Five files; only the first fileset's are written: 3 × 10000 bytes.
    assert_eq!(counted(dir.path()), [5, 5, 30000, 30000]);
    // Run again: the kept fileset adds nothing, the other is made anew.
    assert_eq!(counted(dir.path()), [2, 2, 0, 0]);
}
