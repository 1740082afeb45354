//! The bridge between the policy engine and the HTML filter: what one user may see on one
//! site's pages, as the injector's [`Visibility`] asks it, name by name.
//!
//! Built once per page response from the policy's per-request view. When page tools are off
//! (the site's switch, or a policy that offers this user nothing) every tool and context is
//! refused, so the page carries none of them.

use crate::config::Site;
use crate::state::Gateway;
use injector::{PagePolicy, ToolKind, Visibility};
use policy::{ContextDecision, ContextName, PolicyView, Subject, ToolRef, ToolSource};
use std::sync::Arc;

/// One user's view of one site's page tools.
pub struct PageVisibility {
    view: PolicyView,
    tools_on: bool,
}

impl PageVisibility {
    /// The visibility for `subject` on `site` under the policy in force.
    pub fn new(gateway: &Gateway, site: &Site, subject: &Subject) -> Self {
        let view = gateway.policy.current().view(subject, &site.id);
        let tools_on = site.page_tools && view.offers_tools();
        Self { view, tools_on }
    }

    /// Whether page tools are on for this user here (else the browser gets
    /// `Permissions-Policy: tools=()`).
    pub fn tools_on(&self) -> bool {
        self.tools_on
    }
}

impl Visibility for PageVisibility {
    fn tool(&self, name: &str, kind: ToolKind) -> bool {
        let source = match kind {
            ToolKind::Voix => ToolSource::Voix,
            ToolKind::Declarative => ToolSource::WebmcpDeclarative,
            ToolKind::Form => ToolSource::Form,
            _ => ToolSource::Unknown,
        };
        let tool = ToolRef { name: name.into(), source, annotations: Default::default() };
        self.tools_on && !self.view.tool(&tool).0.is_deny()
    }

    fn context(&self, name: &str) -> bool {
        self.tools_on && matches!(self.view.context(&ContextName::new(name)).0, ContextDecision::Allow { .. })
    }

    fn page_tools_on(&self) -> bool {
        self.tools_on
    }
}

/// The filter settings for the page at `path`, and whether page tools are on.
pub fn for_page(gateway: &Gateway, site: &Site, subject: &Subject, path: &str) -> (PagePolicy, bool) {
    let visibility = PageVisibility::new(gateway, site, subject);
    let tools_on = visibility.tools_on();
    (PagePolicy { visibility: Arc::new(visibility), forms: forms_for_page(site, path) }, tools_on)
}

/// The site's form rules that apply on the page at `path` (their `path` scope), set to resolve
/// forms' actions against that page when a rule is scoped by `action`; the shared set itself
/// when all apply and none has an `action`, which is every page of a site whose rules have no
/// scope.
fn forms_for_page(site: &Site, path: &str) -> Arc<injector::FormRules> {
    let applies = |index: usize| site.form_scopes.get(index).is_none_or(|scope| scope.applies_to(path));
    if site.forms.scopes_actions() {
        // Forms' actions resolve against this page.
        Arc::new(site.forms.only(applies).at_page(path))
    } else if (0..site.forms.len()).all(applies) {
        Arc::clone(&site.forms)
    } else {
        Arc::new(site.forms.only(applies))
    }
}
