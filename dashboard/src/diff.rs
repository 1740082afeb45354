//! Line diffs between two policy texts, with long unchanged stretches collapsed.
//!
//! `similar` computes the edit script (its Myers variant bounds the work on hostile inputs);
//! this module only shapes it for a page: lines without their terminators (so a missing final
//! newline or CRLF is not a change), and context around each change.

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::html::{Html, Markup};

/// One line of a rendered diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiffLine {
    /// In both texts.
    Same(String),
    /// Only in the new text.
    Added(String),
    /// Only in the old text.
    Removed(String),
    /// This many unchanged lines left out.
    Skipped(usize),
}

/// The changes from `old` to `new`, keeping `context` unchanged lines around each change;
/// longer unchanged runs collapse to [`DiffLine::Skipped`]. Identical texts give at most one
/// `Skipped` (none for two empty texts).
pub fn lines(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let ops = capture_diff_slices(Algorithm::Myers, &old_lines, &new_lines);
    let last = ops.len().saturating_sub(1);
    let mut out = Vec::new();
    for (position, op) in ops.iter().enumerate() {
        match *op {
            DiffOp::Equal { old_index, len, .. } => {
                let run = &old_lines[old_index..old_index + len];
                let keep_head = if position == 0 { 0 } else { context };
                let keep_tail = if position == last { 0 } else { context };
                if run.len() > keep_head + keep_tail {
                    out.extend(run[..keep_head].iter().map(|line| DiffLine::Same((*line).to_owned())));
                    out.push(DiffLine::Skipped(run.len() - keep_head - keep_tail));
                    out.extend(
                        run[run.len() - keep_tail..].iter().map(|line| DiffLine::Same((*line).to_owned())),
                    );
                } else {
                    out.extend(run.iter().map(|line| DiffLine::Same((*line).to_owned())));
                }
            }
            DiffOp::Delete { old_index, old_len, .. } => {
                removed(&mut out, &old_lines[old_index..old_index + old_len])
            }
            DiffOp::Insert { new_index, new_len, .. } => {
                added(&mut out, &new_lines[new_index..new_index + new_len])
            }
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                removed(&mut out, &old_lines[old_index..old_index + old_len]);
                added(&mut out, &new_lines[new_index..new_index + new_len]);
            }
        }
    }
    out
}

/// Whether a diff has any change.
pub(crate) fn has_changes(diff: &[DiffLine]) -> bool {
    diff.iter().any(|line| matches!(line, DiffLine::Added(_) | DiffLine::Removed(_)))
}

/// A diff as a table-free block: each line marked with `+`/`-` (not colour alone) and a class.
pub(crate) fn render(diff: &[DiffLine], label: &str) -> Markup {
    let mut html = Html::new();
    html.raw("<section class=\"diff\" aria-label=\"").text(label).raw("\">");
    if !has_changes(diff) {
        html.raw("<p class=\"empty\">No differences.</p></section>");
        return html.finish();
    }
    html.raw("<pre class=\"diff-lines\">");
    for line in diff {
        match line {
            DiffLine::Same(text) => html.raw("<span class=\"same\">  ").text(text),
            DiffLine::Added(text) => html.raw("<ins class=\"added\">+ ").text(text),
            DiffLine::Removed(text) => html.raw("<del class=\"removed\">- ").text(text),
            DiffLine::Skipped(count) => {
                html.raw("<span class=\"skipped\">… ").count(*count).raw(" unchanged line");
                if *count != 1 {
                    html.raw("s");
                }
                html.raw(" …")
            }
        };
        html.raw(match line {
            DiffLine::Added(_) => "</ins>\n",
            DiffLine::Removed(_) => "</del>\n",
            _ => "</span>\n",
        });
    }
    html.raw("</pre></section>");
    html.finish()
}

fn removed(out: &mut Vec<DiffLine>, lines: &[&str]) {
    out.extend(lines.iter().map(|line| DiffLine::Removed((*line).to_owned())));
}

fn added(out: &mut Vec<DiffLine>, lines: &[&str]) {
    out.extend(lines.iter().map(|line| DiffLine::Added((*line).to_owned())));
}

#[cfg(test)]
mod tests {
    use super::DiffLine::{Added, Removed, Same, Skipped};
    use super::*;

    fn numbered(count: usize) -> String {
        (1..=count).map(|n| format!("line {n}\n")).collect()
    }

    #[test]
    fn a_change_in_the_middle_keeps_context_and_collapses_the_rest() {
        let old = numbered(20);
        let new = old.replace("line 10\n", "line ten\n");
        let diff = lines(&old, &new, 2);
        assert_eq!(
            diff,
            vec![
                Skipped(7),
                Same("line 8".into()),
                Same("line 9".into()),
                Removed("line 10".into()),
                Added("line ten".into()),
                Same("line 11".into()),
                Same("line 12".into()),
                Skipped(8),
            ]
        );
    }

    #[test]
    fn runs_between_changes_collapse_only_when_longer_than_twice_the_context() {
        let old = numbered(12);
        let near = old.replace("line 2\n", "two\n").replace("line 7\n", "seven\n");
        let diff = lines(&old, &near, 2);
        assert!(!diff[2..diff.len() - 1].iter().any(|line| matches!(line, Skipped(_))), "{diff:?}");
        let far = old.replace("line 2\n", "two\n").replace("line 10\n", "ten\n");
        let diff = lines(&old, &far, 2);
        assert!(diff.contains(&Skipped(3)), "lines 5..7 between the two hunks: {diff:?}");
    }

    #[test]
    fn identical_texts_and_line_endings_are_no_change() {
        let text = numbered(5);
        assert_eq!(lines(&text, &text, 3), vec![Skipped(5)]);
        assert_eq!(
            lines("a\nb\nc", "a\r\nb\r\nX\n", 1),
            vec![Skipped(1), Same("b".into()), Removed("c".into()), Added("X".into())]
        );
        assert!(lines("", "", 3).is_empty());
        assert!(!has_changes(&lines(&text, &text, 3)));
    }

    #[test]
    fn additions_at_the_end_and_removals_at_the_start() {
        assert_eq!(lines("", "x\n", 1), vec![Added("x".into())]);
        assert_eq!(
            lines("a\nb\nc\n", "b\nc\nd\n", 0),
            vec![Removed("a".into()), Skipped(2), Added("d".into())]
        );
    }

    #[test]
    fn rendering_marks_lines_with_signs_and_classes_and_escapes() {
        let diff = lines("keep\n<script>old</script>\n", "keep\n\"'><img src=x onerror=alert(1)>\n", 1);
        let html = render(&diff, "Changes").into_string();
        assert!(html.contains("<del class=\"removed\">- &lt;script&gt;old&lt;/script&gt;</del>"), "{html}");
        assert!(
            html.contains("<ins class=\"added\">+ &quot;&#39;&gt;&lt;img src=x onerror=alert(1)&gt;</ins>")
        );
        assert!(html.contains("<span class=\"same\">  keep</span>"));
        assert!(render(&lines("a", "a", 1), "Changes").into_string().contains("No differences."));
    }
}
