//! `--update-docs`: the one report, written where the documentation shows
//! it (between two marker lines in `README.md` and `bench/README.md`, and
//! whole in `bench/results/latest.md`), so that no copy drifts from
//! another; the charts in `bench/results/` are shown after the table, each
//! file linking them from where it is.

use std::path::Path;

use super::output::{ChartFile, images};

/// Where the report goes, and the charts' folder as seen from there.
const FILES: [(&str, &str); 2] = [
    ("README.md", "bench/results/"),
    ("bench/README.md", "results/"),
];

/// The report with the charts' images between its table (`top`) and the
/// rest (`bottom`), linked with `prefix`.
pub(crate) fn with_charts(top: &str, bottom: &str, charts: &[ChartFile], prefix: &str) -> String {
    if charts.is_empty() {
        return format!("{top}{bottom}");
    }
    format!("{top}\n{}{bottom}", images(charts, prefix))
}

/// The line before the generated report.
pub(crate) const BEGIN: &str =
    "<!-- snodo-bench report: begin (written by snodo-bench --update-docs) -->";
/// The line after it.
pub(crate) const END: &str = "<!-- snodo-bench report: end -->";

/// `text` with the lines between the markers replaced by `report`.
pub(crate) fn splice(text: &str, report: &str) -> Result<String, String> {
    let begin = text.find(BEGIN).ok_or("no begin marker")?;
    let after_begin = begin + BEGIN.len();
    let end = text[after_begin..]
        .find(END)
        .map(|i| i + after_begin)
        .ok_or("no end marker after the begin marker")?;
    Ok(format!(
        "{}\n\n{}\n\n{}",
        &text[..after_begin],
        report.trim(),
        &text[end..]
    ))
}

/// Writes the report (`top`: the header and the table; `bottom`: the goals
/// and notes) with `charts` (files in `bench/results/`) into the
/// documentation under `root`.
pub(crate) fn update(
    root: &Path,
    top: &str,
    bottom: &str,
    charts: &[ChartFile],
) -> Result<(), String> {
    for (file, prefix) in FILES {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        let new = splice(&text, &with_charts(top, bottom, charts, prefix))
            .map_err(|e| format!("{file}: {e}"))?;
        std::fs::write(&path, new).map_err(|e| format!("{file}: {e}"))?;
        eprintln!("updated {file}");
    }
    let latest = root.join("bench/results/latest.md");
    let report = with_charts(top, bottom, charts, "");
    std::fs::write(&latest, report.trim().to_string() + "\n")
        .map_err(|e| format!("bench/results/latest.md: {e}"))?;
    eprintln!("wrote bench/results/latest.md");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splices_between_the_markers_only() {
        let text = format!("intro\n{BEGIN}\nold table\n{END}\nafter\n");
        let out = splice(&text, "new table\n").unwrap();
        assert_eq!(
            out,
            format!("intro\n{BEGIN}\n\nnew table\n\n{END}\nafter\n")
        );
        assert_eq!(splice(&out, "new table").unwrap(), out);
        assert!(splice("no markers", "x").is_err());
        assert!(splice(&format!("{END}\n{BEGIN}\n"), "x").is_err());
    }

    #[test]
    fn each_file_links_the_charts_from_where_it_is() {
        let charts = vec![
            ("latest-throughput.svg".to_string(), "Throughput"),
            ("latest-cpu.svg".to_string(), "CPU"),
        ];
        let top = "| table |\n";
        let bottom = "\nGoals:\n\n- one\n";
        assert_eq!(
            with_charts(top, bottom, &charts, "bench/results/"),
            "| table |\n\n![Throughput](bench/results/latest-throughput.svg)\n\n\
             ![CPU](bench/results/latest-cpu.svg)\n\nGoals:\n\n- one\n"
        );
        assert_eq!(
            with_charts(top, bottom, &[], "x/"),
            "| table |\n\nGoals:\n\n- one\n"
        );
        for (file, prefix) in FILES {
            let root = super::super::provenance::workspace_root();
            let folder = Path::new(file)
                .parent()
                .unwrap_or(Path::new(""))
                .join(prefix);
            assert_eq!(
                root.join(folder).canonicalize().unwrap(),
                root.join("bench/results").canonicalize().unwrap(),
                "{file} links the charts with {prefix}"
            );
        }
    }
}
