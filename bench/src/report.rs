//! Collects the figures of both implementations and prints them side by side.

use std::fmt::Write as _;

use crate::stats::Summary;
use crate::target::Kind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    Us,
    MiB,
    KiB,
    Count,
    /// A quotient of two figures of one implementation.
    Ratio,
}

impl Unit {
    fn format(self, value: f64) -> String {
        match self {
            Unit::Ms if value < 10.0 => format!("{value:.2} ms"),
            Unit::Ms => format!("{value:.1} ms"),
            Unit::Us => format!("{value:.1} µs"),
            Unit::MiB => format!("{value:.1} MiB"),
            Unit::KiB => format!("{value:.0} KiB"),
            Unit::Count => format!("{value:.0}"),
            Unit::Ratio => format!("{value:.2}×"),
        }
    }
}

/// One implementation's value of a figure.
#[derive(Debug, Clone)]
pub enum Cell {
    Value(Summary),
    /// Not measured, with the reason.
    Skipped(String),
}

#[derive(Debug, Clone)]
struct Row {
    group: &'static str,
    label: String,
    unit: Unit,
    weft: Option<Cell>,
    reference: Option<Cell>,
}

/// The figures of one run, in the order they were first recorded.
#[derive(Debug, Default)]
pub struct Report {
    rows: Vec<Row>,
    notes: Vec<String>,
    budgets: Vec<Budget>,
}

/// An absolute ceiling on one of Weft's figures (the regression table): a figure that was
/// brought down stays down. Registered by the scenario that measures it.
#[derive(Debug, Clone)]
pub struct Budget {
    /// `(group, label)` of the figure.
    pub group: &'static str,
    pub label: String,
    /// The figure's unit.
    pub unit: Unit,
    /// Weft's median must be at most this.
    pub at_most: f64,
    /// Where the budget comes from (`issue 29`).
    pub origin: &'static str,
}

impl Report {
    /// Record `kind`'s value of the figure `label` in `group`.
    pub fn record(&mut self, kind: Kind, group: &'static str, label: &str, unit: Unit, cell: Cell) {
        let index = match self
            .rows
            .iter()
            .position(|row| row.group == group && row.label == label)
        {
            Some(index) => index,
            None => {
                self.rows.push(Row {
                    group,
                    label: label.to_string(),
                    unit,
                    weft: None,
                    reference: None,
                });
                self.rows.len() - 1
            }
        };
        let row = &mut self.rows[index];
        match kind {
            Kind::Weft => row.weft = Some(cell),
            Kind::Reference => row.reference = Some(cell),
        }
    }

    /// Record a measured summary.
    pub fn value(&mut self, kind: Kind, group: &'static str, label: &str, unit: Unit, s: Summary) {
        self.record(kind, group, label, unit, Cell::Value(s));
    }

    /// A line printed under the tables (skips, failures, caveats).
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        eprintln!("note: {note}");
        self.notes.push(note);
    }

    /// Hold Weft's figure `label` of `group` (in `unit`) at or under `at_most`.
    pub fn budget(
        &mut self,
        group: &'static str,
        label: &str,
        unit: Unit,
        at_most: f64,
        origin: &'static str,
    ) {
        self.budgets.push(Budget {
            group,
            label: label.to_string(),
            unit,
            at_most,
            origin,
        });
    }

    /// The budgets whose figure was measured and is over its ceiling.
    pub fn missed_budgets(&self) -> Vec<&Budget> {
        self.budgets
            .iter()
            .filter(|b| {
                self.median(Kind::Weft, b.group, &b.label)
                    .is_some_and(|v| v > b.at_most)
            })
            .collect()
    }

    /// The median of `kind`'s figure, if measured.
    pub fn median(&self, kind: Kind, group: &str, label: &str) -> Option<f64> {
        let row = self
            .rows
            .iter()
            .find(|row| row.group == group && row.label == label)?;
        let cell = match kind {
            Kind::Weft => row.weft.as_ref(),
            Kind::Reference => row.reference.as_ref(),
        };
        match cell {
            Some(Cell::Value(s)) => Some(s.median),
            _ => None,
        }
    }

    /// The tables, one per group, as Markdown.
    pub fn render(&self, goals: &[Goal]) -> String {
        let mut out = String::new();
        let mut group = "";
        for row in &self.rows {
            if row.group != group {
                group = row.group;
                let _ = writeln!(out, "\n### {group}\n");
                let _ = writeln!(
                    out,
                    "| figure | Weft median (p90) | reference median (p90) | Weft ÷ reference |"
                );
                let _ = writeln!(out, "|---|---|---|---|");
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                row.label,
                cell_text(row.weft.as_ref(), row.unit),
                cell_text(row.reference.as_ref(), row.unit),
                ratio_text(row.weft.as_ref(), row.reference.as_ref()),
            );
        }
        out.push_str(&self.goals(goals));
        out.push_str(&self.budget_table());
        if !self.notes.is_empty() {
            out.push_str("\nNotes:\n\n");
            for note in &self.notes {
                let _ = writeln!(out, "- {note}");
            }
        }
        out
    }

    /// The regression table: each budget with Weft's median.
    fn budget_table(&self) -> String {
        if self.budgets.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n### Regression budgets (Weft)\n\n| figure | budget | Weft median | met? | from |\n|---|---|---|---|---|\n",
        );
        for b in &self.budgets {
            let (value, met) = match self.median(Kind::Weft, b.group, &b.label) {
                Some(v) => (b.unit.format(v), if v <= b.at_most { "yes" } else { "no" }),
                None => ("–".to_string(), "not measured"),
            };
            let _ = writeln!(
                out,
                "| {}: {} | ≤ {} | {value} | {met} | {} |",
                b.group,
                b.label,
                b.unit.format(b.at_most),
                b.origin
            );
        }
        out
    }

    /// The ratio targets, each with the measured ratio.
    fn goals(&self, goals: &[Goal]) -> String {
        let mut out = String::from(
            "\n### Targets (issues 7 and 29)\n\n| target | Weft ÷ reference | met? |\n|---|---|---|\n",
        );
        for goal in goals {
            let weft = self.median(Kind::Weft, goal.weft.0, goal.weft.1);
            let reference = self.median(Kind::Reference, goal.reference.0, goal.reference.1);
            let (ratio, met) = match (weft, reference) {
                (Some(w), Some(r)) if r > 0.0 => {
                    let ratio = w / r;
                    let met = if ratio <= goal.at_most { "yes" } else { "no" };
                    (fraction(ratio), met)
                }
                _ => ("–".to_string(), "not measured"),
            };
            let _ = writeln!(out, "| {} | {ratio} | {met} |", goal.text);
        }
        out
    }
}

