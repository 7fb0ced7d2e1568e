"""report.html: one self-contained file (inline CSS and JS, data embedded, no network) with a
cost-vs-quality scatter, per-metric bars with 95% intervals, a per-question table linking to each
run's report, and two variants' reports of a question side by side.

The page sets `data-rendered="ok"` on <body> when its script has drawn everything, and shows any
script error in a red box (`#errors`), so a browser test can tell a page that rendered from one
that did not.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, Sequence

from .analysis import ALL_METRICS, JudgeSummary
from .experiment import Experiment
from .stats import Comparison, mean_ci, per_question

QUALITY = ("judge_mean", "answer_f1", "answer_match", "citation_pass_rate")  # the first with values is the y axis
COST = ("cost_usd", "input_tokens", "wall_seconds")  # the first with a non-zero value is the x axis


def _first_with_values(rows: Sequence[dict[str, Any]], keys: Sequence[str], nonzero: bool = False) -> str | None:
    for k in keys:
        vals = [r["metrics"].get(k) for r in rows]
        if any(v is not None and (v != 0 or not nonzero) for v in vals):
            return k
    return None


def _bars(exp: Experiment, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for info in ALL_METRICS:
        series = []
        for v in exp.variants:
            vals = list(per_question(rows, v.name, info.key).values())
            if vals:
                mean, ci = mean_ci(vals)
                series.append({"variant": v.name, "mean": mean, "low": ci.low if ci else mean,
                               "high": ci.high if ci else mean, "n": len(vals)})
        if series and any(x["high"] or x["low"] or x["mean"] for x in series):  # all zero: nothing to draw
            out.append({"key": info.key, "label": info.label, "better": info.better.value, "series": series})
    return out


def _reports(where: Path, rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for r in rows:
        if r.get("run_dir"):
            f = where / r["run_dir"] / "report.md"
            if f.is_file():
                out[r["cell"]] = f.read_text(encoding="utf-8")
    return out


def page_data(exp: Experiment, where: Path, rows: Sequence[dict[str, Any]], comps: Sequence[Comparison],
              judge: JudgeSummary | None) -> dict[str, Any]:
    x = _first_with_values(rows, COST, nonzero=True) or "wall_seconds"
    y = _first_with_values(rows, QUALITY)
    labels = {m.key: m.label for m in ALL_METRICS}
    return {
        "id": exp.id, "variants": [v.name for v in exp.variants], "repeats": exp.repeats,
        "questions": [{"id": q.id, "question": q.question} for q in exp.questions],
        "x": x, "y": y, "xLabel": labels.get(x, x), "yLabel": labels.get(y or "", y or ""),
        "runs": [{"cell": r["cell"], "variant": r["variant"], "question_id": r["question_id"], "repeat": r["repeat"],
                  "status": r["status"], "run_dir": r.get("run_dir"), "x": r["metrics"].get(x),
                  "y": r["metrics"].get(y) if y else None, "error": r.get("error")} for r in rows],
        "bars": _bars(exp, rows), "reports": _reports(where, rows),
        "outcomes": judge.outcomes if judge else {},
    }


def _verdicts(exp: Experiment, comps: Sequence[Comparison], judge: JudgeSummary | None) -> str:
    parts = []
    for b in (v.name for v in exp.variants[1:]):
        sig = [c for c in comps if c.b == b and c.significant]
        items = "".join(f"<li>{html.escape(c.verdict)}</li>" for c in sig) or \
            "<li>no metric differs significantly (p &lt; 0.05)</li>"
        pref = next((p for p in (judge.preferences if judge else []) if p["b"] == b), None)
        if pref:
            items += f"<li>pairwise judge: {html.escape(pref['verdict'])}</li>"
        parts.append(f"<h3>{html.escape(b)} vs {html.escape(exp.variants[0].name)}</h3><ul>{items}</ul>")
    return "".join(parts)


CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#c9d1e0}main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:4px 0 10px}h3{font-size:14px;margin:10px 0 4px}
.note{background:#fff8e1;border:1px solid #f0d98c;padding:8px 12px;border-radius:6px}
#errors{display:none;background:#fde8e8;border:1px solid #e08080;color:#8a1010;padding:8px 12px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
.bar-title{font-weight:600;margin-bottom:2px}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #e6e9ef;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f0f2f6;position:sticky;top:0}.ok{color:#176b2c}.bad{color:#a61b1b}
.side{display:grid;grid-template-columns:1fr 1fr;gap:12px}.report{border:1px solid #dde2ea;border-radius:6px;
padding:8px 12px;max-height:520px;overflow:auto;background:#fcfcfd}.report h1{font-size:16px}
.report h2{font-size:14px}.report h3{font-size:13px}.legend span{margin-right:14px}
select{font:inherit;padding:2px 4px}svg text{font-size:11px;fill:#39414f}
"""

