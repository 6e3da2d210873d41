//! How WebSocket upgrades are authenticated (docs/protocol.md §2.4): the `--ws-*` flags of
//! `codex app-server`, resolved once at start into a [`WsAuth`] policy, and the check of an
//! upgrade's `Authorization: Bearer …` header against it. Two modes, as the reference has:
//! a capability token (its file, or only its SHA-256 digest) and HS256-signed JWT bearer
//! tokens (a shared-secret file, an optional issuer and audience, a clock skew).

use std::path::{Path, PathBuf};

use axum::http::{HeaderMap, header};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::cli::{AppServerArgs, WsAuthMode};

/// The clock skew allowed when `--ws-max-clock-skew-seconds` is not given.
const DEFAULT_MAX_CLOCK_SKEW_SECONDS: u64 = 30;
/// The shortest shared secret accepted for signed bearer tokens (an HS256 key).
const MIN_SHARED_SECRET_BYTES: usize = 32;

/// How WebSocket upgrades are authenticated.
#[derive(Clone, Default)]
pub enum WsAuth {
    /// No authentication (loopback binds only).
    #[default]
    None,
    /// `Authorization: Bearer <token>` whose SHA-256 digest is this one.
    CapabilityToken {
        /// The token's SHA-256 digest.
        sha256: [u8; 32],
    },
    /// `Authorization: Bearer <jwt>`, an HS256 JWT signed with the shared secret.
    SignedBearer(SignedBearer),
}

/// The policy of signed bearer tokens.
#[derive(Clone)]
pub struct SignedBearer {
    secret: Vec<u8>,
    issuer: Option<String>,
    audience: Option<String>,
    max_clock_skew_seconds: i64,
}

// The secrets stay out of logs and panics.
impl std::fmt::Debug for WsAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WsAuth::None => "None",
            WsAuth::CapabilityToken { .. } => "CapabilityToken",
            WsAuth::SignedBearer(_) => "SignedBearer",
        })
    }
}

/// `--ws-*` flags that do not make a policy; printed as one line, exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum WsAuthError {
    /// A `--ws-*` flag without `--ws-auth`.
    #[error(
        "websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`"
    )]
    FlagsWithoutMode,
    /// Signed-bearer flags with `--ws-auth capability-token`.
    #[error(
        "`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`"
    )]
    SignedFlagsWithToken,
    /// Capability-token flags with `--ws-auth signed-bearer-token`.
    #[error(
        "`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`"
    )]
    TokenFlagsWithSigned,
    /// Both token sources.
    #[error("`--ws-token-file` and `--ws-token-sha256` are mutually exclusive")]
    TwoTokenSources,
    /// `--ws-auth capability-token` without a token source.
    #[error(
        "`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set"
    )]
    NoTokenSource,
    /// `--ws-auth signed-bearer-token` without its secret.
    #[error("`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set")]
    NoSharedSecret,
    /// A secret file's path is relative.
    #[error("{flag} must be an absolute path")]
    RelativePath {
        /// The flag.
        flag: &'static str,
    },
    /// `--ws-token-sha256` is not 64 hex digits.
    #[error("--ws-token-sha256 must be a 64-character hex SHA-256 digest")]
    BadDigest,
    /// A secret file cannot be read.
    #[error("failed to read websocket auth secret {}: {source}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A secret file holds only whitespace.
    #[error("websocket auth secret {} must not be empty", .0.display())]
    Empty(PathBuf),
    /// The shared secret is too short for HS256.
    #[error(
        "signed websocket bearer secret {} must be at least {MIN_SHARED_SECRET_BYTES} bytes", .0.display()
    )]
    ShortSecret(PathBuf),
    /// The clock skew does not fit.
    #[error("websocket auth clock skew must fit in a signed 64-bit integer")]
    Skew,
}

/// Why an upgrade was refused: answered `401` with this text.
pub type Unauthorized = &'static str;

