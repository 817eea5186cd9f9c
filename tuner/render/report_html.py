"""HTML pieces of the report: escaping, tables, embedded PNGs, the page shell (Jinja2).

The page is one self-contained file: inline CSS, PNGs as base64 data URIs, and a few lines of
script that report (console.error) any image the browser could not decode. The shell, the
opening summary, tables and images are Jinja2 templates (templates/, autoescaped); the sections'
cells are built by report.py with every text escaped (esc).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import jinja2
from markupsafe import Markup

if TYPE_CHECKING:
    from tuner.render.report_summary import Summary

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;
 max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.ok{color:#1a7f37}.bad{color:#cf222e}
.note{color:#666;font-size:12px}
img.plot{max-width:100%;border:1px solid #eee;margin:6px 0;display:block}
code{background:#f6f8fa;padding:1px 4px}
.summary{border:2px solid #1a7f37;border-radius:6px;padding:10px 16px;margin:12px 0 20px;max-width:1000px}
.summary.poor{border-color:#cf222e}.summary .headline{font-size:18px;font-weight:600;margin:4px 0 10px}
.summary dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;margin:0;font-size:15px}
.summary dt{color:#555}.summary dd{margin:0}
.summary table.ba{margin:10px 0 4px;font-size:14px}.summary table.ba caption{text-align:left;color:#555;
padding-bottom:4px}.summary table.ba td,.summary table.ba th{padding:2px 12px}.summary .run{font-weight:400;
font-size:11px;color:#555}
"""

# After loading: console.error for any plot the browser could not decode; the body records how many
# plots loaded, where they are on the page (x,y,width,height;...) and the page's height.
SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('img.plot'); var bad = 0; var boxes = [];
  imgs.forEach(function (img) {
    if (!img.complete || img.naturalWidth === 0) { bad++; console.error('plot did not load: ' + img.alt); }
    var r = img.getBoundingClientRect();
    var box = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
    boxes.push(box.map(Math.round).join(','));
  });
  document.body.setAttribute('data-plots', String(imgs.length - bad));
  document.body.setAttribute('data-plot-boxes', boxes.join(';'));
  document.body.setAttribute('data-height', String(document.documentElement.scrollHeight));
  var summary = document.getElementById('summary');
  if (summary) {
    var s = summary.getBoundingClientRect();
    var box = [s.left, s.top, s.width, s.height].map(Math.round);
    document.body.setAttribute('data-summary-box', box.join(','));
  }
});
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def num(value: float | None, digits: int = 1, suffix: str = "") -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}{suffix}"


def img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return str(_parts().img(data, alt))


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Cells are HTML already (escape text with esc); the first `left` columns align left."""
    cells = [[Markup(c) for c in row] for row in rows]
    return str(_parts().table([Markup(h) for h in head], cells, left))


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("tuner.render", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


@cache
def _parts() -> Any:
    """The macros of templates/report_parts.html.j2 (table, img)."""
    return _env().get_template("report_parts.html.j2").module


def page(
    title: str,
    body: Sequence[str],
    summary: Summary | None = None,
    sections: Sequence[Section] = (),
) -> str:
    """The page: title, the summary (when given), then `body` (HTML already escaped)."""
    template = _env().get_template("report.html.j2")
    return template.render(
        title=title,
        css=Markup(CSS),
        script=Markup(SCRIPT),
        summary=summary,
        sections=sections,
        body=[Markup(part) for part in body],
    )
