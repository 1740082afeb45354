//! The form bookkeeping of one page: the rule that matched the element being started, the
//! rule whose parameter descriptions apply, the latest heading and the auto form being held
//! back. Held in the page's shared state; read and changed only by `forms`.

use crate::page::form_names::FormFacts;

/// Form bookkeeping for one page.
#[derive(Debug, Default)]
pub(in crate::page) struct FormState {
    /// The first rule whose selector matched the element being started (rule handlers run
    /// before the form handler).
    pub(super) rule_match: Option<usize>,
    /// The rule whose parameter descriptions apply to the controls being parsed.
    pub(super) active_params: Option<usize>,
    pub(super) next_id: u64,
    /// Text of the latest heading (`h1`–`h6`), for auto descriptions.
    pub(super) heading: String,
    pub(super) held: Option<HeldForm>,
}

impl FormState {
    /// Whether no form is open whose content or end a handler still waits for: none held back,
    /// none whose controls are being described.
    pub(in crate::page) fn is_idle(&self) -> bool {
        self.held.is_none() && self.active_params.is_none()
    }
}

/// An auto form whose output is being held back.
#[derive(Debug)]
pub(super) struct HeldForm {
    pub(super) id: u64,
    pub(super) facts: FormFacts,
    pub(super) legends: u32,
    pub(super) labels: u32,
    pub(super) buttons: u32,
    /// Which button (1-based) gives the submit text; `Some(0)` once an `<input type=submit>` did.
    pub(super) submit_button: Option<u32>,
}
