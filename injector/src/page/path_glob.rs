//! URL path globs, for form rules' `path` (the pages a rule applies to) and `action` (where the
//! form submits): `*` matches any run of characters, `/` included; everything else matches
//! itself. And the path a form's `action` resolves to, the way a browser resolves it against the
//! page's URL, so a rule can be scoped to the submission it makes.

/// A URL path pattern: `*` matches any run of characters, `/` included; the rest matches itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathGlob {
    /// The literal pieces between the stars.
    pieces: Vec<String>,
}

impl PathGlob {
    /// Compiles `pattern`, which must be an absolute path (`/…`) without `?` or `#`.
    pub fn new(pattern: &str) -> Result<Self, String> {
        if !pattern.starts_with('/') {
            return Err(format!("path {pattern:?} must start with /"));
        }
        if pattern.contains(['?', '#']) || pattern.chars().any(char::is_whitespace) {
            return Err(format!("path {pattern:?} must be a URL path (no query, fragment or spaces)"));
        }
        Ok(Self { pieces: pattern.split('*').map(str::to_owned).collect() })
    }

    /// Whether `path` matches: the first piece is a prefix, the last a suffix, the others appear
    /// in order between them (greedy-free, so linear in the path's length per piece).
    pub fn matches(&self, path: &str) -> bool {
        let Some((first, rest)) = self.pieces.split_first() else { return false };
        let Some(mut remaining) = path.strip_prefix(first.as_str()) else { return false };
        let Some((last, middle)) = rest.split_last() else { return remaining.is_empty() };
        for piece in middle {
            match remaining.find(piece.as_str()) {
                Some(at) => remaining = &remaining[at + piece.len()..],
                None => return false,
            }
        }
        remaining.ends_with(last.as_str())
    }
}

/// The path a form with `action` (as written, character references decoded) submits to, on the
/// page at `page_path`: an empty or missing action is the page itself; query and fragment are
/// dropped; a relative one is resolved against the page's directory; dot segments are removed
/// (RFC 3986 §5.2). An action on another authority keeps its own path.
pub fn resolve_action_path(page_path: &str, action: Option<&str>) -> String {
    let action = action.map(str::trim).unwrap_or_default();
    let without_query = |text: &str| text.split(['?', '#']).next().unwrap_or_default().to_owned();
    let lower = action.to_ascii_lowercase();
    let after_authority = ["http://", "https://", "//"]
        .iter()
        .find(|prefix| lower.starts_with(**prefix))
        .map(|prefix| &action[prefix.len()..]);
    let path = match after_authority {
        _ if action.is_empty() || action.starts_with(['?', '#']) => without_query(page_path),
        Some(rest) => match rest.find(['/', '?', '#']) {
            Some(at) if rest[at..].starts_with('/') => without_query(&rest[at..]),
            _ => "/".to_owned(),
        },
        None if action.starts_with('/') => without_query(action),
        None => {
            let page = without_query(page_path);
            let directory = &page[..page.rfind('/').map_or(0, |at| at + 1)];
            format!("{}{}", if directory.is_empty() { "/" } else { directory }, without_query(action))
        }
    };
    remove_dot_segments(&path)
}

/// RFC 3986 §5.2.4 for an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (index, segment) in segments.iter().enumerate() {
        let last = index + 1 == segments.len();
        match *segment {
            "." => {
                if last {
                    kept.push("");
                }
            }
            ".." => {
                kept.pop();
                if last {
                    kept.push("");
                }
            }
            other => kept.push(other),
        }
    }
    format!("/{}", kept.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs_match_whole_paths_with_stars_anywhere() {
        let glob = |pattern: &str| PathGlob::new(pattern).expect("valid");
        assert!(
            glob("/a/b").matches("/a/b") && !glob("/a/b").matches("/a/b/") && !glob("/a/b").matches("/a")
        );
        assert!(glob("/a/*").matches("/a/") && glob("/a/*").matches("/a/b/c"));
        assert!(glob("/*/edit").matches("/x/y/edit") && !glob("/*/edit").matches("/x/edit/no"));
        assert!(
            glob("/*/*/change/").matches("/staff/1/change/")
                && !glob("/*/*/change/").matches("/staff/1/add/")
        );
        assert!(
            glob("/a*b*c").matches("/abc")
                && glob("/a*b*c").matches("/a-b-b-c")
                && !glob("/a*b*c").matches("/acb")
        );
        assert!(
            PathGlob::new("no-slash").is_err()
                && PathGlob::new("/a b").is_err()
                && PathGlob::new("/a#b").is_err()
        );
    }

    #[test]
    fn actions_resolve_like_a_browser() {
        let page = "/admin/staff/employee/add/";
        assert_eq!(resolve_action_path(page, None), page);
        assert_eq!(resolve_action_path(page, Some("")), page);
        assert_eq!(resolve_action_path(page, Some("?_popup=1")), page);
        assert_eq!(resolve_action_path(page, Some("save")), "/admin/staff/employee/add/save");
        assert_eq!(resolve_action_path(page, Some("../1/change/")), "/admin/staff/employee/1/change/");
        assert_eq!(resolve_action_path(page, Some("./")), page);
        assert_eq!(resolve_action_path(page, Some("/a/./b/../c?x#y")), "/a/c");
        assert_eq!(resolve_action_path(page, Some("HTTPS://hr.example/x/y?z")), "/x/y");
        assert_eq!(resolve_action_path(page, Some("//hr.example")), "/");
        assert_eq!(resolve_action_path("/report", Some("run")), "/run");
        assert_eq!(resolve_action_path("/a/b", Some("../../../x")), "/x");
    }
}
