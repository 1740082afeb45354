//! Carriers: the documents values are planted in, and the assembly of one corpus item.
//!
//! Text carriers are wiki paragraphs, log lines, YAML, `.env` and INI files, CSV rows, email
//! messages, chat transcripts and form option lists, in seven languages; JSON carriers (tool
//! results, search results, tool schemas) live in `json`. Values that span lines (PEM keys) are
//! written with `\n` escapes in one-line formats, as logs and configs do.

use policy::RedactionKind;

use super::labels::{filler, label, name, sentence, timestamp};
use super::rng::Rng;
use super::{Channel, Doc, Item, LANGS, Lang, Piece, Planted, draw, json};

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
            RedactionKind::Email | RedactionKind::Ipv4 | RedactionKind::Ipv6 => (2, kind),
            _ => (1, kind),
        })
        .collect();
    let mut planted = Vec::new();
    for _ in 0..count {
        let kind = rng.weighted(&kinds).clone();
        let valid = rng.chance(0.62);
        planted.extend(draw(rng, &kind, valid, channel));
    }
    for value in &mut planted {
        channel.encode(rng, value);
    }
    if channel.is_json() {
        let (carrier, doc) = json::document(rng, lang, channel, &planted);
        return Item { id, carrier, channel, planted, doc };
    }
    let carrier = *rng.weighted(&[
        (4, "wiki"),
        (3, "log"),
        (2, "yaml"),
        (2, "env"),
        (1, "ini"),
        (2, "csv"),
        (2, "email"),
        (2, "chat"),
        (2, "form"),
    ]);
    if matches!(carrier, "log" | "yaml" | "env" | "ini" | "csv" | "form") {
        for value in &mut planted {
            for text in [&mut value.text, &mut value.before, &mut value.after] {
                *text = text.replace('\n', "\\n");
            }
        }
    }
    let order: Vec<usize> = (0..planted.len()).collect();
    let mut b = Builder::new(&planted, channel);
    match carrier {
        "wiki" => wiki(&mut b, rng, lang, &planted, &order),
        "log" => log(&mut b, rng, &planted, &order),
        "yaml" => yaml(&mut b, rng, &planted, &order),
        "env" => env(&mut b, rng, &planted, &order),
        "ini" => ini(&mut b, rng, &planted, &order),
        "csv" => csv(&mut b, rng, &planted, &order),
        "email" => email(&mut b, rng, lang, &planted, &order),
        "chat" => chat(&mut b, rng, lang, &planted, &order),
        _ => form(&mut b, rng, lang, &planted, &order),
    }
    let doc = Doc::Text(b.pieces);
    Item { id, carrier, channel, planted, doc }
}

/// A prose line about value `index`.
fn prose(b: &mut Builder, rng: &mut Rng, lang: Lang, planted: &Planted, index: usize) {
    if planted.multiline() {
        b.lit(&format!("{}:\n", label(planted, lang)));
        b.val(index);
        b.lit("\n");
        return;
    }
    let template =
        sentence(rng, lang).replace("{label}", &label(planted, lang)).replace("{name}", &name(rng));
    b.template(&template, index);
}

fn wiki(b: &mut Builder, rng: &mut Rng, lang: Lang, planted: &[Planted], order: &[usize]) {
    let heading = [
        "Contacts and accounts",
        "Kontakt und Konten",
        "Contacts et comptes",
        "Contactos",
        "Contatti",
        "Contact",
        "Contatos",
    ];
    b.lit(&format!("== {} ==\n", heading[lang as usize]));
    b.lit(&filler(rng, lang));
    for &i in order {
        b.lit(" ");
        prose(b, rng, lang, &planted[i], i);
        if rng.chance(0.4) {
            b.lit(" ");
            b.lit(&filler(rng, lang));
        }
    }
    b.lit("\n");
}

