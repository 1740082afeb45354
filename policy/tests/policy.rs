//! The policy crate's one integration test binary: golden decision cases from data files,
//! explanations, redaction per recognizer (the newer national numbers in a file of their own),
//! the redaction corpus (recall and precision), the deny-is-never-allow property, the redactor on
//! any text, and reload behaviour.

#[path = "policy/cases.rs"]
mod cases;
#[path = "policy/explain.rs"]
mod explain;
#[path = "policy/page_tools.rs"]
mod page_tools;
#[path = "policy/properties.rs"]
mod properties;
#[path = "policy/redaction.rs"]
mod redaction;
#[path = "policy/redaction_corpus.rs"]
mod redaction_corpus;
#[path = "policy/redaction_fuzz.rs"]
mod redaction_fuzz;
#[path = "policy/redaction_national.rs"]
mod redaction_national;
#[path = "policy/reload.rs"]
mod reload;
