//! The mark on an agent's form submission, as the browser carries it in a cookie: which call it
//! belongs to and the method and path it goes to, `<call id>:<METHOD>:<path>`.
//!
//! The runtime sets it (the submission cookie) as the submission starts; the proxy sets the
//! landing cookie on a redirect it observed. The path is written with `%`, `;` and `,` escaped,
//! the three characters a browser's path may hold that a cookie value may not (or that would
//! be ambiguous); both sides compare in that spelling, so nothing is decoded.

use http::Method;

/// The longest call id a mark may carry.
const MAX_CALL_ID: usize = 64;
/// The longest path a mark may carry (escaped).
const MAX_PATH: usize = 2048;

/// Which call a submission belongs to, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The agent call (`[A-Za-z0-9_-]`, at most 64).
    pub call_id: String,
    /// `GET` or `POST`.
    pub method: Method,
    /// The path, escaped as [`escape_path`] does.
    pub path: String,
}

impl Mark {
    /// A mark for a request to `path` (as the request line has it).
    pub fn new(call_id: &str, method: Method, path: &str) -> Option<Self> {
        let mark = Self { call_id: call_id.to_owned(), method, path: escape_path(path) };
        mark.is_valid().then_some(mark)
    }

    /// Reads a cookie value; `None` for anything malformed.
    pub fn parse(value: &str) -> Option<Self> {
        let mut parts = value.splitn(3, ':');
        let (call_id, method, path) = (parts.next()?, parts.next()?, parts.next()?);
        let method = match method {
            "GET" => Method::GET,
            "POST" => Method::POST,
            _ => return None,
        };
        let mark = Self { call_id: call_id.to_owned(), method, path: path.to_owned() };
        mark.is_valid().then_some(mark)
    }

    /// The cookie value.
    pub fn encode(&self) -> String {
        format!("{}:{}:{}", self.call_id, self.method, self.path)
    }

    /// Whether a request with this method and path is the marked one.
    pub fn matches(&self, method: &Method, path: &str) -> bool {
        *method == self.method && escape_path(path) == self.path
    }

    fn is_valid(&self) -> bool {
        let id_ok = (1..=MAX_CALL_ID).contains(&self.call_id.len())
            && self.call_id.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'));
        // A cookie value may hold printable ASCII except whitespace, `"`, `,`, `;` and `\`.
        let path_ok = self.path.starts_with('/')
            && self.path.len() <= MAX_PATH
            && self
                .path
                .bytes()
                .all(|byte| byte.is_ascii_graphic() && !matches!(byte, b'"' | b',' | b';' | b'\\'));
        id_ok && path_ok
    }
}

/// A path in the mark's spelling: `%`, `;` and `,` percent-escaped, nothing else changed.
pub fn escape_path(path: &str) -> String {
    let mut escaped = String::with_capacity(path.len());
    for character in path.chars() {
        match character {
            '%' => escaped.push_str("%25"),
            ';' => escaped.push_str("%3B"),
            ',' => escaped.push_str("%2C"),
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_round_trip_and_match_only_their_request() {
        let mark = Mark::new("abc-1_2", Method::POST, "/admin/staff/employee/add/").expect("mark");
        assert_eq!(mark.encode(), "abc-1_2:POST:/admin/staff/employee/add/");
        assert_eq!(Mark::parse(&mark.encode()), Some(mark.clone()));
        assert!(mark.matches(&Method::POST, "/admin/staff/employee/add/"));
        assert!(!mark.matches(&Method::GET, "/admin/staff/employee/add/"));
        assert!(!mark.matches(&Method::POST, "/admin/staff/employee/1/change/"));
    }

    #[test]
    fn paths_with_cookie_delimiters_are_escaped_exactly() {
        let mark = Mark::new("c1", Method::GET, "/a;b,c/%3B").expect("mark");
        assert_eq!(mark.path, "/a%3Bb%2Cc/%253B");
        assert!(mark.matches(&Method::GET, "/a;b,c/%3B"));
        assert!(!mark.matches(&Method::GET, "/a%3Bb,c/%3B"));
    }

    #[test]
    fn malformed_marks_are_refused() {
        for value in [
            "",
            "id:POST",
            "id:PUT:/x",
            ":POST:/x",
            "id with space:POST:/x",
            "id:POST:relative",
            "id:POST:/x y",
            &format!("{}:GET:/", "a".repeat(65)),
        ] {
            assert_eq!(Mark::parse(value), None, "{value:?}");
        }
    }
}
