//! Agent nicknames: a pool of famous scientists', mathematicians' and philosophers' surnames,
//! handed out at random in rounds. Within a round no name is handed out twice; when every name
//! of the round is taken the pool starts the next round, whose names carry an ordinal suffix
//! ("Nash the 2nd", "Nash the 3rd", …), so a nickname names one agent of its tree.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

/// The default nicknames: single ASCII words, all distinct.
pub const NICKNAMES: &[&str] = &[
    "Nash",
    "Descartes",
    "Darwin",
    "Lovelace",
    "Boole",
    "Noether",
    "Turing",
    "Curie",
    "Newton",
    "Euler",
    "Gauss",
    "Riemann",
    "Hilbert",
    "Godel",
    "Cantor",
    "Fermat",
    "Pascal",
    "Leibniz",
    "Kant",
    "Hume",
    "Locke",
    "Spinoza",
    "Plato",
    "Aristotle",
    "Socrates",
    "Euclid",
    "Archimedes",
    "Pythagoras",
    "Galileo",
    "Kepler",
    "Copernicus",
    "Faraday",
    "Maxwell",
    "Planck",
    "Bohr",
    "Einstein",
    "Heisenberg",
    "Schrodinger",
    "Dirac",
    "Feynman",
    "Hopper",
    "Shannon",
    "Ramanujan",
    "Hypatia",
    "Fibonacci",
    "Laplace",
    "Lagrange",
    "Fourier",
    "Poincare",
    "Galois",
    "Hamilton",
    "Babbage",
    "Kolmogorov",
    "Wittgenstein",
    "Russell",
    "Frege",
    "Pasteur",
    "Mendel",
    "Meitner",
    "Franklin",
    "Hobbes",
    "Tesla",
];

/// Hands out nicknames: a random name not yet taken in the current round, with the round's
/// ordinal suffix from round 2 on.
#[derive(Debug)]
pub struct NicknamePool {
    /// The base names, distinct, in their given order.
    names: Vec<String>,
    /// The base names handed out (or restored) in the current round.
    taken: HashSet<String>,
    round: u32,
    /// xorshift64* state; never zero.
    rng: u64,
}

impl Default for NicknamePool {
    fn default() -> Self {
        NicknamePool::new()
    }
}

impl NicknamePool {
    /// A pool of [`NICKNAMES`], in round 1.
    pub fn new() -> Self {
        NicknamePool::with_names(NICKNAMES.iter().map(|name| (*name).to_owned()).collect())
    }

    /// A pool of these base names (duplicates dropped), in round 1. An empty list falls back
    /// to [`NICKNAMES`], so [`NicknamePool::take`] always has a name to give.
    pub fn with_names(names: Vec<String>) -> Self {
        let mut seen = HashSet::new();
        let mut names: Vec<String> = names
            .into_iter()
            .filter(|name| seen.insert(name.clone()))
            .collect();
        if names.is_empty() {
            names = NICKNAMES.iter().map(|name| (*name).to_owned()).collect();
        }
        NicknamePool {
            names,
            taken: HashSet::new(),
            round: 1,
            rng: seed(),
        }
    }

    /// A random name not handed out in the current round. When every name of the round is
    /// taken, the pool first starts the next round (logged: a signal, not an error).
    pub fn take(&mut self) -> String {
        let mut free = self.free();
        if free.is_empty() {
            self.round += 1;
            self.taken.clear();
            tracing::info!(
                round = self.round,
                names = self.names.len(),
                "every agent nickname is taken; starting the next round of names"
            );
            free = self.free();
        }
        let pick = free[(self.next_random() % free.len() as u64) as usize];
        let base = self.names[pick].clone();
        self.taken.insert(base.clone());
        decorate(&base, self.round)
    }

    /// Return a name that was taken but not used (a failed spawn): in its own round it becomes
    /// available again; a name from an earlier round is ignored, its round being over.
    pub fn give_back(&mut self, name: &str) {
        let (base, round) = parse(name);
        if round == self.round {
            self.taken.remove(base);
        }
    }

    /// The round names are handed out from: 1 until every name has been taken once.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// Mark a name handed out earlier (by a previous daemon) as taken, so it is not handed out
    /// again: a name of a later round moves the pool on to that round.
    pub(crate) fn mark_taken(&mut self, name: &str) {
        let (base, round) = parse(name);
        if round > self.round {
            self.round = round;
            self.taken.clear();
        }
        if round == self.round {
            self.taken.insert(base.to_owned());
        }
    }

    /// Indices of the names not taken in this round.
    fn free(&self) -> Vec<usize> {
        (0..self.names.len())
            .filter(|index| !self.taken.contains(&self.names[*index]))
            .collect()
    }

    /// xorshift64*: plenty for picking names, and no dependency.
    fn next_random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// A seed from the clock and a v7 UUID's random bits; never zero.
fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos() as u64)
        .unwrap_or_default();
    let (_, random) = uuid::Uuid::now_v7().as_u64_pair();
    match nanos ^ random.rotate_left(29) {
        0 => 0x9E37_79B9_7F4A_7C15,
        seed => seed,
    }
}

