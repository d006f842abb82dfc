
(function () {
  "use strict";
  var root = document.getElementById("app");
  var errors = 0;
  window.addEventListener("error", function () { errors += 1; root.setAttribute("data-errors", String(errors)); });

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var examples = data.examples;
  var hasGold = data.summary.n_gold_spans > 0;
  var SORTS = [["score-asc", "lowest score first"], ["score-desc", "highest score first"],
    ["support-asc", "lowest sentence support first"], ["id", "example id"]];
  var FILTERS = [["all", "all examples"], ["disagree", "disagrees with gold label"], ["below", "score below threshold"],
    ["inconsistent", "gold: inconsistent"], ["consistent", "gold: consistent"], ["gold-spans", "has gold spans"]];
  var state = { sort: "score-asc", filter: "all", q: "", page: 1, threshold: data.threshold };

  function known(options, value) {
    return options.some(function (option) { return option[0] === value; });
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function fmt(value) {
    return value === null || value === undefined ? "\u2014" : Number(value).toFixed(3);
  }
  function minSupport(ex) {
    if (ex._min === undefined) {
      var values = ex.sentences.concat(ex.qas).map(function (s) { return s.support; })
        .filter(function (v) { return v !== null; });
      ex._min = values.length ? Math.min.apply(null, values) : ex.score;
    }
    return ex._min;
  }
  function searchText(ex) {
    if (ex._search === undefined) {
      ex._search = (ex.id + "\n" + (ex.system || "") + "\n" + ex.output).toLowerCase();
    }
    return ex._search;
  }
  function disagrees(ex) {
    if (ex.score === null || ex.label === null) { return false; }
    return (ex.score >= state.threshold) !== (ex.label === 1);
  }
  function colour(value) {
    if (value === null || value === undefined) { return "#eaeef2"; }
    var lo = data.support_range[0], hi = data.support_range[1], t = state.threshold, strength;
    if (value >= t) {
      strength = hi > t ? (value - t) / (hi - t) : 1;
      return "hsl(135, 55%, " + (90 - 28 * Math.min(1, Math.max(0, strength))).toFixed(1) + "%)";
    }
    strength = t > lo ? (t - value) / (t - lo) : 1;
    return "hsl(2, 80%, " + (90 - 24 * Math.min(1, Math.max(0, strength))).toFixed(1) + "%)";
  }

  // --- state in the URL fragment ---
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (known(SORTS, params.get("sort"))) { state.sort = params.get("sort"); }
    if (known(FILTERS, params.get("filter"))) { state.filter = params.get("filter"); }
    state.q = params.get("q") || "";
    var page = parseInt(params.get("page"), 10);
    state.page = page >= 1 ? page : 1;
    var threshold = parseFloat(params.get("threshold"));
    state.threshold = isFinite(threshold) ? threshold : data.threshold;
  }
  function writeHash() {
    var params = new URLSearchParams();
    if (state.sort !== "score-asc") { params.set("sort", state.sort); }
    if (state.filter !== "all") { params.set("filter", state.filter); }
    if (state.q) { params.set("q", state.q); }
    if (state.page > 1) { params.set("page", String(state.page)); }
    if (state.threshold !== data.threshold) { params.set("threshold", String(state.threshold)); }
    var hash = params.toString();
    if (hash !== location.hash.replace(/^#/, "")) {
      try { history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search); } catch (e) { /* file: */ }
    }
  }

  // --- selection ---
  function keep(ex, query) {
    switch (state.filter) {
      case "disagree": if (!disagrees(ex)) { return false; } break;
      case "below": if (ex.score === null || ex.score >= state.threshold) { return false; } break;
      case "inconsistent": if (ex.label !== 0) { return false; } break;
      case "consistent": if (ex.label !== 1) { return false; } break;
      case "gold-spans": if (!ex.gold.length) { return false; } break;
      default: break;
    }
    return !query || searchText(ex).indexOf(query) >= 0;
  }
  function byNumber(a, b, sign) {
    if (a === b) { return 0; }
    if (a === null || a === undefined) { return 1; }
    if (b === null || b === undefined) { return -1; }
    return sign * (a - b);
  }
  function compare(a, b) {
    var order = 0;
    if (state.sort === "score-asc") { order = byNumber(a.score, b.score, 1); }
    if (state.sort === "score-desc") { order = byNumber(a.score, b.score, -1); }
    if (state.sort === "support-asc") { order = byNumber(minSupport(a), minSupport(b), 1); }
    return order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }
  function selected() {
    var query = state.q.trim().toLowerCase();
    return examples.filter(function (ex) { return keep(ex, query); }).sort(compare);
  }

  // --- text with overlapping spans ---
  function pieces(length, spans) {
    var cuts = [0, length];
    spans.forEach(function (s) { cuts.push(Math.max(0, Math.min(length, s.start)), Math.max(0, Math.min(length, s.end))); });
    cuts.sort(function (a, b) { return a - b; });
    var out = [];
    for (var i = 0; i + 1 < cuts.length; i += 1) {
      var a = cuts[i], b = cuts[i + 1];
      if (a === b) { continue; }
      out.push({ start: a, end: b, spans: spans.filter(function (s) { return s.start <= a && s.end >= b; }) });
    }
    return out;
  }
  function ofKind(piece, kind) {
    return piece.spans.filter(function (s) { return s.kind === kind; });
  }
  function goldSpans(ex, side) {
    return ex.gold.filter(function (g) { return g.side === side; })
      .map(function (g) { return { kind: "gold", start: g.start, end: g.end, note: g.note }; });
  }
  function goldTitle(spans) {
    return spans.map(function (s) { return "gold span" + (s.note ? ": " + s.note : ""); }).join("; ");
  }

  function weakestQa(ex) {
    // the QA whose evidence the source shows when no sentence is selected: the lowest-supported
    return ex.qas.reduce(function (a, q, i) { return a < 0 || byNumber(q.support, ex.qas[a].support, 1) < 0 ? i : a; }, -1);
  }
  function qaTitle(ex, i) {
    var q = ex.qas[i];
    return "QA " + (i + 1) + ": " + q.question + " \u2192 " + q.answer + ": support " + fmt(q.support);
  }
  function renderOutput(box, ex, current) {
    var spans = ex.sentences.map(function (s, i) { return { kind: "sentence", start: s.start, end: s.end, index: i }; });
    ex.qas.forEach(function (q, i) {
      q.spans.forEach(function (span) { spans.push({ kind: "qa", start: span[0], end: span[1], index: i }); });
    });
    goldSpans(ex, "output").forEach(function (g) { spans.push(g); });
    ex.spans.forEach(function (p) {
      spans.push({ kind: "predicted", start: p.start, end: p.end, probability: p.probability, span: p });
    });
    box.textContent = "";
    pieces(ex.output.length, spans).forEach(function (piece) {
      var node = el("span", null, ex.output.slice(piece.start, piece.end));
      var sentence = ofKind(piece, "sentence")[0], gold = ofKind(piece, "gold"), titles = [];
      if (sentence) {
        var s = ex.sentences[sentence.index];
        node.className = "sentence" + (sentence.index === current ? " selected" : "");
        node.style.background = colour(s.support);
        node.setAttribute("data-sentence", String(sentence.index));
        node.tabIndex = 0;
        titles.push("sentence " + (sentence.index + 1) + ": support " + fmt(s.support) + (s.cut ? " (input cut)" : ""));
      }
      var qas = ofKind(piece, "qa").map(function (q) { return q.index; })
        .filter(function (i, k, all) { return all.indexOf(i) === k; });
      if (qas.length) {
        // the weakest QA covering this text colours it, as the localisation metric reads it
        var weakest = qas.reduce(function (a, b) { return byNumber(ex.qas[b].support, ex.qas[a].support, 1) < 0 ? b : a; });
        node.classList.add("qa");
        node.style.background = colour(ex.qas[weakest].support);
        node.setAttribute("data-qa", String(weakest));
        qas.forEach(function (i) { titles.push(qaTitle(ex, i)); });
      }
      if (gold.length) { node.classList.add("gold"); titles.push(goldTitle(gold)); }
      var predicted = ofKind(piece, "predicted");
      if (predicted.length) {
        node.classList.add("predicted");
        titles.push("unsupported: P " + fmt(predicted[0].probability) + typeText(predicted[0].span) + "\n" +
          predicted[0].span.explanation);
      }
      if (titles.length) { node.title = titles.join("\n"); }
      box.appendChild(node);
      if (sentence && piece.end === ex.sentences[sentence.index].end) {
        box.appendChild(el("span", "support", fmt(ex.sentences[sentence.index].support)));
      }
    });
  }

  function renderSource(box, ex, current) {
    var text = data.sources[ex.source], spans = [];
    ex.sentences.forEach(function (s, i) {
      s.evidence.forEach(function (e) { spans.push({ kind: "evidence", start: e[0], end: e[1], index: i }); });
    });
    ex.qas.forEach(function (q, i) {
      q.evidence.forEach(function (e) { spans.push({ kind: "evidence", start: e[0], end: e[1], qa: i }); });
    });
    goldSpans(ex, "source").forEach(function (g) { spans.push(g); });
    box.textContent = "";
    var first = null, shownQa = current < 0 ? weakestQa(ex) : -1;
    pieces(text.length, spans).forEach(function (piece) {
      var evidence = ofKind(piece, "evidence"), gold = ofKind(piece, "gold");
      if (!evidence.length && !gold.length) {
        box.appendChild(document.createTextNode(text.slice(piece.start, piece.end)));
        return;
      }
      var node = el("span", null, text.slice(piece.start, piece.end)), titles = [];
      if (evidence.length) {
        var indices = evidence.filter(function (e) { return e.qa === undefined; }).map(function (e) { return e.index; });
        var qaIndices = evidence.filter(function (e) { return e.qa !== undefined; }).map(function (e) { return e.qa + 1; });
        node.classList.add("evidence");
        if (indices.indexOf(current) >= 0 || (shownQa >= 0 && qaIndices.indexOf(shownQa + 1) >= 0)) {
          node.classList.add("active");
          first = first || node;
        }
        if (indices.length) { titles.push("evidence of sentence " + indices.map(function (i) { return i + 1; }).join(", ")); }
        if (qaIndices.length) { titles.push("evidence of QA " + qaIndices.join(", ")); }
      }
      if (gold.length) { node.classList.add("gold"); titles.push(goldTitle(gold)); }
      node.title = titles.join("\n");
      box.appendChild(node);
    });
    return first;
  }

  // a span's error type: FRANK's category with its probability and FAVA's name for it ("" without a type head)
  function typeText(p) {
    return p.error_type ? "; " + p.error_type + " " + fmt(p.error_type_probability) + ", FAVA " + p.fava_type : "";
  }

  function notes(ex) {
    var list = el("ul", "notes");
    var low = ex.sentences.map(function (s, i) { return s.support !== null && s.support < state.threshold ? i + 1 : 0; })
      .filter(function (i) { return i > 0; });
    var lowQas = ex.qas.map(function (q, i) { return q.support !== null && q.support < state.threshold ? i + 1 : 0; })
      .filter(function (i) { return i > 0; });
    var flagged = (low.length ? ["sentence " + low.join(", ")] : []).concat(lowQas.length ? ["QA " + lowQas.join(", ")] : []);
    list.appendChild(el("li", null, "predicted unsupported (support < " + state.threshold + "): " +
      (flagged.length ? flagged.join("; ") : "none")));
    if (ex.spans.length) {
      var spanItem = el("li", null, "unsupported spans (P > " + fmt(data.token_threshold) + "):"), spanList = el("ol", "spans");
      ex.spans.forEach(function (p) {
        spanList.appendChild(el("li", "span-item", "\u201c" + ex.output.slice(p.start, p.end) + "\u201d (P " +
          fmt(p.probability) + typeText(p) + "): " + p.explanation));
      });
      spanItem.appendChild(spanList);
      list.appendChild(spanItem);
    }
    if (ex.correction) {
      var fix = el("li", "correction", "suggested fix: \u201c" + ex.correction.text + "\u201d");
      var edits = el("ol", "edits");
      ex.correction.edits.forEach(function (e) {
        edits.appendChild(el("li", "edit", "\u201c" + e.text + "\u201d \u2192 " +
          (e.replacement ? "\u201c" + e.replacement + "\u201d" : "deleted") +
          " (support " + fmt(e.support_before) + " \u2192 " + fmt(e.support_after) + ")"));
      });
      fix.appendChild(edits);
      list.appendChild(fix);
    }
    if (ex.qas.length) {
      var item = el("li", null, "QAs (question \u2192 answer: support):"), qaList = el("ol", "qas");
      ex.qas.forEach(function (q) {
        var entry = el("li", "qa-item", q.question + " \u2192 " + q.answer + ": " + fmt(q.support));
        entry.style.background = colour(q.support);
        qaList.appendChild(entry);
      });
      item.appendChild(qaList);
      list.appendChild(item);
    }
    if (hasGold) {
      var gold = ex.gold.map(function (g) {
        var text = g.side === "output" ? ex.output : data.sources[ex.source];
        return g.side + " \u201c" + text.slice(g.start, g.end) + "\u201d" + (g.note ? " (" + g.note + ")" : "");
      });
      list.appendChild(el("li", null, "gold spans: " + (gold.length ? gold.join("; ") : "none")));
    }
    if (ex.sentences.concat(ex.qas).some(function (s) { return s.cut; })) {
      list.appendChild(el("li", "cut", "the scorer cut this example's input to fit its model"));
    }
    return list;
  }

  function card(ex, rank) {
    var article = el("article", "example");
    article.setAttribute("data-example-id", ex.id);
    var head = el("div", "example-head");
    head.appendChild(el("span", "rank", "#" + rank));
    head.appendChild(el("span", "example-id", ex.id));
    if (ex.system) { head.appendChild(el("span", "system", ex.system)); }
    var score = el("span", "badge score", "score " + fmt(ex.score));
    score.style.background = colour(ex.score);
    head.appendChild(score);
    var label = ex.label === 1 ? "consistent" : ex.label === 0 ? "inconsistent" : "unlabelled";
    head.appendChild(el("span", "badge label-" + (ex.label === null ? "none" : ex.label), "gold: " + label));
    if (disagrees(ex)) { head.appendChild(el("span", "badge warn disagrees", "disagrees with gold")); }
    article.appendChild(head);

    var current = -1;
    ex.sentences.forEach(function (s, i) {
      if (current < 0 || byNumber(s.support, ex.sentences[current].support, 1) < 0) { current = i; }
    });
    var columns = el("div", "columns"), left = el("div"), right = el("div");
    var output = el("p", "output"), source = el("div", "source"), sourceHead = el("h3");
    var n = ex.sentences.length, m = ex.qas.length;
    left.appendChild(el("h3", null, m
      ? "Output (" + m + (m === 1 ? " QA" : " QAs") + ", each text coloured by the lowest support of the QAs covering it)"
      : "Output (" + n + (n === 1 ? " sentence" : " sentences") + ", coloured by support)"));
    left.appendChild(output);
    left.appendChild(notes(ex));
    right.appendChild(sourceHead);
    right.appendChild(source);
    columns.appendChild(left);
    columns.appendChild(right);
    article.appendChild(columns);

    function show(index) {
      current = index;
      renderOutput(output, ex, current);
      var active = renderSource(source, ex, current);
      var qa = current < 0 ? weakestQa(ex) : -1;
      var what = (data.evidence_kind || "evidence") + (current >= 0 ? " for sentence " + (current + 1) : " for QA " + (qa + 1));
      sourceHead.textContent = "Source" + (current >= 0 || qa >= 0 ? " \u2014 " + what : "");
      article._scroll = function () { source.scrollTop = active ? Math.max(0, active.offsetTop - 24) : 0; };
      if (article.isConnected) { article._scroll(); }
    }
    function pick(event) {
      var target = event.target.closest ? event.target.closest("[data-sentence]") : null;
      if (target) { show(parseInt(target.getAttribute("data-sentence"), 10)); }
    }
    output.addEventListener("click", pick);
    output.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(event); }
    });
    show(current);
    return article;
  }

  // --- page ---
  var toolbar = el("div", "toolbar"), count = el("p"), list = el("div"), bottom = el("div", "pager");
  count.id = "count";
  list.id = "examples";
  var pagers = [];

  function select(name, options, key) {
    var wrap = el("label", null, name), node = el("select");
    node.id = key;
    options.forEach(function (option) { var o = el("option", null, option[1]); o.value = option[0]; node.appendChild(o); });
    node.addEventListener("change", function () { state[key] = node.value; state.page = 1; render(); });
    wrap.appendChild(node);
    return wrap;
  }
  function pager(container) {
    var prev = el("button", "prev", "\u2190 previous"), label = el("span", "page-label");
    var next = el("button", "next", "next \u2192");
    prev.type = next.type = "button";
    prev.addEventListener("click", function () { state.page -= 1; render(); window.scrollTo(0, 0); });
    next.addEventListener("click", function () { state.page += 1; render(); window.scrollTo(0, 0); });
    container.appendChild(prev); container.appendChild(label); container.appendChild(next);
    pagers.push({ prev: prev, next: next, label: label });
    return container;
  }
  toolbar.appendChild(select("Sort", SORTS, "sort"));
  toolbar.appendChild(select("Filter", FILTERS, "filter"));
  var searchWrap = el("label", null, "Search"), search = el("input");
  search.type = "search"; search.id = "q"; search.placeholder = "output, example id, system";
  var timer = null;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.q = search.value; state.page = 1; render(); }, 150);
  });
  searchWrap.appendChild(search);
  toolbar.appendChild(searchWrap);
  var thresholdWrap = el("label", null, "Threshold"), threshold = el("input");
  threshold.type = "number"; threshold.step = "0.01"; threshold.id = "threshold";
  threshold.addEventListener("change", function () {
    var value = parseFloat(threshold.value);
    if (isFinite(value)) { state.threshold = value; state.page = 1; render(); }
  });
  thresholdWrap.appendChild(threshold);
  toolbar.appendChild(thresholdWrap);
  toolbar.appendChild(pager(el("div", "pager")));

  var legend = el("div", "legend");
  function swatch(text, className, background) {
    var node = el("span", "swatch " + (className || ""), text);
    if (background) { node.style.background = background; }
    legend.appendChild(node);
  }
  root.appendChild(toolbar);
  root.appendChild(legend);
  root.appendChild(count);
  root.appendChild(list);
  root.appendChild(pager(bottom));

  function renderLegend() {
    legend.textContent = "";
    var lo = data.support_range[0], hi = data.support_range[1], t = state.threshold;
    swatch("support " + fmt(lo), null, colour(lo));
    swatch("below threshold " + t, null, colour((lo + t) / 2));
    swatch("at threshold", null, colour(t));
    swatch("support " + fmt(hi), null, colour(hi));
    var qaPage = data.summary.n_qas > 0;
    swatch("evidence (" + (data.evidence_kind || "none recorded") + ")", "evidence");
    swatch(qaPage ? "evidence of the selected sentence or, without one, the weakest QA" : "evidence of the selected sentence",
      "evidence active");
    if (hasGold) { swatch("gold span", "gold"); }
    if (data.summary.n_predicted_spans > 0) {
      swatch("unsupported (token head, P > " + fmt(data.token_threshold) + ")", "predicted");
    }
    legend.appendChild(el("span", null, qaPage
      ? "QAs: each output text coloured by the weakest QA covering it; click a sentence to show its evidence"
      : "click a sentence to show its evidence"));
  }

  function render() {
    var started = performance.now();
    var chosen = selected(), size = data.page_size;
    var pages = Math.max(1, Math.ceil(chosen.length / size));
    state.page = Math.min(Math.max(1, state.page), pages);
    var first = (state.page - 1) * size, shown = chosen.slice(first, first + size);
    document.getElementById("sort").value = state.sort;
    document.getElementById("filter").value = state.filter;
    if (search.value !== state.q) { search.value = state.q; }
    threshold.value = String(state.threshold);
    renderLegend();
    count.textContent = chosen.length
      ? "Showing " + (first + 1) + "\u2013" + (first + shown.length) + " of " + chosen.length +
        " matching examples (" + examples.length + " in total)"
      : "No example matches (" + examples.length + " in total)";
    count.setAttribute("data-total", String(examples.length));
    count.setAttribute("data-matching", String(chosen.length));
    count.setAttribute("data-shown", String(shown.length));
    count.setAttribute("data-page", String(state.page));
    count.setAttribute("data-pages", String(pages));
    pagers.forEach(function (p) {
      p.label.textContent = "page " + state.page + " of " + pages;
      p.prev.disabled = state.page <= 1;
      p.next.disabled = state.page >= pages;
    });
    list.textContent = "";
    var cards = shown.map(function (ex, i) { return card(ex, first + i + 1); });
    var fragment = document.createDocumentFragment();
    cards.forEach(function (c) { fragment.appendChild(c); });
    if (!cards.length) { fragment.appendChild(el("p", "empty", "Nothing to show: change the filter or the search.")); }
    list.appendChild(fragment);
    cards.forEach(function (c) { if (c._scroll) { c._scroll(); } });
    writeHash();
    root.setAttribute("data-render-ms", (performance.now() - started).toFixed(1));
    root.setAttribute("data-ready-ms", performance.now().toFixed(1));
    root.setAttribute("data-ready", "1");
  }

  window.addEventListener("hashchange", function () { readHash(); render(); });
  readHash();
  render();
}());
