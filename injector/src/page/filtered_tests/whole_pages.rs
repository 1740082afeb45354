//! `rewrite_whole` against the streaming rewriter on generated pages: leaving out the handlers
//! `survey` says the page cannot need (the comment scan where `leaks::comments` says no comment
//! can hold markup; the tool, context, form, `srcdoc` and raw-text handlers where their tags or
//! markers are absent) must never change a byte. The pages are built from the pieces that
//! decide those answers (comment openings and closings of every kind, markers, raw-text
//! elements, forms with labels and controls, iframes, attributes, foreign content), so most of
//! them put a marker next to a comment boundary and many leave one handler group out. Most
//! also place the script early, so the rest of the page is copied once it goes quiet: that must
//! not change a byte either.

use proptest::prelude::*;

use super::*;

const PIECES: [&str; 55] = [
    "<!--",
    "-->",
    "--!>",
    "<!-->",
    "<!--->",
    "<!",
    "<?",
    "</",
    ">",
    "-",
    "!",
    "<![CDATA[",
    "]]>",
    "<tool name=a>",
    "<tool name=b>",
    "</tool>",
    "<context name=c>",
    "</context>",
    "toolname",
    "<TOOL ",
    "<script>",
    "</script>",
    "<textarea>",
    "</textarea>",
    "<svg>",
    "</svg>",
    "<p title=\"",
    "\">",
    "x",
    " ",
    "<form id=f>",
    "<FORM toolname=t tooldescription=d>",
    "</form>",
    "<h2>Find</h2>",
    "<label>Query <input name=q></label>",
    "<button>Go</button>",
    "<iframe srcdoc=\"&lt;tool name=b>\">",
    "</iframe>",
    "<noscript>",
    "</noscript>",
    "<script type=text/template>",
    // What decides where a page goes quiet and whether the rest is copied: the script placed,
    // meta tags, strict mode's `<select>` and `<frameset>`, text-type tags, tags with `>` in a
    // quoted value, and multi-byte text.
    "<head>",
    "<body>",
    "<meta http-equiv=Content-Security-Policy content=\"script-src 'self'\">",
    "<meta charset=utf-8>",
    "<select name=s>",
    "</select>",
    "<frameset>",
    "<title>t</title>",
    "<style>p>a{}</style>",
    "<p class='a>b'>",
    "<form a=\">\">",
    "<a href=x>l</a>",
    "é",
    "<input name=q value=\">\">",
];

