//! The text carriers: wiki paragraphs, log lines, YAML, `.env` and INI files, CSV rows, email
//! messages, chat transcripts and form option lists (plain, or HTML `<select>` in the HTML
//! channels). Each writes every planted value once, with the words of the item's language.

use policy::RedactionKind;

use super::carriers::Builder;
use super::labels::{filler, label, name, sentence, timestamp};
use super::rng::Rng;
use super::{Lang, Planted};

/// Writes the `carrier` document for `planted` (in `order`) into `b`.
pub fn write(
    carrier: &str,
    b: &mut Builder,
    rng: &mut Rng,
    lang: Lang,
    planted: &[Planted],
    order: &[usize],
) {
    match carrier {
        "wiki" => wiki(b, rng, lang, planted, order),
        "log" => log(b, rng, planted, order),
        "yaml" => yaml(b, rng, planted, order),
        "env" => env(b, rng, planted, order),
        "ini" => ini(b, rng, planted, order),
        "csv" => csv(b, rng, planted, order),
        "email" => email(b, rng, lang, planted, order),
        "chat" => chat(b, rng, lang, planted, order),
        _ => form(b, rng, lang, planted, order),
    }
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
    let html = b.is_html();
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
