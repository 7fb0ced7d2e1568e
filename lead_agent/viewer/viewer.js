// research-agents trace viewer: draws the inline JSON of one run (no network, no libraries).
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("trace-data").textContent);
  var AGENTS = {};
  D.agents.forEach(function (a) { AGENTS[a.id] = a; });

  function el(tag, attrs) {
    var n = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "text") n.textContent = v;
        else if (k === "cls") n.className = v;
        else if (k === "on") Object.keys(v).forEach(function (ev) { n.addEventListener(ev, v[ev]); });
        else n.setAttribute(k, v);
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      if (Array.isArray(c)) c.forEach(function (x) { if (x) n.appendChild(typeof x === "string" ? document.createTextNode(x) : x); });
      else n.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return n;
  }
  function secs(s) { return s === null || s === undefined ? "–" : (s < 60 ? s.toFixed(2) + "s" : Math.floor(s / 60) + "m" + Math.round(s % 60) + "s"); }
  function cost(c) { return c === null || c === undefined ? "unknown" : "$" + c.toFixed(4); }
  function tok(n) { return n >= 1000 ? (n / 1000).toFixed(1) + "k" : String(n || 0); }
  function badge(s) { return el("span", { cls: "badge s-" + s, text: s }); }
  function pretty(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 1); }
  function kv(pairs) {
    var dl = el("dl", { cls: "kv" });
    pairs.forEach(function (p) { if (p[1] !== null && p[1] !== undefined && p[1] !== "") { dl.appendChild(el("dt", { text: p[0] })); dl.appendChild(el("dd", null, p[1])); } });
    return dl;
  }
  function usageText(u) {
    if (!u) return "–";
    var s = "in " + tok(u.input_tokens) + " / out " + tok(u.output_tokens);
    if (u.cache_read_input_tokens || u.cache_creation_input_tokens) s += " / cache write " + tok(u.cache_creation_input_tokens) + " read " + tok(u.cache_read_input_tokens);
    return s;
  }

  // ---- the detail panel
  var detail;
  function show(title, body) {
    detail.textContent = "";
    detail.appendChild(el("h3", { text: title }));
    (Array.isArray(body) ? body : [body]).forEach(function (b) { if (b) detail.appendChild(b); });
    detail.scrollTop = 0;
  }
  function select(cls, node) {
    Array.prototype.forEach.call(document.querySelectorAll("." + cls + ".sel"), function (x) { x.classList.remove("sel"); });
    if (node) node.classList.add("sel");
  }

  function spanDetail(a, sp) {
    var rows = [["agent", a.id], ["kind", sp.k === "m" ? "model call" : "tool call"], [sp.k === "m" ? "model" : "tool", sp.n],
      ["turn", String(sp.turn)], ["start", secs(sp.s)], ["duration", secs(sp.e - sp.s) + (sp.open ? " (no reply recorded: still running or cut off)" : "")]];
    if (sp.k === "m") { rows.push(["tokens", usageText(sp.u)]); rows.push(["cost", cost(sp.c)]); rows.push(["stop", sp.stop || "–"]); }
    if (sp.err) rows.push(["result", "error"]);
    var body = [kv(rows), el("h4", { text: "input" }), el("pre", { text: pretty(sp.in) })];
    if (sp.out !== undefined) {
      body.push(el("h4", { text: "output" }));
      if (sp.k === "m") sp.out.forEach(function (b) { body.push(el("pre", { text: b.text !== undefined ? b.text : b.tool ? "→ " + b.tool + " (see its tool call)" : pretty(b.result) })); });
      else body.push(el("pre", { text: sp.out }));
    }
    show((sp.k === "m" ? "Model call " : "Tool call ") + sp.n, body);
  }

  function sourceDetail(sid, n) {
    var s = D.sources[sid];
    if (!s) { show("Source " + sid, el("p", { cls: "muted", text: "This source is not in the run's sources.json." })); return; }
    var link = s.href ? el("a", { href: s.href, target: "_blank", rel: "noopener", text: s.href }) : el("span", { cls: "muted", text: "no link known" });
    show((n ? "[" + n + "] " : "") + s.label, [kv([["source", sid], ["where", s.where], ["kind", s.kind], ["link", link], ["retrieved by", (s.by || []).join(", ")]]),
      el("h4", { text: "retrieved passage" }), el("pre", { cls: "passage", text: s.text })]);
  }

  function agentDetail(a) {
    var d = a.delegation, body = [];
    body.push(kv([["status", badge(a.status)], ["role", a.role], ["model", a.model], ["round", a.round === null ? "" : String(a.round)],
      ["stop", a.stop], ["error", a.error], ["time", secs(a.started) + " → " + secs(a.ended)], ["tool calls", String(a.tool_calls)],
      ["turns", String(a.turns)], ["tokens", usageText(a.usage)], ["cost", cost(a.cost)]]));
    if (d) {
      body.push(el("h4", { text: "delegation" }));
      body.push(el("p", { cls: "objective", text: d.objective }));
      body.push(kv([["output format", d.output_format], ["tools", d.tools.join(", ")], ["queries", (d.queries || []).join("; ")],
        ["budget", d.budget.max_tool_calls + " tool calls, " + d.budget.max_tokens + " tokens, " + d.budget.max_seconds + "s"],
        ["out of scope", (d.boundaries.out_of_scope || []).join("; ")]]));
    }
    if (a.findings) body.push(findingsView(a.findings));
    show("Agent " + a.id, body);
  }

  function findingsView(f) {
    var box = el("div", { cls: "findings" }, el("h4", null, "findings ", badge(f.status)));
    if (f.summary) box.appendChild(el("p", { text: f.summary }));
    f.claims.forEach(function (c) {
      box.appendChild(el("div", { cls: "claim" }, "• " + c.text + " ", c.source_ids.map(function (sid) {
        return el("span", { cls: "sid", text: "[" + sid + "] ", on: { click: function (ev) { ev.stopPropagation(); sourceDetail(sid); } } });
      })));
    });
    (f.open_questions || []).forEach(function (q) { box.appendChild(el("div", { cls: "claim muted", text: "? " + q })); });
    return box;
  }

  // ---- sections
  function header() {
    var r = D.run, c = D.citation;
    var facts = el("div", { cls: "facts" },
      el("span", null, badge(r.status)),
      el("span", null, "run ", el("b", { text: r.id })),
      el("span", null, "started ", el("b", { text: r.started_at || "–" })),
      el("span", null, "duration ", el("b", { text: secs(r.seconds) })),
      el("span", null, "models ", el("b", { text: "lead " + (r.models.lead || "?") + ", subagents " + (r.models.subagent || "?") })),
      el("span", null, "tokens ", el("b", { text: usageText(r.usage) })),
      el("span", null, "cost ", el("b", { text: cost(r.cost) })),
      el("span", null, "subagents ", el("b", { text: String(D.agents.filter(function (a) { return a.role === "subagent"; }).length) })),
      c ? el("span", null, "citations ", el("b", { text: c.supported + "/" + c.markers + " supported" })) : null);
    var h = el("header", null, el("h1", { id: "question", text: r.question }), facts);
    if (r.error) h.appendChild(el("p", { cls: "error", text: "Error: " + r.error }));
    if (r.language_model_used === false) h.appendChild(el("p", { cls: "muted", text: "Offline run: no language model was used (extractive model)." }));
    return h;
  }

  function reportSection() {
    var s = el("section", { id: "report" }, el("h2", { text: "Report" }));
    if (D.report === null) { s.appendChild(el("p", { cls: "muted", text: "No report was written (the run is still going, failed, or was an estimate)." })); return s; }
    var div = el("div", { cls: "report" });
    div.innerHTML = D.report; // rendered from report.md by markdown-it with raw HTML disabled
    Array.prototype.forEach.call(div.querySelectorAll("a.cite"), function (a) {
      a.addEventListener("click", function (ev) {
        ev.preventDefault();
        var n = a.getAttribute("data-ref");
        select("cite", a);
        sourceDetail(D.refs[n], n);
      });
    });
    s.appendChild(div);
    return s;
  }

  function timelineSection() {
    var end = Math.max(D.run.seconds, 0.001);
    var s = el("section", { id: "timeline" }, el("h2", { text: "Timeline" }),
      el("div", { cls: "legend" }, el("i", { style: "background:var(--model)" }), "model call", el("i", { style: "background:var(--tool)" }), "tool call",
        el("i", { style: "background:var(--err)" }), "failed tool call", el("i", { style: "background:#c5ccd3" }), "agent alive", " · hover or click a bar"));
    var box = el("div", { cls: "tl" });
    var frag = document.createDocumentFragment();
    D.agents.forEach(function (a) {
      var track = el("div", { cls: "tl-track" });
      var st = a.started || 0, en = a.ended === null || a.ended === undefined ? end : a.ended;
      track.appendChild(el("div", { cls: "tl-life", style: "left:" + (100 * st / end) + "%;width:" + (100 * Math.max(en - st, 0) / end) + "%" }));
      var lanes = [], laneOf = {};  // concurrent tool calls get lanes of their own, so none hides another
      a.spans.forEach(function (sp, i) {
        if (sp.k !== "t") return;
        var l = 0;
        while (l < lanes.length && lanes[l] > sp.s) l++;
        lanes[l] = sp.e;
        laneOf[i] = l;
      });
      var lh = lanes.length ? 12 / lanes.length : 12;
      a.spans.forEach(function (sp, i) {
        var cls = "bar " + sp.k + (sp.err ? " err" : "") + (sp.open ? " open" : "");
        var place = sp.k === "t" ? ";top:" + (5 + laneOf[i] * lh).toFixed(1) + "px;height:" + Math.max(2, lh - 1).toFixed(1) + "px" : "";
        var tip = (sp.k === "m" ? "model " : "tool ") + sp.n + " · " + secs(sp.e - sp.s) + (sp.u ? " · " + usageText(sp.u) : "") + (sp.k === "t" ? " · " + pretty(sp.in).slice(0, 120) : "");
        track.appendChild(el("div", { cls: cls, title: tip, "data-agent": a.id, "data-span": String(i),
          style: "left:" + (100 * sp.s / end) + "%;width:" + (100 * Math.max(sp.e - sp.s, 0) / end) + "%" + place }));
      });
      frag.appendChild(el("div", { cls: "tl-row", "data-agent": a.id }, el("div", { cls: "tl-name", title: a.id + " (" + a.status + ")", text: a.id }), track));
    });
    box.appendChild(frag);
    box.addEventListener("click", function (ev) {
      var t = ev.target;
      if (t.classList.contains("bar")) { var a = AGENTS[t.getAttribute("data-agent")]; select("bar", t); spanDetail(a, a.spans[+t.getAttribute("data-span")]); return; }
      var row = t.closest(".tl-row");
      if (row) openAgent(row.getAttribute("data-agent"));
    });
    s.appendChild(box);
    s.appendChild(el("div", { cls: "tl-axis" }, el("span", { text: "0s" }), el("span", { text: secs(end / 2) }), el("span", { text: secs(end) })));
    return s;
  }

  function agentsSection() {
    var s = el("section", { id: "agents" }, el("h2", { text: "Agents: cost and tokens" }));
    var t = el("table", null, el("thead", null, el("tr", null, ["agent", "status", "model", "objective"].map(function (h) { return el("th", { text: h }); }),
      ["tool calls", "turns", "tokens in", "tokens out", "cost", "duration"].map(function (h) { return el("th", { cls: "num", text: h }); }))));
    var body = el("tbody");
    D.agents.forEach(function (a) {
      var dur = a.started !== null && a.ended !== null ? a.ended - a.started : null;
      body.appendChild(el("tr", { cls: "agent", "data-agent": a.id, on: { click: function () { openAgent(a.id); } } },
        el("td", null, el("code", { text: a.id })), el("td", null, badge(a.status)), el("td", { text: a.model }),
        el("td", { text: a.delegation ? a.delegation.objective : a.role === "lead" ? "plans, delegates, writes the report" : "" }),
        el("td", { cls: "num", text: String(a.tool_calls) }), el("td", { cls: "num", text: String(a.turns) }),
        el("td", { cls: "num", text: tok(a.usage.input_tokens) }), el("td", { cls: "num", text: tok(a.usage.output_tokens) }),
        el("td", { cls: "num", text: cost(a.cost) }), el("td", { cls: "num", text: secs(dur) })));
    });
    t.appendChild(body);
    s.appendChild(t);
    D.agents.forEach(function (a) { s.appendChild(agentCard(a)); });
    return s;
  }

  function agentCard(a) {
    var card = el("details", { cls: "card", id: "agent-" + a.id, "data-agent": a.id },
      el("summary", null, a.id + " ", badge(a.status), " " + (a.delegation ? a.delegation.objective : a.role)));
    var filled = false;
    card.addEventListener("toggle", function () {
      if (!card.open || filled) return;
      filled = true;
      if (a.delegation) card.appendChild(el("p", null, el("b", { text: "Delegation: " }), a.delegation.objective));
      if (a.findings) card.appendChild(findingsView(a.findings));
      var tr = el("details", { cls: "transcript" }, el("summary", { text: "transcript (" + a.steps.length + " steps)" }));
      var done = false;
      tr.addEventListener("toggle", function () { if (tr.open && !done) { done = true; tr.appendChild(transcript(a)); } });
      card.appendChild(tr);
    });
    return card;
  }

  function transcript(a) {
    var box = document.createDocumentFragment();
    a.steps.forEach(function (st) {
      var when = el("span", { cls: "when", text: secs(st.t) });
      if (st.span !== undefined) {
        var sp = a.spans[st.span];
        var label = sp.k === "m" ? "model " + sp.n + " · " + secs(sp.e - sp.s) + " · " + usageText(sp.u) : "→ " + sp.n + " " + pretty(sp.in).slice(0, 160);
        var d = el("div", { cls: "step " + sp.k + (sp.err ? " err" : ""), on: { click: function () { spanDetail(a, sp); } } }, when, label);
        if (sp.k === "m" && sp.out) sp.out.forEach(function (b) { if (b.text) d.appendChild(el("pre", { text: b.text })); });
        if (sp.k === "t" && sp.out !== undefined) d.appendChild(el("pre", { text: sp.out.slice(0, 400) + (sp.out.length > 400 ? "…" : "") }));
        box.appendChild(d);
      } else if (st.msg) {
        box.appendChild(el("div", { cls: "step" }, when, el("b", { text: st.msg + ": " }), el("pre", { text: st.text })));
      } else if (st.findings) {
        box.appendChild(el("div", { cls: "step" }, when, "findings submitted"));
      } else {
        box.appendChild(el("div", { cls: "step note" }, when, el("b", { text: st.note + ": " }), st.text));
      }
    });
    return box;
  }

  function openAgent(id) {
    var a = AGENTS[id];
    if (!a) return;
    select("agent", document.querySelector("tr.agent[data-agent='" + id + "']"));
    select("tl-row", document.querySelector(".tl-row[data-agent='" + id + "']"));
    var card = document.getElementById("agent-" + id);
    select("card", card);
    if (card && !card.open) card.open = true;
    agentDetail(a);
  }

  function plansSection() {
    var s = el("section", { id: "plans" }, el("h2", { text: "Plans" }));
    if (!D.plans.length) s.appendChild(el("p", { cls: "muted", text: "No plan was accepted." }));
    D.plans.forEach(function (p) {
      var box = el("div", { cls: "plan" }, el("h3", { text: "Plan v" + p.version + " · round " + p.round + (p.purpose === "replan" ? " (replan)" : "") + " · " + p.query_type + " · by " + p.author }), el("p", { text: p.rationale }));
      var ul = el("ul");
      p.tasks.forEach(function (t) {
        ul.appendChild(el("li", null, el("a", { href: "#agent-" + t.agent_id, text: t.agent_id, on: { click: function (ev) { ev.preventDefault(); openAgent(t.agent_id); } } }),
          ": " + t.objective + " ", el("span", { cls: "muted", text: "(" + t.tools.join(", ") + "; " + t.budget.max_tool_calls + " calls)" })));
      });
      box.appendChild(ul);
      if (p.diff.length) {
        var pre = el("pre", { cls: "diff" });
        p.diff.forEach(function (line) {
          var c = line.indexOf("@@") === 0 ? "hunk" : line[0] === "+" && line.indexOf("+++") !== 0 ? "add" : line[0] === "-" && line.indexOf("---") !== 0 ? "del" : "";
          pre.appendChild(el("span", { cls: c, text: line + "\n" }));
        });
        box.appendChild(el("details", { open: "open" }, el("summary", { text: "changes from v" + (p.version - 1) }), pre));
      }
      s.appendChild(box);
    });
    D.rejected.forEach(function (r) { s.appendChild(el("p", { cls: "muted", text: "Rejected plan (round " + r.round + "): " + r.problems.join("; ") })); });
    return s;
  }

  function citationSection() {
    var s = el("section", { id: "citations" }, el("h2", { text: "Citation check" }));
    var c = D.citation;
    if (!c) { s.appendChild(el("p", { cls: "muted", text: "No citation check (no report yet)." })); return s; }
    s.appendChild(el("p", { text: c.supported + " of " + c.markers + " citation markers supported by the text retrieved in this run; " +
      c.unsupported + " unsupported and " + c.unknown + " unknown removed (pass rate " + (c.pass_rate === null ? "–" : c.pass_rate) + ")." }));
    if (c.issues.length) {
      var ul = el("ul");
      c.issues.forEach(function (i) { ul.appendChild(el("li", null, el("code", { text: i.source_id }), " " + i.reason + (i.support !== null && i.support !== undefined ? " (support " + i.support + ")" : "") + ": " + i.sentence)); });
      s.appendChild(ul);
    }
    return s;
  }

  function build() {
    var app = document.getElementById("app");
    app.textContent = "";
    app.appendChild(header());
    app.appendChild(el("nav", null, ["report", "timeline", "agents", "plans", "citations"].map(function (x) { return el("a", { href: "#" + x, text: x }); })));
    detail = el("aside", { id: "detail" }, el("p", { cls: "hint", text: "Click a citation, a bar of the timeline or an agent to see its details here." }));
    app.appendChild(el("div", { cls: "wrap" }, el("main", null, reportSection(), timelineSection(), agentsSection(), plansSection(), citationSection()), detail));
  }
  build();
})();
