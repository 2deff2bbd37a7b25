"use strict";
const $ = (id) => document.getElementById(id);
let points = [];

function draw() {
  const img = $("snap");
  const svg = $("overlay");
  svg.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
  const poly = points.map((p) => p.join(",")).join(" ");
  svg.innerHTML = `<polygon points="${poly}" class="calib-poly"/>` + points.map((p, i) => `<circle cx="${p[0]}" cy="${p[1]}" r="12" class="calib-pt" data-i="${i}"/>`).join("");
  $("calib-save").disabled = points.length !== 4;
}

$("overlay").addEventListener("pointerdown", (ev) => {
  const img = $("snap");
  const rect = img.getBoundingClientRect();
  const x = (ev.clientX - rect.left) * img.naturalWidth / rect.width;
  const y = (ev.clientY - rect.top) * img.naturalHeight / rect.height;
  const hit = ev.target.dataset.i;
  if (hit !== undefined) {  // drag an existing corner
    const move = (e) => { points[hit] = [(e.clientX - rect.left) * img.naturalWidth / rect.width, (e.clientY - rect.top) * img.naturalHeight / rect.height]; draw(); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", () => window.removeEventListener("pointermove", move), {once: true});
    return;
  }
  if (points.length < 4) { points.push([Math.round(x), Math.round(y)]); draw(); }
});
$("calib-reset").addEventListener("click", () => { points = []; draw(); });
$("calib-save").addEventListener("click", async () => {
  const r = await fetch("/api/calibrate", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({points, table_mm: [Number($("table-w").value), Number($("table-h").value)]})});
  const data = await r.json();
  $("calib-result").textContent = r.ok ? `Saved to ${data.path}` : data.error;
});
$("snap").addEventListener("load", draw);
