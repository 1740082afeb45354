//! Unit tests for the filtering rewriter: the element filter's edge cases (self-closing and
//! unclosed tags), leaks, form rules, auto mode, escaping and the fail-closed paths. Every case
//! runs in several chunkings and must give the same bytes.

use std::collections::HashSet;

use super::*;

/// Allows exactly the listed names.
struct Allow {
    tools: HashSet<&'static str>,
    contexts: HashSet<&'static str>,
}

impl Visibility for Allow {
    fn tool(&self, name: &str, _kind: ToolKind) -> bool {
        self.tools.contains(name)
    }
    fn context(&self, name: &str) -> bool {
        self.contexts.contains(name)
    }
    fn page_tools_on(&self) -> bool {
        true
    }
}

fn policy(tools: &[&'static str], contexts: &[&'static str], rules: FormRules) -> PagePolicy {
    let visibility =
        Allow { tools: tools.iter().copied().collect(), contexts: contexts.iter().copied().collect() };
    PagePolicy { visibility: Arc::new(visibility), forms: Arc::new(rules) }
}

fn settings() -> PageSettings {
    PageSettings {
        script_src: "/r.js".to_owned(),
        integrity: "sha384-T".to_owned(),
        nonce: "n".to_owned(),
        script_url: "https://a.example/r.js".to_owned(),
        declared_charset: Some("utf-8".to_owned()),
        memory_limit: 256 * 1024,
        inject: true,
    }
}

const SCRIPT: &str = r#"<script src="/r.js" integrity="sha384-T" nonce="n"></script>"#;

fn run(input: &[u8], page: &PagePolicy, size: usize) -> Result<(Vec<u8>, PageSummary), RewriteError> {
    let mut rewriter = PageRewriter::filtered(settings(), page.clone());
    let mut out = Vec::new();
    for chunk in input.chunks(size.max(1)) {
        rewriter.write(chunk, &mut out)?;
    }
    let summary = rewriter.end(&mut out)?;
    Ok((out, summary))
}

fn run_whole(input: &[u8], page: &PagePolicy) -> Result<(Vec<u8>, PageSummary), RewriteError> {
    let mut out = Vec::new();
    let summary = PageRewriter::filtered(settings(), page.clone()).rewrite_whole(input, &mut out)?;
    Ok((out, summary))
}

/// Filters `input` in one chunk, byte by byte, in 7- and 1024-byte chunks, and as a whole page
/// (`rewrite_whole`, which may leave out the comment scan); all must agree. The injected script
/// (fragments get it at the end) is cut off to keep expectations short.
fn filter(input: &str, page: &PagePolicy) -> (String, PageSummary) {
    let mut results = Vec::new();
    for size in [input.len(), 1, 7, 1024] {
        match run(input.as_bytes(), page, size) {
            Ok(result) => results.push(result),
            Err(error) => panic!("chunk size {size}: {error}"),
        }
    }
    match run_whole(input.as_bytes(), page) {
        Ok(result) => results.push(result),
        Err(error) => panic!("whole page: {error}"),
    }
    for (index, result) in results.iter().enumerate().skip(1) {
        assert_eq!(
            String::from_utf8_lossy(&result.0),
            String::from_utf8_lossy(&results[0].0),
            "chunking {index} differs"
        );
        assert_eq!(result.1, results[0].1, "summary of chunking {index} differs");
    }
    let (out, summary) = results.swap_remove(0);
    let text = String::from_utf8_lossy(&out).into_owned();
    (text.strip_suffix(SCRIPT).map(str::to_owned).unwrap_or(text), summary)
}

fn rules(specs: Vec<FormRuleSpec>, auto: bool) -> FormRules {
    FormRules::new(specs, auto).unwrap_or_else(|error| panic!("{error}"))
}

fn rule(selector: &str, name: &str, description: &str) -> FormRuleSpec {
    FormRuleSpec {
        selector: selector.to_owned(),
        name: name.to_owned(),
        description: description.to_owned(),
        params: Vec::new(),
        param_schemas: Vec::new(),
        autosubmit: false,
        method: None,
        action: Vec::new(),
    }
}

