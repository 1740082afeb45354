//! Redacting structured values: every string of a JSON value, in an order that keeps schemas
//! restorable.
//!
//! Tool results and tool input schemas reach the model as JSON. Each string is redacted on its
//! own (object keys are names the page and the model share, and stay). The strings under the
//! value-bearing keywords of JSON Schema (`const`, `enum`, `default`, `examples`), anywhere in the
//! tree, are redacted in a first pass and every other string in a second, so a form option's own
//! spelling of a value is the one its placeholder restores, even when a `title` or `description`
//! elsewhere mentions it in another spelling first.
//!
//! Each string is handed over with the key it is the value of: the nearest enclosing object key,
//! looking through arrays and through the value keywords, whose strings are values of the property
//! that holds them (the `default` of a `password` property is a password). Strings with no key
//! above them have none. An object that pairs a name with a value (`{"name": "DB_PASSWORD",
//! "value": "…"}` in a Kubernetes env list, `{"Key": "ApiSecret", "Value": "…"}` in AWS
//! parameters, `{"name": "Authorization", "value": "…"}` in a HAR header list) hands its value
//! over with that name as its key; when the object is a cookie (an item of a `cookies` list, as
//! HAR files and browser automation print them, or one with cookie attributes such as `httpOnly`),
//! its value is handed over as that cookie's. The private members of a JSON Web Key (an object
//! with a `kty`) are handed over as key material, and numbers as their digits, marked as numbers
//! (a card number or a PIN is often stored as one).

use serde_json::Value;

/// JSON Schema keywords whose strings are values the page expects back verbatim.
const VALUE_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// Members that only a cookie object has (compared without case).
const COOKIE_ATTRIBUTES: [&str; 4] = ["httponly", "samesite", "domain", "expires"];

