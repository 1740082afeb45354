//! A small, bounded `multipart/form-data` parser (RFC 7578) for the form guard: it only needs the
//! field names and the text values, so it reads the whole (already size-bounded) body in one go
//! and refuses anything it cannot read with certainty — a missing or repeated boundary
//! parameter, truncated parts, oversized header blocks, folded headers, foreign encodings.

/// Most parts in one body.
const MAX_PARTS: usize = 1000;
/// Largest header block of one part.
const MAX_PART_HEADERS: usize = 8 * 1024;

/// One part: its field name, file name (file parts) and content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Part {
    pub name: String,
    pub filename: Option<String>,
    pub content: Vec<u8>,
}

/// Every part of `body`, delimited by `boundary`.
pub(super) fn parse(boundary: &str, body: &[u8]) -> Result<Vec<Part>, &'static str> {
    if boundary.is_empty() || boundary.len() > 70 {
        return Err("multipart boundary missing or longer than 70 characters");
    }
    let delimiter = [b"--", boundary.as_bytes()].concat();
    let inner_delimiter = [b"\r\n", delimiter.as_slice()].concat();
    // The first delimiter opens the body or follows a preamble line.
    let mut position = if body.starts_with(&delimiter) {
        delimiter.len()
    } else {
        find(body, &inner_delimiter, 0).ok_or("multipart body has no opening boundary")?
            + inner_delimiter.len()
    };
    let mut parts = Vec::new();
    loop {
        let rest = &body[position..];
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        // Transport padding, then the line break that ends the delimiter line.
        let padding = rest.iter().take_while(|byte| **byte == b' ' || **byte == b'\t').count();
        if !rest[padding..].starts_with(b"\r\n") {
            return Err("multipart delimiter line is malformed");
        }
        position += padding + 2;
        if parts.len() == MAX_PARTS {
            return Err("too many multipart parts");
        }
        let (headers_end, content_start) = if body[position..].starts_with(b"\r\n") {
            (position, position + 2)
        } else {
            let end =
                find(&body[position..], b"\r\n\r\n", 0).ok_or("multipart part headers are truncated")?;
            (position + end, position + end + 4)
        };
        if headers_end - position > MAX_PART_HEADERS {
            return Err("multipart part headers are too large");
        }
        let (name, filename) = part_headers(&body[position..headers_end])?;
        let content_end = find(body, &inner_delimiter, content_start)
            .ok_or("multipart part is not closed by a boundary")?;
        parts.push(Part { name, filename, content: body[content_start..content_end].to_vec() });
        position = content_end + inner_delimiter.len();
    }
}

/// Parameters of a header value after its first `;` (`form-data; name="a"`, `multipart/form-data;
/// boundary=x`): names lower-cased, quoted strings unquoted (a backslash is kept literally, as the
/// HTML standard's encoder writes names). A repeated parameter is refused.
pub(super) fn parameters(text: &str) -> Result<Vec<(String, String)>, &'static str> {
    let mut parameters: Vec<(String, String)> = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty() {
            return Ok(parameters);
        }
        let rest_after_separator = rest.strip_prefix(';').ok_or("header parameters are malformed")?;
        rest = rest_after_separator.trim_start_matches([' ', '\t']);
        if rest.is_empty() {
            return Ok(parameters);
        }
        let equals = rest.find('=').ok_or("header parameter without a value")?;
        let name = rest[..equals].trim().to_ascii_lowercase();
        rest = &rest[equals + 1..];
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let close = quoted.find('"').ok_or("unterminated quoted header parameter")?;
            rest = &quoted[close + 1..];
            quoted[..close].to_owned()
        } else {
            let end = rest.find(';').unwrap_or(rest.len());
            let value = rest[..end].trim().to_owned();
            rest = &rest[end..];
            value
        };
        if name.is_empty() || parameters.iter().any(|(known, _)| *known == name) {
            return Err("header parameter missing or repeated");
        }
        parameters.push((name, value));
    }
}

/// The field name and file name from a part's headers.
fn part_headers(block: &[u8]) -> Result<(String, Option<String>), &'static str> {
    let block = std::str::from_utf8(block).map_err(|_| "multipart part headers are not UTF-8")?;
    let mut disposition = None;
    for line in block.split("\r\n") {
        if line.starts_with([' ', '\t']) {
            return Err("folded multipart part header");
        }
        let (name, value) = line.split_once(':').ok_or("multipart part header without a colon")?;
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        match name.as_str() {
            "content-disposition" if disposition.is_some() => return Err("repeated Content-Disposition"),
            "content-disposition" => disposition = Some(value.to_owned()),
            "content-transfer-encoding"
                if !["7bit", "8bit", "binary"].contains(&value.to_ascii_lowercase().as_str()) =>
            {
                return Err("multipart part uses a transfer encoding");
            }
            _ => {}
        }
    }
    let disposition = disposition.ok_or("multipart part without Content-Disposition")?;
    let (kind, rest) = disposition.split_at(disposition.find(';').unwrap_or(disposition.len()));
    if !kind.trim().eq_ignore_ascii_case("form-data") {
        return Err("multipart part is not form-data");
    }
    let parameters = parameters(rest)?;
    let get = |key: &str| parameters.iter().find(|(name, _)| name == key).map(|(_, value)| value.as_str());
    let plain = get("name").map(str::to_owned);
    let extended = get("name*").map(extended_value).transpose()?;
    let name = match (plain, extended) {
        (Some(plain), Some(extended)) if plain != extended => return Err("name and name* disagree"),
        (_, Some(name)) | (Some(name), None) => name,
        (None, None) => return Err("multipart part without a name"),
    };
    let filename = match get("filename*") {
        Some(value) => Some(extended_value(value)?),
        None => get("filename").map(str::to_owned),
    };
    Ok((name, filename))
}

