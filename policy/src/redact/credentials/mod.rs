//! Placeholder until the credentials recognizer lands.
use super::finding::Finding;
pub(crate) fn find(_text: &str, _out: &mut Vec<Finding>) {}