fn log(b: &mut Builder, rng: &mut Rng, planted: &[Planted], order: &[usize]) {
    let services = ["api", "auth", "billing", "worker", "gateway", "sync"];
    b.lit(&format!(
        "{} INFO  [{}] started pid={} in {} ms\n",
        timestamp(rng),
        rng.pick(&services),
        rng.range(100, 65000),
        rng.range(3, 900)
    ));
    for &i in order {
        let level = *rng.pick(&["INFO ", "WARN ", "DEBUG", "ERROR"]);
        let event =
            *rng.pick(&["request", "login", "payment.update", "profile.save", "config.load", "retry"]);
        b.lit(&format!("{} {level} [{}] {event} {}=", timestamp(rng), rng.pick(&services), planted[i].key));
        b.val(i);
        b.lit(&format!(
            " status={} duration_ms={}\n",
            rng.pick(&[200, 201, 204, 400, 403, 500]),
            rng.range(1, 3000)
        ));
    }
}

/// `value` quoted when a config format needs it.
fn needs_quotes(planted: &Planted) -> bool {
    let text = format!("{}{}{}", planted.before, planted.plain, planted.after);
    text.contains([' ', '#', ':', '\\', '\n', ',', '"', '=', ';', '\''])
        || text.starts_with(['*', '&', '!', '%', '@', '[', '{', '-', '?', '|', '>', '$', '<'])
}

fn yaml(b: &mut Builder, rng: &mut Rng, planted: &[Planted], order: &[usize]) {
    b.lit(&format!(
        "# deployed {}\nservice:\n  name: {}\n  replicas: {}\n  settings:\n",
        timestamp(rng),
        rng.pick(&["billing", "crm", "intranet"]),
        rng.range(1, 12)
    ));
    for &i in order {
        b.lit(&format!("    {}: ", planted[i].key.to_lowercase()));
        let quote = if needs_quotes(&planted[i]) { "\"" } else { "" };
        b.lit(quote);
        b.val(i);
        b.lit(&format!("{quote}\n"));
    }
    b.lit(&format!("  timeout: {}s\n", rng.range(5, 120)));
}

fn env(b: &mut Builder, rng: &mut Rng, planted: &[Planted], order: &[usize]) {
    b.lit(&format!(
        "# .env for {} (generated {})\nNODE_ENV=production\nPORT={}\n",
        rng.pick(&["staging", "production"]),
        timestamp(rng),
        rng.pick(&[3000, 8080, 8000])
    ));
    for &i in order {
        b.lit(&format!("{}=", planted[i].key.to_uppercase()));
        let quote = if needs_quotes(&planted[i]) { "\"" } else { "" };
        b.lit(quote);
        b.val(i);
        b.lit(&format!("{quote}\n"));
    }
    b.lit(&format!("LOG_LEVEL={}\n", rng.pick(&["info", "debug", "warn"])));
}

fn ini(b: &mut Builder, rng: &mut Rng, planted: &[Planted], order: &[usize]) {
    b.lit(&format!(
        "; settings.ini, revision {}\n[general]\nretries = {}\n\n[{}]\n",
        rng.range(10, 999),
        rng.range(1, 9),
        rng.pick(&["database", "contact", "billing", "smtp"])
    ));
    for &i in order {
        b.lit(&format!("{} = ", planted[i].key.to_lowercase()));
        b.val(i);
        b.lit("\n");
    }
}

fn csv(b: &mut Builder, rng: &mut Rng, planted: &[Planted], order: &[usize]) {
    let mut header = vec!["id".to_owned(), "name".to_owned()];
    header.extend(order.iter().map(|&i| planted[i].key.to_lowercase()));
    header.push("created".into());
    b.lit(&format!("{}\n{},{},", header.join(","), rng.range(1, 99999), name(rng)));
    for &i in order {
        let quote = if needs_quotes(&planted[i]) { "\"" } else { "" };
        b.lit(quote);
        b.val(i);
        b.lit(&format!("{quote},"));
    }
    b.lit(&format!("{}\n", super::values_decoys::date(rng)));
}

