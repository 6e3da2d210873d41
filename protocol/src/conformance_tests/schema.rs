//! Our generated schema against the reference: its file names, and the key check itself.

use super::*;

#[test]
fn schema_file_names_match_the_reference() {
    Schemas::load();
    for (path, _) in schema_files() {
        let name = path.to_string_lossy().replace('\\', "/");
        if name == crate::schema::BUNDLE_FILE {
            continue;
        }
        // Methods the stable reference lacks have their files in the experimental one.
        let exists = reference_dir().join(REF).join(&name).exists()
            || reference_dir().join(REF_EXPERIMENTAL).join(&name).exists();
        assert!(exists, "{name} has no counterpart in the reference schema");
    }
}

#[test]
fn key_check_detects_missing_keys() {
    let mut schemas = Schemas::load();
    let thread = sample_thread(vec![sample_turn(TurnStatus::Completed)]);
    let mut value = to_value(&ThreadReadResponse {
        thread,
        read_state: None,
    });
    let thread = value["thread"].as_object_mut().unwrap();
    thread.remove("projectId");
    thread.remove("gitInfo");
    value["thread"]["turns"][0]["items"][2]
        .as_object_mut()
        .unwrap()
        .remove("completedAtMs");
    value["thread"]["turns"][0]["items"][2]
        .as_object_mut()
        .unwrap()
        .remove("phase");
    let file = "v2/ThreadReadResponse.json";
    schemas.load_reference(file);
    let reference = &schemas.reference[file];
    let mut missing = Vec::new();
    schemas.all_keys_present(&value, reference, reference, "$", &mut missing);
    missing.sort();
    assert_eq!(
        missing,
        [
            "$.thread.gitInfo",
            "$.thread.projectId",
            "$.thread.turns[0].items[2].completedAtMs",
            "$.thread.turns[0].items[2].phase",
        ]
    );
}