fn page() -> impl Strategy<Value = String> {
    let start = prop::sample::select(
        &["", "<head>", "<body>", "<!DOCTYPE html><html><head><title>x</title></head><body>"][..],
    );
    (start, prop::collection::vec(prop::sample::select(&PIECES[..]), 0..24))
        .prop_map(|(start, pieces)| format!("{start}{}", pieces.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_whole_page_is_rewritten_exactly_as_a_streamed_one(input in page()) {
        let allowed = policy(&["a"], &[], rules(Vec::new(), false));
        same_both_ways(&input, &allowed)?;
    }

    #[test]
    fn with_form_rules_and_auto_mode_too(input in page()) {
        let allowed = policy(&["a", "t"], &["c"], rules(vec![rule("form#f", "find", "Find")], true));
        same_both_ways(&input, &allowed)?;
    }
}

fn same_both_ways(input: &str, allowed: &PagePolicy) -> Result<(), TestCaseError> {
    let streamed = run(input.as_bytes(), allowed, 5);
    let whole = run_whole(input.as_bytes(), allowed);
    match (streamed, whole) {
        (Ok(streamed), Ok(whole)) => {
            prop_assert_eq!(whole.0, streamed.0);
            prop_assert_eq!(whole.1, streamed.1);
        }
        (Err(streamed), Err(whole)) => prop_assert_eq!(whole.to_string(), streamed.to_string()),
        (streamed, whole) => prop_assert!(false, "only one failed: {:?} / {:?}", streamed.err(), whole.err()),
    }
    Ok(())
}

/// Filters `input` streamed and whole; both must agree. Returns the output and how many bytes
/// the whole rewrite copied unparsed.
fn both_ways(input: &str, allowed: &PagePolicy) -> (String, usize) {
    let (streamed, streamed_summary) = run(input.as_bytes(), allowed, 5).expect("streamed");
    COPIED.set(0);
    let (whole, whole_summary) = run_whole(input.as_bytes(), allowed).expect("whole");
    assert_eq!(whole, streamed, "{input:.300}");
    let whole = String::from_utf8_lossy(&whole).into_owned();
    assert_eq!(whole_summary, streamed_summary);
    (whole, COPIED.get())
}

/// The length of `page` from the end of the first `marker` on.
fn after(page: &str, marker: &str) -> usize {
    page.len() - page.find(marker).map_or(page.len(), |at| at + marker.len())
}

#[test]
fn the_rest_of_a_quiet_page_is_copied() {
    let allowed = policy(&["a", "find"], &[], rules(vec![rule("form#f", "find", "Find")], true));
    let tables = "<table><tr><td>1</td><td><a href=/x>x</a></td></tr></table>".repeat(40);
    let head = "<!DOCTYPE html><html><head><meta charset=utf-8><title>t</title></head><body>";
    // Nothing after the head's last meta tag needs a handler.
    let page = format!("{head}<p>{tables}</p></body></html>");
    let (out, copied) = both_ways(&page, &allowed);
    assert_eq!(copied, after(&page, "<meta charset=utf-8>"));
    assert!(out.contains(SCRIPT));
    // Nor anything after the last control of the last form.
    let tools = "<tool name=a>A</tool><tool name=b>B</tool><form id=f><input name=q></form>";
    let page = format!("{head}{tools}{tables}</body></html>");
    let (out, copied) = both_ways(&page, &allowed);
    assert_eq!(copied, after(&page, "<input name=q>"));
    assert!(
        out.contains("<tool name=a>") && !out.contains("name=b") && out.contains(r#"toolname="find""#),
        "{out:.400}"
    );
}

#[test]
fn a_page_is_copied_only_once_nothing_is_open() {
    let allowed = policy(&["a"], &[], rules(Vec::new(), true));
    let head = "<head></head><body>";
    let text = "<p>words</p>".repeat(200);
    // A refused tool's content is removed up to its end, an auto form is held back until its
    // end, a data script is scanned to its end: nothing is copied from inside any of them.
    for open in ["<tool name=b><p>", "<form><label>Name", "<script type=text/template>toolname"] {
        let page = format!("{head}{open}{text}</div>{text}");
        let (out, copied) = both_ways(&page, &allowed);
        assert_eq!(copied, 0, "{open}");
        // The form comes out whole at the end, the others' content not at all.
        assert_eq!(out.contains("words"), open.starts_with("<form"), "{open}: {out:.300}");
    }
    // A fragment gets the script at its end: nothing is copied before that.
    let (_, copied) = both_ways(&format!("<tool name=a>A</tool>{text}"), &allowed);
    assert_eq!(copied, 0);
    // Once the element has ended, a later cut (further apart each time) copies the rest.
    let page = format!("{head}<tool name=b>{text}</tool>{text}");
    let (out, copied) = both_ways(&page, &allowed);
    assert!(copied > 0 && copied < after(&page, "</tool>"), "{copied}");
    assert_eq!(out.matches("words").count(), 200);
}

#[test]
fn the_copied_rest_keeps_its_own_bytes_and_is_not_held_in_lol_html() {
    let allowed = policy(&["a"], &[], rules(Vec::new(), false));
    // Text a text handler would have decoded and encoded again (a byte invalid in UTF-8 becomes
    // U+FFFD) keeps its bytes once copied.
    let page = b"<head></head><tool name=a></tool><p>x</p><script>\xff</script>";
    let (streamed, _) = run(page, &allowed, 5).expect("streamed");
    let (whole, _) = run_whole(page, &allowed).expect("whole");
    assert!(streamed.ends_with("<script>\u{FFFD}</script>".as_bytes()));
    assert!(whole.ends_with(b"<script>\xff</script>"));
    // A token larger than lol_html's memory limit fails the streamed page; copied, it passes.
    let page = format!("<head></head><tool name=a></tool><p title=\"{}\">x</p>", "y".repeat(300 * 1024));
    assert!(matches!(run(page.as_bytes(), &allowed, 1024), Err(RewriteError::MemoryLimitExceeded)));
    let (whole, _) = run_whole(page.as_bytes(), &allowed).expect("whole");
    assert!(whole.ends_with(b"yyy\">x</p>"));
}

#[test]
fn a_comment_with_markup_is_still_removed_from_a_whole_page() {
    let allowed = policy(&["a"], &[], rules(Vec::new(), false));
    let (out, summary) =
        run_whole(b"<p>x</p><!-- <tool name=b></tool> --><tool name=a></tool>", &allowed).expect("rewritten");
    let out = String::from_utf8_lossy(&out);
    assert!(!out.contains("name=b") && out.contains("<tool name=a>"), "{out}");
    assert_eq!(summary.leaks_removed, 1);
}

#[test]
fn text_inside_two_nested_scanned_elements_is_scanned_once() {
    // In foreign content `<noscript>` nests inside an SVG `<script>`: its text matches both, and
    // is still emitted once (the property test above found the doubled `</`).
    let allowed = policy(&["a"], &[], rules(Vec::new(), false));
    for input in ["<svg><script><noscript></", "<svg><script>a<noscript>b</noscript>c</script></svg>"] {
        let (streamed, _) = run(input.as_bytes(), &allowed, 5).expect("streamed");
        let (whole, _) = run_whole(input.as_bytes(), &allowed).expect("whole");
        let streamed = String::from_utf8_lossy(&streamed).into_owned();
        assert_eq!(streamed, String::from_utf8_lossy(&whole), "{input}");
        assert_eq!(streamed.matches("</").count(), input.matches("</").count() + 1, "{streamed}");
    }
}
