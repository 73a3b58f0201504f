// The history page's comparison of two jobs of one family, #/compare?a=ID&b=ID (the job page's
// "Compare with job" form leads here). Loaded before app.js, whose helpers it calls.
"use strict";

// Per template the fastest measured variant of each job, and the ratio of their times: what a
// second shape, GPU or version of the family changed.
async function showCompare(view, params) {
  const ids = [params.a, params.b];
  if (!ids.every((id) => /^\d+$/.test(id || ""))) throw new Error("compare needs two job ids: #/compare?a=ID&b=ID");
  const jobs = await Promise.all(ids.map((id) => api(`/v1/jobs/${id}`)));
  const variants = await Promise.all(ids.map((id) => allPages(`/v1/jobs/${id}/variants?status=measured`, "variants")));
  const [a, b] = jobs;
  const title = (j) => `job <a href="#/jobs/${j.id}">${j.id}</a>: ${esc(j.family)} ${esc(shapeText(j.shape))} ${esc(j.dtype)} on ${esc(j.device_name || j.arch)}`;
  if (a.family !== b.family) {
    view.innerHTML = `<h1>Compare</h1><p>${title(a)}</p><p>${title(b)}</p>
      <p class="reason" id="compare-refused">different families (${esc(a.family)}, ${esc(b.family)}): their templates do not match</p>`;
    return () => {};
  }
  const bestBy = (list) => {
    const best = new Map();
    for (const v of list)
      if (v.median_us !== null && (!best.has(v.template) || v.median_us < best.get(v.template).median_us)) best.set(v.template, v);
    return best;
  };
  const [bestA, bestB] = variants.map(bestBy);
  const templates = [...new Set([...bestA.keys(), ...bestB.keys()])];
  const rows = templates.map((t) => ({ template: t, a: bestA.get(t) || null, b: bestB.get(t) || null }));
  const overall = (best) => [...best.values()].reduce((m, v) => (!m || v.median_us < m.median_us ? v : m), null);
  rows.push({ template: "best of all", a: overall(bestA), b: overall(bestB), total: true });
  const ratio = (r) => (r.a && r.b ? r.b.median_us / r.a.median_us : null);
  view.innerHTML = `<h1>Compare</h1><p>A: ${title(a)}</p><p>B: ${title(b)}</p>
    <p class="muted">per template, each job's fastest measured variant (first-pass medians); B / A above 1 means B is slower</p>
    <table id="compare-table"></table>`;
  const cell = (v) => (v ? `${fmt(v.median_us)} µs <code>${esc(configText(v.config))}</code>` : "–");
  sortableTable(document.getElementById("compare-table"), [
    { label: "template", value: (r) => r.template, html: (r) => (r.total ? `<b>${esc(r.template)}</b>` : esc(r.template)) },
    { label: `A (job ${a.id})`, value: (r) => (r.a ? r.a.median_us : null), html: (r) => cell(r.a) },
    { label: `B (job ${b.id})`, value: (r) => (r.b ? r.b.median_us : null), html: (r) => cell(r.b) },
    { label: "B / A", value: ratio, num: true, html: (r) => fmt(ratio(r), 3) },
  ], rows);
  return () => {};
}
