// The dashboard's only script. The server renders every fragment with
// html/template (so all znode data arrives escaped); this script swaps
// fragments in as Server-Sent Events bring them, switches views, filters
// the timeline and sends the actions.
"use strict";

const body = document.body;
const live = document.getElementById("live");
const timeline = document.getElementById("timeline");
const maxRows = 2000;

// Views: the hash names one ("#topics", "#zookeeper:/brokers/ids").
function showView() {
  const hash = decodeURIComponent(location.hash.slice(1));
  const [view, ...rest] = hash.split(":");
  const name = document.getElementById("view-" + view) ? view : (hash.startsWith("topic-") ? "topics" : "cluster");
  for (const v of document.querySelectorAll(".view")) v.classList.toggle("active", v.id === "view-" + name);
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === name);
  if (name === "zookeeper" && rest.length) openZnode(rest.join(":"));
  if (hash.startsWith("topic-")) document.getElementById(hash)?.scrollIntoView();
}
window.addEventListener("hashchange", showView);

// Fragments: each element with data-section is replaced as a whole.
function applySection(id, html) {
  let el = document.querySelector(`[data-section="${CSS.escape(id)}"]`);
  if (!el && id.startsWith("topic:")) {
    el = document.createElement("div");
    el.dataset.section = id;
    const parent = document.getElementById("topic-sections");
    const next = [...parent.children].find((c) => c.dataset.section > id);
    parent.insertBefore(el, next || null);
  }
  if (el) el.innerHTML = html;
}

function removeSection(id) {
  document.querySelector(`[data-section="${CSS.escape(id)}"]`)?.remove();
}

// The explorer shows one znode, fetched from the server's mirror.
const znode = document.getElementById("znode");
let znodeSeq = 0;
async function openZnode(path) {
  const mine = ++znodeSeq;
  // Set first: a change to this znode announced while it loads fetches it again.
  znode.dataset.path = path;
  const resp = await fetch("/znode?path=" + encodeURIComponent(path));
  if (mine !== znodeSeq) return;
  znode.innerHTML = await resp.text();
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-znode]");
  if (!a) return;
  e.preventDefault();
  location.hash = "zookeeper:" + a.dataset.znode;
});

function parentOf(p) {
  const i = p.lastIndexOf("/");
  return i <= 0 ? "/" : p.slice(0, i);
}

// Timeline filters, kept in localStorage like the timeline is kept by the server.
const filters = document.getElementById("filters");
const filterText = document.getElementById("filter-text");
function loadFilters() {
  const saved = JSON.parse(localStorage.getItem("zkafka-filters") || "{}");
  for (const box of filters.querySelectorAll("input[type=checkbox]")) {
    if (box.name in saved) box.checked = saved[box.name];
  }
  filterText.value = localStorage.getItem("zkafka-filter-text") || "";
}
function applyFilters() {
  const off = new Set();
  const saved = {};
  for (const box of filters.querySelectorAll("input[type=checkbox]")) {
    saved[box.name] = box.checked;
    if (!box.checked) off.add(box.name);
  }
  localStorage.setItem("zkafka-filters", JSON.stringify(saved));
  localStorage.setItem("zkafka-filter-text", filterText.value);
  const text = filterText.value.toLowerCase();
  for (const li of timeline.children) filterRow(li, off, text);
}
function filterRow(li, off, text) {
  li.hidden = off.has(li.dataset.kind) || (text !== "" && !li.textContent.toLowerCase().includes(text));
}
filters.addEventListener("input", applyFilters);
filters.addEventListener("submit", (e) => e.preventDefault());

function addEvents(rows) {
  const off = new Set([...filters.querySelectorAll("input:not(:checked)")].map((b) => b.name));
  const text = filterText.value.toLowerCase();
  const tmp = document.createElement("ol");
  for (const row of rows) {
    tmp.innerHTML = row.html;
    const li = tmp.firstElementChild;
    filterRow(li, off, text);
    timeline.insertBefore(li, timeline.firstChild);
  }
  while (timeline.children.length > maxRows) timeline.lastElementChild.remove();
}

// Actions: POST with the header that marks the dashboard's own page.
async function act(verb, params) {
  const resp = await fetch("/actions/" + verb, {
    method: "POST",
    headers: { "X-Zkafka-Action": "1", "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params),
  });
  if (!resp.ok) alertLine(await resp.text());
}
function alertLine(text) {
  live.textContent = text.trim();
  live.className = "live bad";
}
document.addEventListener("click", (e) => {
  const b = e.target.closest("button[data-action]");
  if (b) act(b.dataset.action, { target: b.dataset.target });
});
document.addEventListener("submit", (e) => {
  const f = e.target.closest("form[data-action]");
  if (!f) return;
  e.preventDefault();
  act(f.dataset.action, Object.fromEntries(new FormData(f)));
});

// The event stream. EventSource reconnects by itself and sends the last id,
// so the server resumes where this page was.
function connect() {
  const q = new URLSearchParams({ boot: body.dataset.boot, rev: body.dataset.rev, seq: body.dataset.seq });
  const es = new EventSource("/events?" + q);
  es.onopen = () => { live.textContent = "live"; live.className = "live ok"; };
  es.onerror = () => { live.textContent = "reconnecting…"; live.className = "live bad"; };
  es.addEventListener("section", (e) => { const s = JSON.parse(e.data); applySection(s.id, s.html); });
  es.addEventListener("removed", (e) => removeSection(JSON.parse(e.data)));
  es.addEventListener("timeline", (e) => addEvents(JSON.parse(e.data)));
  es.addEventListener("znodes", (e) => {
    const z = JSON.parse(e.data);
    const shown = znode.dataset.path;
    if (z.all || z.paths.some((p) => p === shown || parentOf(p) === shown)) openZnode(shown);
  });
  es.addEventListener("reload", () => { es.close(); location.reload(); });
}

loadFilters();
applyFilters();
showView();
connect();
