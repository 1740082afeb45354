//! Unit tests for the leak scanner: markers, chunking independence, limits, `srcdoc` decoding.

use super::scan::HOLD_LIMIT;
use super::*;

/// Feeds `text` in pieces of `size` bytes (at character boundaries) and joins what is emitted.
fn scan(text: &str, size: usize) -> (String, bool) {
    let mut scanner = RawTextScan::new();
    let mut emitted = String::new();
    let mut leaked = false;
    let mut rest = text;
    loop {
        let mut cut = size.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        let verdict = scanner.feed(piece, false);
        emitted.push_str(&verdict.emit);
        leaked |= verdict.leak_found;
        rest = tail;
        if rest.is_empty() {
            break;
        }
    }
    let verdict = scanner.feed("", true);
    emitted.push_str(&verdict.emit);
    (emitted, leaked || verdict.leak_found)
}

#[test]
fn finds_markers_case_insensitively() {
    assert_eq!(find_marker(b"a <TOOL name=x>", 0, false), Some(2));
    assert_eq!(find_marker(b"<Context>", 0, false), Some(0));
    assert_eq!(find_marker(b"x ToolName=y", 0, false), Some(2));
    assert_eq!(find_marker(b"<toolbar> <contexts>", 0, true), None);
    assert_eq!(find_marker(b"<tool", 0, false), None, "undecided until the next byte");
    assert_eq!(find_marker(b"<tool", 0, true), Some(0));
    assert_eq!(find_marker(b"<tool/>", 1, true), None);
}

#[test]
fn clean_text_comes_out_unchanged_however_it_is_chunked() {
    let text = "<p>Hello, wörld — <b>no tools</b> here</p>".repeat(50);
    for size in [1, 2, 3, 7, 64, 5000] {
        assert_eq!(scan(&text, size), (text.clone(), false), "size {size}");
    }
}

#[test]
fn a_marker_removes_all_content_however_it_is_chunked() {
    let text = "<div>intro</div><tool name=secret>x</tool><p>more</p>";
    for size in [1, 2, 4, 9, 1000] {
        assert_eq!(scan(text, size), (String::new(), true), "size {size}");
    }
    assert_eq!(scan("{{ toolName }}", 1), (String::new(), true));
}

#[test]
fn beyond_the_hold_limit_content_is_cut_at_the_marker() {
    let prefix = "é".repeat(HOLD_LIMIT); // two bytes each: well past the limit
    let text = format!("{prefix}<context name=c>secret</context>");
    for size in [1, 13, 1024, 200_000] {
        let (emitted, leaked) = scan(&text, size);
        assert!(leaked, "size {size}");
        assert_eq!(emitted, prefix, "size {size}");
    }
    let clean = "x".repeat(3 * HOLD_LIMIT);
    assert_eq!(scan(&clean, 1000), (clean.clone(), false));
}

#[test]
fn srcdoc_is_decoded_before_it_is_checked() {
    assert!(srcdoc_has_markup("<tool name=a>"));
    assert!(srcdoc_has_markup("&lt;tool name=a&gt;"));
    assert!(srcdoc_has_markup("&LT;context>"));
    assert!(srcdoc_has_markup("&#60;tool>"));
    assert!(srcdoc_has_markup("&#x3C;tool>"));
    assert!(srcdoc_has_markup("&lttool name=a>"));
    assert!(srcdoc_has_markup("<form tool&#110;ame=x>"));
    // A document nested in the srcdoc document.
    assert!(srcdoc_has_markup("<iframe srcdoc='&amp;lt;tool name=a>'></iframe>"));
    // References browsers decode that once hid the marker: other named references, and
    // numeric ones with many leading zeros.
    assert!(srcdoc_has_markup("&lt;tool&Tab;name=a&gt;"));
    assert!(srcdoc_has_markup("&lt;context&NewLine;name=c&gt;"));
    assert!(srcdoc_has_markup("&lt;tool&sol;&gt;"));
    assert!(srcdoc_has_markup("&#0000000060;tool name=a>"));
    assert!(srcdoc_has_markup("&#x000000003c;tool name=a>"));
    assert!(!srcdoc_has_markup("<p>&lt;toolbar&gt; &amp; friends</p>"));
    assert!(!srcdoc_has_markup("&#xZZ; &#; &"));
}

#[test]
fn recognizes_javascript_types() {
    for kind in [None, Some(""), Some(" text/javascript "), Some("MODULE"), Some("application/x-javascript")]
    {
        assert!(is_javascript(kind), "{kind:?}");
    }
    for kind in ["text/template", "text/html", "text/x-template", "application/json", "text/javascript; x=y"]
    {
        assert!(!is_javascript(Some(kind)), "{kind}");
    }
}

#[test]
fn every_raw_text_selector_list_parses_and_names_its_elements() {
    for present in 0..16 {
        // An empty list is never asked for: without raw-text elements only the text handler's.
        let choices: &[bool] = if present == 0 { &[true] } else { &[false, true] };
        for &with_script in choices {
            let selector = raw_text_selector(present, with_script);
            let names: Vec<&str> = RAW_TEXT
                .iter()
                .enumerate()
                .filter(|(bit, _)| present & (1 << bit) != 0)
                .map(|(_, (_, name))| *name)
                .collect();
            // The list goes through lol_html: a page of every element shows which it matched.
            let mut matched = Vec::new();
            let page =
                "<script></script><noscript></noscript><noembed></noembed><noframes></noframes><xmp></xmp>";
            let mut rewriter = lol_html::HtmlRewriter::new(
                lol_html::Settings::new().append_element_content_handler((
                    selector,
                    lol_html::ElementContentHandlers::default().element(
                        |element: &mut lol_html::html_content::Element<'_, '_>| {
                            matched.push(element.tag_name());
                            Ok(())
                        },
                    ),
                )),
                |_: &[u8]| {},
            );
            rewriter.write(page.as_bytes()).expect("rewritten");
            rewriter.end().expect("ended");
            let expected: Vec<String> =
                with_script.then_some("script").into_iter().chain(names).map(str::to_owned).collect();
            assert_eq!(matched, expected, "present {present:#06b}, script {with_script}");
        }
    }
}
