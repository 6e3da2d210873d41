//! Permission profiles (`permissions` on `thread/start` and `turn/start`, docs/protocol.md
//! §7.25): Weft knows the reference's three built-in profiles, each the same as one sandbox
//! mode, and no user-defined ones (it reads no `[permissions]` table).

use weft_protocol::SandboxMode;

/// Why a profile id was refused; `Display` is the reference's text for a thread's
/// `permissions`, [`PermissionProfileError::reason`] the part `command/exec` quotes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PermissionProfileError {
    /// A `:`-prefixed id that is not built in.
    #[error("failed to load configuration: {}", self.reason())]
    UnknownBuiltin(String),
    /// Any other id names a user-defined profile, and Weft has none.
    #[error("failed to load configuration: {}", self.reason())]
    NoProfiles,
}

impl PermissionProfileError {
    /// Why, without the configuration prefix.
    pub fn reason(&self) -> String {
        match self {
            PermissionProfileError::UnknownBuiltin(id) => {
                format!("default_permissions refers to unknown built-in profile `{id}`")
            }
            PermissionProfileError::NoProfiles => {
                "default_permissions requires a `[permissions]` table".to_string()
            }
        }
    }
}

/// The sandbox mode of a built-in profile.
pub fn profile_sandbox(id: &str) -> Result<SandboxMode, PermissionProfileError> {
    match id {
        ":read-only" => Ok(SandboxMode::ReadOnly),
        ":workspace" => Ok(SandboxMode::WorkspaceWrite),
        ":danger-full-access" => Ok(SandboxMode::DangerFullAccess),
        _ if id.starts_with(':') => Err(PermissionProfileError::UnknownBuiltin(id.to_string())),
        _ => Err(PermissionProfileError::NoProfiles),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_profiles_map_to_sandbox_modes() {
        assert_eq!(profile_sandbox(":read-only"), Ok(SandboxMode::ReadOnly));
        assert_eq!(
            profile_sandbox(":workspace"),
            Ok(SandboxMode::WorkspaceWrite)
        );
        assert_eq!(
            profile_sandbox(":danger-full-access"),
            Ok(SandboxMode::DangerFullAccess)
        );
        assert_eq!(
            profile_sandbox(":bogus").unwrap_err().to_string(),
            "failed to load configuration: default_permissions refers to unknown built-in profile `:bogus`"
        );
        assert_eq!(
            profile_sandbox("custom").unwrap_err().to_string(),
            "failed to load configuration: default_permissions requires a `[permissions]` table"
        );
    }
}