/// An RFC 8187 extended value (`utf-8'lang'percent%20encoded`).
fn extended_value(value: &str) -> Result<String, &'static str> {
    let mut pieces = value.splitn(3, '\'');
    let (charset, _language, encoded) = (pieces.next(), pieces.next(), pieces.next());
    let encoded = encoded.ok_or("malformed extended header parameter")?;
    if !charset.is_some_and(|charset| charset.eq_ignore_ascii_case("utf-8")) {
        return Err("extended header parameter in another charset than UTF-8");
    }
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut input = encoded.bytes();
    while let Some(byte) = input.next() {
        if byte == b'%' {
            let high = input.next().and_then(|digit| char::from(digit).to_digit(16));
            let low = input.next().and_then(|digit| char::from(digit).to_digit(16));
            let (Some(high), Some(low)) = (high, low) else { return Err("malformed percent-encoding") };
            // Two hex digits are at most 255.
            bytes.push(u8::try_from(high * 16 + low).unwrap_or(u8::MAX));
        } else {
            bytes.push(byte);
        }
    }
    String::from_utf8(bytes).map_err(|_| "extended header parameter is not UTF-8")
}

/// The first occurrence of `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack.get(from..)?.windows(needle.len()).position(|window| window == needle).map(|index| index + from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_with_names_file_names_and_binary_content_are_read() {
        let body = b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n1200\r\n\
--XyZ  \r\ncontent-disposition: form-data; name=\"receipt\"; filename=\"r.pdf\"\r\nContent-Type: application/pdf\r\n\r\n\x00\xff--Xy\r\n--XyZ\r\n\
Content-Disposition: form-data; name*=utf-8''n%C3%A4me\r\n\r\n\r\n--XyZ--\r\nepilogue";
        let parts = parse("XyZ", body).expect("parses");
        assert_eq!(parts.len(), 3);
        assert_eq!((parts[0].name.as_str(), parts[0].content.as_slice()), ("amount", &b"1200"[..]));
        assert_eq!(parts[1].filename.as_deref(), Some("r.pdf"));
        assert_eq!(parts[1].content, b"\x00\xff--Xy");
        assert_eq!((parts[2].name.as_str(), parts[2].content.as_slice()), ("n\u{e4}me", &b""[..]));
    }

    #[test]
    fn malformed_bodies_are_refused() {
        let part = |headers: &str| format!("--b\r\n{headers}\r\n\r\nv\r\n--b--");
        assert!(parse("b", part("Content-Disposition: form-data; name=a").as_bytes()).is_ok());
        let refused = [
            "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nvalue without a closing boundary"
                .to_owned(),
            "no boundary at all".to_owned(),
            part("Content-Disposition: form-data"),
            part("Content-Disposition: attachment; name=a"),
            part("Content-Disposition: form-data; name=a; name=b"),
            part("Content-Disposition: form-data; name=\"a"),
            part("Content-Disposition: form-data; name=a; name*=utf-8''b"),
            part("Content-Disposition: form-data; name=a\r\n folded: yes"),
            part("Content-Disposition: form-data; name=a\r\nContent-Transfer-Encoding: base64"),
            part("X-Other: 1"),
            format!(
                "--b\r\nContent-Disposition: form-data; name=a\r\n{}\r\n\r\nv\r\n--b--",
                "X: y\r\n".repeat(2000)
            ),
            "--bXjunk\r\n".to_owned(),
        ];
        for body in refused {
            assert!(parse("b", body.as_bytes()).is_err(), "{body:.80}");
        }
        assert!(parse("", b"--\r\n").is_err());
        assert!(parse(&"b".repeat(71), b"").is_err());
    }

    #[test]
    fn the_number_of_parts_is_bounded() {
        let one = "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n";
        let body = format!("{}--b--", one.repeat(MAX_PARTS + 1));
        assert_eq!(parse("b", body.as_bytes()), Err("too many multipart parts"));
        let body = format!("{}--b--", one.repeat(MAX_PARTS));
        assert_eq!(parse("b", body.as_bytes()).map(|parts| parts.len()), Ok(MAX_PARTS));
    }

    #[test]
    fn parameters_are_unquoted_and_lower_cased() {
        let parsed = parameters("; Boundary=\"a;b\" ; charset=utf-8").expect("parses");
        assert_eq!(parsed, vec![("boundary".into(), "a;b".into()), ("charset".into(), "utf-8".into())]);
        assert!(parameters("; a=1; A=2").is_err());
        assert!(parameters("junk").is_err());
    }
}
