//! The file-system methods (docs/protocol.md §7.31): their params, results and the
//! `fs/changed` notification validate against both schemas with every key present.

use super::*;
use crate::fs_api::*;

fn path(raw: &str) -> AbsolutePathBuf {
    AbsolutePathBuf::new(raw).unwrap()
}

/// An `fs/changed`, for the notification conformance test.
pub(super) fn sample_notifications() -> Vec<ServerNotification> {
    vec![
        FsChangedNotification {
            watch_id: "w".into(),
            changed_paths: vec![path("/w/a"), path("/w/b")],
        }
        .into(),
    ]
}

#[test]
fn fs_params_and_results_validate() {
    let mut schemas = Schemas::load();
    schemas.check_params::<methods::FsReadFile>(&FsReadFileParams { path: path("/a") });
    schemas.check_result::<methods::FsReadFile>(&FsReadFileResponse {
        data_base64: "aGk=".into(),
    });
    schemas.check_params::<methods::FsWriteFile>(&FsWriteFileParams {
        path: path("/a"),
        data_base64: "aGk=".into(),
    });
    schemas.check_result::<methods::FsWriteFile>(&FsWriteFileResponse {});
    schemas.check_params::<methods::FsReadDirectory>(&FsReadDirectoryParams { path: path("/") });
    schemas.check_result::<methods::FsReadDirectory>(&FsReadDirectoryResponse {
        entries: vec![FsReadDirectoryEntry {
            file_name: "a".into(),
            is_directory: false,
            is_file: true,
        }],
    });
    schemas.check_params::<methods::FsGetMetadata>(&FsGetMetadataParams { path: path("/a") });
    schemas.check_result::<methods::FsGetMetadata>(&FsGetMetadataResponse {
        is_directory: false,
        is_file: true,
        is_symlink: false,
        created_at_ms: 0,
        modified_at_ms: 1_795_979_147_618,
    });
    for recursive in [None, Some(false)] {
        schemas.check_params::<methods::FsCreateDirectory>(&FsCreateDirectoryParams {
            path: path("/d"),
            recursive,
        });
        schemas.check_params::<methods::FsRemove>(&FsRemoveParams {
            path: path("/d"),
            recursive,
            force: recursive,
        });
    }
    schemas.check_result::<methods::FsCreateDirectory>(&FsCreateDirectoryResponse {});
    schemas.check_result::<methods::FsRemove>(&FsRemoveResponse {});
    schemas.check_params::<methods::FsCopy>(&FsCopyParams {
        source_path: path("/a"),
        destination_path: path("/b"),
        recursive: true,
    });
    schemas.check_result::<methods::FsCopy>(&FsCopyResponse {});
    schemas.check_params::<methods::FsWatch>(&FsWatchParams {
        watch_id: "w".into(),
        path: path("/w"),
    });
    schemas.check_result::<methods::FsWatch>(&FsWatchResponse { path: path("/w") });
    schemas.check_params::<methods::FsUnwatch>(&FsUnwatchParams {
        watch_id: "w".into(),
    });
    schemas.check_result::<methods::FsUnwatch>(&FsUnwatchResponse {});
}
