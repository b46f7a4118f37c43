//! Horizontal bar charts as SVG, written by hand (no dependency): a title, a
//! legend, and panels of grouped bars on a linear axis from zero, each bar
//! with its value printed. The output depends only on the chart given, so
//! the same figures always draw the same file.
//!
//! A bar may carry several levels of one figure (latency percentiles, say),
//! drawn over each other from the same origin: the largest faintest, the
//! smallest in full colour.

use std::fmt::Write as _;

/// A chart: what [`render`] draws.
#[derive(Debug, Clone)]
pub(crate) struct Chart {
    /// The title, at the top.
    pub(crate) title: String,
    /// One line under the title (what was measured with what), if any.
    pub(crate) subtitle: Option<String>,
    /// The series' names (servers, variants), in legend order; a bar's
    /// colour is its series' index.
    pub(crate) series: Vec<String>,
    /// The panels, top to bottom, each with its own axis.
    pub(crate) panels: Vec<Panel>,
}

/// One panel: groups of bars against one axis.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    /// The panel's heading.
    pub(crate) title: String,
    /// The axis label, with its unit.
    pub(crate) axis: String,
    /// The names of a bar's levels, smallest first (`p50`, `p99`, ...);
    /// empty for bars of one value.
    pub(crate) levels: Vec<String>,
    /// The groups, top to bottom.
    pub(crate) groups: Vec<Group>,
}

/// A group of bars: one workload, one load, one rate.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// What the group measures.
    pub(crate) label: String,
    /// A second, smaller line under the label (the workload's name).
    pub(crate) detail: Option<String>,
    /// Its bars, top to bottom.
    pub(crate) bars: Vec<Bar>,
}

/// One bar.
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    /// Its series (an index into [`Chart::series`]).
    pub(crate) series: usize,
    /// Its value, or one per level of its panel (missing levels are `None`).
    pub(crate) values: Vec<Option<f64>>,
    /// A word printed after the value (what this bar's server checks, say).
    pub(crate) note: Option<String>,
}

/// Colours of the series, in order (the Okabe-Ito palette, which people
/// with the common colour-vision deficiencies tell apart), then grey.
const COLOURS: [&str; 8] = [
    "#0072B2", "#56B4E9", "#D55E00", "#E69F00", "#009E73", "#777777", "#CC79A7", "#000000",
];

/// The colour of series `i`.
pub(crate) fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

const WIDTH: f64 = 960.0;
const MARGIN: f64 = 16.0;
/// Width of the column of group labels.
const LABEL_WIDTH: f64 = 280.0;
/// Room right of the longest bar for its value.
const VALUE_WIDTH: f64 = 170.0;
const PLOT_X: f64 = MARGIN + LABEL_WIDTH;
const PLOT_WIDTH: f64 = WIDTH - PLOT_X - VALUE_WIDTH - MARGIN;
const BAR_HEIGHT: f64 = 12.0;
const BAR_GAP: f64 = 3.0;
const GROUP_GAP: f64 = 12.0;
/// Least height of a group (its two label lines).
const GROUP_MIN: f64 = 30.0;
const FONT: &str = "font-family=\"sans-serif\"";

/// `text` with the five XML special characters escaped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A figure as the charts print it: thousands grouped by spaces from 100 up,
/// one decimal below 100, two below 1, and zero as `0`.
pub(crate) fn format_value(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        let digits = format!("{:.0}", v.abs());
        let mut out = String::new();
        if v < 0.0 {
            out.push('-');
        }
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(' ');
            }
            out.push(c);
        }
        out
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The axis' step and end for values up to `max`: a step of 1, 2, 2.5 or 5
/// times a power of ten, about five steps in all.
fn axis(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 1.0);
    }
    let rough = max / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|s| *s >= rough)
        .unwrap_or(10.0 * power);
    (step, (max / step).ceil().max(1.0) * step)
}

/// About how wide `text` is at `size` px in a sans-serif face.
fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.56
}

