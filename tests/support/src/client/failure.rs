//! Failure reporting: a failed read or send panics with the client's label and its recent log;
//! a client dropped while its test panics for another reason prints the log too.

use super::Client;
use crate::clip;

impl Client {
    /// Panic with a message, this client's label and its recent log.
    pub fn fail(&self, problem: &str) -> ! {
        self.failed.set(true);
        panic!(
            "[{}] {problem}\n--- last messages received ---\n{}",
            self.label,
            self.recent_log()
        );
    }

    fn recent_log(&self) -> String {
        let skip = self.log.len().saturating_sub(20);
        let lines: Vec<String> = self.log[skip..]
            .iter()
            .map(|m| clip(&m.to_string(), 500))
            .collect();
        if lines.is_empty() {
            "(none)".into()
        } else {
            lines.join("\n")
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.failed.get() && !self.log.is_empty() {
            eprintln!(
                "--- [{}] messages received ({} in all, last 20) ---\n{}",
                self.label,
                self.log.len(),
                self.recent_log()
            );
        }
    }
}