JS = r"""
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
const COLORS = ['#2563eb','#e11d48','#059669','#d97706','#7c3aed','#0891b2','#65a30d','#db2777'];
const color = v => COLORS[D.variants.indexOf(v) % COLORS.length];
const NS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, parent, text){const e=document.createElementNS(NS,tag);
  for(const k in attrs) e.setAttribute(k, attrs[k]); if(text!==undefined) e.textContent=text;
  if(parent) parent.appendChild(e); return e;}
function fmt(v){ if(v===null||v===undefined) return '—'; const a=Math.abs(v);
  return a===0?'0':(a<0.01?v.toExponential(1):(a<100?v.toPrecision(3):Math.round(v).toString())); }
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function legend(){ const l=document.getElementById('legend');
  l.innerHTML=D.variants.map(v=>'<span><b style="color:'+color(v)+'">●</b> '+esc(v)+'</span>').join(''); }
function scatter(){
  const host=document.getElementById('scatter'); const W=760,H=340,L=60,B=40,T=10,R=30;
  const svg=el('svg',{width:W,height:H,viewBox:'0 0 '+W+' '+H,role:'img'},host);
  const pts=D.runs.filter(r=>r.x!==null&&r.y!==null&&r.x!==undefined&&r.y!==undefined);
  if(!pts.length||!D.y){ el('text',{x:L,y:H/2},svg,'no run has both a cost and a quality value'); return; }
  const xs=pts.map(p=>p.x), ys=pts.map(p=>p.y);
  const x0=Math.min(0,...xs), x1=Math.max(...xs)||1, y0=Math.min(0,...ys), y1=Math.max(1,...ys);
  const sx=v=>L+(v-x0)/((x1-x0)||1)*(W-L-R), sy=v=>H-B-(v-y0)/((y1-y0)||1)*(H-B-T);
  el('line',{x1:L,y1:H-B,x2:W-R,y2:H-B,stroke:'#889'},svg); el('line',{x1:L,y1:T,x2:L,y2:H-B,stroke:'#889'},svg);
  for(let i=0;i<=4;i++){ const xv=x0+(x1-x0)*i/4, yv=y0+(y1-y0)*i/4;
    el('text',{x:sx(xv),y:H-B+14,'text-anchor':'middle'},svg,fmt(xv)); el('text',{x:L-6,y:sy(yv)+4,'text-anchor':'end'},svg,fmt(yv)); }
  el('text',{x:(L+W-R)/2,y:H-6,'text-anchor':'middle'},svg,D.xLabel+' per run');
  el('text',{x:14,y:(T+H-B)/2,transform:'rotate(-90 14 '+(T+H-B)/2+')','text-anchor':'middle'},svg,D.yLabel);
  for(const p of pts){ const c=el('circle',{cx:sx(p.x),cy:sy(p.y),r:4,fill:color(p.variant),'fill-opacity':0.45},svg);
    el('title',{},c,p.cell+': '+fmt(p.x)+', '+fmt(p.y)); }
  for(const v of D.variants){ const mine=pts.filter(p=>p.variant===v); if(!mine.length) continue;
    const mx=mine.reduce((s,p)=>s+p.x,0)/mine.length, my=mine.reduce((s,p)=>s+p.y,0)/mine.length;
    el('rect',{x:sx(mx)-6,y:sy(my)-6,width:12,height:12,fill:color(v),stroke:'#111'},svg);
    const right=sx(mx)>W-R-120;  // near the right edge: label on the left
    el('text',{x:right?sx(mx)-9:sx(mx)+9,y:sy(my)-8,'text-anchor':right?'end':'start'},svg,v+' (mean)'); }
}
function bars(){
  const host=document.getElementById('bars');
  for(const m of D.bars){ const box=document.createElement('div'); host.appendChild(box);
    box.innerHTML='<div class="bar-title">'+esc(m.label)+(m.better!=='neither'?' <small>('+m.better+' is better)</small>':'')+'</div>';
    const W=300,row=22,H=m.series.length*row+18,L=90,R=40; const svg=el('svg',{width:W,height:H},box);
    const hi=Math.max(...m.series.map(s=>Math.max(s.high,s.mean)),0), lo=Math.min(...m.series.map(s=>Math.min(s.low,s.mean)),0);
    const sx=v=>L+(v-lo)/((hi-lo)||1)*(W-L-R);
    m.series.forEach((s,i)=>{ const y=i*row+4;
      el('text',{x:L-6,y:y+13,'text-anchor':'end'},svg,s.variant);
      el('rect',{x:Math.min(sx(0),sx(s.mean)),y:y+2,width:Math.abs(sx(s.mean)-sx(0))||1,height:14,fill:color(s.variant),'fill-opacity':0.7},svg);
      el('line',{x1:sx(s.low),x2:sx(s.high),y1:y+9,y2:y+9,stroke:'#111','stroke-width':1.5},svg);
      el('line',{x1:sx(s.low),x2:sx(s.low),y1:y+4,y2:y+14,stroke:'#111'},svg);
      el('line',{x1:sx(s.high),x2:sx(s.high),y1:y+4,y2:y+14,stroke:'#111'},svg);
      el('text',{x:Math.max(sx(s.high),sx(s.mean))+4,y:y+13},svg,fmt(s.mean)); });
    el('text',{x:4,y:H-2},svg,'mean per question, 95% interval; n = '+m.series.map(s=>s.n).join(' / ')); }
}
function table(){
  const t=document.getElementById('questions'); let h='<tr><th>question</th>'+D.variants.map(v=>'<th>'+esc(v)+'</th>').join('')+'</tr>';
  for(const q of D.questions){ h+='<tr><td><b>'+esc(q.id)+'</b> '+esc(q.question)+'</td>';
    for(const v of D.variants){ const runs=D.runs.filter(r=>r.question_id===q.id&&r.variant===v);
      h+='<td>'+(runs.map(r=>{ const ok=r.status==='completed'||r.status==='completed_empty';
        const link=r.run_dir?'<a href="'+esc(r.run_dir)+'/report.md">report</a>':'';
        return '<div class="'+(ok?'ok':'bad')+'">r'+r.repeat+' '+esc(r.status)+' '+(D.y?esc(D.yLabel)+' '+fmt(r.y):'')+' '+link+
          (r.error?'<br><small>'+esc(r.error)+'</small>':'')+'</div>'; }).join('')||'—')+'</td>'; }
    h+='</tr>'; }
  t.innerHTML=h;
}
function md(text){ const out=[]; let list=false;
  for(const raw of (text||'(no report)').split('\n')){ const line=esc(raw); const m=line.match(/^(#{1,3}) (.*)$/);
    if(list&&!/^\s*[-*] /.test(raw)){ out.push('</ul>'); list=false; }
    if(m){ out.push('<h'+m[1].length+'>'+m[2]+'</h'+m[1].length+'>'); }
    else if(/^\s*[-*] /.test(raw)){ if(!list){ out.push('<ul>'); list=true; } out.push('<li>'+line.replace(/^\s*[-*] /,'')+'</li>'); }
    else if(raw.trim()){ out.push('<p>'+line+'</p>'); } }
  if(list) out.push('</ul>'); return out.join(''); }
function side(){
  const qs=document.getElementById('q'), a=document.getElementById('va'), b=document.getElementById('vb');
  qs.innerHTML=D.questions.map(q=>'<option value="'+esc(q.id)+'">'+esc(q.id+': '+q.question.slice(0,90))+'</option>').join('');
  for(const s of [a,b]) s.innerHTML=D.variants.map(v=>'<option>'+esc(v)+'</option>').join('');
  if(D.variants.length>1) b.value=D.variants[1];
  function show(){ for(const [sel,pane] of [[a,'ra'],[b,'rb']]){
      const cell=sel.value+'/'+qs.value+'/1'; const txt=D.reports[cell];
      const outcome=(D.outcomes[D.variants[0]+'|'+sel.value]||{})[qs.value];
      document.getElementById(pane).innerHTML='<h3>'+esc(sel.value)+(outcome?' <small>(judge: '+esc(outcome)+')</small>':'')+'</h3>'+md(txt); } }
  for(const s of [qs,a,b]) s.addEventListener('change',show); show();
}
try { legend(); scatter(); bars(); table(); side(); document.body.dataset.rendered='ok'; }
catch(e){ const box=document.getElementById('errors'); box.style.display='block'; box.textContent='report error: '+e; throw e; }
})();
"""