/// Opacity of level `i` of `n` (the smallest in full colour).
fn opacity(i: usize, n: usize) -> f64 {
    if n <= 1 {
        1.0
    } else {
        1.0 - 0.65 * i as f64 / (n - 1) as f64
    }
}

/// Whether a panel has anything to draw.
fn drawn(panel: &Panel) -> bool {
    panel
        .groups
        .iter()
        .any(|g| g.bars.iter().any(|b| b.values.iter().any(Option::is_some)))
}

/// Draws `chart` as a standalone SVG document.
pub(crate) fn render(chart: &Chart) -> String {
    let mut body = String::new();
    let mut y = MARGIN + 16.0;
    let _ = writeln!(
        body,
        "<text x=\"{MARGIN}\" y=\"{y}\" {FONT} font-size=\"17\" font-weight=\"bold\" fill=\"#111\">{}</text>",
        escape(&chart.title)
    );
    if let Some(sub) = &chart.subtitle {
        y += 20.0;
        let _ = writeln!(
            body,
            "<text x=\"{MARGIN}\" y=\"{y}\" {FONT} font-size=\"12\" fill=\"#444\">{}</text>",
            escape(sub)
        );
    }
    y += 14.0;
    y = legend(&mut body, chart, y);
    for panel in chart.panels.iter().filter(|p| drawn(p)) {
        y = draw_panel(&mut body, panel, y + 18.0);
    }
    let height = (y + MARGIN).ceil();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&chart.title));
    let _ = writeln!(
        out,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// The legend: a swatch per series that has a bar, then the levels' key;
/// wraps to further lines. Returns the y under it.
fn legend(out: &mut String, chart: &Chart, top: f64) -> f64 {
    let used: Vec<usize> = (0..chart.series.len())
        .filter(|i| {
            chart.panels.iter().any(|p| {
                p.groups
                    .iter()
                    .any(|g| g.bars.iter().any(|b| b.series == *i))
            })
        })
        .collect();
    let mut items: Vec<(String, &'static str, f64)> = used
        .iter()
        .map(|i| (chart.series[*i].clone(), colour(*i), 1.0))
        .collect();
    let mut levels: Vec<&String> = Vec::new();
    for panel in chart.panels.iter().filter(|p| drawn(p)) {
        for level in &panel.levels {
            if !levels.contains(&level) {
                levels.push(level);
            }
        }
    }
    if levels.len() > 1 {
        let n = levels.len();
        for (i, level) in levels.iter().enumerate() {
            items.push(((*level).clone(), "#555555", opacity(i, n)));
        }
    }
    let (mut x, mut y) = (MARGIN, top);
    for (name, fill, alpha) in items {
        let w = 18.0 + text_width(&name, 12.0) + 18.0;
        if x + w > WIDTH - MARGIN && x > MARGIN {
            x = MARGIN;
            y += 20.0;
        }
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{fill}\" fill-opacity=\"{alpha:.2}\"/>",
            y - 10.0
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{y}\" {FONT} font-size=\"12\" fill=\"#111\">{}</text>",
            x + 17.0,
            escape(&name)
        );
        x += w;
    }
    y + 8.0
}

/// Draws one panel from `top`; returns the y under it.
fn draw_panel(out: &mut String, panel: &Panel, top: f64) -> f64 {
    let max = panel
        .groups
        .iter()
        .flat_map(|g| &g.bars)
        .flat_map(|b| b.values.iter().flatten())
        .copied()
        .fold(0.0, f64::max);
    let (step, end) = axis(max);
    let scale = PLOT_WIDTH / end;
    let _ = writeln!(
        out,
        "<text x=\"{MARGIN}\" y=\"{top}\" {FONT} font-size=\"14\" font-weight=\"bold\" fill=\"#111\">{}</text>",
        escape(&panel.title)
    );
    let plot_top = top + 12.0;
    let mut y = plot_top;
    let mut rows = String::new();
    for group in &panel.groups {
        let bars: Vec<&Bar> = group
            .bars
            .iter()
            .filter(|b| b.values.iter().any(Option::is_some))
            .collect();
        if bars.is_empty() {
            continue;
        }
        let _ = writeln!(
            rows,
            "<text x=\"{MARGIN}\" y=\"{}\" {FONT} font-size=\"12\" fill=\"#111\">{}</text>",
            y + 11.0,
            escape(&group.label)
        );
        if let Some(detail) = &group.detail {
            let _ = writeln!(
                rows,
                "<text x=\"{MARGIN}\" y=\"{}\" {FONT} font-size=\"11\" fill=\"#666\">{}</text>",
                y + 25.0,
                escape(detail)
            );
        }
        let mut by = y;
        for bar in &bars {
            draw_bar(&mut rows, bar, by, scale, &panel.levels);
            by += BAR_HEIGHT + BAR_GAP;
        }
        y += (by - y).max(GROUP_MIN) + GROUP_GAP;
    }
    let plot_bottom = y - GROUP_GAP + 4.0;
    // Grid and ticks first, so that the bars are drawn over them.
    let mut tick = 0.0;
    while tick <= end + step / 1000.0 {
        let x = PLOT_X + tick * scale;
        let _ = writeln!(
            out,
            "<line x1=\"{x:.2}\" y1=\"{plot_top}\" x2=\"{x:.2}\" y2=\"{plot_bottom}\" stroke=\"#e3e3e3\" stroke-width=\"1\"/>"
        );
        let _ = writeln!(
            out,
            "<text x=\"{x:.2}\" y=\"{}\" {FONT} font-size=\"11\" fill=\"#444\" text-anchor=\"middle\">{}</text>",
            plot_bottom + 15.0,
            escape(&format_value(tick))
        );
        tick += step;
    }
    let _ = writeln!(
        out,
        "<line x1=\"{PLOT_X}\" y1=\"{plot_bottom}\" x2=\"{:.2}\" y2=\"{plot_bottom}\" stroke=\"#888\" stroke-width=\"1\"/>",
        PLOT_X + PLOT_WIDTH
    );
    let _ = writeln!(
        out,
        "<line x1=\"{PLOT_X}\" y1=\"{plot_top}\" x2=\"{PLOT_X}\" y2=\"{plot_bottom}\" stroke=\"#888\" stroke-width=\"1\"/>"
    );
    out.push_str(&rows);
    let _ = writeln!(
        out,
        "<text x=\"{:.2}\" y=\"{}\" {FONT} font-size=\"12\" fill=\"#111\" text-anchor=\"middle\">{}</text>",
        PLOT_X + PLOT_WIDTH / 2.0,
        plot_bottom + 33.0,
        escape(&panel.axis)
    );
    plot_bottom + 38.0
}

/// Draws one bar (its levels over each other) and its value at row `y`.
fn draw_bar(out: &mut String, bar: &Bar, y: f64, scale: f64, levels: &[String]) {
    let fill = colour(bar.series);
    let n = bar.values.len();
    // The largest level first, faintest; the smallest last, in full colour.
    for (i, value) in bar.values.iter().enumerate().rev() {
        let Some(v) = value else { continue };
        let level = levels
            .get(i)
            .map_or(String::new(), |l| format!(" data-level=\"{}\"", escape(l)));
        let _ = writeln!(
            out,
            "<rect class=\"bar\" x=\"{PLOT_X}\" y=\"{y}\" width=\"{:.2}\" height=\"{BAR_HEIGHT}\" fill=\"{fill}\" fill-opacity=\"{:.2}\" data-series=\"{}\" data-value=\"{v}\"{level}/>",
            (v.max(0.0) * scale),
            opacity(i, n),
            bar.series
        );
    }
    let longest = bar.values.iter().flatten().copied().fold(0.0, f64::max);
    let mut text = bar
        .values
        .iter()
        .map(|v| v.map_or("n/a".to_string(), format_value))
        .collect::<Vec<_>>()
        .join(" / ");
    if let Some(note) = &bar.note {
        let _ = write!(text, " · {note}");
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.2}\" y=\"{}\" {FONT} font-size=\"11\" fill=\"#222\">{}</text>",
        PLOT_X + longest.max(0.0) * scale + 4.0,
        y + BAR_HEIGHT - 2.0,
        escape(&text)
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Checks that `svg` is well-formed XML of the kind [`render`] writes:
    /// one root element, tags balanced and nested, attribute values quoted,
    /// and every `&` in text or attributes the start of an entity.
    pub(crate) fn check_well_formed(svg: &str) -> Result<(), String> {
        let mut stack: Vec<&str> = Vec::new();
        let mut roots = 0;
        let mut rest = svg;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open])?;
            rest = &rest[open..];
            if let Some(after) = rest.strip_prefix("<!--") {
                let end = after.find("-->").ok_or("an unclosed comment")?;
                rest = &after[end + 3..];
                continue;
            }
            let close = rest.find('>').ok_or("an unclosed tag")?;
            let tag = &rest[1..close];
            rest = &rest[close + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                match stack.pop() {
                    Some(open) if open == name.trim() => {}
                    other => return Err(format!("</{name}> closes {other:?}")),
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = tag.split_whitespace().next().ok_or("an empty tag")?;
            if !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':')
            {
                return Err(format!("a bad element name {name:?}"));
            }
            check_attributes(&tag[name.len()..])?;
            if stack.is_empty() {
                roots += 1;
            }
            if !self_closing {
                stack.push(name);
            }
        }
        check_text(rest)?;
        if !stack.is_empty() {
            return Err(format!("unclosed elements {stack:?}"));
        }
        if roots != 1 {
            return Err(format!("{roots} root elements"));
        }
        Ok(())
    }

    fn check_text(text: &str) -> Result<(), String> {
        let mut rest = text;
        while let Some(amp) = rest.find('&') {
            rest = &rest[amp + 1..];
            let end = rest.find(';').ok_or("a bare &")?;
            let entity = &rest[..end];
            let known = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                || entity
                    .strip_prefix('#')
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if !known {
                return Err(format!("an unknown entity &{entity};"));
            }
        }
        if text.contains('>') {
            return Err("a bare > in text".into());
        }
        Ok(())
    }

    fn check_attributes(mut attrs: &str) -> Result<(), String> {
        loop {
            attrs = attrs.trim_start();
            if attrs.is_empty() {
                return Ok(());
            }
            let eq = attrs.find('=').ok_or("an attribute without a value")?;
            let name = &attrs[..eq];
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(format!("a bad attribute name {name:?}"));
            }
            let value = attrs[eq + 1..]
                .strip_prefix('"')
                .ok_or("an unquoted attribute value")?;
            let end = value.find('"').ok_or("an unclosed attribute value")?;
            if value[..end].contains('<') {
                return Err("a < in an attribute value".into());
            }
            check_text(&value[..end])?;
            attrs = &value[end + 1..];
        }
    }

    /// Every `(data-value, width)` of the bars of `svg`, in order.
    pub(crate) fn bars(svg: &str) -> Vec<(f64, f64)> {
        let attr = |tag: &str, name: &str| -> Option<f64> {
            let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            let len = tag[start..].find('"')?;
            tag[start..start + len].parse().ok()
        };
        svg.lines()
            .filter(|l| l.starts_with("<rect class=\"bar\""))
            .filter_map(|l| Some((attr(l, "data-value")?, attr(l, "width")?)))
            .collect()
    }

    fn sample() -> Chart {
        Chart {
            title: "Throughput <by> server & workload".into(),
            subtitle: Some("commit \"abc\", 2 rounds".into()),
            series: vec!["snodo".into(), "tower-mcp".into(), "unused".into()],
            panels: vec![
                Panel {
                    title: "Throughput".into(),
                    axis: "requests per second (req/s)".into(),
                    levels: Vec::new(),
                    groups: vec![
                        Group {
                            label: "HTTP tools/call, c=64".into(),
                            detail: Some("http_call_c64".into()),
                            bars: vec![
                                Bar {
                                    series: 0,
                                    values: vec![Some(90_000.0)],
                                    note: None,
                                },
                                Bar {
                                    series: 1,
                                    values: vec![Some(15_000.0)],
                                    note: Some("schema-validation".into()),
                                },
                            ],
                        },
                        Group {
                            label: "stdio, 1 in flight".into(),
                            detail: Some("stdio_call_f1".into()),
                            bars: vec![Bar {
                                series: 0,
                                values: vec![Some(12_000.0)],
                                note: None,
                            }],
                        },
                        Group {
                            label: "nothing measured".into(),
                            detail: None,
                            bars: vec![Bar {
                                series: 1,
                                values: vec![None],
                                note: None,
                            }],
                        },
                    ],
                },
                Panel {
                    title: "Latency".into(),
                    axis: "latency (µs)".into(),
                    levels: vec!["p50".into(), "p99".into(), "p99.9".into()],
                    groups: vec![Group {
                        label: "open loop".into(),
                        detail: None,
                        bars: vec![Bar {
                            series: 1,
                            values: vec![Some(40.0), Some(900.0), None],
                            note: None,
                        }],
                    }],
                },
            ],
        }
    }

    #[test]
    fn draws_well_formed_svg_with_every_name() {
        let svg = render(&sample());
        check_well_formed(&svg).unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        for name in [
            "snodo",
            "tower-mcp",
            "http_call_c64",
            "stdio_call_f1",
            "HTTP tools/call, c=64",
            "requests per second (req/s)",
            "latency (µs)",
            "p99.9",
            "90 000",
            "40.0 / 900 / n/a",
            "· schema-validation",
        ] {
            assert!(svg.contains(name), "{name} missing");
        }
        assert!(svg.contains("Throughput &lt;by&gt; server &amp; workload"));
        assert!(svg.contains("commit &quot;abc&quot;"));
        // A series without a bar has no legend entry, a group without a
        // figure no label.
        assert!(!svg.contains("unused"));
        assert!(!svg.contains("nothing measured"));
        for size in ["font-size=\"1\"", "font-size=\"9\"", "font-size=\"10\""] {
            assert!(!svg.contains(size));
        }
        assert_eq!(
            svg,
            render(&sample()),
            "the same chart draws the same bytes"
        );
    }

    #[test]
    fn bar_lengths_are_proportional_to_values() {
        let svg = render(&sample());
        let panels: Vec<&str> = svg.split("font-size=\"14\"").collect();
        assert_eq!(panels.len(), 3, "two panels");
        for panel in &panels[1..] {
            let bars = bars(panel);
            assert!(!bars.is_empty());
            let per_unit = bars[0].1 / bars[0].0;
            for (value, width) in &bars {
                assert!(
                    (width - value * per_unit).abs() < 0.01,
                    "{value} drawn {width} px wide, not {}",
                    value * per_unit
                );
            }
        }
        let first = bars(panels[1]);
        assert_eq!(
            first.iter().map(|b| b.0).collect::<Vec<_>>(),
            [90_000.0, 15_000.0, 12_000.0]
        );
        assert!(first[0].1 <= PLOT_WIDTH && first[0].1 > PLOT_WIDTH * 0.8);
    }

    #[test]
    fn the_checker_refuses_broken_xml() {
        check_well_formed("<svg><g></g><rect x=\"1\"/></svg>").unwrap();
        for broken in [
            "<svg><g></svg>",
            "<svg></g>",
            "<svg>a & b</svg>",
            "<svg><rect x=1/></svg>",
            "<svg/><svg/>",
            "<svg><text>1 > 0</text></svg>",
        ] {
            assert!(check_well_formed(broken).is_err(), "{broken}");
        }
    }

    #[test]
    fn axis_steps_and_values_read_well() {
        assert_eq!(axis(118_769.0), (25_000.0, 125_000.0));
        assert_eq!(axis(10.7), (2.5, 12.5));
        assert_eq!(axis(0.0), (1.0, 1.0));
        assert_eq!(format_value(491_392.4), "491 392");
        assert_eq!(format_value(10.73), "10.7");
        assert_eq!(format_value(0.104), "0.10");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
    }
}
