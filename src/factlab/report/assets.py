"""The localisation page's inline stylesheet and script (factlab.report.localise_command.render_html), read from the
package's static/page.css and static/page.js.

`PACKAGE_DATA` names them for the workflow's code inputs (factlab.workflow.codedeps lists a module's package data beside
its source), so editing the page reruns the rule that renders it.

The script reads the payload from `<script type="application/json" id="report-data">` and renders one
page of examples at a time (paging, not one DOM block per example). It never parses data as markup:
every text goes in through `textContent` or an attribute. Its state lives in the URL fragment, so a
view can be linked or opened directly: `#filter=disagree&sort=score-asc&q=text&page=2&threshold=0.4`.
When rendering is done `#app` carries data-ready="1", data-render-ms (the last render) and data-ready-ms
(since navigation start); uncaught errors are counted
in data-errors; `#count` carries data-total, data-matching, data-shown, data-page and data-pages.
"""

from __future__ import annotations

from importlib.resources import files

# Files beside this module that it reads: factlab.workflow.codedeps adds them to the code inputs of every rule importing it.
PACKAGE_DATA = ("static/page.css", "static/page.js")

PAGE_CSS, PAGE_JS = (files(__package__).joinpath(name).read_text(encoding="utf-8") for name in PACKAGE_DATA)
