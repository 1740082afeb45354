//! The score's tallies and the tables and examples printed from them.
//!
//! Tables: per kind, per channel, and recall per kind × channel; then the forms that fail most
//! (`card amex 15 dashed: 40/52 failed`) and examples chosen for variety (one per kind, failure,
//! form and channel, round-robin over kinds), each with the value as written (escaped, so
//! U+00A0, soft hyphens and fullwidth digits show) and the input and output around it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use policy::RedactionKind;

use super::channels;
pub use super::tally::{Failure, Score, Status, Tally};

impl Score {
    /// The kind table, the channel table and the kind × channel recall matrix.
    pub fn tables(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} items, {} unaligned strings, {} items whose placeholders differ from counts",
            self.items, self.unaligned, self.count_mismatches
        );
        let header = format!(
            "{:<22} {:>6} {:>6} {:>5} {:>7} | {:>6} {:>6} {:>7} | {:>6} {:>5} {:>5} {:>5} {:>5} {:>9}",
            "",
            "valid",
            "caught",
            "part",
            "recall",
            "alike",
            "intact",
            "rate",
            "placeh",
            "TP",
            "FPtxt",
            "FPalk",
            "FPknd",
            "precision"
        );
        let row = |name: &str, t: &Tally| {
            format!(
                "{name:<22} {:>6} {:>6} {:>5} {:>7.4} | {:>6} {:>6} {:>7.4} | {:>6} {:>5} {:>5} {:>5} {:>5} {:>9.4}",
                t.valid,
                t.caught,
                t.partial,
                t.recall(),
                t.look_alikes,
                t.intact,
                t.intact_rate(),
                t.placeholders,
                t.true_positives,
                t.fp_filler,
                t.fp_look_alike,
                t.fp_wrong_kind,
                t.precision()
            )
        };
        let _ = writeln!(out, "\nper kind\n{header}");
        for kind in RedactionKind::BUILTIN {
            let _ = writeln!(
                out,
                "{}",
                row(kind.as_str(), &self.by_kind.get(&kind).cloned().unwrap_or_default())
            );
        }
        let _ = writeln!(out, "\nper channel (all kinds)\n{header}");
        for channel in channels::ALL {
            let _ = writeln!(
                out,
                "{}",
                row(channel.name(), &self.by_channel.get(&channel).cloned().unwrap_or_default())
            );
        }
        let _ = writeln!(out, "\nrecall per kind x channel (- : no valid values)");
        let _ = write!(out, "{:<12}", "");
        for channel in channels::ALL {
            let _ = write!(out, " {:>7}", &channel.name()[..channel.name().len().min(7)]);
        }
        for kind in RedactionKind::BUILTIN {
            let _ = write!(out, "\n{:<12}", kind.as_str());
            for channel in channels::ALL {
                match self.by_kind_channel.get(&(kind.clone(), channel)).filter(|t| t.valid > 0) {
                    Some(t) => {
                        let _ = write!(out, " {:>7.3}", t.recall());
                    }
                    None => {
                        let _ = write!(out, " {:>7}", "-");
                    }
                }
            }
        }
        out.push('\n');
        out
    }

    /// The `n` forms with the most failures.
    pub fn worst_forms(&self, n: usize) -> String {
        let mut forms: Vec<_> = self.by_form.iter().filter(|(_, (_, failed))| *failed > 0).collect();
        forms.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        let mut out = String::from("\nforms that fail most (failed/planted)\n");
        for ((kind, valid, form), (planted, failed)) in forms.into_iter().take(n) {
            let side = if *valid { "valid" } else { "look-alike" };
            let _ = writeln!(out, "  {:<12} {side:<10} {form:<40} {failed}/{planted}", kind.as_str());
        }
        out
    }

    /// Up to `n` failures, varied: one per (kind, failure, form, channel), round-robin by kind.
    pub fn examples(&self, n: usize) -> String {
        let mut by_kind: BTreeMap<&RedactionKind, Vec<&Failure>> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for failure in &self.failures {
            let category: String = failure.what.chars().take_while(|c| *c != '(').collect();
            if seen.insert((&failure.kind, category, &failure.form, failure.channel)) {
                by_kind.entry(&failure.kind).or_default().push(failure);
            }
        }
        let mut out = String::from(
            "\nexamples (the whole item: CORPUS_ITEM=<id> cargo test -p policy --test policy \
             show_corpus_items -- --ignored --nocapture)\n",
        );
        let mut round = 0;
        let mut shown = 0;
        while shown < n && by_kind.values().any(|list| list.len() > round) {
            for list in by_kind.values() {
                if let Some(f) = list.get(round).filter(|_| shown < n) {
                    shown += 1;
                    let _ = writeln!(
                        out,
                        "{shown:>2}. {} {} [{}] channel={} carrier={} item={}\n    value:  {:?}\n    input:  {:?}\n    output: {:?}",
                        f.kind,
                        f.what,
                        f.form,
                        f.channel.name(),
                        f.carrier,
                        f.item,
                        f.value,
                        f.input,
                        f.output
                    );
                }
            }
            round += 1;
        }
        out
    }
}
