//! Rewriting `<meta http-equiv="Content-Security-Policy">` so the page's own meta policy admits
//! the runtime script too.
//!
//! A meta policy is enforced in addition to the header policies, so it gets the same treatment
//! ([`crate::allow_in_policy`]). Report-Only is not honoured in `<meta>` by browsers, so such
//! elements are left alone. The attribute is only rewritten when the policy actually changes.

use lol_html::send;

use super::attribute_text::{decode_character_references, escape_ampersands};
use super::selectors::{on_element, selector};
use crate::csp::allow_in_policy;

/// Adds the handler that rewrites meta CSP elements for a script with `nonce` at `script_url`.
pub(super) fn append_handler(
    settings: send::Settings<'static, 'static>,
    nonce: String,
    script_url: String,
) -> send::Settings<'static, 'static> {
    settings.append_element_content_handler(on_element(
        selector!("meta[http-equiv]"),
        move |element: &mut send::Element<'_, '_>| {
            let is_csp = element
                .get_attribute("http-equiv")
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("content-security-policy"));
            if !is_csp {
                return Ok(());
            }
            let Some(raw) = element.get_attribute("content") else {
                return Ok(());
            };
            // lol_html returns the value with character references intact; read it as the
            // browser will, and write it back escaped.
            let policy = decode_character_references(&raw);
            let rewritten = allow_in_policy(&policy, &nonce, &script_url);
            if rewritten != policy {
                element.set_attribute("content", &escape_ampersands(&rewritten))?;
            }
            Ok(())
        },
    ))
}