fn email(b: &mut Builder, rng: &mut Rng, lang: Lang, planted: &[Planted], order: &[usize]) {
    let sender = name(rng);
    let greeting = [
        "Hi team,",
        "Hallo zusammen,",
        "Bonjour à tous,",
        "Hola a todos,",
        "Ciao a tutti,",
        "Hallo allemaal,",
        "Olá a todos,",
    ];
    let from_email =
        order.iter().copied().find(|&i| planted[i].kind == RedactionKind::Email && !planted[i].multiline());
    b.lit(&format!("From: {sender}"));
    if let Some(i) = from_email {
        b.lit(" <");
        b.val(i);
        b.lit(">");
    }
    b.lit(&format!(
        "\nTo: Team {}\nDate: {}\nSubject: {}\n\n{}\n",
        rng.pick(&["Billing", "HR", "Ops"]),
        timestamp(rng),
        rng.pick(&["Update", "Re: your request", "Stammdaten", "Mise à jour"]),
        greeting[lang as usize]
    ));
    for &i in order.iter().filter(|&&i| Some(i) != from_email) {
        prose(b, rng, lang, &planted[i], i);
        b.lit("\n");
    }
    b.lit(&format!(
        "{}\n\n-- \n{sender}\n{}\n",
        filler(rng, lang),
        rng.pick(&[
            "Acme Corp · Hauptstraße 5 · 10115 Berlin",
            "Nordwind SAS · 12 rue de la Paix · 75002 Paris",
            "Globex Ltd · 1 King St · London"
        ])
    ));
}

fn chat(b: &mut Builder, rng: &mut Rng, lang: Lang, planted: &[Planted], order: &[usize]) {
    let people = ["alice", "bob", "chloe", "dev-bot", "lukas"];
    let mut minute = rng.below(50);
    b.lit(&format!("[{:02}:{minute:02}] {}: {}\n", rng.range(8, 18), rng.pick(&people), filler(rng, lang)));
    for &i in order {
        minute += 1;
        b.lit(&format!("[{:02}:{minute:02}] {}: ", rng.range(8, 18), rng.pick(&people)));
        if planted[i].multiline() {
            b.lit("```\n");
            b.val(i);
            b.lit("\n```\n");
        } else if rng.chance(0.5) {
            b.lit(&format!(
                "{} {} ",
                rng.pick(&["here is the", "hier ist", "voici le", "the"]),
                label(&planted[i], lang)
            ));
            b.val(i);
            b.lit(&format!(" {}\n", rng.pick(&["👍", "", "thx", "(expires friday)"])));
        } else {
            prose(b, rng, lang, &planted[i], i);
            b.lit("\n");
        }
    }
}

fn form(b: &mut Builder, rng: &mut Rng, lang: Lang, planted: &[Planted], order: &[usize]) {
    let prompt = [
        "Choose an option:",
        "Bitte auswählen:",
        "Choisissez une option :",
        "Elija una opción:",
        "Scegli un'opzione:",
        "Kies een optie:",
        "Escolha uma opção:",
    ];
    let html = b.html;
    b.lit(&format!("{}\n", prompt[lang as usize]));
    if html {
        b.lit(&format!("<select name=\"{}\">\n", rng.pick(&["account", "contact", "payment"])));
    }
    for (n, &i) in order.iter().enumerate() {
        let text = format!("{} — ", label(&planted[i], lang));
        if html {
            b.lit(&format!("  <option value=\"{}\">{text}", n + 1));
            b.val(i);
            b.lit("</option>\n");
        } else {
            b.lit(&format!("  ( ) {text}"));
            b.val(i);
            b.lit("\n");
        }
    }
    b.lit(if html { "</select>\n" } else { "  ( ) Other / Andere\n" });
}
