//! Carriers: the documents values are planted in, and the assembly of one corpus item.
//!
//! Text carriers (wiki paragraphs, log lines, YAML, `.env` and INI files, CSV rows, email
//! messages, chat transcripts and form option lists, in seven languages) are in
//! `text_carriers`; JSON carriers (tool results, search results, tool schemas) in `json`. Logs and configs come in the plain
//! channel only; the page channels (`&nbsp;`, entities, fullwidth…) carry page-like documents.
//! Values that span lines (PEM keys) are written with `\n` escapes in one-line formats, as logs
//! and configs do.

use policy::RedactionKind;

use super::rng::Rng;
use super::{Channel, Doc, Item, LANGS, Piece, Planted, draw, json};

/// Builds the pieces of one text document.
pub struct Builder<'a> {
    /// The pieces so far.
    pub pieces: Vec<Piece>,
    planted: &'a [Planted],
    html: bool,
}

impl<'a> Builder<'a> {
    /// An empty document for `planted` values in `channel`.
    pub fn new(planted: &'a [Planted], channel: Channel) -> Self {
        Self { pieces: Vec::new(), planted, html: channel.is_html() }
    }

    /// Carrier text (with `&` escaped in HTML channels).
    pub fn lit(&mut self, text: &str) {
        let text = if self.html { super::channels::escape_amp(text) } else { text.to_owned() };
        self.raw(&text);
    }

    fn raw(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(last) if last.value.is_none() => last.text.push_str(text),
            _ => self.pieces.push(Piece { text: text.to_owned(), value: None }),
        }
    }

    /// True in the HTML channels.
    pub fn is_html(&self) -> bool {
        self.html
    }

    /// Planted value `index` with its context.
    pub fn val(&mut self, index: usize) {
        let planted = &self.planted[index];
        self.raw(&planted.before);
        self.pieces.push(Piece { text: planted.text.clone(), value: Some(index) });
        self.raw(&planted.after);
    }

    /// Text with `{value}` standing for planted value `index`.
    pub fn template(&mut self, template: &str, index: usize) {
        let (head, tail) = template.split_once("{value}").unwrap_or((template, ""));
        self.lit(head);
        self.val(index);
        self.lit(tail);
    }
}

/// One item: `channel`'s values drawn, encoded and planted in a carrier.
pub fn item(rng: &mut Rng, id: usize, channel: Channel) -> Item {
    let lang = *rng.weighted(&[
        (5, LANGS[0]),
        (2, LANGS[1]),
        (2, LANGS[2]),
        (1, LANGS[3]),
        (1, LANGS[4]),
        (1, LANGS[5]),
        (1, LANGS[6]),
    ]);
    let count = *rng.weighted(&[(1, 0usize), (5, 1), (6, 2), (5, 3), (3, 4)]);
    // Kinds that fewer channels carry, and credentials with their many forms, are drawn more
    // often so every kind has several hundred valid values.
    let kinds: Vec<(u32, RedactionKind)> = channel
        .kinds()
        .into_iter()
        .map(|kind| match kind {
            RedactionKind::Credentials => (3, kind),
            RedactionKind::Email
            | RedactionKind::Ipv4
            | RedactionKind::Ipv6
            | RedactionKind::ItCodiceFiscale
            | RedactionKind::PlPesel
            | RedactionKind::NlBsn => (2, kind),
            _ => (1, kind),
        })
        .collect();
    let mut planted = Vec::new();
    for _ in 0..count {
        let kind = rng.weighted(&kinds).clone();
        let valid = rng.chance(0.62);
        planted.extend(draw(rng, &kind, valid, channel));
    }
    let mut keys: Vec<String> = Vec::new();
    for value in &mut planted {
        channel.encode(rng, value);
        // Config formats need distinct keys: a second `iban` becomes `iban_2`.
        let base = value.key.clone();
        let mut n = 1;
        while keys.iter().any(|k| k.eq_ignore_ascii_case(&value.key)) {
            n += 1;
            value.key = format!("{base}_{n}");
        }
        keys.push(value.key.clone());
    }
    if channel.is_json() {
        let (carrier, doc) = json::document(rng, lang, channel, &planted);
        return Item { id, carrier, channel, planted, doc };
    }
    // Logs and config files reach the gateway as they are (plain text, or inside JSON); the
    // other channels are how web pages deliver text, so they carry page-like documents.
    let carrier = if channel == Channel::Plain {
        *rng.weighted(&[
            (2, "wiki"),
            (3, "log"),
            (3, "yaml"),
            (3, "env"),
            (2, "ini"),
            (1, "csv"),
            (1, "email"),
            (2, "chat"),
            (1, "form"),
        ])
    } else {
        *rng.weighted(&[(4, "wiki"), (2, "csv"), (2, "email"), (3, "chat"), (3, "form")])
    };
    if matches!(carrier, "log" | "yaml" | "env" | "ini" | "csv" | "form") {
        for value in &mut planted {
            for text in [&mut value.text, &mut value.before, &mut value.after] {
                *text = text.replace('\n', "\\n");
            }
        }
    }
    let order: Vec<usize> = (0..planted.len()).collect();
    let mut b = Builder::new(&planted, channel);
    super::text_carriers::write(carrier, &mut b, rng, lang, &planted, &order);
    let doc = Doc::Text(b.pieces);
    Item { id, carrier, channel, planted, doc }
}
