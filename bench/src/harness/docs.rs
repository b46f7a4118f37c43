//! `--update-docs`: the one report, written where the documentation shows
//! it (between two marker lines in `README.md` and `bench/README.md`, and
//! whole in `bench/results/latest.md`), so that no copy drifts from
//! another.

use std::path::Path;

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

/// Writes `report` into the documentation under `root`.
pub(crate) fn update(root: &Path, report: &str) -> Result<(), String> {
    for file in ["README.md", "bench/README.md"] {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        let new = splice(&text, report).map_err(|e| format!("{file}: {e}"))?;
        std::fs::write(&path, new).map_err(|e| format!("{file}: {e}"))?;
        eprintln!("updated {file}");
    }
    let latest = root.join("bench/results/latest.md");
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
}
