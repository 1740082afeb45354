//! `rewrite_whole` against the streaming rewriter on generated pages: leaving out the comment
//! scan where `leaks::comments` says no comment can hold markup must never change a byte. The
//! pages are built from the pieces that decide that answer (comment openings and closings of
//! every kind, markers, raw-text elements, attributes, foreign content), so most of them put a
//! marker next to a comment boundary.

use proptest::prelude::*;

use super::*;

const PIECES: [&str; 30] = [
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
];

fn page() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(&PIECES[..]), 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_whole_page_is_rewritten_exactly_as_a_streamed_one(input in page()) {
        let allowed = policy(&["a"], &[], rules(Vec::new(), false));
        let streamed = run(input.as_bytes(), &allowed, 5);
        let whole = run_whole(input.as_bytes(), &allowed);
        match (streamed, whole) {
            (Ok(streamed), Ok(whole)) => {
                prop_assert_eq!(String::from_utf8_lossy(&whole.0), String::from_utf8_lossy(&streamed.0));
                prop_assert_eq!(whole.1, streamed.1);
            }
            (Err(streamed), Err(whole)) => prop_assert_eq!(whole.to_string(), streamed.to_string()),
            (streamed, whole) => prop_assert!(false, "only one failed: {:?} / {:?}", streamed.err(), whole.err()),
        }
    }
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
