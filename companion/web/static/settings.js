"use strict";
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));

async function load() {
  const s = await (await fetch("/api/state")).json();
  for (const k of ["variant", "tileset", "layout", "source"]) $(k).textContent = s.settings[k] || "default";
  $("variant-select").value = s.settings.variant;
  $("tileset-select").value = s.settings.tileset;
  $("card-name").textContent = s.card && s.card.name ? `${s.card.name}${s.card.hands ? ` (${s.card.hands} hands)` : ""}` : "none";
}

$("card-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const r = await fetch("/api/card", {method: "POST", body: new FormData($("card-form"))});
  const data = await r.json().catch(() => ({error: r.statusText}));
  if (r.ok) {
    $("card-result").innerHTML = `<p class="ok">Loaded ${esc(data.name)}: ${data.hands} hands.</p>`;
    load();
  } else {
    const issues = (data.issues || []).map((i) => `<li class="issue">${esc(i.file)}:${i.line ?? "?"}:${i.col ?? "?"}: line ${i.line ?? "?"}: ${esc(i.message)}</li>`).join("");
    $("card-result").innerHTML = `<p class="error">${esc(data.error)}</p><ul>${issues}</ul>`;
  }
});
$("variant-apply").addEventListener("click", async () => {
  const r = await fetch("/api/settings", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({variant: $("variant-select").value})});
  const data = await r.json();
  $("variant-result").textContent = r.ok ? `now playing ${data.variant}` : data.error;
  load();
});
$("tileset-apply").addEventListener("click", async () => {
  $("tileset-result").textContent = "loading...";
  const r = await fetch("/api/settings", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({tileset: $("tileset-select").value})});
  const data = await r.json().catch(() => ({error: r.statusText}));
  $("tileset-result").textContent = r.ok ? `now reading with ${data.tileset}` : data.error;
  $("tileset-result").className = r.ok ? "ok" : "error";
  load();
});
load();
