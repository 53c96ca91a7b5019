//! The JSON documents fslab prints match the JSON Schemas published in docs/schema/, and those
//! files are the schemas `fslab schema` prints for this version.

use crate::common::fslab_in;
use fslab_testkit::studies;
use std::path::Path;

fn docs(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schema")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Fails the test with every way `doc` breaks `schema`.
fn check(schema: &str, doc: &str, what: &str) {
    let schema: serde_json::Value = serde_json::from_str(schema).unwrap();
    let doc: serde_json::Value = serde_json::from_str(doc).unwrap_or_else(|e| panic!("{what}: {e}:\n{doc}"));
    let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("the schema of {what}: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match its schema:\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_published_schemas_are_this_version_s() {
    for document in ["outcome", "report", "compare"] {
        let r = fslab_in(None, &[], &["schema", document]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            docs(&format!("{document}.schema.json")),
            r.stdout,
            "docs/schema/{document}.schema.json is out of date: run `fslab schema {document} > docs/schema/{document}.schema.json`"
        );
    }
}

#[test]
fn every_document_matches_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let run = fslab_in(
        None,
        &[],
        &[
            "run", "--op", "randrw", "--size", "1m", "--bs", "4k", "--time", "1s", "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    check(&docs("outcome.schema.json"), &run.stdout, "fslab run --json");

    let (_store, id, db) = studies::study_store(dir.path());
    let report = fslab_in(
        None,
        &[],
        &[
            "report",
            &id.to_string(),
            "--db",
            db.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(report.code, 0, "{}", report.stderr);
    check(
        &docs("report.schema.json"),
        &report.stdout,
        "fslab report --format json",
    );

    let (_store, db) = studies::planted_store(&dir.path().join("planted"));
    let compare = fslab_in(
        None,
        &[],
        &["compare", "before", "after", "--db", db.to_str().unwrap(), "--json"],
    );
    assert_eq!(compare.code, 0, "{}", compare.stderr);
    check(&docs("compare.schema.json"), &compare.stdout, "fslab compare --json");
}
