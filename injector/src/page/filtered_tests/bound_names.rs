//! Unit tests for names a framework binds (`bindings.rs`): every covered spelling keeps its
//! `<tool>`, `<context>` or `<form>` for the runtime, while static names are still decided in
//! the stream, refused or replaced tool attributes lose their bindings too, and with page tools
//! off nothing is kept for its binding.

use super::*;

/// Refuses every name, so anything that survives was kept for its binding alone.
fn refuse_all(auto: bool) -> PagePolicy {
    policy(&[], &[], rules(Vec::new(), auto))
}

#[test]
fn every_binding_spelling_keeps_the_element_and_its_content() {
    let page = refuse_all(false);
    for attribute in [":name", "v-bind:name", "x-bind:name", ":name.attr", "[name]", "[attr.name]"] {
        for tag in ["tool", "context"] {
            let input = format!(
                r#"<div><{tag} {attribute}="item.name">{{{{ item.text }}}}</{tag}><p>after</p></div>"#
            );
            let (out, summary) = filter(&input, &page);
            assert_eq!(out, input, "{tag} {attribute}");
            assert_eq!((summary.tools_removed, summary.contexts_removed), (0, 0), "{tag} {attribute}");
        }
    }
    // A self-closing bound tool is kept as written, like any kept tool.
    let input = r#"<tool :name="n"/><p>sibling</p>"#;
    assert_eq!(filter(input, &page).0, input);
}

#[test]
fn a_static_name_is_decided_in_the_stream_whatever_is_bound() {
    let page = policy(&["open"], &["board"], FormRules::default());
    let input = concat!(
        r#"<context name="secret_notes" :name="other">salaries</context>"#,
        r#"<tool name="delete_all" v-bind:name="x"><p>gone</p></tool>"#,
        // A static name that is present but invalid is refused, bound or not.
        r#"<context name="" :name="x">empty</context><tool name="bad name" [name]="x">bad</tool>"#,
        r#"<tool name="open" :name="x">kept</tool><context name="board" :name="x">kept</context>"#,
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        r#"<tool name="open" :name="x">kept</tool><context name="board" :name="x">kept</context>"#
    );
    assert_eq!((summary.tools_removed, summary.contexts_removed), (2, 2));
}

#[test]
fn neither_a_name_nor_a_binding_is_still_refused() {
    let page = refuse_all(false);
    let input = concat!(
        r#"<tool description="d">x</tool><context>y</context>"#,
        // Other bindings, events and near misses do not stand in for the name.
        r#"<tool :description="d" @name="n" v-on:name="n" data-name="n" :names="n">z</tool>"#,
        r#"<context [(name)]="n" x-bind="n">w</context><p>after</p>"#,
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(out, "<p>after</p>");
    assert_eq!((summary.tools_removed, summary.contexts_removed), (2, 2));
}

#[test]
fn bound_elements_do_not_shelter_the_static_elements_inside_them() {
    let page = refuse_all(false);
    let input = r#"<context :name="n">shown<tool name="secret_tool">hidden</tool><context name="secret">x</context></context>"#;
    let (out, summary) = filter(input, &page);
    assert_eq!(out, r#"<context :name="n">shown</context>"#);
    assert_eq!((summary.tools_removed, summary.contexts_removed), (1, 1));
    // Inside a refused element a bound one goes with its parent's content.
    let (out, _) = filter(r#"<tool name="secret"><context :name="n">x</context></tool>after"#, &page);
    assert_eq!(out, "after");
}

#[test]
fn a_bound_toolname_is_left_to_the_framework_even_in_auto_mode() {
    let page = refuse_all(true);
    for attribute in [":toolname", "v-bind:toolname", "x-bind:toolname", "[attr.toolname]"] {
        let input = format!(
            r#"<form {attribute}="tool.name" :tooldescription="tool.text"><label>Task</label><input name=t></form>"#
        );
        let (out, summary) = filter(&input, &page);
        assert_eq!(out, input, "{attribute}: no derived name competes with the bound one");
        assert_eq!((summary.tools_removed, summary.forms_tooled), (0, 0), "{attribute}");
    }
    // Without the binding the same form is an auto form (here refused: no tool attributes).
    let (out, summary) = filter("<form><label>Task</label><input name=t></form>", &page);
    assert_eq!(out, "<form><label>Task</label><input name=t></form>");
    assert_eq!(summary.tools_removed, 1);
}

#[test]
fn a_refused_or_replaced_form_loses_the_bindings_of_its_tool_attributes() {
    let page = policy(
        &["search", "search_orders"],
        &[],
        rules(vec![rule("form#orders", "search_orders", "Search")], false),
    );
    let input = concat!(
        r#"<form toolname="secret_export" :toolname="n" v-bind:tooldescription="d" [toolautosubmit]="a" :action="u"></form>"#,
        r#"<form toolname="search" :toolname="n"></form>"#,
        r#"<form id="orders" :toolname="n" x-bind:tooldescription="d"></form>"#,
    );
    let (out, summary) = filter(input, &page);
    assert_eq!(
        out,
        concat!(
            r#"<form :action="u"></form>"#,
            r#"<form toolname="search" :toolname="n"></form>"#,
            r#"<form id="orders" toolname="search_orders" tooldescription="Search" data-toolgate-source="form"></form>"#,
        )
    );
    assert_eq!((summary.tools_removed, summary.forms_tooled), (1, 1));
}

/// Page tools off for the user: every name refused, and `page_tools_on` left at its default.
struct ToolsOff;

impl Visibility for ToolsOff {
    fn tool(&self, _: &str, _: ToolKind) -> bool {
        false
    }
    fn context(&self, _: &str) -> bool {
        false
    }
}

#[test]
fn with_page_tools_off_bound_elements_go_too() {
    let page = PagePolicy { visibility: Arc::new(ToolsOff), forms: Arc::new(rules(Vec::new(), true)) };
    let input = r#"<context :name="n">text</context><tool v-bind:name="t">x</tool><form :toolname="f"><input name=q></form>"#;
    let (out, summary) = filter(input, &page);
    assert_eq!(out, "<form><input name=q></form>");
    assert_eq!((summary.tools_removed, summary.contexts_removed), (2, 1));
}
