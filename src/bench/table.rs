//! A table of text cells rendered two ways: aligned plain text for the terminal
//! ([`Table::to_text`]) and an HTML `<table>` for report.html ([`Table::to_html`]) whose columns
//! sort on a click on their header ([`SORT_SCRIPT`], inline: the report stays self-contained).
//!
//! Invariant: the text and the HTML show the same cells in the same order (the HTML only adds
//! tooltips and sorting), so what the terminal prints and what the report shows never differ.
//! Bounds: one row per pushed row; nothing is truncated.

use std::fmt::Write as _;

use super::plot::escape;

/// A header row and rows of cells, with an optional caption.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// What the table shows (a line above it; HTML: `<p class="caption">`, as wide as the page,
    /// where a `<caption>` would wrap at the width of a narrow table).
    pub caption: Option<String>,
    /// Column headers.
    pub header: Vec<String>,
    /// Rows of cells (a row may be shorter than the header).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headers.
    #[must_use]
    pub fn new(header: &[&str]) -> Table {
        Table {
            caption: None,
            header: header.iter().map(ToString::to_string).collect(),
            rows: Vec::new(),
        }
    }

    /// The table with a caption.
    #[must_use]
    pub fn with_caption(mut self, caption: impl Into<String>) -> Table {
        self.caption = Some(caption.into());
        self
    }

    /// The caption (if any) on its own line, then the header and rows: the first column
    /// left-aligned, the others right-aligned, two spaces apart, no trailing blanks.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if let Some(caption) = &self.caption {
            let _ = writeln!(out, "{caption}");
        }
        let lines = std::iter::once(&self.header).chain(&self.rows);
        let columns = lines.clone().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .clone()
                    .filter_map(|row| row.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in lines {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let width = widths[c];
                if c == 0 {
                    let _ = write!(line, "{cell:<width$}");
                } else {
                    let _ = write!(line, "  {cell:>width$}");
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }

    /// The table as HTML: the caption, then `<table class="data sortable">` with a `<thead>`
    /// whose cells carry `explain(header)` as a tooltip, and a `<tbody>`; every text escaped.
    /// The first column is the row's name (`<th scope="row">`), the others data cells.
    #[must_use]
    pub fn to_html(&self, explain: impl Fn(&str) -> Option<&'static str>) -> String {
        let mut out = String::new();
        if let Some(caption) = &self.caption {
            let _ = writeln!(out, "<p class=\"caption\">{}</p>", escape(caption));
        }
        out.push_str("<table class=\"data sortable\"><thead><tr>");
        for name in &self.header {
            match explain(name) {
                Some(meaning) => {
                    let _ = write!(
                        out,
                        "<th scope=\"col\" title=\"{}\">{}</th>",
                        escape(meaning),
                        escape(name)
                    );
                }
                None => {
                    let _ = write!(out, "<th scope=\"col\">{}</th>", escape(name));
                }
            }
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in row.iter().enumerate() {
                if c == 0 {
                    let _ = write!(out, "<th scope=\"row\">{}</th>", escape(cell));
                } else if starts_numeric(cell) {
                    let _ = write!(out, "<td>{}</td>", escape(cell));
                } else {
                    let _ = write!(out, "<td class=\"text\">{}</td>", escape(cell));
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n");
        out
    }
}

/// Whether a cell reads as a figure (`42`, `-3.5`, `2.10x`, `0.04 (2%)`, or `-` for none):
/// right-aligned; other cells (`device-bound`, `clean (...)`) are text, left-aligned.
fn starts_numeric(cell: &str) -> bool {
    let cell = cell.trim();
    let unsigned = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    cell == "-" || unsigned.starts_with(|c: char| c.is_ascii_digit())
}

/// The style of [`Table::to_html`]'s tables: compact, numbers right-aligned in tabular figures,
/// alternate rows shaded, the sorted column's header marked with an arrow.
pub const TABLE_CSS: &str = "table.data{border-collapse:collapse;margin:.5em 0 1.2em;\
     font-size:14px;font-variant-numeric:tabular-nums}\
     p.caption{font-weight:bold;font-size:14px;margin:1em 0 .2em}\
     table.data th,table.data td{border:1px solid #ccc;padding:3px 7px;white-space:nowrap}\
     table.data td{text-align:right}table.data td.text{text-align:left}\
     table.data tbody th{text-align:left;font-weight:normal}\
     table.data thead th{background:#eee;cursor:pointer;user-select:none}\
     table.data tbody tr:nth-child(even){background:#f7f7f7}\
     table.data th[aria-sort=ascending]::after{content:\" \\25B2\"}\
     table.data th[aria-sort=descending]::after{content:\" \\25BC\"}";

/// Sorts a `table.sortable` by the column whose header is clicked (again: the other way).
/// A cell that starts with a number sorts as that number (`2.10x`, `0.04 (2%)`), others as text
/// after the numbers; empty and `-` cells go last either way. Inline, no external resource.
pub const SORT_SCRIPT: &str = "<script>\n\
(function(){\n\
function key(row,col){var t=row.cells[col].textContent.trim();\n\
 if(t===''||t==='-'){return null;}var n=parseFloat(t);return isNaN(n)?t:n;}\n\
function compare(a,b){if(typeof a===typeof b){return a<b?-1:a>b?1:0;}\n\
 return typeof a==='number'?-1:1;}\n\
document.querySelectorAll('table.sortable').forEach(function(table){\n\
 var heads=table.tHead.rows[0].cells;\n\
 Array.prototype.forEach.call(heads,function(th,col){\n\
  th.addEventListener('click',function(){\n\
   var up=th.getAttribute('aria-sort')!=='ascending';\n\
   Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});\n\
   th.setAttribute('aria-sort',up?'ascending':'descending');\n\
   var body=table.tBodies[0];\n\
   var rows=Array.prototype.slice.call(body.rows);\n\
   rows.sort(function(a,b){var x=key(a,col),y=key(b,col);\n\
    if(x===null||y===null){return (x===null)-(y===null);}\n\
    return up?compare(x,y):compare(y,x);});\n\
   rows.forEach(function(row){body.appendChild(row);});\n\
  });\n\
 });\n\
});\n\
})();\n\
</script>\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut table = Table::new(&["scheme", "ops/s"]).with_caption("a <b> table");
        table.rows.push(vec!["vanilla".into(), "100".into()]);
        table.rows.push(vec!["lru-c".into(), "2500".into()]);
        table
    }

    #[test]
    fn figures_align_right_and_words_left() {
        for figure in ["42", "-3.5", "+2%", "2.10x", "0.04 (2%)", "-"] {
            assert!(starts_numeric(figure), "{figure}");
        }
        for text in [
            "device-bound",
            "clean (10 rows)",
            "no (drift -14%)",
            "-x",
            "",
        ] {
            assert!(!starts_numeric(text), "{text}");
        }
        let mut table = Table::new(&["scheme", "bound"]);
        table.rows.push(vec!["war".into(), "device-bound".into()]);
        assert!(
            table
                .to_html(|_| None)
                .contains("<td class=\"text\">device-bound</td>")
        );
    }

    #[test]
    fn text_aligns_the_first_column_left_and_the_others_right() {
        assert_eq!(
            sample().to_text(),
            "a <b> table\nscheme   ops/s\nvanilla    100\nlru-c     2500\n"
        );
    }

    #[test]
    fn html_escapes_and_explains_the_headers() {
        let html = sample().to_html(|name| (name == "ops/s").then_some("per \"second\""));
        assert!(html.starts_with("<p class=\"caption\">a &lt;b&gt; table</p>"));
        assert!(html.contains("<th scope=\"col\" title=\"per &quot;second&quot;\">ops/s</th>"));
        assert!(html.contains("<th scope=\"col\">scheme</th>"));
        assert!(html.contains("<tr><th scope=\"row\">lru-c</th><td>2500</td></tr>"));
        assert_eq!(html.matches("<tr>").count(), 3);
    }
}
