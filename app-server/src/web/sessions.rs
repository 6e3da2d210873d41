//! Signed-in browser sessions: the random values the `weft_session_<port>` cookie carries,
//! kept in memory (a restarted daemon asks for a new sign-in) and bounded by
//! `[web] max_sessions`, the oldest ending first.

use std::collections::VecDeque;

use axum::http::{HeaderMap, header};
use parking_lot::Mutex;
use subtle::ConstantTimeEq;

/// A fresh random secret: 32 bytes from the operating system, as 64 hex digits; an error
/// only when the operating system has no random source to give.
pub fn random_secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `given` equals `expected`, in time that does not depend on where they differ.
pub fn same_secret(given: &str, expected: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// The sessions of one listener.
pub struct Sessions {
    cookie: String,
    max: usize,
    live: Mutex<VecDeque<String>>,
}

impl Sessions {
    /// No sessions yet; the cookie is named after the listener's port, since browsers share
    /// cookies between the ports of one host.
    pub fn new(port: u16, max: usize) -> Sessions {
        Sessions {
            cookie: format!("weft_session_{port}"),
            max: max.max(1),
            live: Mutex::new(VecDeque::new()),
        }
    }

    /// Start a session; the `Set-Cookie` value that carries it.
    pub fn start(&self) -> Result<String, getrandom::Error> {
        let secret = random_secret()?;
        let mut live = self.live.lock();
        while live.len() >= self.max {
            live.pop_front();
        }
        live.push_back(secret.clone());
        Ok(format!(
            "{}={secret}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie
        ))
    }

    /// Whether the request's `Cookie` headers carry a live session of this listener.
    pub fn signed_in(&self, headers: &HeaderMap) -> bool {
        let live = self.live.lock();
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == self.cookie)
            .any(|(_, value)| live.iter().any(|secret| same_secret(value, secret)))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn cookie(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn value_of(set_cookie: &str) -> &str {
        set_cookie.split(';').next().unwrap()
    }

    #[test]
    fn a_started_session_signs_in_and_nothing_else_does() {
        let sessions = Sessions::new(4500, 4);
        let set = sessions.start().unwrap();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(sessions.signed_in(&cookie(value_of(&set))));
        assert!(sessions.signed_in(&cookie(&format!("theme=dark; {}", value_of(&set)))));
        assert!(!sessions.signed_in(&cookie("weft_session_4500=00")));
        assert!(!sessions.signed_in(&HeaderMap::new()));
        // Another port's cookie with the same value does not count.
        let other = value_of(&set).replace("4500", "4501");
        assert!(!sessions.signed_in(&cookie(&other)));
    }

    #[test]
    fn past_the_limit_the_oldest_session_ends() {
        let sessions = Sessions::new(1, 2);
        let first = sessions.start().unwrap();
        let second = sessions.start().unwrap();
        let third = sessions.start().unwrap();
        assert!(!sessions.signed_in(&cookie(value_of(&first))));
        assert!(sessions.signed_in(&cookie(value_of(&second))));
        assert!(sessions.signed_in(&cookie(value_of(&third))));
    }

    #[test]
    fn secrets_are_random_and_long() {
        let (a, b) = (random_secret().unwrap(), random_secret().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