/// A ratio target (issues 7 and 29): Weft's figure over the reference's figure must be at most `at_most`.
pub struct Goal {
    pub text: String,
    pub weft: (&'static str, &'static str),
    pub reference: (&'static str, &'static str),
    pub at_most: f64,
}

impl Goal {
    /// A goal on the same measurement of both, `(group, label)`: `what` of Weft at most
    /// 1/`one_in` of the reference's (the target reads `what ≤ 1/one_in`).
    pub fn same(what: &str, measure: (&'static str, &'static str), one_in: u32) -> Goal {
        Goal {
            text: format!("{what} ≤ 1/{one_in}"),
            weft: measure,
            reference: measure,
            at_most: 1.0 / f64::from(one_in),
        }
    }
}

fn cell_text(cell: Option<&Cell>, unit: Unit) -> String {
    match cell {
        None => "–".to_string(),
        Some(Cell::Skipped(why)) => format!("skipped: {why}"),
        Some(Cell::Value(s)) if s.n > 1 => {
            format!("{} ({})", unit.format(s.median), unit.format(s.p90))
        }
        Some(Cell::Value(s)) => unit.format(s.median),
    }
}

fn ratio_text(weft: Option<&Cell>, reference: Option<&Cell>) -> String {
    match (weft, reference) {
        (Some(Cell::Value(w)), Some(Cell::Value(r))) if r.median > 0.0 => {
            fraction(w.median / r.median)
        }
        _ => "–".to_string(),
    }
}

/// `0.125` → `0.125 (1/8.0)`; ratios of 1 and above as `2.50×`.
fn fraction(ratio: f64) -> String {
    if ratio <= 0.0 {
        "0".to_string()
    } else if ratio < 1.0 {
        format!("{ratio:.3} (1/{:.1})", 1.0 / ratio)
    } else {
        format!("{ratio:.2}×")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_side_by_side_with_ratio() {
        let mut report = Report::default();
        let s = |v| Summary {
            median: v,
            p90: v,
            n: 3,
        };
        report.value(Kind::Weft, "Start-up", "warm", Unit::Ms, s(10.0));
        report.value(Kind::Reference, "Start-up", "warm", Unit::Ms, s(80.0));
        let goals = [Goal::same("start-up", ("Start-up", "warm"), 8)];
        let text = report.render(&goals);
        assert!(text.contains("| warm | 10.0 ms (10.0 ms) | 80.0 ms (80.0 ms) | 0.125 (1/8.0) |"));
        assert!(text.contains("| start-up ≤ 1/8 | 0.125 (1/8.0) | yes |"));
    }

    #[test]
    fn budgets_table_and_misses() {
        let mut report = Report::default();
        let s = |v| Summary {
            median: v,
            p90: v,
            n: 3,
        };
        report.value(Kind::Weft, "Resume", "page", Unit::Ms, s(12.0));
        report.value(Kind::Weft, "Resume", "full", Unit::Ms, s(30.0));
        report.budget("Resume", "page", Unit::Ms, 20.0, "issue 29");
        report.budget("Resume", "full", Unit::Ms, 25.0, "issue 29");
        report.budget("Resume", "absent", Unit::Ms, 1.0, "issue 29");
        let text = report.render(&[]);
        assert!(text.contains("| Resume: page | ≤ 20.0 ms | 12.0 ms | yes | issue 29 |"));
        assert!(text.contains("| Resume: full | ≤ 25.0 ms | 30.0 ms | no | issue 29 |"));
        assert!(text.contains("| Resume: absent | ≤ 1.00 ms | – | not measured | issue 29 |"));
        let missed: Vec<&str> = report
            .missed_budgets()
            .iter()
            .map(|b| b.label.as_str())
            .collect();
        assert_eq!(missed, ["full"]);
    }
}
