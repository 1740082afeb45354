//! A read-only view of serialized Content-Security-Policy text, with byte offsets.
//!
//! Planning edits a policy in place (append one source, replace `'none'`) and must leave every
//! other byte as the site sent it, so this parser keeps the position of each directive and source
//! instead of building a normalized copy. Grammar per CSP3 §2.2: policies split on `,`,
//! directives on `;`, tokens on ASCII whitespace; directive names are case-insensitive.

use super::source::Source;

/// One policy of a (possibly comma-joined) serialized policy list.
#[derive(Debug)]
pub(super) struct Policy<'text> {
    directives: Vec<Directive<'text>>,
    /// Offset just past the policy's last byte (before the `,` that ends it, if any).
    end: usize,
}

/// One directive: a name and its source tokens, each with its offset in the whole value.
#[derive(Debug)]
pub(super) struct Directive<'text> {
    name: &'text str,
    /// Offset just past the name; where a source goes when the directive has none.
    name_end: usize,
    sources: Vec<Token<'text>>,
}

/// A whitespace-delimited token of a directive value.
#[derive(Clone, Copy, Debug)]
pub(super) struct Token<'text> {
    pub(super) text: &'text str,
    pub(super) start: usize,
}

/// Splits a serialized policy list into policies. Offsets refer to `value`.
pub(super) fn parse_policies(value: &str) -> Vec<Policy<'_>> {
    split_with_offsets(value, 0, b',').map(|(offset, text)| parse_policy(text, offset)).collect()
}

impl<'text> Policy<'text> {
    /// The directive that governs a `<script src>` element, following the CSP3 fallback list for
    /// `script-src-elem`; `None` when the policy does not restrict scripts at all.
    pub(super) fn script_directive(&self) -> Option<&Directive<'text>> {
        ["script-src-elem", "script-src", "default-src"].iter().find_map(|wanted| self.directive(wanted))
    }

    /// Offset where a new directive can be appended (`; name …`).
    pub(super) fn end(&self) -> usize {
        self.end
    }

    /// The first directive with this name: CSP3 ignores later duplicates.
    pub(super) fn directive(&self, wanted: &str) -> Option<&Directive<'text>> {
        self.directives.iter().find(|directive| directive.name.eq_ignore_ascii_case(wanted))
    }
}

impl<'text> Directive<'text> {
    /// The directive's source tokens, in order.
    pub(super) fn tokens(&self) -> &[Token<'text>] {
        &self.sources
    }

    /// The directive's sources, classified, in order.
    pub(super) fn sources(&self) -> Vec<Source<'text>> {
        self.sources.iter().map(|token| Source::classify(token.text)).collect()
    }

    /// Offset where an appended source goes: after the last token (before any trailing
    /// whitespace or the `;`), or right after the name of an empty directive.
    pub(super) fn append_offset(&self) -> usize {
        self.sources.last().map_or(self.name_end, |token| token.start + token.text.len())
    }
}

fn parse_policy(text: &str, offset: usize) -> Policy<'_> {
    let directives = split_with_offsets(text, offset, b';')
        .filter_map(|(directive_offset, directive_text)| {
            let mut tokens = tokens(directive_text, directive_offset);
            let name = tokens.next()?;
            Some(Directive {
                name: name.text,
                name_end: name.start + name.text.len(),
                sources: tokens.collect(),
            })
        })
        .collect();
    Policy { directives, end: offset + text.len() }
}

/// Splits `text` on `separator`, yielding each piece with its absolute offset.
fn split_with_offsets(text: &str, base_offset: usize, separator: u8) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split(char::from(separator)).map(move |piece| {
        let piece_offset = base_offset + start;
        start += piece.len() + 1;
        (piece_offset, piece)
    })
}

/// Splits on ASCII whitespace (the CSP definition: tab, LF, FF, CR, space) with offsets.
fn tokens(text: &str, base_offset: usize) -> impl Iterator<Item = Token<'_>> {
    let mut position = 0;
    std::iter::from_fn(move || {
        let rest = &text[position..];
        let skipped = rest.len() - rest.trim_start_matches(is_csp_whitespace).len();
        let token_start = position + skipped;
        let token_text =
            text[token_start..].split(is_csp_whitespace).next().filter(|token| !token.is_empty())?;
        position = token_start + token_text.len();
        Some(Token { text: token_text, start: base_offset + token_start })
    })
}

fn is_csp_whitespace(character: char) -> bool {
    matches!(character, '\t' | '\n' | '\u{c}' | '\r' | ' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(policy: &Policy<'_>) -> Vec<String> {
        policy.directives.iter().map(|directive| directive.name.to_owned()).collect()
    }

    #[test]
    fn splits_policies_and_directives_with_offsets() {
        let value = "default-src 'self'; img-src *, script-src  https://a.example\t'nonce-x' ;";
        let policies = parse_policies(value);
        assert_eq!(policies.len(), 2);
        assert_eq!(names(&policies[0]), ["default-src", "img-src"]);
        assert_eq!(names(&policies[1]), ["script-src"]);
        let Some(script) = policies[1].script_directive() else {
            panic!("script-src expected");
        };
        let texts: Vec<&str> = script.tokens().iter().map(|token| token.text).collect();
        assert_eq!(texts, ["https://a.example", "'nonce-x'"]);
        for token in script.tokens() {
            assert_eq!(&value[token.start..token.start + token.text.len()], token.text);
        }
        assert_eq!(&value[script.append_offset()..], " ;");
    }

    #[test]
    fn fallback_order_and_first_duplicate_wins() {
        let policies = parse_policies("DEFAULT-SRC a; Script-Src b; script-src c");
        let Some(directive) = policies[0].script_directive() else {
            panic!("script-src expected");
        };
        assert_eq!(directive.tokens()[0].text, "b");

        let policies = parse_policies("script-src a; script-src-elem e");
        let Some(directive) = policies[0].script_directive() else {
            panic!("script-src-elem expected");
        };
        assert_eq!(directive.tokens()[0].text, "e");
    }

    #[test]
    fn empty_directive_appends_after_its_name() {
        let value = "style-src x; script-src;";
        let policies = parse_policies(value);
        let Some(directive) = policies[0].script_directive() else {
            panic!("script-src expected");
        };
        assert!(directive.tokens().is_empty());
        assert_eq!(&value[..directive.append_offset()], "style-src x; script-src");
    }

    #[test]
    fn policy_without_script_restrictions() {
        let policies = parse_policies("img-src 'none'; frame-ancestors 'self'");
        assert!(policies[0].script_directive().is_none());
        assert!(parse_policies("")[0].script_directive().is_none());
    }
}