def render_html(exp: Experiment, where: Path, rows: Sequence[dict[str, Any]], comps: Sequence[Comparison],
                judge: JudgeSummary | None, note: str | None) -> str:
    data = json.dumps(page_data(exp, where, rows, comps, judge), ensure_ascii=False).replace("</", "<\\/")
    esc = html.escape
    variants = " · ".join(esc(v.describe()) for v in exp.variants)
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in ([note] if note else []) + list(exp.notes))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(exp.id)}</title><style>{CSS}</style></head>
<body><header><h1>Comparison {esc(exp.id)}</h1>
<p>{esc(exp.question_set)}: {len(exp.questions)} questions × {len(exp.variants)} variants × {exp.repeats} repeat(s).
Baseline A: {esc(exp.variants[0].name)}. {variants}</p></header>
<main><div id="errors"></div>{notes}
<section><h2>Verdicts</h2>{_verdicts(exp, comps, judge)}</section>
<section><h2>Cost vs quality</h2><div id="legend" class="legend"></div><div id="scatter"></div>
<small>Each dot is a run, each square a variant's mean.</small></section>
<section><h2>Metrics</h2><div id="bars" class="grid"></div></section>
<section><h2>Reports side by side</h2><p>Question <select id="q"></select> <select id="va"></select> vs
<select id="vb"></select> (repeat 1)</p><div class="side"><div id="ra" class="report"></div>
<div id="rb" class="report"></div></div></section>
<section><h2>Per question</h2><table id="questions"></table></section>
</main>
<script type="application/json" id="data">{data}</script>
<script>{JS}</script>
</body></html>
"""