#[test]
fn refused_tools_and_contexts_go_with_their_content() {
    let page = policy(&["add_task"], &["board"], FormRules::default());
    let input = r#"<tool name="add_task">A</tool><tool name="delete_task"><p>secret</p></tool><context name="board">B</context><CONTEXT name=salaries>C</CONTEXT><tool>no name</tool><tool name="bad name">x</tool><tool name="a&#95;b">y</tool>"#;
    let (out, summary) = filter(input, &page);
    assert_eq!(out, r#"<tool name="add_task">A</tool><context name="board">B</context>"#);
    assert_eq!((summary.tools_removed, summary.contexts_removed), (4, 1));
}

#[test]
fn references_in_names_are_decoded_before_deciding() {
    let page = policy(&["a_b"], &[], FormRules::default());
    let (out, _) = filter(r#"<tool name="a&#95;b">y</tool>"#, &page);
    assert_eq!(out, r#"<tool name="a&#95;b">y</tool>"#);
}

#[test]
fn self_closing_tools_lose_only_their_start_tag() {
    let page = policy(&[], &[], FormRules::default());
    for input in [
        r#"<div><tool name=x/><p>sibling</p></div><p>after</p>"#,
        r#"<div><tool name="x"/><p>sibling</p></div><p>after</p>"#,
        r#"<div><tool name="x" /><p>sibling</p></div><p>after</p>"#,
    ] {
        let (out, summary) = filter(input, &page);
        assert_eq!(out, "<div><p>sibling</p></div><p>after</p>", "{input}");
        assert_eq!(summary.tools_removed, 1);
    }
    // In SVG the slash is honoured: the element is complete by itself.
    let (out, _) = filter("<svg><tool name=x /><g></g></svg>", &page);
    assert_eq!(out, "<svg><g></g></svg>");
    // A quoted value ending in a slash is not a self-closing tag: the content goes.
    let (out, _) = filter(r#"<div><tool name="x/">secret</tool>kept</div>"#, &page);
    assert_eq!(out, "<div>kept</div>");
}

#[test]
fn an_unclosed_tool_does_not_take_its_parents_siblings() {
    let page = policy(&["ok"], &[], FormRules::default());
    let input = "<section><div><tool name=secret><b>hidden</div><p>after</p></section><p>end</p>";
    let (out, summary) = filter(input, &page);
    assert_eq!(out, "<section><div></div><p>after</p></section><p>end</p>");
    assert_eq!(summary.tools_removed, 1);
    // Nested refused tools and a visible one after them.
    let input = "<div><tool name=a><tool name=b>x</tool>y</tool><tool name=ok>z</tool></div>";
    let (out, _) = filter(input, &page);
    assert_eq!(out, "<div><tool name=ok>z</tool></div>");
}

#[test]
fn declarative_forms_lose_their_tool_attributes_when_refused() {
    let page = policy(&["search"], &[], FormRules::default());
    let input = r#"<form toolname="search" tooldescription="Find"></form><form toolname="delete" tooldescription="Delete all" toolautosubmit action="/d"></form><form toolname="bad name"></form>"#;
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        r#"<form toolname="search" tooldescription="Find"></form><form action="/d"></form><form></form>"#
    );
    assert_eq!(summary.tools_removed, 2);
}

#[test]
fn leaks_are_removed_whatever_the_visibility() {
    let page = policy(&["a"], &["c"], FormRules::default());
    let input = concat!(
        "<!-- <tool name=a> --><!-- plain -->",
        "<noscript><TOOL name=a>x</TOOL></noscript><noscript><p>fine</p></noscript>",
        r#"<iframe srcdoc="&lt;context name=c&gt;"></iframe><iframe srcdoc="&lt;p&gt;ok"></iframe>"#,
        r#"<script type="text/x-template"><form toolname="a"></form></script>"#,
        r#"<script type="text/template">{{ name }}</script>"#,
        r#"<script>var t = "<tool name=a>";</script>"#,
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        concat!(
            "<!-- plain --><noscript></noscript><noscript><p>fine</p></noscript>",
            r#"<iframe></iframe><iframe srcdoc="&lt;p&gt;ok"></iframe>"#,
            r#"<script type="text/x-template"></script><script type="text/template">{{ name }}</script>"#,
            r#"<script>var t = "<tool name=a>";</script>"#,
        )
    );
    assert_eq!(summary.leaks_removed, 4);
}

#[test]
fn rules_turn_forms_into_tools_and_override_the_page() {
    let mut search = rule("form#search", "search_orders", "Search orders by \"customer\"");
    search.params = vec![("q".to_owned(), "Customer <name>".to_owned())];
    search.autosubmit = true;
    let specs = vec![search, rule("form.admin", "admin", "Admin"), rule("form", "catch_all", "Any")];
    let page = policy(&["search_orders", "catch_all"], &[], rules(specs, false));
    let input = concat!(
        r#"<form id="search" toolname="page_name" data-toolgate-source="form"><input name="q"><input name="other"></form>"#,
        r#"<form class="admin"><input name="q"></form><form id=x><input name=q></form>"#,
        r#"<div data-toolgate-source="x">d</div>"#,
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        concat!(
            r#"<form id="search" toolname="search_orders" tooldescription="Search orders by &quot;customer&quot;" toolautosubmit="" data-toolgate-source="form">"#,
            r#"<input name="q" toolparamdescription="Customer &lt;name&gt;"><input name="other"></form>"#,
            r#"<form class="admin"><input name="q"></form>"#,
            r#"<form id=x toolname="catch_all" tooldescription="Any" data-toolgate-source="form"><input name=q></form>"#,
            // Only forms carry a meaningful marker; elsewhere the runtime never reads it.
            r#"<div data-toolgate-source="x">d</div>"#,
        )
    );
    assert_eq!((summary.forms_tooled, summary.tools_removed), (2, 1));
}

#[test]
fn auto_mode_derives_unique_names_from_the_content() {
    let page = policy(&["search_orders", "search_orders_2", "login"], &[], rules(Vec::new(), true));
    let input = concat!(
        "<h2>Orders</h2>",
        "<form><fieldset><legend>Search <b>orders</b></legend><label>Customer</label><input name=c>",
        "<button type=button>Reset</button><button>Find</button></fieldset></form>",
        "<form><legend>Search orders</legend></form>",
        r#"<form id="login"><input type="submit" value="Sign in"></form>"#,
        "<form aria-label=\"Delete everything\"></form>",
        "<form toolname=search_orders></form>",
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        concat!(
            "<h2>Orders</h2>",
            r#"<form toolname="search_orders" tooldescription="Search orders. Submit button: Find. Fields: Customer" data-toolgate-source="form">"#,
            "<fieldset><legend>Search <b>orders</b></legend><label>Customer</label><input name=c>",
            "<button type=button>Reset</button><button>Find</button></fieldset></form>",
            r#"<form toolname="search_orders_2" tooldescription="Search orders" data-toolgate-source="form"><legend>Search orders</legend></form>"#,
            r#"<form id="login" toolname="login" tooldescription="Orders. Submit button: Sign in" data-toolgate-source="form"><input type="submit" value="Sign in"></form>"#,
            "<form aria-label=\"Delete everything\"></form>",
            "<form toolname=search_orders></form>",
        )
    );
    assert_eq!((summary.forms_tooled, summary.tools_removed), (3, 1));
}

#[test]
fn generated_attributes_are_inert() {
    let everyone = AllowAll;
    let page = PagePolicy { visibility: Arc::new(everyone), forms: Arc::new(rules(Vec::new(), true)) };
    let input = concat!(
        r#"<form id='"><script>alert(1)</script>' name="&quot; onmouseover=alert(2) x=&quot;">"#,
        r#"<legend>&lt;img src=x onerror=alert(3)&gt; "quoted" 'single' &amp;</legend>"#,
        "<label><![CDATA[x]]>\"><svg onload=alert(4)></label></form>",
    );
    let (out, _) = filter(input, &page);
    let start_tag_end = out.find("<legend>").unwrap_or(out.len());
    let start_tag = &out[..start_tag_end];
    assert!(start_tag.starts_with(r#"<form id='"><script>alert(1)</script>'"#), "{start_tag}");
    assert!(start_tag.contains(r#" toolname="script_alert_1_script""#), "{start_tag}");
    assert!(
        start_tag.contains(r#"tooldescription="&lt;img src=x onerror=alert(3)&gt; &quot;quoted&quot; &#39;single&#39; &amp;. Fields: "#),
        "{start_tag}"
    );
    // Only the page's own quotes delimit attributes: three of ours, none from the page text.
    let generated = &start_tag[start_tag.find(" toolname=").unwrap_or(0)..];
    assert_eq!(generated.matches('"').count(), 6, "{generated}");
    assert!(!generated.contains('<') && !generated.contains('\''), "{generated}");
}

struct AllowAll;

impl Visibility for AllowAll {
    fn tool(&self, _: &str, _: ToolKind) -> bool {
        true
    }
    fn context(&self, _: &str) -> bool {
        true
    }
    fn page_tools_on(&self) -> bool {
        true
    }
}

#[test]
fn an_oversized_form_falls_back_to_its_start_tag_and_heading() {
    let page = PagePolicy { visibility: Arc::new(AllowAll), forms: Arc::new(rules(Vec::new(), true)) };
    let filler = "<p>row</p>".repeat(forms::HOLD_LIMIT / 10 + 1);
    let input = format!("<h1>Big</h1><form><legend>Ignored</legend>{filler}</form>");
    let (out, summary) = filter(&input, &page);
    let expected = format!(
        r#"<h1>Big</h1><form toolname="big" tooldescription="Big" data-toolgate-source="form"><legend>Ignored</legend>{filler}</form>"#
    );
    assert!(out == expected, "oversized form output differs");
    assert_eq!(summary.forms_tooled, 1);
}

#[test]
fn a_form_left_open_at_the_end_is_released() {
    let page = PagePolicy { visibility: Arc::new(AllowAll), forms: Arc::new(rules(Vec::new(), true)) };
    let (out, _) = filter("<div><form id=f><label>A</label></div><p>x", &page);
    assert_eq!(
        out,
        r#"<div><form id=f toolname="f" tooldescription="f. Fields: A" data-toolgate-source="form"><label>A</label></div><p>x"#
    );
}

#[test]
fn forms_inside_removed_tools_are_not_named() {
    let page = PagePolicy {
        visibility: Arc::new(Allow { tools: HashSet::new(), contexts: HashSet::new() }),
        forms: Arc::new(rules(Vec::new(), true)),
    };
    let (out, summary) =
        filter("<tool name=t><form id=f><label>secret</label></form></tool><form id=g></form>", &page);
    assert_eq!(out, "<form id=g></form>");
    assert_eq!((summary.tools_removed, summary.forms_tooled), (2, 0));
}

#[test]
fn utf16_is_refused_when_filtering() {
    let page = policy(&[], &[], FormRules::default());
    let mut rewriter = PageRewriter::filtered(settings(), page.clone());
    let mut out = Vec::new();
    let result = rewriter.write(b"\xFF\xFE<\0t\0o\0o\0l\0>\0", &mut out);
    assert!(matches!(result, Err(RewriteError::UnsupportedEncoding)), "{result:?}");
    assert!(out.is_empty());

    let declared = PageSettings { declared_charset: Some("utf-16le".to_owned()), ..settings() };
    let rewriter = PageRewriter::filtered(declared, page);
    assert!(matches!(rewriter.end(&mut out), Err(RewriteError::UnsupportedEncoding)));
    assert!(out.is_empty());
}

#[test]
fn escape_bytes_are_refused_unless_a_header_or_bom_fixed_the_encoding() {
    // A browser following <meta charset="iso-2022-jp"> reads `ESC$B="ESC(B` as one character, so
    // the <tool> the filter saw inside an attribute value becomes a real element.
    let page = policy(&[], &[], FormRules::default());
    let input: &[u8] = b"<meta charset=\"iso-2022-jp\"><p title\x1b$B=\"\x1b(B><tool name=secret></tool>\">";
    for size in [input.len(), 1, 7] {
        let undeclared = PageSettings { declared_charset: None, ..settings() };
        let mut rewriter = PageRewriter::filtered(undeclared, page.clone());
        let mut out = Vec::new();
        let result = input.chunks(size).try_for_each(|chunk| rewriter.write(chunk, &mut out));
        assert!(matches!(result, Err(RewriteError::UnsupportedEncoding)), "chunk size {size}: {result:?}");
        assert!(!out.windows(5).any(|window| window == b"<tool"), "nothing after the escape leaves");
    }
    let declared = PageSettings { declared_charset: Some("utf-8".to_owned()), ..settings() };
    let mut rewriter = PageRewriter::filtered(declared, page.clone());
    let mut out = Vec::new();
    rewriter.write(b"<pre>\x1b[31mred\x1b[0m</pre>", &mut out).expect("utf-8 fixed by the header");
    assert!(rewriter.end(&mut out).is_ok());
    assert!(out.starts_with(b"<pre>\x1b[31mred\x1b[0m</pre>"), "{out:?}");
}

#[test]
fn a_page_over_the_memory_limit_is_refused_and_nothing_unfiltered_leaks() {
    let page = policy(&[], &[], FormRules::default());
    let mut input = b"<body><p>before</p><tool name=\"secret\" description=\"".to_vec();
    input.extend(std::iter::repeat_n(b'A', 512 * 1024));
    input.extend_from_slice(b"\">hidden</tool><p>after</p>");
    let mut rewriter = PageRewriter::filtered(PageSettings { memory_limit: 32 * 1024, ..settings() }, page);
    let mut out = Vec::new();
    let failure = input.chunks(1024).find_map(|chunk| rewriter.write(chunk, &mut out).err());
    assert!(matches!(failure, Some(RewriteError::MemoryLimitExceeded)), "{failure:?}");
    let emitted = String::from_utf8_lossy(&out);
    assert!(
        !emitted.contains("secret") && !emitted.contains("hidden") && !emitted.contains("after"),
        "{emitted}"
    );
}

#[test]
fn a_page_without_the_script_is_filtered_all_the_same() {
    let page = policy(&["shown"], &[], rules(Vec::new(), false));
    let input = r#"<html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self'"></head><body><tool name="shown"></tool><tool name="secret"></tool></body></html>"#;
    let mut rewriter = PageRewriter::filtered(PageSettings { inject: false, ..settings() }, page);
    let mut out = Vec::new();
    rewriter.write(input.as_bytes(), &mut out).expect("write");
    let summary = rewriter.end(&mut out).expect("end");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(summary.outcome, Outcome::NotInjected);
    assert_eq!(summary.tools_removed, 1);
    assert!(!text.contains("secret") && text.contains(r#"<tool name="shown">"#), "{text}");
    assert!(!text.contains("<script"), "no script: {text}");
    assert!(text.contains(r#"content="script-src 'self'""#), "the meta CSP is left as written: {text}");
}

#[test]
fn rule_schema_fragments_go_on_their_controls_and_only_the_gateways_stay() {
    let mut spec = rule("form#employee", "add_employee", "Create an employee");
    spec.params.push(("name".to_owned(), "Full name".to_owned()));
    spec.param_schemas
        .push(("hired".to_owned(), r#"{"format":"date","examples":["2026-04-01"]}"#.to_owned()));
    let page = policy(&["add_employee"], &[], rules(vec![spec], false));
    let input = r#"<form id="employee"><input name="name" data-toolgate-schema='{"maxLength":1}'><input name="hired"></form>"#;
    let (out, _) = filter(input, &page);
    assert!(
        out.contains(r#"<input name="hired" data-toolgate-schema="{&quot;format&quot;:&quot;date&quot;,&quot;examples&quot;:[&quot;2026-04-01&quot;]}">"#),
        "{out}"
    );
    assert!(
        out.contains(r#"<input name="name" toolparamdescription="Full name">"#),
        "the page's own fragment is gone: {out}"
    );
}

#[test]
fn a_rule_with_a_method_applies_only_to_forms_with_that_method() {
    let mut post_only = rule("form.employee", "add_employee", "Create an employee");
    post_only.method = Some("post".to_owned());
    let page = policy(&["add_employee"], &[], rules(vec![post_only], false));
    let input = r#"<form class="employee" method="get" action="/search"></form><form class="employee" method="POST"></form>"#;
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        r#"<form class="employee" method="get" action="/search"></form><form class="employee" method="POST" toolname="add_employee" tooldescription="Create an employee" data-toolgate-source="form"></form>"#
    );
    assert_eq!(summary.forms_tooled, 1);
    let mut bad = rule("form", "n", "d");
    bad.method = Some("PUT".to_owned());
    assert!(FormRules::new(vec![bad], false).is_err(), "only GET or POST");
}

#[test]
fn a_rule_with_an_action_applies_only_to_forms_that_submit_there() {
    let mut add_only = rule("form.employee", "add_employee", "Create an employee");
    add_only.action = vec!["/staff/*/add/".to_owned()];
    let scoped = rules(vec![add_only.clone()], false);
    let input = r#"<form class="employee" method="post" action="../1/change/"></form><form class="employee" method="post"></form>"#;
    // On the add page the action-less form submits to the add page itself; the other one
    // resolves to /staff/employee/1/change/.
    let page = policy(&["add_employee"], &[], scoped.clone().at_page("/staff/employee/add/"));
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        r#"<form class="employee" method="post" action="../1/change/"></form><form class="employee" method="post" toolname="add_employee" tooldescription="Create an employee" data-toolgate-source="form"></form>"#
    );
    assert_eq!(summary.forms_tooled, 1);
    // On a change page neither form submits to an add URL.
    let page = policy(&["add_employee"], &[], scoped.at_page("/staff/employee/1/change/"));
    assert_eq!(filter(input, &page).1.forms_tooled, 0);
    let mut bad = add_only;
    bad.action = vec!["staff/*".to_owned()];
    let error = FormRules::new(vec![bad], false).expect_err("not a path").to_string();
    assert!(error.contains("action path \"staff/*\" must start with /"), "{error}");
}

mod bound_names;
mod whole_pages;
