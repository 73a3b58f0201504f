// kerntune's history page: a small single-page app over the HTTP API (docs/api.md). Routes
// (location.hash): #/ jobs list, #/jobs/ID one job, #/batches and #/batches/ID (web/batches.js),
// #/compare?a=ID&b=ID (web/compare.js), #/shapes tuned shapes. Plots: Plotly's basic bundle (web/vendor). No build step: the files are
// served as written.
"use strict";

const FINAL_JOB_STATES = new Set(["done", "failed", "cancelled"]);
const POLL_MS = 2000;
let stopCurrentView = () => {};  // ends the polling or event stream of the view on screen

// ---- API access ---------------------------------------------------------------------------

function token() { return localStorage.getItem("kerntune-token") || ""; }

async function api(path) {
  const headers = {};
  if (token()) headers.Authorization = "Bearer " + token();
  const response = await fetch(path, { headers });
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
  if (!response.ok) {
    const message = body && body.error ? `${body.error.code}: ${body.error.message}` : text;
    const error = new Error(`${response.status} ${message}`);
    error.status = response.status;
    throw error;
  }
  return body;
}

// Every page of a paged list (variants, history), following `next`.
async function allPages(path, key) {
  const items = [];
  let cursor = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page = await api(path + sep + "limit=1000" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
    items.push(...page[key]);
    cursor = page.next;
  } while (cursor);
  return items;
}

// Calls onChange(name, data) whenever the job may have changed, until it ends or stop() is
// called: for each event of the daemon's Server-Sent Events (GET /v1/jobs/{id}/events: "status",
// "progress", "best", "end"), or ("poll", null) every POLL_MS where there is no stream (no
// EventSource, a token set: an EventSource cannot send one, the daemon's cap on streams, a
// broken connection).
function watchJob(jobId, onChange) {
  let stopped = false, timer = null, source = null, ended = false;
  const poll = () => { if (!stopped) timer = setTimeout(async () => { await onChange("poll", null); poll(); }, POLL_MS); };
  if (window.EventSource && !token()) {
    source = new EventSource(`/v1/jobs/${jobId}/events`);
    for (const name of ["status", "progress", "best", "end"])
      source.addEventListener(name, (event) => {
        if (stopped) return;
        if (name === "end") ended = true;
        if (name === "progress") document.body.dataset.liveProgress = Number(document.body.dataset.liveProgress || 0) + 1;
        let data = null;
        try { data = JSON.parse(event.data); } catch (e) { data = null; }
        onChange(name, data);
      });
    source.onerror = () => {
      // The daemon closes the stream after "end"; any other close: poll from here on (an
      // EventSource would reconnect by itself, and after the end, forever).
      source.close();
      source = null;
      if (!ended && !stopped) poll();
    };
  } else {
    poll();
  }
  return () => { stopped = true; clearTimeout(timer); if (source) source.close(); };
}

// At most this many jobs of the list follow their event stream (a browser opens about six
// connections to one server; the rest are the page's own requests). More unfinished jobs: poll.
const MAX_LIST_STREAMS = 3;

