// The history page's batches (POST /v1/batches: kerntune tune-all, Client.tune_all): #/batches
// lists them, #/batches/ID shows one problem by problem, polled while it runs. Loaded before
// app.js, whose helpers (api, esc, fmt, sortableTable, statusBadge, progressBar, shapeText) these
// views call once the page has loaded.
"use strict";

function batchProgress(batch) {
  const c = batch.counts;
  const jobs = c.problems - c.tuned_before - c.refused;
  return { total: jobs, finished: c.done + c.failed + c.cancelled };
}

function batchAnswer(problem) {
  const a = problem.answer;
  if (a && a.answer) {
    let text = `${a.answer} ${fmt(a.median_us)} µs`;
    if (a.answer === "ours" && a.speedup !== null && a.speedup !== undefined)
      text += `, ${fmt(a.speedup, 2)}× [${fmt(a.speedup_low, 2)}, ${fmt(a.speedup_high, 2)}] vs ${a.baseline || "baseline"}`;
    else if (a.answer === "baseline" && a.template) text += ` (${a.template})`;
    return esc(text);
  }
  if (problem.plan === "refused") return `<span class="reason">${esc(problem.error ? problem.error.message : problem.note)}</span>`;
  if (problem.job && problem.job.reason) return `<span class="reason">${esc(problem.job.reason)}</span>`;
  return esc(problem.note || "–");
}

function problemState(problem) {
  if (problem.plan === "tuned" || problem.plan === "refused") return problem.plan;
  return problem.job ? problem.job.status : "–";
}

async function showBatches(view) {
  const batches = await allPages("/v1/batches", "batches");
  view.innerHTML = `<h1>Batches</h1>
    <p class="muted">${batches.length} batch(es): many problems tuned as one request, largest time share first
    (<code>kerntune tune-all shapes.jsonl</code>)</p><table id="batches-table"></table>`;
  sortableTable(document.getElementById("batches-table"), [
    { label: "id", value: (b) => b.id, num: true, html: (b) => `<a href="#/batches/${b.id}">${b.id}</a>` },
    { label: "label", value: (b) => b.label },
    { label: "GPU model", value: (b) => b.device_model },
    { label: "status", value: (b) => b.status, html: (b) => statusBadge(b.status) },
    { label: "problems", value: (b) => b.counts.problems, num: true },
    { label: "answered", value: (b) => b.counts.answered, num: true },
    { label: "refused", value: (b) => b.counts.refused, num: true },
    { label: "progress", value: (b) => batchProgress(b).finished, html: (b) => progressBar(batchProgress(b)) },
    { label: "budget", value: (b) => b.budget_per_shape, num: true },
    { label: "created", value: (b) => b.created_at },
  ], batches, (b) => { location.hash = `#/batches/${b.id}`; });
  return () => {};
}

async function showBatch(view, batchId) {
  let stopped = false, timer = null;
  const draw = (batch) => {
    const c = batch.counts;
    view.innerHTML = `<h1>Batch ${batch.id}${batch.label ? " · " + esc(batch.label) : ""}</h1>
      <div class="summary" id="batch-summary">
        <div><b>status</b>${statusBadge(batch.status)}</div>
        <div><b>GPU model</b>${esc(batch.device_model || "any")}</div>
        <div><b>problems</b>${c.problems}</div>
        <div><b>answered</b><span id="batch-answered">${c.answered}</span></div>
        <div><b>tuned before</b>${c.tuned_before}</div>
        <div><b>refused</b>${c.refused}</div>
        <div><b>jobs</b>${progressBar(batchProgress(batch))}</div>
        <div><b>variants</b>${progressBar(batch.variants)}</div>
        <div><b>budget per shape</b>${batch.budget_per_shape || "all"}</div>
        <div><b>created</b>${esc(batch.created_at || "")}</div>
      </div>
      <table id="batch-problems"></table>`;
    sortableTable(document.getElementById("batch-problems"), [
      { label: "#", value: (p) => p.position, num: true },
      { label: "problem", value: (p) => p.family + " " + shapeText(p.shape), html: (p) => `${esc(p.family)} ${esc(shapeText(p.shape))}` },
      { label: "dtype", value: (p) => p.dtype },
      { label: "share", value: (p) => p.share, num: true, html: (p) => fmt(100 * p.share) + "%" },
      { label: "calls", value: (p) => p.calls, num: true },
      { label: "plan", value: (p) => p.plan },
      { label: "job", value: (p) => p.job_id, num: true, html: (p) => (p.job_id ? `<a href="#/jobs/${p.job_id}">${p.job_id}</a>` : "–") },
      { label: "state", value: problemState, html: (p) => statusBadge(problemState(p)) },
      { label: "variants", value: (p) => (p.job ? p.job.progress.finished : null), html: (p) => (p.job && p.plan !== "tuned" ? progressBar(p.job.progress) : "–") },
      { label: "answer", value: (p) => (p.answer ? p.answer.median_us : null), html: batchAnswer },
    ], batch.problems, (p) => { if (p.job_id) location.hash = `#/jobs/${p.job_id}`; });
  };
  const refresh = async () => {
    const batch = await api(`/v1/batches/${batchId}`);
    if (stopped) return;
    draw(batch);
    if (batch.status === "running") timer = setTimeout(() => refresh().catch(showError), POLL_MS);
  };
  await refresh();
  return () => { stopped = true; clearTimeout(timer); };
}