impl WsAuth {
    /// The policy the flags describe (secret files are read now, once).
    pub fn from_args(args: &AppServerArgs) -> Result<WsAuth, WsAuthError> {
        let signed_flags = args.ws_shared_secret_file.is_some()
            || args.ws_issuer.is_some()
            || args.ws_audience.is_some()
            || args.ws_max_clock_skew_seconds.is_some();
        let token_flags = args.ws_token_file.is_some() || args.ws_token_sha256.is_some();
        match args.ws_auth {
            None if signed_flags || token_flags => Err(WsAuthError::FlagsWithoutMode),
            None => Ok(WsAuth::None),
            Some(WsAuthMode::CapabilityToken) => {
                if signed_flags {
                    return Err(WsAuthError::SignedFlagsWithToken);
                }
                let sha256 = match (&args.ws_token_file, &args.ws_token_sha256) {
                    (Some(_), Some(_)) => return Err(WsAuthError::TwoTokenSources),
                    (None, None) => return Err(WsAuthError::NoTokenSource),
                    (Some(path), None) => {
                        let path = absolute("--ws-token-file", path)?;
                        digest(read_secret(path)?.as_bytes())
                    }
                    (None, Some(hex)) => parse_digest(hex)?,
                };
                Ok(WsAuth::CapabilityToken { sha256 })
            }
            Some(WsAuthMode::SignedBearerToken) => {
                if token_flags {
                    return Err(WsAuthError::TokenFlagsWithSigned);
                }
                let path = args
                    .ws_shared_secret_file
                    .as_deref()
                    .ok_or(WsAuthError::NoSharedSecret)?;
                let path = absolute("--ws-shared-secret-file", path)?;
                let secret = read_secret(path)?.into_bytes();
                if secret.len() < MIN_SHARED_SECRET_BYTES {
                    return Err(WsAuthError::ShortSecret(path.to_path_buf()));
                }
                let skew = args
                    .ws_max_clock_skew_seconds
                    .unwrap_or(DEFAULT_MAX_CLOCK_SKEW_SECONDS);
                Ok(WsAuth::SignedBearer(SignedBearer {
                    secret,
                    issuer: non_empty(args.ws_issuer.as_deref()),
                    audience: non_empty(args.ws_audience.as_deref()),
                    max_clock_skew_seconds: i64::try_from(skew).map_err(|_| WsAuthError::Skew)?,
                }))
            }
        }
    }

    /// Whether upgrades need a credential.
    pub fn is_required(&self) -> bool {
        !matches!(self, WsAuth::None)
    }

    /// Check an upgrade's `Authorization` header (the reference's texts).
    pub fn authorize(&self, headers: &HeaderMap) -> Result<(), Unauthorized> {
        match self {
            WsAuth::None => Ok(()),
            WsAuth::CapabilityToken { sha256 } => {
                let token = bearer(headers)?;
                if bool::from(digest(token.as_bytes()).ct_eq(sha256)) {
                    Ok(())
                } else {
                    Err("invalid websocket bearer token")
                }
            }
            WsAuth::SignedBearer(policy) => policy.verify(bearer(headers)?, now()),
        }
    }
}

/// The claims a signed bearer token is checked on.
#[derive(Deserialize)]
struct Claims {
    exp: i64,
    nbf: Option<i64>,
    iss: Option<String>,
    aud: Option<Audience>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl SignedBearer {
    /// Verify the signature (HS256 only), then expiry, not-before, issuer and audience, each
    /// within the clock skew, at `now` (Unix seconds).
    fn verify(&self, token: &str, now: i64) -> Result<(), Unauthorized> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Claims>(
            token,
            &DecodingKey::from_secret(&self.secret),
            &validation,
        )
        .map_err(|_| "invalid websocket jwt")?
        .claims;
        let skew = self.max_clock_skew_seconds;
        if now > claims.exp.saturating_add(skew) {
            return Err("expired websocket jwt");
        }
        if claims.nbf.is_some_and(|nbf| now < nbf.saturating_sub(skew)) {
            return Err("websocket jwt is not valid yet");
        }
        if let Some(issuer) = &self.issuer
            && claims.iss.as_ref() != Some(issuer)
        {
            return Err("websocket jwt issuer mismatch");
        }
        if let Some(audience) = &self.audience {
            let matches = match &claims.aud {
                Some(Audience::One(one)) => one == audience,
                Some(Audience::Many(many)) => many.contains(audience),
                None => false,
            };
            if !matches {
                return Err("websocket jwt audience mismatch");
            }
        }
        Ok(())
    }
}

/// The bearer token of `Authorization: Bearer <token>` (the scheme in any case).
fn bearer(headers: &HeaderMap) -> Result<&str, Unauthorized> {
    const INVALID: &str = "invalid authorization header";
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or("missing websocket bearer token")?;
    let value = value.to_str().map_err(|_| INVALID)?;
    let (scheme, token) = value.split_once(' ').ok_or(INVALID)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(INVALID);
    }
    Ok(token)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn non_empty(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

fn absolute<'a>(flag: &'static str, path: &'a Path) -> Result<&'a Path, WsAuthError> {
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(WsAuthError::RelativePath { flag })
    }
}

/// A secret file's content, trimmed; empty is an error.
fn read_secret(path: &Path) -> Result<String, WsAuthError> {
    let raw = std::fs::read_to_string(path).map_err(|source| WsAuthError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(WsAuthError::Empty(path.to_path_buf()));
    }
    Ok(trimmed.to_string())
}

fn parse_digest(hex: &str) -> Result<[u8; 32], WsAuthError> {
    let hex = hex.trim().as_bytes();
    if hex.len() != 64 {
        return Err(WsAuthError::BadDigest);
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(WsAuthError::BadDigest),
    };
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
