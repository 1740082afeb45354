//! Line charts as inline SVG, for the overview's traffic and decision counts.
//!
//! No script and no inline style (the dashboard's CSP forbids both): geometry is attributes,
//! colours are the stylesheet's `series-0` … `series-5` classes, and the legend is an HTML list
//! under the drawing so long labels wrap on a phone. Times are UTC, read from unix seconds
//! without a date library.

use crate::html::{Html, Markup};

/// One line of a chart: a label and its `(unix seconds, value)` points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// What the line counts (a site, an outcome).
    pub label: String,
    /// The points, oldest first (they are sorted anyway).
    pub points: Vec<(u64, f64)>,
}

/// A complete chart (`<figure>` with the SVG and its legend), or "No data yet" when no series
/// has two points.
pub fn svg(title: &str, series: &[Series]) -> String {
    figure(title, series).into_string()
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 624.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 196.0;
const PALETTE: usize = 6;
const SERIES_CLASSES: [&str; PALETTE] =
    ["series-0", "series-1", "series-2", "series-3", "series-4", "series-5"];

pub(crate) fn figure(title: &str, series: &[Series]) -> Markup {
    let lines: Vec<Vec<(u64, f64)>> = series.iter().map(|s| clean(&s.points)).collect();
    let mut html = Html::new();
    html.raw("<figure class=\"chart\"><figcaption>").text(title).raw("</figcaption>");
    if lines.iter().all(|points| points.len() < 2) {
        html.raw("<p class=\"empty\">No data yet.</p></figure>");
        return html.finish();
    }
    let start = lines.iter().flatten().map(|p| p.0).min().unwrap_or(0);
    let end = lines.iter().flatten().map(|p| p.0).max().unwrap_or(0);
    let max = lines.iter().flatten().map(|p| p.1).fold(0.0_f64, f64::max);
    let scale_max = if max > 0.0 { max } else { 1.0 };
    let span = end.saturating_sub(start);
    let (first, last) = (time_label(start, span), time_label(end, span));
    let names: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();

    html.raw("<svg class=\"chart-svg\" viewBox=\"0 0 ")
        .coord(WIDTH)
        .raw(" ")
        .coord(HEIGHT)
        .raw("\" role=\"img\" aria-label=\"")
        .text(&format!(
            "{title}: {}; from {first} to {last} UTC; highest value {}",
            names.join(", "),
            number(max)
        ))
        .raw("\" xmlns=\"http://www.w3.org/2000/svg\"><title>")
        .text(title)
        .raw("</title>");
    axes(&mut html, start, end, max);
    for (index, points) in lines.iter().enumerate().filter(|(_, points)| points.len() >= 2) {
        html.raw("<polyline class=\"line ").raw(SERIES_CLASSES[index % PALETTE]).raw("\" points=\"");
        for (n, (time, value)) in points.iter().enumerate() {
            if n > 0 {
                html.raw(" ");
            }
            let x =
                if span == 0 { LEFT } else { LEFT + (time - start) as f64 / span as f64 * (RIGHT - LEFT) };
            let y = BOTTOM - value / scale_max * (BOTTOM - TOP);
            html.coord(x).raw(",").coord(y);
        }
        html.raw("\"/>");
    }
    html.raw("</svg><ul class=\"legend\">");
    for (index, line) in series.iter().enumerate() {
        html.raw("<li><span class=\"swatch ")
            .raw(SERIES_CLASSES[index % PALETTE])
            .raw("\" aria-hidden=\"true\"></span>")
            .text(&line.label)
            .raw("</li>");
    }
    html.raw("</ul></figure>");
    html.finish()
}

fn axes(html: &mut Html, start: u64, end: u64, max: f64) {
    let span = end.saturating_sub(start);
    html.raw("<g class=\"axis\"><line x1=\"")
        .coord(LEFT)
        .raw("\" y1=\"")
        .coord(BOTTOM)
        .raw("\" x2=\"")
        .coord(RIGHT)
        .raw("\" y2=\"")
        .coord(BOTTOM)
        .raw("\"/><line x1=\"")
        .coord(LEFT)
        .raw("\" y1=\"")
        .coord(TOP)
        .raw("\" x2=\"")
        .coord(LEFT)
        .raw("\" y2=\"")
        .coord(BOTTOM)
        .raw("\"/>");
    // The y axis: its maximum at the top, zero at the bottom.
    html.raw("<text class=\"tick\" x=\"")
        .coord(LEFT - 6.0)
        .raw("\" y=\"")
        .coord(TOP + 4.0)
        .raw("\" text-anchor=\"end\">")
        .text(&number(max))
        .raw("</text><text class=\"tick\" x=\"")
        .coord(LEFT - 6.0)
        .raw("\" y=\"")
        .coord(BOTTOM + 4.0)
        .raw("\" text-anchor=\"end\">0</text>");
    // The x axis: first, middle and last time.
    let middle = start + span / 2;
    let ticks = [(start, LEFT, "start"), (middle, (LEFT + RIGHT) / 2.0, "middle"), (end, RIGHT, "end")];
    for (time, x, anchor) in ticks {
        html.raw("<text class=\"tick\" x=\"")
            .coord(x)
            .raw("\" y=\"")
            .coord(BOTTOM + 18.0)
            .raw("\" text-anchor=\"")
            .raw(anchor)
            .raw("\">")
            .text(&time_label(time, span))
            .raw("</text>");
    }
    html.raw("<text class=\"tick\" x=\"")
        .coord((LEFT + RIGHT) / 2.0)
        .raw("\" y=\"")
        .coord(BOTTOM + 36.0)
        .raw("\" text-anchor=\"middle\">time (UTC)</text></g>");
}

/// Points sorted by time, without non-finite values; negative values count as zero.
fn clean(points: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let mut points: Vec<(u64, f64)> =
        points.iter().filter(|p| p.1.is_finite()).map(|&(t, v)| (t, v.max(0.0))).collect();
    points.sort_by_key(|p| p.0);
    points
}

/// `HH:MM` for spans within a day, `YYYY-MM-DD HH:MM` for longer ones (UTC).
pub(crate) fn time_label(unix: u64, span: u64) -> String {
    let (days, seconds) = (unix / 86_400, unix % 86_400);
    let clock = format!("{:02}:{:02}", seconds / 3600, seconds % 3600 / 60);
    if span < 86_400 {
        return clock;
    }
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02} {clock}")
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// A value for an axis label: integers without decimals, others with up to two.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, points: &[(u64, f64)]) -> Series {
        Series { label: label.to_owned(), points: points.to_vec() }
    }

    #[test]
    fn draws_one_polyline_per_series_with_axis_labels_and_legend() {
        // 2026-11-22 10:00 and 10:30 UTC.
        let start = 1_795_341_600;
        let out = svg(
            "Requests",
            &[
                series("hr", &[(start, 1.0), (start + 1800, 4.0)]),
                series("tasks", &[(start, 2.0), (start + 1800, 0.5)]),
            ],
        );
        assert_eq!(out.matches("<polyline").count(), 2);
        assert!(out.contains("class=\"line series-0\"") && out.contains("class=\"line series-1\""));
        assert!(out.contains("role=\"img\"") && out.contains("<title>Requests</title>"));
        assert!(out.contains(">10:00<") && out.contains(">10:15<") && out.contains(">10:30<"), "{out}");
        assert!(out.contains(">4<"), "y axis maximum");
        assert!(out.contains("aria-label=\"Requests: hr, tasks; from 10:00 to 10:30 UTC; highest value 4\""));
        // The first series' second point is at the right edge and the top.
        assert!(out.contains("56.0,151.0 624.0,16.0"), "{out}");
        assert!(out.contains("<li><span class=\"swatch series-1\" aria-hidden=\"true\"></span>tasks</li>"));
        assert!(!out.contains("style"));
    }

    #[test]
    fn says_no_data_when_no_series_has_two_points() {
        let out = svg("Decisions", &[series("allow", &[(10, 1.0)]), series("deny", &[])]);
        assert!(out.contains("No data yet."));
        assert!(!out.contains("<svg"));
        assert!(svg("Empty", &[]).contains("No data yet."));
    }

    #[test]
    fn hostile_labels_and_titles_are_escaped() {
        let evil = "\"'><img src=x onerror=alert(1)><script>";
        let out = svg(evil, &[series(evil, &[(0, 1.0), (60, f64::NAN), (120, 2.0)])]);
        assert!(!out.contains("<img") && !out.contains("<script"), "{out}");
        assert!(out.contains("&lt;script&gt;"));
    }

    #[test]
    fn long_spans_show_dates() {
        assert_eq!(time_label(1_795_341_600, 3600), "10:00");
        assert_eq!(time_label(1_795_341_600, 2 * 86_400), "2026-11-22 10:00");
        assert_eq!(time_label(0, 86_400), "1970-01-01 00:00");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(3.0), "3");
    }
}
