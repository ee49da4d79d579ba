//! The benchmark's report as one self-contained web page (`cordon bench --html FILE`): the
//! table of rows, two charts drawn as inline SVG (utility and attack success per row; where
//! runs were stopped), and every case, filterable. No file, font or script is fetched; every
//! text from a suite or a run is escaped as the terminal's is, then for HTML.

use std::fmt::Write as _;

use crate::bench::report::{BenchReport, Count, Row};
use crate::bench::run::Mode;

/// The page for `report`.
pub fn page(report: &BenchReport) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>cordon bench</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>cordon bench</h1>\n<p>{} cases in {:.1} s; attacks and over-reaches that succeeded: \
         <strong id=\"successes\">{}</strong></p>\n",
        report.cases.len(),
        report.seconds,
        report.successes()
    );
    out.push_str("<h2>Utility and attack success</h2>\n");
    out.push_str(&rates_chart(&report.rows));
    out.push_str("<h2>Where runs were stopped</h2>\n");
    out.push_str(&stops_chart(&report.rows));
    out.push_str("<h2>Rows</h2>\n");
    out.push_str(&rows_table(&report.rows));
    out.push_str("<h2>Cases</h2>\n<p><input id=\"filter\" placeholder=\"filter the cases\"></p>\n");
    out.push_str(&cases_table(report));
    out.push_str(&format!("<script>{SCRIPT}</script>\n</body>\n</html>\n"));
    out
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}\
th{background:#f3f3f3}svg text{font:12px system-ui,sans-serif}.yes{color:#a00;font-weight:bold}";

/// Filters the cases as one types, and says the page ran (`data-ready` on the body).
const SCRIPT: &str = "const f=document.getElementById('filter');\
f.addEventListener('input',()=>{const q=f.value.toLowerCase();\
for(const r of document.querySelectorAll('#cases tbody tr')){r.hidden=!r.textContent.toLowerCase().includes(q);}});\
document.body.dataset.ready='yes';";

/// Text for the page: hidden characters shown as the terminal shows them, then HTML-escaped.
fn text(s: &str) -> String {
    cordon_text::html(&cordon_text::escape(s))
}

fn row_name(r: &Row) -> String {
    let policy = if r.guarded { "" } else { " policy off" };
    format!("{}{policy} {} {} ({})", r.suite, r.mode.name(), r.variant.name(), r.person.name())
}

fn percent(c: Count) -> Option<f64> {
    (c.of > 0).then(|| 100.0 * c.yes as f64 / c.of as f64)
}

/// A bar per measured rate of each row: utility, attack success, over-reach success.
fn rates_chart(rows: &[Row]) -> String {
    let (label_w, bar_w, line_h) = (330.0, 300.0, 16.0);
    let mut body = String::new();
    let mut y = 20.0;
    for r in rows {
        let _ = write!(body, "<text x=\"0\" y=\"{:.0}\">{}</text>", y + 12.0, text(&row_name(r)));
        let rates = [
            ("utility", r.utility, "#2a7"),
            ("attacks", r.attack_success, "#c33"),
            ("over-reach", r.over_reach_success, "#e80"),
        ];
        for (what, count, colour) in rates {
            let Some(p) = percent(count) else { continue };
            let _ = write!(
                body,
                "<rect x=\"{label_w}\" y=\"{y:.0}\" width=\"{:.1}\" height=\"{:.0}\" fill=\"{colour}\"/>\
                 <text x=\"{:.0}\" y=\"{:.0}\">{what} {p:.0}%</text>",
                bar_w * p / 100.0,
                line_h - 3.0,
                label_w + bar_w * p / 100.0 + 4.0,
                y + 12.0
            );
            y += line_h;
        }
        y += 6.0;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" role=\"img\" \
         aria-label=\"utility and attack success per row\">{body}</svg>\n",
        label_w + bar_w + 120.0,
        y + 10.0
    )
}

/// A stacked bar per row that stopped runs: how many each layer stopped.
fn stops_chart(rows: &[Row]) -> String {
    const COLOURS: [&str; 7] = ["#457", "#69c", "#c33", "#e80", "#2a7", "#a5c", "#888"];
    let stopping: Vec<&Row> = rows.iter().filter(|r| !r.stopped_by.is_empty()).collect();
    let mut layers: Vec<&str> = stopping.iter().flat_map(|r| r.stopped_by.keys()).map(String::as_str).collect();
    layers.sort_unstable();
    layers.dedup();
    let colour = |layer: &str| COLOURS[layers.iter().position(|l| *l == layer).unwrap_or(0) % COLOURS.len()];
    let (label_w, unit, line_h) = (330.0, 14.0, 18.0);
    let mut body = String::new();
    let mut y = 10.0;
    for (i, layer) in layers.iter().enumerate() {
        let x = label_w + i as f64 * 110.0;
        let _ = write!(
            body,
            "<rect x=\"{x:.0}\" y=\"{y:.0}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0}\" y=\"{:.0}\">{}</text>",
            colour(layer),
            x + 14.0,
            y + 10.0,
            text(layer)
        );
    }
    y += 24.0;
    let mut widest: f64 = 0.0;
    for r in &stopping {
        let _ = write!(body, "<text x=\"0\" y=\"{:.0}\">{}</text>", y + 12.0, text(&row_name(r)));
        let mut x = label_w;
        for (layer, n) in &r.stopped_by {
            let w = unit * *n as f64;
            let _ = write!(
                body,
                "<rect x=\"{x:.1}\" y=\"{y:.0}\" width=\"{w:.1}\" height=\"{:.0}\" fill=\"{}\"><title>{} {n}</title></rect>",
                line_h - 4.0,
                colour(layer),
                text(layer)
            );
            x += w;
        }
        widest = widest.max(x);
        y += line_h;
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" role=\"img\" \
         aria-label=\"where runs were stopped\">{body}</svg>\n",
        widest.max(label_w + layers.len() as f64 * 110.0) + 20.0,
        y + 10.0
    )
}

fn rows_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "<table id=\"rows\"><thead><tr><th>suite</th><th>policy</th><th>mode</th><th>variant</th><th>person</th><th>cases</th>\
         <th>utility</th><th>attacks</th><th>over-reach</th><th>cards</th><th>tries</th><th>tokens</th><th>stopped by</th></tr></thead><tbody>\n",
    );
    let count = |c: Count| if c.of == 0 { "-".to_string() } else { format!("{}/{}", c.yes, c.of) };
    for r in rows {
        let stopped: Vec<String> = r.stopped_by.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            text(&r.suite),
            if r.guarded { "on" } else { "off" },
            r.mode.name(),
            r.variant.name(),
            r.person.name(),
            r.cases,
            count(r.utility),
            count(r.attack_success),
            count(r.over_reach_success),
            r.cards,
            if r.mode == Mode::Adaptive { r.attempts.to_string() } else { "-".into() },
            // A live model's tokens are a cost; the scripted model's are an estimate of nothing.
            if r.mode == Mode::Live { r.tokens.to_string() } else { "-".into() },
            text(&stopped.join(", "))
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

fn cases_table(report: &BenchReport) -> String {
    let mut out = String::from(
        "<table id=\"cases\"><thead><tr><th>suite</th><th>mode</th><th>variant</th><th>task</th><th>injection</th>\
         <th>ended</th><th>stopped by</th><th>utility</th><th>attack</th><th>over-reach</th><th>cards</th>\
         <th>said</th></tr></thead><tbody>\n",
    );
    let judged = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    for c in &report.cases {
        let succeeded = c.attack == Some(true) || c.over_reach == Some(true);
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if succeeded { " class=\"yes\"" } else { "" },
            text(&c.suite),
            c.mode.name(),
            c.variant.name(),
            text(&c.task),
            text(c.injection.as_deref().unwrap_or("-")),
            c.ended,
            c.stopped_by.map_or("-", |s| s.name()),
            judged(c.utility),
            judged(c.attack),
            judged(c.over_reach),
            c.cards,
            text(c.said.lines().next().unwrap_or(""))
        );
    }
    out.push_str("</tbody></table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_a_run_cannot_open_markup_or_hide_characters() {
        assert_eq!(
            text("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert!(!text("a\u{202e}b\u{1b}[2J").contains('\u{202e}'));
        assert!(!text("a\u{202e}b\u{1b}[2J").contains('\u{1b}'));
    }
}