// ---- helpers ------------------------------------------------------------------------------

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function fmt(value, digits = 1) { return value === null || value === undefined ? "–" : Number(value).toFixed(digits); }
function fmtError(value) { return value === null || value === undefined ? "–" : Number(value).toExponential(2); }
function statusBadge(status) { return `<span class="status ${esc(status)}">${esc(status)}</span>`; }
function configText(config) { return Object.entries(config || {}).map(([k, v]) => `${k}=${v}`).join(" "); }
// A shape's dims in the family's order (GET /v1/families: "dims"), else as the JSON holds them.
function shapeText(shape, dims) {
  const names = dims ? dims.map((d) => d.name).filter((n) => n in (shape || {})) : Object.keys(shape || {});
  for (const name of Object.keys(shape || {})) if (!names.includes(name)) names.push(name);
  return names.map((k) => `${k}=${shape[k]}`).join(" ");
}
// On-chip bytes per block, the Pareto front's third objective (as the store computes it).
function footprint(v) {
  if (v.smem_bytes === null || v.registers === null || v.threads === null) return null;
  return v.smem_bytes + 4 * v.registers * v.threads;
}
// Configs that never reach a gate (a constraint pruned them, or their template targets another
// arch): most of a large space, counted apart so that a bar measures the work that runs.
const NOT_RUN = ["pruned", "unsupported_arch"];
function progressBar(progress) {
  const byStatus = (progress && progress.by_status) || {};
  const apart = NOT_RUN.reduce((sum, s) => sum + (byStatus[s] || 0), 0);
  const total = progress && progress.total ? Math.max(0, progress.total - apart) : 0;
  const done = progress ? Math.max(0, progress.finished - apart) : 0;
  const pct = total ? Math.round((100 * done) / total) : 0;
  const pruned = apart ? ` <span class="muted">(${apart} pruned)</span>` : "";
  return `<span class="progress" title="${done} / ${total}"><div style="width:${pct}%"></div></span> <span class="muted">${done}/${total}</span>${pruned}`;
}
// An ISO 8601 UTC timestamp in the browser's time zone; the UTC text on hover.
function localTime(iso) {
  if (!iso) return "–";
  const date = new Date(iso);
  return isNaN(date) ? esc(iso) : `<span class="time" title="${esc(iso)}">${esc(date.toLocaleString())}</span>`;
}
// Every config parameter any of the variants has, in first-seen order: one table column each.
function parameterNames(variants) {
  const names = [];
  for (const v of variants) for (const name of Object.keys(v.config || {})) if (!names.includes(name)) names.push(name);
  return names;
}
// The rows as CSV (a column per parameter), as GET /v1/jobs/{id}/variants lists them.
function variantsCsv(variants, names) {
  const cell = (value) => {
    const text = value === null || value === undefined ? "" : String(value);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const head = ["id", "template", ...names, "status", "failed_gate", "median_us", "tflops", "max_rel", "registers", "spill_bytes", "smem_bytes", "compile_ms"];
  const rows = variants.map((v) => [v.id, v.template, ...names.map((n) => (v.config || {})[n]), v.status, v.failed_gate,
    v.median_us, v.tflops, v.error ? v.error.max_rel : null, v.registers, v.spill_bytes, v.smem_bytes, v.compile_ms]);
  return [head, ...rows].map((row) => row.map(cell).join(",")).join("\n") + "\n";
}
function showError(error) {
  const banner = document.getElementById("error-banner");
  banner.textContent = String(error.message || error);
  banner.hidden = false;
}
function clearError() { document.getElementById("error-banner").hidden = true; }

// A table whose headers sort it; columns: [{label, value(row), html(row)?, num?}].
function sortableTable(table, columns, rows, onRowClick) {
  let sortIndex = -1, ascending = true;
  const render = () => {
    const sorted = rows.slice();
    if (sortIndex >= 0) {
      const value = columns[sortIndex].value;
      sorted.sort((a, b) => {
        const x = value(a), y = value(b);
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;  // unknowns last either way
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * (ascending ? 1 : -1);
      });
    }
    const head = columns.map((c, i) =>
      `<th data-col="${i}" class="${i === sortIndex ? (ascending ? "sorted-asc" : "sorted-desc") : ""}">${esc(c.label)}</th>`).join("");
    const body = sorted.map((row, r) => `<tr class="${onRowClick ? "clickable" : ""}" data-row="${rows.indexOf(row)}">` +
      columns.map((c) => `<td class="${c.num ? "num" : ""}">${c.html ? c.html(row) : esc(c.value(row) ?? "–")}</td>`).join("") + "</tr>").join("");
    table.innerHTML = `<thead><tr>${head}</tr></thead><tbody>${body}</tbody>`;
    table.querySelectorAll("th").forEach((th) => th.addEventListener("click", () => {
      const i = Number(th.dataset.col);
      ascending = i === sortIndex ? !ascending : true;
      sortIndex = i;
      render();
    }));
    if (onRowClick)
      table.querySelectorAll("tbody tr").forEach((tr) => tr.addEventListener("click", (event) => {
        if (event.target.closest("a")) return;  // a link in the row goes where it points
        onRowClick(rows[Number(tr.dataset.row)], tr);
      }));
  };
  render();
}

// ---- jobs list ----------------------------------------------------------------------------

async function showJobs(view, params) {
  const families = await api("/v1/families");
  const devices = await api("/v1/devices");
  const models = [...new Set([...devices.devices, ...devices.known_devices].map((d) => d.name))].sort();
  const statuses = ["queued", "running", "done", "failed", "cancelled"];
  const option = (value, selected) => `<option value="${esc(value)}" ${value === selected ? "selected" : ""}>${esc(value || "any")}</option>`;
  view.innerHTML = `<h1>Jobs</h1>
    <div class="filters">
      <label>Family <select id="filter-family">${["", ...families.families.map((f) => f.name)].map((f) => option(f, params.family || "")).join("")}</select></label>
      <label>Status <select id="filter-status">${["", ...statuses].map((s) => option(s, params.status || "")).join("")}</select></label>
      <label>GPU model <select id="filter-device">${["", ...models].map((m) => option(m, params.device || "")).join("")}</select></label>
      <span id="jobs-count" class="muted"></span>
    </div>
    <table id="jobs-table"></table>`;
  for (const id of ["filter-family", "filter-status", "filter-device"])
    document.getElementById(id).addEventListener("change", () => {
      const query = new URLSearchParams();
      for (const [key, el] of [["family", "filter-family"], ["status", "filter-status"], ["device", "filter-device"]])
        if (document.getElementById(el).value) query.set(key, document.getElementById(el).value);
      location.hash = "#/?" + query.toString();
    });

  let timer = null, stopped = false, refreshing = false, again = false;
  const watched = new Map();  // job id -> stop() of its event stream
  const progressCell = (id) => [...document.querySelectorAll("#jobs-table tbody tr")]
    .filter((tr) => tr.cells[0] && tr.cells[0].textContent.trim() === String(id)).map((tr) => tr.cells[7])[0];
  const refreshSoon = () => { if (!stopped) refresh().catch(showError); };
  const refresh = async () => {
    if (refreshing) { again = true; return; }
    refreshing = true;
    clearTimeout(timer);
    try {
      do {
        again = false;
        const query = new URLSearchParams();
        if (params.family) query.set("family", params.family);
        if (params.status) query.set("status", params.status);
        query.set("limit", "500");
        const page = await api("/v1/history?" + query.toString());
        if (stopped) return;
        // The API filters by family and status; the GPU model is filtered here.
        const jobs = page.jobs.filter((j) => !params.device || j.device_name === params.device);
        document.getElementById("jobs-count").textContent = `${jobs.length} job(s)`;
        sortableTable(document.getElementById("jobs-table"), [
          { label: "id", value: (j) => j.id, num: true, html: (j) => `<a href="#/jobs/${j.id}">${j.id}</a>` },
          { label: "family", value: (j) => j.family },
          { label: "shape", value: (j) => j.shape_key, html: (j) => esc(shapeText(j.shape)) },
          { label: "dtype", value: (j) => j.dtype },
          { label: "mode", value: (j) => j.mode },
          { label: "GPU / arch", value: (j) => j.device_name || j.arch, html: (j) => esc(j.device_name || "") + ` <span class="muted">${esc(j.arch)}</span>` },
          { label: "status", value: (j) => j.status, html: (j) => statusBadge(j.status) + (j.reason ? `<div class="reason">${esc(j.reason)}</div>` : "") },
          { label: "progress", value: (j) => (j.progress.total ? j.progress.finished / j.progress.total : 0), html: (j) => progressBar(j.progress) },
          { label: "best µs", value: (j) => (j.best ? j.best.median_us : null), num: true, html: (j) => fmt(j.best && j.best.median_us) },
          { label: "created", value: (j) => j.created_at, html: (j) => localTime(j.created_at) },
        ], jobs, (j) => { location.hash = `#/jobs/${j.id}`; });
        // Live progress: unfinished jobs follow their event stream (progress redrawn in place, the
        // list read again when a status changes); past MAX_LIST_STREAMS of them, the list polls.
        const live = jobs.filter((j) => !FINAL_JOB_STATES.has(j.status)).map((j) => j.id);
        for (const [id, stop] of watched)
          if (!live.includes(id)) { stop(); watched.delete(id); }
        for (const id of live) {
          if (watched.has(id) || watched.size >= MAX_LIST_STREAMS || !window.EventSource || token()) continue;
          watched.set(id, watchJob(id, (name, data) => {
            if (name === "progress" && data) {
              const cell = progressCell(id);
              if (cell) cell.innerHTML = progressBar(data);
            } else if (name !== "best") {
              refreshSoon();  // status, end, or this job's stream fell back to polling
            }
          }));
        }
        if (live.some((id) => !watched.has(id))) timer = setTimeout(refreshSoon, POLL_MS);
      } while (again && !stopped);
    } finally {
      refreshing = false;
    }
  };
  await refresh();
  return () => { stopped = true; clearTimeout(timer); for (const stop of watched.values()) stop(); watched.clear(); };
}

// ---- one job ------------------------------------------------------------------------------

const PLOT_CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"] };
// Titles on the left, clear of the mode bar on the right.
const plotTitle = (text) => ({ text, x: 0.01, xanchor: "left", font: { size: 13 } });

// Non-dominated measured variants over (median time, max error, footprint): the store's front.
function paretoIds(measured) {
  const objectives = (v) => [v.median_us, v.error ? v.error.max_rel : Infinity, footprint(v) ?? Infinity];
  const ids = new Set();
  for (const v of measured) {
    const a = objectives(v);
    const dominated = measured.some((w) => {
      if (w === v) return false;
      const b = objectives(w);
      return b.every((x, i) => x <= a[i]) && b.some((x, i) => x < a[i]);
    });
    if (!dominated) ids.add(v.id);
  }
  return ids;
}

function drawScatter(job, measured, onPick) {
  const front = paretoIds(measured);
  const sizes = measured.map((v) => footprint(v) ?? 0);
  const maxSize = Math.max(1, ...sizes);
  const trace = (subset, name, color) => ({
    type: "scatter", mode: "markers", name,
    x: subset.map((v) => v.median_us),
    y: subset.map((v) => (v.error ? v.error.max_rel : null)),
    customdata: subset.map((v) => v.id),
    text: subset.map((v) => `#${v.id} ${v.template}<br>${configText(v.config)}<br>footprint ${footprint(v) ?? "?"} B`),
    hovertemplate: "%{text}<br>%{x:.1f} µs, max_rel %{y:.2e}<extra></extra>",
    marker: { size: subset.map((v) => 6 + 22 * Math.sqrt((footprint(v) ?? 0) / maxSize)), color, opacity: 0.75,
              line: { width: 1, color: "#1f2937" } },
  });
  const traces = [
    trace(measured.filter((v) => !front.has(v.id)), "measured", "#93c5fd"),
    trace(measured.filter((v) => front.has(v.id)), "Pareto front (time, error, footprint)", "#f59e0b"),
  ];
  const layout = {
    title: plotTitle("Time vs numerical error (marker size: on-chip footprint)"),
    margin: { l: 60, r: 10, t: 36, b: 70 }, legend: { orientation: "h", y: -0.3 },
    xaxis: { title: { text: "median time (µs)" } }, yaxis: { title: { text: "max relative error" }, type: "log" },
    shapes: [], annotations: [],
  };
  if (job.reference_us) {
    layout.shapes.push({ type: "line", xref: "x", yref: "paper", x0: job.reference_us, x1: job.reference_us, y0: 0, y1: 1,
                         line: { color: "#dc2626", dash: "dash", width: 2 } });
    layout.annotations.push({ xref: "x", yref: "paper", x: job.reference_us, y: 1, text: `baseline ${fmt(job.reference_us)} µs`,
                              showarrow: false, xanchor: "left", font: { color: "#dc2626", size: 11 } });
  }
  const div = document.getElementById("plot-scatter");
  Plotly.react(div, traces, layout, PLOT_CONFIG);
  div.removeAllListeners && div.removeAllListeners("plotly_click");
  div.on("plotly_click", (event) => { if (event.points.length) onPick(event.points[0].customdata); });
}

// A compile-only job measures nothing: its plots are what the compiles report.
function drawCompiled(compiled) {
  const spills = compiled.map((v) => v.spill_bytes || 0);
  const maxSpill = Math.max(1, ...spills);
  Plotly.react("plot-scatter", [{
    type: "scatter", mode: "markers", name: "compiled",
    x: compiled.map((v) => v.compile_ms), y: compiled.map((v) => v.registers), customdata: compiled.map((v) => v.id),
    text: compiled.map((v) => `#${v.id} ${v.template}<br>${configText(v.config)}<br>spills ${v.spill_bytes ?? "?"} B`),
    hovertemplate: "%{text}<br>%{x:.0f} ms, %{y} registers<extra></extra>",
    marker: { size: compiled.map((v) => 7 + 18 * Math.sqrt((v.spill_bytes || 0) / maxSpill)), color: "#93c5fd", line: { width: 1, color: "#1f2937" } },
  }], { title: plotTitle("Compile time vs registers (marker size: spilled bytes)"), margin: { l: 60, r: 10, t: 36, b: 44 },
        showlegend: false, xaxis: { title: { text: "NVRTC compile (ms)" } }, yaxis: { title: { text: "registers per thread" } } }, PLOT_CONFIG);
  Plotly.react("plot-convergence", [{
    type: "bar", x: compiled.map((v) => `#${v.id}`), y: spills, marker: { color: spills.map((b) => (b > 0 ? "#ef4444" : "#10b981")) },
    hovertemplate: "%{x}: %{y} B spilled<extra></extra>",
  }], { title: plotTitle("Spilled bytes per compiled variant"), margin: { l: 60, r: 10, t: 36, b: 60 }, showlegend: false,
        yaxis: { title: { text: "spill bytes" } } }, PLOT_CONFIG);
}

// Median time by the value of one parameter, every measured variant a point: which parameters
// matter (a spread within one value that is as wide as across values says: not this one).
function drawParameter(measured, name) {
  // A strip plot (Plotly's basic bundle has no box trace): the values as categories, each point
  // jittered sideways within its category so that equal times stay visible.
  const values = [...new Set(measured.map((v) => (v.config || {})[name]))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const index = new Map(values.map((value, i) => [value, i]));
  const jitter = (id) => ((id * 2654435761) % 1000) / 1000 * 0.5 - 0.25;  // the same for a variant every time
  Plotly.react("plot-parameter", [{
    type: "scatter", mode: "markers",
    x: measured.map((v) => index.get((v.config || {})[name]) + jitter(v.id)), y: measured.map((v) => v.median_us),
    text: measured.map((v) => `#${v.id} ${v.template}<br>${configText(v.config)}`), marker: { color: "#2563eb", size: 6, opacity: 0.7 },
    hovertemplate: "%{text}<br>%{y:.1f} µs<extra></extra>",
  }], { title: plotTitle(`Median time by ${name}`), margin: { l: 60, r: 10, t: 36, b: 44 }, showlegend: false,
        xaxis: { title: { text: name }, tickvals: values.map((_, i) => i), ticktext: values.map(String), range: [-0.6, values.length - 0.4] },
        yaxis: { title: { text: "median time (µs)" } } }, PLOT_CONFIG);
}

function drawConvergence(job, measured) {
  // Variants in measurement order (the store's id order) and the best median so far.
  let best = Infinity;
  const bestSoFar = measured.map((v) => (best = Math.min(best, v.median_us)));
  const layout = {
    title: plotTitle("Best so far vs variants measured"),
    margin: { l: 60, r: 10, t: 36, b: 44 }, showlegend: false,
    xaxis: { title: { text: "variants measured" } }, yaxis: { title: { text: "best median time (µs)" } },
    shapes: job.reference_us ? [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: job.reference_us, y1: job.reference_us,
                                  line: { color: "#dc2626", dash: "dash", width: 2 } }] : [],
    annotations: job.reference_us ? [{ xref: "paper", x: 1, xanchor: "right", y: job.reference_us, yanchor: "bottom", showarrow: false,
                                       text: `baseline ${fmt(job.reference_us)} µs`, font: { color: "#dc2626", size: 11 } }] : [],
  };
  Plotly.react("plot-convergence", [{
    type: "scatter", mode: "lines+markers", name: "best so far",
    x: bestSoFar.map((_, i) => i + 1), y: bestSoFar, line: { shape: "hv", color: "#2563eb" }, marker: { size: 5 },
    hovertemplate: "%{x} measured: best %{y:.1f} µs<extra></extra>",
  }], layout, PLOT_CONFIG);
}

function drawOutcomes(job) {
  const counts = Object.entries(job.progress.by_status || {}).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  Plotly.react("plot-outcomes", [{
    type: "bar", x: counts.map(([s]) => s), y: counts.map(([, n]) => n), text: counts.map(([, n]) => String(n)),
    textposition: "auto", marker: { color: counts.map(([s]) => (s === "measured" || s === "compiled" ? "#10b981" : s === "pruned" || s === "pending" ? "#9ca3af" : "#ef4444")) },
    hovertemplate: "%{x}: %{y}<extra></extra>",
  }], { title: plotTitle("Variants by outcome (log scale)"), margin: { l: 50, r: 10, t: 36, b: 90 }, xaxis: { tickangle: -30 },
        yaxis: { title: { text: "variants" }, type: "log", dtick: 1 } }, PLOT_CONFIG);
}

async function showVariant(id) {
  let panel = document.getElementById("variant-details");
  if (!panel) { panel = document.createElement("aside"); panel.id = "variant-details"; document.body.appendChild(panel); }
  panel.innerHTML = `<p class="muted">Loading variant ${esc(id)}…</p>`;
  const v = await api(`/v1/variants/${id}?log=1`);
  const timing = v.timing ? `${fmt(v.timing.median_us)} µs median (p10 ${fmt(v.timing.p10_us)}, p90 ${fmt(v.timing.p90_us)}, ${v.timing.trials} trials, ${esc(v.timing.method)})` : "–";
  panel.innerHTML = `<button id="close-details" style="float:right">Close</button>
    <h2>Variant ${v.id} ${statusBadge(v.status)}</h2>
    <p><b>${esc(v.template)}</b><br><code>${esc(configText(v.config))}</code></p>
    ${v.failed_gate ? `<p class="reason">failed gate <b>${esc(v.failed_gate)}</b>: ${esc(v.reason)}</p>` : v.reason ? `<p class="reason">${esc(v.reason)}</p>` : ""}
    <table><tbody>
      <tr><td>time</td><td>${timing}</td></tr>
      <tr><td>error</td><td>${v.error ? `max_rel ${fmtError(v.error.max_rel)}, max_abs ${fmtError(v.error.max_abs)}, rel_l2 ${fmtError(v.error.rel_l2)}` : "–"}</td></tr>
      <tr><td>TFLOP/s</td><td>${fmt(v.tflops)}</td></tr><tr><td>speedup</td><td>${fmt(v.speedup, 2)}</td></tr>
      <tr><td>registers / spills</td><td>${v.registers ?? "–"} / ${v.spill_bytes ?? "–"} B</td></tr>
      <tr><td>shared memory</td><td>${v.smem_bytes ?? "–"} B</td></tr><tr><td>threads</td><td>${v.threads ?? "–"}</td></tr>
      <tr><td>footprint</td><td>${footprint(v) ?? "–"} B</td></tr><tr><td>compile</td><td>${fmt(v.compile_ms)} ms</td></tr>
    </tbody></table>
    ${v.has_kernel ? `<p><a href="/v1/variants/${v.id}/kernel" download="variant-${v.id}.cubin">Download the cubin</a></p>` : ""}
    <h2>Compile log</h2><pre id="compile-log">${esc(v.compile_log || "(empty)")}</pre>`;
  document.getElementById("close-details").addEventListener("click", () => panel.remove());
}

// Whether the job's results still hold: a driver, NVRTC or family-source change since it ran
// makes them stale (still served, flagged; /v1/best?retune_stale=1 re-tunes).
function staleness(job) {
  if (!job.stale) return `<span id="job-staleness" class="current">current</span>`;
  const keys = (job.stale_keys || []).map((k) => `${esc(k.key)} ${esc(shortKey(k.stored))} → ${esc(shortKey(k.current))}`);
  return `<span id="job-staleness" class="stale" title="tuned with other keys than this daemon runs with">stale</span> <span class="reason">${keys.join("; ")}</span>`;
}
function shortKey(value) { return String(value).length > 12 ? String(value).slice(0, 12) + "…" : String(value); }

// The tuned shapes whose fastest configs seeded the job's search, linked to their jobs.
// The ratio to the baseline that a user can trust: the job's final comparison (re-measured
// interleaved, with its 95% interval) when there is one; the first pass's ratio only as such.
function versusBaseline(job, best) {
  const final = best.final;
  if (final && final.speedup) {
    const verdict = job.comparison && job.comparison.baseline_wins ? "the baseline is the answer"
                  : final.faster_than_baseline ? "ours is faster" : "a tie within the noise";
    return `<p id="best-final">final comparison, interleaved: ${fmt(final.median_us)} µs vs the baseline's
      ${fmt(final.baseline_median_us)} µs: <b>${fmt(final.speedup, 3)}×</b>
      [${fmt(final.speedup_low, 3)}, ${fmt(final.speedup_high, 3)}] (95% interval), ${verdict}</p>`;
  }
  return best.speedup ? `<p class="muted">${fmt(best.speedup, 2)}× the baseline in the first pass (no final comparison, no interval)</p>` : "";
}

function warmStart(warm) {
  if (!warm || !warm.from || !warm.from.length) return `<span id="job-warm-start" class="muted">none</span>`;
  const sources = warm.from.map((f) => `<a href="#/jobs/${esc(f.job_id)}">${esc(shapeText(f.shape))}</a> (distance ${fmt(f.distance, 2)})`);
  return `<span id="job-warm-start">${warm.seeds.length} seed(s) from ${sources.join(", ")}</span>`;
}

async function showJob(view, jobId) {
  view.innerHTML = `<h1>Job ${esc(jobId)}</h1><div id="job-summary" class="summary"></div>
    <div class="grid">
      <div class="card"><div id="plot-scatter" class="plot"></div></div>
      <div class="card"><div id="plot-convergence" class="plot"></div></div>
      <div class="card"><div id="plot-outcomes" class="plot"></div></div>
      <div class="card"><h2>Best</h2><div id="job-best"></div></div>
      <div class="card" id="parameter-card"><label>Parameter <select id="parameter-select"></select></label>
        <div id="plot-parameter" class="plot"></div></div>
    </div>
    <form id="compare-form" class="filters"><label>Compare with job <input id="compare-with" size="6" inputmode="numeric"></label>
      <button type="submit">Compare</button></form>
    <h2>Variants <span id="variant-count" class="muted"></span></h2>
    <div class="filters"><label>Filter <input id="variant-filter" placeholder="e.g. BM=128 measured" size="30"></label>
      <a id="variants-csv" href="#" download="job-${esc(jobId)}-variants.csv">Download CSV</a>
      <span class="muted">(all variants: <a href="/v1/jobs/${esc(jobId)}/variants.csv">GET /v1/jobs/${esc(jobId)}/variants.csv</a>)</span></div>
    <details id="variant-columns" class="filters"></details>
    <table id="variant-table"></table>`;
  let filterText = "", chosenParameter = null;
  const hiddenColumns = new Set();  // labels of the columns the user unchecked
  document.getElementById("compare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const other = document.getElementById("compare-with").value.trim();
    if (other) location.hash = `#/compare?a=${encodeURIComponent(jobId)}&b=${encodeURIComponent(other)}`;
  });
  const pick = (id) => showVariant(id).catch(showError);
  const render = async () => {
    const job = await api(`/v1/jobs/${jobId}`);
    const variants = await allPages(`/v1/jobs/${jobId}/variants?exclude_pruned=1`, "variants");
    const measured = variants.filter((v) => v.status === "measured" && v.median_us !== null);
    const best = job.best;
    document.getElementById("job-summary").innerHTML = [
      ["family", job.family], ["shape", shapeText(job.shape)], ["dtype", job.dtype], ["mode", job.mode],
      ["GPU", job.device_name || "–"], ["arch", job.arch], ["status", null], ["progress", null],
      ["baseline (first pass)", job.reference_us ? fmt(job.reference_us) + " µs" : "–"],
      ["variants/min", job.stats ? fmt(job.stats.variants_per_minute) : "–"],
      ["results", null], ["warm start", null],
    ].map(([k, v]) => `<div><b>${k}</b>${k === "status" ? statusBadge(job.status) + (job.reason ? ` <span class="reason">${esc(job.reason)}</span>` : "")
                                       : k === "progress" ? `<span id="job-progress">${progressBar(job.progress)}</span>`
                                       : k === "results" ? staleness(job)
                                       : k === "warm start" ? warmStart(job.warm_start) : esc(v)}</div>`).join("");
    const compileOnly = job.mode === "compile";
    const compiled = variants.filter((v) => v.status === "compiled" || (compileOnly && v.registers !== null));
    document.getElementById("job-best").innerHTML = best
      ? `<p><a href="#" id="best-link">variant ${best.id}</a> <code>${esc(best.template)} ${esc(configText(best.config))}</code></p>
         <p>${fmt(best.median_us)} µs${best.tflops ? `, ${fmt(best.tflops)} TFLOP/s` : ""}</p>${versusBaseline(job, best)}`
      : compileOnly ? `<p class="muted" id="compile-only-note">a compile-only job for ${esc(job.arch)}: nothing is measured;
          ${compiled.length} variant(s) compiled (registers and spills in the plots and the table)</p>`
      : FINAL_JOB_STATES.has(job.status) ? `<p class="muted">no variant was measured</p>` : `<p class="muted">nothing measured yet</p>`;
    const bestLink = document.getElementById("best-link");
    if (bestLink) bestLink.addEventListener("click", (e) => { e.preventDefault(); pick(best.id); });
    if (compileOnly) drawCompiled(compiled);
    else { drawScatter(job, measured, pick); drawConvergence(job, measured); }
    drawOutcomes(job);
    const names = parameterNames(variants);
    const select = document.getElementById("parameter-select");
    if (!chosenParameter || !names.includes(chosenParameter)) chosenParameter = names[0] || null;
    select.innerHTML = names.map((n) => `<option ${n === chosenParameter ? "selected" : ""}>${esc(n)}</option>`).join("");
    select.onchange = () => { chosenParameter = select.value; drawParameter(measured, chosenParameter); };
    document.getElementById("parameter-card").hidden = !measured.length || !names.length;
    if (measured.length && chosenParameter) drawParameter(measured, chosenParameter);
    // The filter: every word must be in the row's text (template, parameters as NAME=VALUE, status).
    const words = filterText.toLowerCase().split(/\s+/).filter(Boolean);
    const rowText = (v) => `${v.id} ${v.template} ${configText(v.config)} ${v.status} ${v.failed_gate || ""}`.toLowerCase();
    const shown = variants.filter((v) => words.every((w) => rowText(v).includes(w)));
    document.getElementById("variant-count").textContent =
      `${variants.length} that reached the gates (${job.progress.by_status.pruned || 0} pruned not listed)` +
      (shown.length !== variants.length ? `, ${shown.length} shown` : "");
    const csvLink = document.getElementById("variants-csv");
    csvLink.href = URL.createObjectURL(new Blob([variantsCsv(shown, names)], { type: "text/csv" }));
    const filter = document.getElementById("variant-filter");
    filter.value = filterText;
    filter.onchange = () => { filterText = filter.value; render().catch(showError); };
    const columns = [
      { label: "id", value: (v) => v.id, num: true },
      { label: "template", value: (v) => v.template },
      { label: "status", value: (v) => v.status, html: (v) => statusBadge(v.status) },
      { label: "failed gate / reason", value: (v) => v.failed_gate, html: (v) => (v.failed_gate ? `<b>${esc(v.failed_gate)}</b> ` : "") + `<span class="reason">${esc(v.reason || "")}</span>` },
      { label: "median µs", value: (v) => v.median_us, num: true, html: (v) => fmt(v.median_us) },
      { label: "max_rel", value: (v) => (v.error ? v.error.max_rel : null), num: true, html: (v) => fmtError(v.error && v.error.max_rel) },
      { label: "TFLOP/s", value: (v) => v.tflops, num: true, html: (v) => fmt(v.tflops) },
      { label: "regs", value: (v) => v.registers, num: true },
      { label: "smem B", value: (v) => v.smem_bytes, num: true },
      { label: "footprint B", value: (v) => footprint(v), num: true },
      { label: "spills B", value: (v) => v.spill_bytes, num: true },
      { label: "compile ms", value: (v) => v.compile_ms, num: true, html: (v) => fmt(v.compile_ms, 0) },
      // One column per parameter, after the fixed ones.
      ...names.map((n) => ({ label: n, value: (v) => (v.config || {})[n], num: true })),
    ];
    // The columns chooser: every column a checkbox; the unchecked stay hidden across redraws.
    const chooser = document.getElementById("variant-columns");
    chooser.innerHTML = "<summary>Columns</summary>" + columns.map((c) =>
      `<label><input type="checkbox" data-column="${esc(c.label)}" ${hiddenColumns.has(c.label) ? "" : "checked"}> ${esc(c.label)}</label>`).join(" ");
    chooser.querySelectorAll("input").forEach((box) => box.addEventListener("change", () => {
      if (box.checked) hiddenColumns.delete(box.dataset.column); else hiddenColumns.add(box.dataset.column);
      render().catch(showError);
    }));
    sortableTable(document.getElementById("variant-table"), columns.filter((c) => !hiddenColumns.has(c.label)), shown, (v, tr) => {
      document.querySelectorAll("#variant-table tr.selected").forEach((row) => row.classList.remove("selected"));
      tr.classList.add("selected");
      pick(v.id);
    });
    return job;
  };
  const job = await render();
  if (FINAL_JOB_STATES.has(job.status)) return () => {};
  // Progress events redraw the bar at once; the whole page (plots, table) is read again at most
  // every POLL_MS, and at once when the status changes or the job ends.
  let busy = false, again = false, finished = false, lastRender = Date.now(), pending = null;
  const rerender = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        lastRender = Date.now();
        const now = await render();
        if (FINAL_JOB_STATES.has(now.status)) { finished = true; stopAll(); }
      } while (again && !finished);
    } catch (e) { showError(e); } finally { busy = false; }
  };
  const stopWatching = watchJob(jobId, (name, data) => {
    if (finished) return;
    if (name === "progress" && data) {
      const bar = document.getElementById("job-progress");
      if (bar) bar.innerHTML = progressBar(data);
    }
    if (name === "status" || name === "end" || name === "poll") return rerender();
    if (!pending)
      pending = setTimeout(() => { pending = null; rerender(); }, Math.max(0, POLL_MS - (Date.now() - lastRender)));
  });
  const stopAll = () => { stopWatching(); clearTimeout(pending); };
  return stopAll;
}

