//! The score's counts: per kind, per channel and per pair, the fate of every planted value and
//! placeholder, and the failures kept for the examples.

use std::collections::BTreeMap;

use policy::RedactionKind;

use super::{Channel, Item};

/// Counts for one kind, channel, or both.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Valid values planted.
    pub valid: usize,
    /// Valid values fully replaced.
    pub caught: usize,
    /// Valid values partly replaced (leaks).
    pub partial: usize,
    /// Look-alikes planted.
    pub look_alikes: usize,
    /// Look-alikes left intact.
    pub intact: usize,
    /// Placeholders the redactor reported (`counts`).
    pub placeholders: usize,
    /// Placeholders on a valid value of their kind.
    pub true_positives: usize,
    /// Placeholders on carrier text.
    pub fp_filler: usize,
    /// Placeholders on look-alikes.
    pub fp_look_alike: usize,
    /// Placeholders on a valid value of another kind.
    pub fp_wrong_kind: usize,
}

impl Tally {
    /// Caught valid values over valid values (1 when there are none).
    pub fn recall(&self) -> f64 {
        ratio(self.caught, self.valid)
    }

    /// True positives over reported placeholders (1 when there are none).
    pub fn precision(&self) -> f64 {
        ratio(self.true_positives, self.placeholders.max(self.true_positives))
    }

    /// Intact look-alikes over look-alikes (1 when there are none).
    pub fn intact_rate(&self) -> f64 {
        ratio(self.intact, self.look_alikes)
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 { 1.0 } else { part as f64 / whole as f64 }
}

/// What became of one planted value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Valid, fully replaced.
    Caught,
    /// Valid, partly replaced; the canonical characters that survived.
    Partial(String),
    /// Valid, untouched.
    Missed,
    /// Look-alike, untouched.
    Intact,
    /// Look-alike, (partly) replaced.
    Hit,
}

/// One failure, for the examples.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The kind of the value or placeholder.
    pub kind: RedactionKind,
    /// Missed, partial, look-alike replaced, or false positive.
    pub what: String,
    /// The value's form (or the false positive's verdict).
    pub form: String,
    /// The item's channel.
    pub channel: Channel,
    /// The item's carrier.
    pub carrier: &'static str,
    /// The item.
    pub item: usize,
    /// The value as written (or the replaced carrier text).
    pub value: String,
    /// Canonical input around it.
    pub input: String,
    /// Canonical output around it.
    pub output: String,
}

/// The whole score.
#[derive(Clone, Debug, Default)]
pub struct Score {
    /// Items scored.
    pub items: usize,
    /// Items per channel.
    pub items_by_channel: BTreeMap<Channel, usize>,
    /// Per kind.
    pub by_kind: BTreeMap<RedactionKind, Tally>,
    /// Per channel (all kinds).
    pub by_channel: BTreeMap<Channel, Tally>,
    /// Per kind and channel.
    pub by_kind_channel: BTreeMap<(RedactionKind, Channel), Tally>,
    /// `(kind, valid, form)` → (planted, failed).
    pub by_form: BTreeMap<(RedactionKind, bool, String), (usize, usize)>,
    /// Every failure.
    pub failures: Vec<Failure>,
    /// Strings whose output could not be aligned with the input.
    pub unaligned: usize,
    /// Items whose placeholders in the text differ from the reported counts.
    pub count_mismatches: usize,
}

impl Score {
    /// Applies `f` to the kind's, the channel's and the pair's tallies.
    pub fn bump(&mut self, kind: &RedactionKind, channel: Channel, f: impl Fn(&mut Tally)) {
        f(self.by_kind.entry(kind.clone()).or_default());
        f(self.by_channel.entry(channel).or_default());
        f(self.by_kind_channel.entry((kind.clone(), channel)).or_default());
    }

    /// Records the fate of planted value `v` of `item`.
    pub fn record(&mut self, item: &Item, v: usize, status: Status, input: String, output: Option<String>) {
        let planted = &item.planted[v];
        let failed = !matches!(status, Status::Caught | Status::Intact);
        self.bump(&planted.kind, item.channel, |t| match &status {
            Status::Caught => (t.valid, t.caught) = (t.valid + 1, t.caught + 1),
            Status::Partial(_) => (t.valid, t.partial) = (t.valid + 1, t.partial + 1),
            Status::Missed => t.valid += 1,
            Status::Intact => (t.look_alikes, t.intact) = (t.look_alikes + 1, t.intact + 1),
            Status::Hit => t.look_alikes += 1,
        });
        let form =
            self.by_form.entry((planted.kind.clone(), planted.valid, planted.form.clone())).or_default();
        form.0 += 1;
        form.1 += usize::from(failed);
        if failed {
            let what = match &status {
                Status::Partial(kept) => format!("PARTIAL (kept {kept:?})"),
                Status::Missed => "MISSED".to_owned(),
                _ => "LOOK-ALIKE REPLACED".to_owned(),
            };
            self.failures.push(Failure {
                kind: planted.kind.clone(),
                what,
                form: planted.form.clone(),
                channel: item.channel,
                carrier: item.carrier,
                item: item.id,
                value: format!("{}{}{}", planted.before, planted.text, planted.after),
                input,
                output: output.unwrap_or_else(|| "(unaligned)".into()),
            });
        }
    }

    /// Records one placeholder; `verdict` is `None` for a true positive.
    pub fn placeholder(
        &mut self,
        item: &Item,
        kind: &RedactionKind,
        verdict: Option<String>,
        replaced: String,
        input: String,
        output: String,
    ) {
        let Some(verdict) = verdict else {
            self.bump(kind, item.channel, |t| t.true_positives += 1);
            return;
        };
        let filler = verdict.starts_with("on carrier");
        let look_alike = verdict.starts_with("on look-alike");
        self.bump(kind, item.channel, |t| match (filler, look_alike) {
            (true, _) => t.fp_filler += 1,
            (_, true) => t.fp_look_alike += 1,
            _ => t.fp_wrong_kind += 1,
        });
        if !look_alike {
            let what = format!("FALSE POSITIVE {verdict}");
            let (channel, carrier, id) = (item.channel, item.carrier, item.id);
            self.failures.push(Failure {
                kind: kind.clone(),
                what,
                form: String::new(),
                channel,
                carrier,
                item: id,
                value: replaced,
                input,
                output,
            });
        }
    }
}
