//! `rewrite_whole` against the streaming rewriter on generated pages: leaving out the handlers
//! `survey` says the page cannot need (the comment scan where `leaks::comments` says no comment
//! can hold markup; the tool, context, form, `srcdoc` and raw-text handlers where their tags or
//! markers are absent) must never change a byte. The pages are built from the pieces that
//! decide those answers (comment openings and closings of every kind, markers, raw-text
//! elements, forms with labels and controls, iframes, attributes, foreign content), so most of
//! them put a marker next to a comment boundary and many leave one handler group out.

use proptest::prelude::*;

use super::*;

const PIECES: [&str; 41] = [
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
];

fn page() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&PIECES[..]), 0..24).prop_map(|pieces| pieces.concat())
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
            prop_assert_eq!(String::from_utf8_lossy(&whole.0), String::from_utf8_lossy(&streamed.0));
            prop_assert_eq!(whole.1, streamed.1);
        }
        (Err(streamed), Err(whole)) => prop_assert_eq!(whole.to_string(), streamed.to_string()),
        (streamed, whole) => prop_assert!(false, "only one failed: {:?} / {:?}", streamed.err(), whole.err()),
    }
    Ok(())
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
