//! Where MCP OAuth tokens are kept (docs/mcp.md §9): one JSON file,
//! `$WEFT_HOME/mcp_oauth_credentials.json`, mode 0600, holding an entry per server, keyed by
//! the server's name and a digest of its URL, so an entry pointed at another URL is not used.
//! Every write replaces the file atomically and keeps it the owner's alone
//! (`config::edit::write_private_atomically`). `fs/*` never serves it: `$WEFT_HOME` is outside every client's reach
//! (`crate::fs`).
//!
//! [`ServerCredentials`] is one entry as rmcp's [`CredentialStore`]: rmcp's authorization
//! manager saves what the token endpoint answers there, and refreshes through it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::edit::write_private_atomically;

/// The file's name under `$WEFT_HOME`.
pub const CREDENTIALS_FILE: &str = "mcp_oauth_credentials.json";

/// The largest credentials file read (a bigger one is treated as unreadable).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One server's entry.
#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    server_name: String,
    server_url: String,
    credentials: StoredCredentials,
}

/// The credentials file, shared by every server of the daemon.
#[derive(Debug)]
pub struct CredentialsFile {
    path: PathBuf,
    /// Serialises read-modify-write of the file.
    write: tokio::sync::Mutex<()>,
    /// Held across a token refresh and its save (rmcp's refresh guard).
    refresh: Arc<tokio::sync::Mutex<()>>,
}

impl CredentialsFile {
    /// The file under `home` (`$WEFT_HOME`).
    pub fn in_home(home: &Path) -> Arc<CredentialsFile> {
        Arc::new(CredentialsFile {
            path: home.join(CREDENTIALS_FILE),
            write: tokio::sync::Mutex::new(()),
            refresh: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One server's entry as an rmcp credential store.
    pub fn server(self: &Arc<Self>, name: &str, url: &str) -> ServerCredentials {
        ServerCredentials {
            file: Arc::clone(self),
            key: entry_key(name, url),
            name: name.to_string(),
            url: url.to_string(),
        }
    }

    /// Whether tokens are stored for the server at `url`.
    pub fn has_tokens(&self, name: &str, url: &str) -> bool {
        self.read()
            .ok()
            .and_then(|mut entries| entries.remove(&entry_key(name, url)))
            .is_some_and(|entry| entry.credentials.token_response.is_some())
    }

    fn read(&self) -> std::io::Result<BTreeMap<String, Entry>> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BTreeMap::new());
            }
            Err(err) => return Err(err),
        };
        if file.metadata()?.len() > MAX_FILE_BYTES {
            return Err(std::io::Error::other(format!(
                "{} is larger than {MAX_FILE_BYTES} bytes",
                self.path.display()
            )));
        }
        serde_json::from_reader(std::io::BufReader::new(file)).map_err(std::io::Error::other)
    }

    fn write(&self, entries: &BTreeMap<String, Entry>) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(entries).map_err(std::io::Error::other)?;
        write_private_atomically(&self.path, &bytes)
    }

    async fn update(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Entry>),
    ) -> Result<(), AuthError> {
        let _write = self.write.lock().await;
        let mut entries = self.read().map_err(store_error)?;
        change(&mut entries);
        self.write(&entries).map_err(store_error)
    }
}

fn store_error(err: std::io::Error) -> AuthError {
    AuthError::CredentialStoreError(format!("MCP OAuth credentials file: {err}"))
}

/// `<name>|<first 16 hex digits of sha256(url)>`.
fn entry_key(name: &str, url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{name}|{hex}")
}

/// One server's entry of the [`CredentialsFile`].
#[derive(Debug, Clone)]
pub struct ServerCredentials {
    file: Arc<CredentialsFile>,
    key: String,
    name: String,
    url: String,
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let mut entries = self.file.read().map_err(store_error)?;
        Ok(entries.remove(&self.key).map(|entry| entry.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let entry = Entry {
            server_name: self.name.clone(),
            server_url: self.url.clone(),
            credentials,
        };
        let key = self.key.clone();
        self.file
            .update(|entries| {
                entries.insert(key, entry);
            })
            .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let key = self.key.clone();
        self.file
            .update(|entries| {
                entries.remove(&key);
            })
            .await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = Arc::clone(&self.file.refresh).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use rmcp::transport::auth::OAuthTokenResponse;

    use super::*;

    fn tokens(access: &str) -> StoredCredentials {
        let response: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": access, "token_type": "Bearer", "expires_in": 60,
            "refresh_token": "rt"
        }))
        .unwrap();
        StoredCredentials::new("client-1".into(), Some(response), vec![], Some(1))
    }

    #[tokio::test]
    async fn entries_are_kept_per_server_and_url_in_a_private_file() {
        let home = tempfile::tempdir().unwrap();
        let file = CredentialsFile::in_home(home.path());
        let docs = file.server("docs", "http://127.0.0.1:1/mcp");
        assert!(docs.load().await.unwrap().is_none());
        assert!(!file.has_tokens("docs", "http://127.0.0.1:1/mcp"));
        docs.save(tokens("at-1")).await.unwrap();
        file.server("wiki", "http://127.0.0.1:2/mcp")
            .save(tokens("at-2"))
            .await
            .unwrap();
        assert!(file.has_tokens("docs", "http://127.0.0.1:1/mcp"));
        assert!(
            !file.has_tokens("docs", "http://127.0.0.1:3/mcp"),
            "another URL is another entry"
        );
        let loaded = docs.load().await.unwrap().unwrap();
        let response = serde_json::to_value(loaded.token_response.unwrap()).unwrap();
        assert_eq!(response["access_token"], "at-1");
        let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        docs.clear().await.unwrap();
        assert!(!file.has_tokens("docs", "http://127.0.0.1:1/mcp"));
        assert!(file.has_tokens("wiki", "http://127.0.0.1:2/mcp"));
    }

    #[tokio::test]
    async fn an_unreadable_file_is_a_store_error_not_an_empty_store() {
        let home = tempfile::tempdir().unwrap();
        let file = CredentialsFile::in_home(home.path());
        std::fs::write(file.path(), "not json").unwrap();
        let err = file.server("docs", "u").load().await.unwrap_err();
        assert!(matches!(err, AuthError::CredentialStoreError(_)), "{err}");
        assert!(!file.has_tokens("docs", "u"));
    }

    #[test]
    fn fs_methods_never_reach_the_file() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        let path = home.join(CREDENTIALS_FILE);
        std::fs::write(&path, "{}").unwrap();
        let access = crate::fs::FsAccess::with(&crate::config::FsConfig::default(), &home, 1024);
        let path = weft_protocol::AbsolutePathBuf::new(path).unwrap();
        assert!(access.read_file(&path).is_err());
        assert!(access.write_file(&path, b"{}").is_err());
    }
}