/// What a string is the value of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Key<'a> {
    /// The nearest enclosing object key, or the name an object pairs with its value (see above).
    Name(&'a str),
    /// The value of the cookie with this name.
    Cookie(&'a str),
    /// A private member of a JSON Web Key (`d`, `p`, `k`… of an object with a `kty`).
    Private,
    /// A JSON number (not a string) under this key: `{"card_number": 4111111111111111}`.
    Number(&'a str),
}

impl<'a> Key<'a> {
    /// The key's name (empty for key material, which has none of its own here).
    fn name(self) -> &'a str {
        match self {
            Key::Name(name) | Key::Cookie(name) | Key::Number(name) => name,
            Key::Private => "",
        }
    }
}

/// Calls `redact` with the key (see above) and the text of every string in `value`, value
/// keywords first; a `Some` answer replaces the string.
pub(super) fn redact_strings(
    value: &mut Value,
    redact: &mut dyn FnMut(Option<Key<'_>>, &str) -> Option<String>,
) {
    walk(value, Pass::Values, None, redact);
    walk(value, Pass::Rest, None, redact);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Only strings under a value keyword.
    Values,
    /// Every string not under a value keyword.
    Rest,
    /// Every string (inside a value keyword, in the first pass).
    All,
}

fn walk(
    value: &mut Value,
    pass: Pass,
    key: Option<Key<'_>>,
    redact: &mut dyn FnMut(Option<Key<'_>>, &str) -> Option<String>,
) {
    match value {
        Value::String(text) if pass != Pass::Values => {
            if let Some(redacted) = redact(key, text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, pass, key, redact)),
        Value::Object(map) => {
            let paired = pair_name(map);
            // Only an object that pairs a name with a value can be a cookie.
            let cookie = paired.is_some()
                && (matches!(key, Some(Key::Name(list)) if list.eq_ignore_ascii_case("cookies"))
                    || map.keys().any(|member| {
                        COOKIE_ATTRIBUTES.iter().any(|attribute| member.eq_ignore_ascii_case(attribute))
                    }));
            let jwk = map.get("kty").is_some_and(Value::is_string);
            for (name, item) in map.iter_mut() {
                let keyword = VALUE_KEYWORDS.contains(&name.as_str());
                let inner = match (pass, keyword) {
                    (Pass::Values, true) => Pass::All,
                    (Pass::Rest, true) => continue,
                    (other, _) => other,
                };
                let own_key = match &paired {
                    _ if jwk && super::credentials::is_private_member(name) => Key::Private,
                    Some(paired) if name.eq_ignore_ascii_case("value") && cookie => Key::Cookie(paired),
                    Some(paired) if name.eq_ignore_ascii_case("value") => Key::Name(paired),
                    _ => Key::Name(name),
                };
                walk(item, inner, if keyword { key } else { Some(own_key) }, redact);
            }
        }
        Value::Number(number) if pass != Pass::Values => {
            // A number is handed over as its digits, marked as a number (see `NUMBER`).
            if let Some(redacted) = redact(Some(Key::Number(key.map_or("", Key::name))), &number.to_string())
            {
                *value = Value::String(redacted);
            }
        }
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether an object key is a plain name that can stand before its value as words do: ASCII
/// letters, `_`, `-` and spaces, at most 40 bytes. No digit or other sign, so no finding can
/// start in it.
pub(super) fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name.bytes().all(|byte| byte.is_ascii_alphabetic() || matches!(byte, b'_' | b'-' | b' '))
}

/// The name an object pairs with its `value` member: the string of its one `name` or `key`
/// member (any case), when it also has a `value`.
fn pair_name(map: &serde_json::Map<String, Value>) -> Option<String> {
    if !map.keys().any(|member| member.eq_ignore_ascii_case("value")) {
        return None;
    }
    let mut names = map
        .iter()
        .filter(|(member, _)| member.eq_ignore_ascii_case("name") || member.eq_ignore_ascii_case("key"));
    match (names.next(), names.next()) {
        (Some((_, Value::String(name))), None) => Some(name.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Placeholders, RedactionSet, Redactor};
    use serde_json::json;

    #[test]
    fn every_schema_string_is_redacted_value_first() {
        let mut schema = json!({
            "type": "object",
            "description": "Pay from DE89370400440532013000 or ask a@b.com",
            "properties": {
                "account": {
                    "title": "Main account DE89 3704 0044 0532 0130 00",
                    "oneOf": [{"title": "Main account DE89 3704 0044 0532 0130 00",
                               "const": "DE89 3704 0044 0532 0130 00"}],
                    "enum": ["DE89 3704 0044 0532 0130 00"],
                    "default": "GB82 WEST 1234 5698 7654 32",
                    "examples": ["jo@example.org"]
                }
            }
        });
        let mut scope = Placeholders::new();
        let counts = Redactor::default().redact_json(&mut schema, &RedactionSet::builtin(), &mut scope);
        let text = schema.to_string();
        assert!(!text.contains("DE89") && !text.contains("GB82") && !text.contains("example.org"), "{text}");
        let option = schema["properties"]["account"]["oneOf"][0]["const"].as_str().expect("a string");
        assert_eq!(schema["properties"]["account"]["enum"][0], option);
        assert_eq!(counts.values().sum::<usize>(), 8);
        // The option's own spelling comes back, not the description's compact one.
        assert_eq!(scope.restore(option).0, "DE89 3704 0044 0532 0130 00");
    }

    #[test]
    fn whole_strings_under_secret_keys_are_credentials() {
        let secret = ["MPmQLyUqLOHwYjSr3", "/wIw0QbeID3IoY20zu7Sv+t"].concat();
        let mut value = json!({
            "aws_secret_access_key": secret,
            "db": {"password": "horse-maple", "password_policy": "strict", "user": "app"},
            "api_key": "${API_KEY}",
            "token": "expired",
            "schema": {"properties": {"passwd": {"default": "Zonnig2025?", "title": "Password"}}},
            "notes": ["password reset"]
        });
        let mut scope = Placeholders::new();
        let counts = Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut scope);
        let placeholder = value["aws_secret_access_key"].as_str().unwrap_or_default().to_owned();
        assert!(placeholder.starts_with("[credential "), "{value}");
        assert_eq!(scope.restore(&placeholder).0, secret);
        assert!(value["db"]["password"].as_str().is_some_and(|text| text.starts_with("[credential")));
        let passwd = &value["schema"]["properties"]["passwd"];
        assert!(passwd["default"].as_str().is_some_and(|text| text.starts_with("[credential")), "{value}");
        assert_eq!(passwd["title"], "Password");
        assert_eq!(value["db"]["password_policy"], "strict");
        assert_eq!(value["db"]["user"], "app");
        assert_eq!(value["api_key"], "${API_KEY}");
        assert_eq!(value["token"], "expired");
        assert_eq!(value["notes"][0], "password reset");
        assert_eq!(counts.values().sum::<usize>(), 3);
    }

    #[test]
    fn a_name_paired_with_a_value_is_the_values_key() {
        let secret = "Zx9Qw8Er7Ty6Ui5Op4As";
        let session = "8f3a9c2e71b44d0e9a1c5b7f3e2d6a90";
        let mut value = json!({
            "env": [{"name": "DB_PASSWORD", "value": secret}, {"name": "DB_HOST", "value": "db"}],
            "Parameters": [{"Key": "ApiSecret", "Value": secret}],
            "har": {"headers": [
                {"name": "Cookie", "value": format!("sessionid={session}; theme=dark")},
                {"name": "Accept", "value": "text/html"}
            ]},
            "req": {"headers": {"cookie": format!("sid={session}"), "set-cookie": format!("auth={session}; Path=/")}},
            "ambiguous": {"name": "DB_PASSWORD", "key": "x", "value": "kept as it is"}
        });
        let mut scope = Placeholders::new();
        let counts = Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut scope);
        let text = value.to_string();
        assert!(!text.contains(secret) && !text.contains(session), "{text}");
        assert_eq!(counts.values().sum::<usize>(), 5, "{text}");
        assert_eq!(value["env"][1]["value"], "db");
        assert_eq!(value["har"]["headers"][1]["value"], "text/html");
        let cookie = value["har"]["headers"][0]["value"].as_str().unwrap_or_default();
        assert!(cookie.starts_with("sessionid=[credential ") && cookie.ends_with("; theme=dark"), "{cookie}");
        let set_cookie = value["req"]["headers"]["set-cookie"].as_str().unwrap_or_default();
        assert!(
            set_cookie.starts_with("auth=[credential ") && set_cookie.ends_with("; Path=/"),
            "{set_cookie}"
        );
        assert_eq!(value["ambiguous"]["value"], "kept as it is");
    }

    #[test]
    fn a_cookie_object_hands_over_its_value_as_the_cookies() {
        // HAR's cookie lists and what browser automation prints for a page's cookies.
        let session = "8f3a9c2e71b44d0e9a1c5b7f3e2d6a90";
        let mut value = json!({
            "request": {"cookies": [{"name": "sessionid", "value": session}, {"name": "theme", "value": "dark"}]},
            "page_cookies": [
                {"name": "JSESSIONID", "value": session, "domain": "intranet.corp", "httpOnly": true},
                {"name": "lang", "value": "en-US", "domain": "intranet.corp", "httpOnly": false}
            ],
            "settings": [{"name": "session_timeout", "value": "30"}]
        });
        let counts =
            Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut Placeholders::new());
        let text = value.to_string();
        assert!(!text.contains(session), "{text}");
        assert_eq!(counts.values().sum::<usize>(), 2, "{text}");
        assert_eq!(value["request"]["cookies"][1]["value"], "dark");
        assert_eq!(value["page_cookies"][1]["value"], "en-US");
        assert_eq!(value["request"]["cookies"][0]["name"], "sessionid");
        assert_eq!(value["settings"][0]["value"], "30");
    }

    #[test]
    fn the_private_members_of_a_json_web_key_are_credentials() {
        let d = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
        let k = "GawgguFyGrWKav7AX4VKUg";
        let mut value = json!({
            "keys": [
                {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", "d": d},
                {"kty": "oct", "kid": "hmac-1", "k": k},
                {"kty": "RSA", "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4", "e": "AQAB"}
            ],
            "page": {"d": "2024-05-01", "p": "intro"}
        });
        let counts =
            Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut Placeholders::new());
        let text = value.to_string();
        assert!(!text.contains(d) && !text.contains(k), "{text}");
        assert_eq!(counts.values().sum::<usize>(), 2, "{text}");
        assert_eq!(value["keys"][0]["x"], "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo");
        assert_eq!(value["keys"][2]["e"], "AQAB");
        assert_eq!(value["page"]["d"], "2024-05-01");
    }

    #[test]
    fn numbers_that_are_cards_secrets_or_named_numbers() {
        let mut value = json!({
            "card_number": 4111111111111111_u64,
            "customer": {"phone": 4155552671_u64, "ssn": 536221234, "id": 4155552671_u64},
            "password": 84930275,
            "pin": 4829,
            "created_at": 1714557600,
            "amount": 125.5,
            "count": 3
        });
        let counts =
            Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut Placeholders::new());
        let text = value.to_string();
        for secret in ["4111111111111111", "536221234", "84930275", "4829"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(value["customer"]["phone"], "[phone 1]");
        assert_eq!(counts.values().sum::<usize>(), 5, "{text}");
        assert!(value["card_number"].as_str().is_some_and(|card| card.starts_with("[card ")), "{text}");
        // Other numbers stay numbers: an id, a timestamp, an amount, a count.
        assert_eq!(value["customer"]["id"], 4155552671_u64);
        assert_eq!(value["created_at"], 1714557600);
        assert_eq!(value["amount"], 125.5);
        assert_eq!(value["count"], 3);
    }

    #[test]
    fn codes_under_their_names() {
        let mut value =
            json!({"cvv": "381", "otp": "482913", "card_pin": "4829", "pin": "left", "tab": {"pin": true}});
        let counts =
            Redactor::default().redact_json(&mut value, &RedactionSet::builtin(), &mut Placeholders::new());
        let text = value.to_string();
        assert!(!text.contains("381") && !text.contains("482913") && !text.contains("4829"), "{text}");
        assert_eq!(counts.values().sum::<usize>(), 3, "{text}");
        assert_eq!(value["pin"], "left");
    }
}