// ---- tuned shapes -------------------------------------------------------------------------

async function showShapes(view, params) {
  const query = new URLSearchParams({ limit: "1000" });
  if (params.family) query.set("family", params.family);
  if (params.device) query.set("device", params.device);
  const [families, all, page] = await Promise.all([api("/v1/families"), api("/v1/tuned?limit=1000"), api("/v1/tuned?" + query.toString())]);
  const models = [...new Set(all.problems.map((p) => p.device))].sort();
  const option = (value, selected) => `<option value="${esc(value)}" ${value === selected ? "selected" : ""}>${esc(value || "any")}</option>`;
  const dimsOf = (name) => (families.families.find((f) => f.name === name) || {}).dims;
  const groups = new Map();
  for (const p of page.problems) {
    const key = `${p.family} on ${p.device}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(p);
  }
  view.innerHTML = `<h1>Tuned shapes</h1>
    <div class="filters">
      <label>Family <select id="shapes-family">${["", ...families.families.map((f) => f.name)].map((f) => option(f, params.family || "")).join("")}</select></label>
      <label>GPU model <select id="shapes-device">${["", ...models].map((m) => option(m, params.device || "")).join("")}</select></label>
      <span class="muted">${page.count} tuned problem(s): per family and GPU model, each shape's best variant (the fastest on its Pareto front)</span>
    </div>` +
    [...groups.keys()].map((key, i) => `<h2>${esc(key)}</h2><table id="shapes-${i}" class="shapes-table"></table>`).join("");
  for (const id of ["shapes-family", "shapes-device"])
    document.getElementById(id).addEventListener("change", () => {
      const next = new URLSearchParams();
      if (document.getElementById("shapes-family").value) next.set("family", document.getElementById("shapes-family").value);
      if (document.getElementById("shapes-device").value) next.set("device", document.getElementById("shapes-device").value);
      location.hash = "#/shapes" + (next.toString() ? "?" + next.toString() : "");
    });
  [...groups.values()].forEach((problems, i) => sortableTable(document.getElementById(`shapes-${i}`), [
    { label: "shape", value: (p) => p.shape_key, html: (p) => esc(shapeText(p.shape, dimsOf(p.family))) },
    { label: "dtype", value: (p) => p.dtype },
    { label: "best config", value: (p) => p.best.config_key, html: (p) => `${esc(p.best.template)} <code>${esc(configText(p.best.config))}</code>` },
    { label: "median µs", value: (p) => p.best.median_us, num: true, html: (p) => fmt(p.best.median_us) },
    { label: "TFLOP/s", value: (p) => p.best.tflops, num: true, html: (p) => fmt(p.best.tflops) },
    { label: "front size", value: (p) => p.front_size, num: true },
    { label: "job", value: (p) => p.best.job_id, num: true, html: (p) => `<a href="#/jobs/${p.best.job_id}">${p.best.job_id}</a>` },
  ], problems, (p) => showVariant(p.best.id).catch(showError)));
  // The form starts on the filtered family, else the first one with a tuned shape.
  lookupForm(view, families.families, models, params.family || (page.problems[0] || all.problems[0] || {}).family);
  return () => {};
}

// ---- looking up a shape: tuned, nearest tuned or predicted (GET /v1/best?predict=1&nearest=1) ----

function lookupForm(view, families, models, startFamily) {
  if (families.length === 0) return;
  const section = document.createElement("section");
  section.id = "lookup";
  section.innerHTML = `<h2>Look up a shape</h2>
    <form id="lookup-form" class="filters">
      <label>Family <select id="lookup-family">${families.map((f) => `<option ${f.name === startFamily ? "selected" : ""}>${esc(f.name)}</option>`).join("")}</select></label>
      <label>dtype <select id="lookup-dtype"></select></label>
      <span id="lookup-dims"></span>
      <label>GPU model <select id="lookup-device">${["", ...models].map((m) => `<option value="${esc(m)}">${esc(m || "any")}</option>`).join("")}</select></label>
      <button type="submit">Look up</button>
    </form>
    <div id="lookup-answer"></div>`;
  view.appendChild(section);
  const familySelect = section.querySelector("#lookup-family");
  const familyOf = () => families.find((f) => f.name === familySelect.value);
  const drawInputs = () => {
    const family = familyOf();
    section.querySelector("#lookup-dtype").innerHTML = family.dtypes.map((d) => `<option>${esc(d)}</option>`).join("");
    section.querySelector("#lookup-dims").innerHTML = family.dims.map((d) =>
      `<label>${esc(d.name)} <input class="lookup-dim" name="${esc(d.name)}" type="number" min="${esc(d.min)}" max="${esc(d.max)}" value="${esc(d.default ?? d.min)}" required></label>`).join(" ");
  };
  familySelect.addEventListener("change", drawInputs);
  drawInputs();
  section.querySelector("#lookup-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const family = familyOf();
    const query = new URLSearchParams({ family: family.name, dtype: section.querySelector("#lookup-dtype").value });
    for (const input of section.querySelectorAll(".lookup-dim")) query.set(input.name, input.value);
    const device = section.querySelector("#lookup-device").value;
    if (device) query.set("device", device);
    query.set("predict", "1");
    query.set("nearest", "1");
    const out = section.querySelector("#lookup-answer");
    out.innerHTML = `<p class="muted">Looking up…</p>`;
    api("/v1/best?" + query.toString())
      .then((answer) => { out.innerHTML = lookupAnswer(answer, family.dims); })
      .catch((error) => {
        // A miss with no predictor and no comparable shape is an answer too, not a page error.
        out.innerHTML = `<p id="lookup-source" class="lookup-none">${error.status === 404 ? "not tuned" : "error"}</p><p class="reason">${esc(error.message)}</p>`;
      });
  });
}

// One answer of GET /v1/best, labelled by where it comes from.
function lookupAnswer(a, dims) {
  const config = `${esc(a.template)} <code>${esc(configText(a.config))}</code>`;
  if (a.source === "predicted") {
    const check = a.check || {};
    const resources = check.status === "compiled" ? ` (${check.registers} registers, ${check.spill_bytes} spill bytes, ${check.smem_bytes} B shared memory)`
      : check.status === "checked" ? ` on ${check.device_model}: ${fmt(check.measured_us)} µs in one check, max relative error ${fmtError(check.max_rel_error)} (not a tuned figure)` : "";
    const checkName = check.kind === "gpu" ? "GPU check" : "compile check (compile-only)";
    return `<p><span id="lookup-source" class="lookup-predicted">predicted</span> for ${esc(shapeText(a.shape, dims))}: never measured for this shape</p>
      <p>${config}</p>
      <p>expected ${fmt(a.expected_us)} µs (interval ${fmt(a.expected_interval_us[0])}–${fmt(a.expected_interval_us[1])} µs), ranked by a model of ${esc(a.model.variants)} variant(s) measured on ${esc(a.model.shapes)} shape(s)${a.validated_elsewhere ? "; this config was validated on another shape" : ""}</p>
      <p>${checkName}${check.job_id ? ` (job <a href="#/jobs/${check.job_id}">${check.job_id}</a>)` : ""}: ${statusBadge(check.status || "not_checked")}${esc(resources)}${check.reason ? " " + esc(check.reason) : ""}</p>`;
  }
  const measured = `<p>${config}</p><p>median ${fmt(a.median_us)} µs, job <a href="#/jobs/${a.job_id}">${a.job_id}</a>${a.baseline_wins ? " (the baseline wins: " + esc(a.baseline) + ")" : ""}</p>`;
  if (a.exact === false && a.nearest)
    return `<p><span id="lookup-source" class="lookup-nearest">nearest tuned shape</span>: ${esc(shapeText(a.nearest.shape, dims))} for ${esc(shapeText(a.nearest.asked_shape, dims))} (distance ${fmt(a.nearest.distance, 2)})</p>${measured}`;
  return `<p><span id="lookup-source" class="lookup-tuned">tuned</span> ${esc(shapeText(a.shape, dims))}</p>${measured}`;
}

// ---- routing ------------------------------------------------------------------------------

async function route() {
  stopCurrentView();
  stopCurrentView = () => {};
  clearError();
  const details = document.getElementById("variant-details");
  if (details) details.remove();
  const view = document.getElementById("view");
  const [path, query] = (location.hash.replace(/^#/, "") || "/").split("?");
  const params = Object.fromEntries(new URLSearchParams(query || ""));
  try {
    const job = path.match(/^\/jobs\/(\d+)$/);
    const batch = path.match(/^\/batches\/(\d+)$/);
    if (job) stopCurrentView = await showJob(view, job[1]);
    else if (batch) stopCurrentView = await showBatch(view, batch[1]);
    else if (path === "/batches") stopCurrentView = await showBatches(view);
    else if (path === "/compare") stopCurrentView = await showCompare(view, params);
    else if (path === "/shapes") stopCurrentView = await showShapes(view, params);
    else stopCurrentView = await showJobs(view, params);
    document.body.dataset.ready = location.hash || "#/";  // for tests: the view has drawn
  } catch (error) {
    view.innerHTML = `<h1>Cannot show this page</h1><p class="reason">${esc(error.message)}</p>` +
      (error.status === 401 ? "<p>This daemon needs a token: enter it at the top right.</p>" : "");
    document.body.dataset.ready = "error";
  }
}

document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  localStorage.setItem("kerntune-token", document.getElementById("token").value.trim());
  route();
});
document.getElementById("token").value = token();
window.addEventListener("hashchange", route);
route();
