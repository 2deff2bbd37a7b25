"use strict";
// Four clicks on the snapshot (clockwise from top-left) -> calibration; then the layout's zones are
// drawn where they fall and can be dragged into place before saving.
const $ = (id) => document.getElementById(id);
let points = [];
let zones = null;  // {name: [[x, y], ...]} in image pixels, after calibration

function scale(ev) {
  const img = $("snap");
  const rect = img.getBoundingClientRect();
  return [(ev.clientX - rect.left) * img.naturalWidth / rect.width, (ev.clientY - rect.top) * img.naturalHeight / rect.height];
}

function draw() {
  const img = $("snap");
  const svg = $("overlay");
  svg.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
  let html = `<polygon points="${points.map((p) => p.join(",")).join(" ")}" class="calib-poly"/>`;
  if (zones) {
    html += Object.entries(zones).map(([name, poly]) => `<g class="zone" data-zone="${name}"><polygon points="${poly.map((p) => p.join(",")).join(" ")}"/>
      <text x="${poly[0][0] + 6}" y="${poly[0][1] + 22}">${name}</text></g>`).join("");
  }
  html += points.map((p, i) => `<circle cx="${p[0]}" cy="${p[1]}" r="12" class="calib-pt" data-i="${i}"/>`).join("");
  svg.innerHTML = html;
  $("calib-save").disabled = points.length !== 4;
  $("zones-save").disabled = !zones;
}

function drag(ev, onMove) {
  let last = scale(ev);
  const move = (e) => { const p = scale(e); onMove(p[0] - last[0], p[1] - last[1], p); last = p; draw(); };
  window.addEventListener("pointermove", move);
  window.addEventListener("pointerup", () => window.removeEventListener("pointermove", move), {once: true});
}

$("overlay").addEventListener("pointerdown", (ev) => {
  ev.preventDefault();
  const hit = ev.target.dataset.i;
  if (hit !== undefined) { drag(ev, (dx, dy, p) => { points[hit] = p; }); return; }
  const zone = ev.target.closest(".zone");
  if (zone) {
    const name = zone.dataset.zone;
    drag(ev, (dx, dy) => { zones[name] = zones[name].map(([x, y]) => [x + dx, y + dy]); });
    return;
  }
  if (points.length < 4) { points.push(scale(ev).map(Math.round)); draw(); }
});
$("calib-reset").addEventListener("click", () => { points = []; zones = null; draw(); });
$("calib-save").addEventListener("click", async () => {
  const r = await fetch("/api/calibrate", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({points, table_mm: [Number($("table-w").value), Number($("table-h").value)]})});
  const data = await r.json();
  $("calib-result").textContent = r.ok ? `Saved to ${data.path}. Drag the zones into place, then save them.` : data.error;
  if (r.ok) { zones = data.zones_px; draw(); }
});
$("zones-save").addEventListener("click", async () => {
  const r = await fetch("/api/zones", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({zones_px: zones})});
  const data = await r.json();
  $("calib-result").textContent = r.ok ? `Zones saved to ${data.path}; restart serve to use them.` : data.error;
});
$("snap").addEventListener("load", draw);