/// The nickname of `base` in `round`: the bare name in round 1, "`base` the 2nd" after.
fn decorate(base: &str, round: u32) -> String {
    if round <= 1 {
        base.to_owned()
    } else {
        format!("{base} the {}", ordinal(round))
    }
}

/// A nickname's base name and round (1 when it carries no ordinal suffix).
fn parse(name: &str) -> (&str, u32) {
    if let Some((base, suffix)) = name.rsplit_once(" the ") {
        let digits = suffix.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        if let Ok(round) = digits.parse::<u32>()
            && round >= 2
            && ordinal(round) == suffix
        {
            return (base, round);
        }
    }
    (name, 1)
}

/// `n` as an English ordinal: 1st 2nd 3rd 4th … 11th 12th 13th … 21st 22nd 23rd.
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(names: &[&str]) -> NicknamePool {
        NicknamePool::with_names(names.iter().map(|name| (*name).to_owned()).collect())
    }

    #[test]
    fn the_default_names_are_distinct_single_ascii_words() {
        let distinct: HashSet<&str> = NICKNAMES.iter().copied().collect();
        assert_eq!(distinct.len(), NICKNAMES.len());
        assert!((50..=70).contains(&NICKNAMES.len()));
        for name in NICKNAMES {
            assert!(name.chars().all(|c| c.is_ascii_alphabetic()), "{name}");
        }
    }

    #[test]
    fn names_are_unique_within_a_round() {
        let mut pool = NicknamePool::new();
        let names: Vec<String> = (0..NICKNAMES.len()).map(|_| pool.take()).collect();
        let distinct: HashSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), NICKNAMES.len());
        assert!(names.iter().all(|name| NICKNAMES.contains(&name.as_str())));
        assert_eq!(pool.round(), 1);
    }

    #[test]
    fn an_exhausted_round_resets_with_an_ordinal_suffix() {
        let mut pool = pool(&["Nash", "Curie"]);
        let first: HashSet<String> = [pool.take(), pool.take()].into();
        assert_eq!(
            first,
            HashSet::from(["Nash".to_owned(), "Curie".to_owned()])
        );
        assert_eq!(pool.round(), 1);

        let second: HashSet<String> = [pool.take(), pool.take()].into();
        assert_eq!(pool.round(), 2);
        let expected = ["Nash the 2nd".to_owned(), "Curie the 2nd".to_owned()];
        assert_eq!(second, HashSet::from(expected));

        let third = pool.take();
        assert_eq!(pool.round(), 3);
        assert!(
            third == "Nash the 3rd" || third == "Curie the 3rd",
            "{third}"
        );
    }

    #[test]
    fn ordinals_are_english() {
        let cases = [
            (1, "1st"),
            (2, "2nd"),
            (3, "3rd"),
            (4, "4th"),
            (10, "10th"),
            (11, "11th"),
            (12, "12th"),
            (13, "13th"),
            (21, "21st"),
            (22, "22nd"),
            (23, "23rd"),
            (101, "101st"),
            (111, "111th"),
            (112, "112th"),
        ];
        for (n, expected) in cases {
            assert_eq!(ordinal(n), expected);
        }
        assert_eq!(decorate("Nash", 1), "Nash");
        assert_eq!(decorate("Nash", 22), "Nash the 22nd");
        assert_eq!(parse("Nash the 22nd"), ("Nash", 22));
        assert_eq!(parse("Nash"), ("Nash", 1));
        assert_eq!(parse("Nash the 22th"), ("Nash the 22th", 1));
    }

    #[test]
    fn a_name_given_back_is_available_again_in_its_round() {
        let mut three = pool(&["Nash", "Curie", "Boole"]);
        let a = three.take();
        let b = three.take();
        three.give_back(&a);
        let next: HashSet<String> = [three.take(), three.take()].into();
        let rest: HashSet<&str> = ["Nash", "Curie", "Boole"]
            .into_iter()
            .filter(|name| *name != b)
            .collect();
        assert_eq!(
            next.iter().map(String::as_str).collect::<HashSet<_>>(),
            rest
        );
        assert_eq!(three.round(), 1);

        // The last name of a round, given back, is handed out again before the reset.
        let mut single = pool(&["Nash"]);
        let name = single.take();
        single.give_back(&name);
        assert_eq!(single.take(), "Nash");
        assert_eq!(single.round(), 1);
        // A name from an earlier round is ignored once the next round has started.
        assert_eq!(single.take(), "Nash the 2nd");
        single.give_back("Nash");
        assert_eq!(single.take(), "Nash the 3rd");
    }

    #[test]
    fn marked_names_are_not_handed_out_again() {
        let mut pool = pool(&["Nash", "Curie"]);
        pool.mark_taken("Curie");
        assert_eq!(pool.take(), "Nash");
        assert_eq!(pool.round(), 1);

        pool.mark_taken("Curie the 3rd");
        assert_eq!(pool.round(), 3);
        assert_eq!(pool.take(), "Nash the 3rd");
        pool.mark_taken("Nash the 2nd");
        let fourth = pool.take();
        assert!(fourth.ends_with(" the 4th"), "{fourth}");
    }
}
