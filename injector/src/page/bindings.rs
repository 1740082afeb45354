//! Framework bindings of the attributes that name a tool or a context: `<context :name="…">`
//! (Vue and Alpine), `v-bind:name` (Vue), `x-bind:name` (Alpine), `[name]` and `[attr.name]`
//! (Angular), and the same for a form's `toolname`.
//!
//! Such an element has no name in the HTML: the framework gives it one when it renders, in the
//! browser, where the runtime reports it to the gateway like any element a script adds. The
//! filter therefore keeps an element whose name is only bound instead of refusing it as nameless.

use lol_html::send;

/// Prefixes that bind the attribute named after them (Vue's shorthand and long form, Alpine's).
const BINDING_PREFIXES: [&str; 3] = [":", "v-bind:", "x-bind:"];

/// Whether `element` binds `attribute` (`name`, `toolname`…) through a framework, in any of the
/// spellings this module covers.
pub(super) fn is_bound(element: &send::Element<'_, '_>, attribute: &str) -> bool {
    element.attributes().iter().any(|candidate| binds(&candidate.name(), attribute))
}

/// Removes every framework binding of `attribute` from `element`, so a framework cannot render
/// back what the filter refused or a site rule replaced.
pub(super) fn remove_bindings(element: &mut send::Element<'_, '_>, attribute: &str) {
    let bound: Vec<String> = element
        .attributes()
        .iter()
        .map(lol_html::html_content::Attribute::name)
        .filter(|name| binds(name, attribute))
        .collect();
    for name in bound {
        element.remove_attribute(&name);
    }
}

/// Whether the attribute called `written` (lowercase, as lol_html gives it) binds `attribute`:
/// `:name`, `v-bind:name` and `x-bind:name` (with Vue's modifiers, `:name.attr`), `[name]` and
/// `[attr.name]`.
fn binds(written: &str, attribute: &str) -> bool {
    let vue_or_alpine = BINDING_PREFIXES
        .iter()
        .find_map(|prefix| written.strip_prefix(prefix))
        // Vue's modifiers (`.attr`, `.prop`, `.camel`) follow the bound name.
        .map(|bound| bound.split('.').next().unwrap_or(bound));
    let angular = written
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .map(|bound| bound.strip_prefix("attr.").unwrap_or(bound));
    vue_or_alpine.or(angular).is_some_and(|bound| bound.eq_ignore_ascii_case(attribute))
}

#[cfg(test)]
mod tests {
    use super::binds;

    #[test]
    fn every_covered_spelling_binds_the_attribute() {
        for written in [":name", "v-bind:name", "x-bind:name", ":name.attr", "[name]", "[attr.name]", ":NAME"]
        {
            assert!(binds(written, "name"), "{written}");
        }
        assert!(binds(":toolname", "toolname"));
    }

    #[test]
    fn other_attributes_and_near_misses_do_not() {
        for written in [
            "name",
            ":names",
            ":description",
            "v-bind",
            "v-on:name",
            "@name",
            "x-bind",
            "[name",
            "name]",
            "[attr.names]",
            "[(name)]",
            "data-name",
            ":toolname",
        ] {
            assert!(!binds(written, "name"), "{written}");
        }
    }
}
