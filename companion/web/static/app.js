// Live dashboard: one SSE stream of the whole state, rendered into the page's panels.
"use strict";
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const hhmmss = (t) => new Date(t * 1000).toLocaleTimeString();
let pending = null;

function tileSuit(code) {
  if (/^[1-9]B$/.test(code)) return "bam";
  if (/^[1-9]C$/.test(code)) return "crak";
  if (/^[1-9]D$/.test(code)) return "dot";
  if (code === "J") return "joker";
  if (["N", "E", "S", "W"].includes(code)) return "wind";
  if (["RD", "GD", "WD"].includes(code)) return "dragon";
  return "other";
}

function tileImg(code) {
  return `<img src="/tiles/${encodeURIComponent(code)}.png" alt="" onerror="this.remove()">`;
}

function tileHtml(zone, t) {
  const cls = ["tile", tileSuit(t.code), t.corrected ? "corrected" : "", t.added ? "added" : "", t.uncertain ? "uncertain" : ""].join(" ");
  const title = t.added ? "added by you: click to change or take back" : t.corrected ? `read as ${t.raw}, corrected` : "click to correct";
  return `<button class="${cls}" data-zone="${esc(zone)}" data-index="${t.index}" data-code="${esc(t.code)}" title="${title}">${tileImg(t.code)}<span>${esc(t.code)}</span></button>`;
}

function zoneTiles(z) {
  // group tiles by exposures when the exposures spell out the tiles in order
  const flat = z.exposures.flat();
  if (flat.length && flat.length === z.tiles.length) {
    let i = 0;
    return z.exposures.map((e) => `<span class="exposure">${e.map(() => tileHtml(z.zone, z.tiles[i++])).join("")}</span>`).join("");
  }
  const ex = z.exposures.map((e) => `<span class="exposure">${e.map((c) => `<span class="tile ${tileSuit(c)}">${tileImg(c)}<span>${esc(c)}</span></span>`).join("")}</span>`).join("");
  return ex + `<span class="loose">${z.tiles.map((t) => tileHtml(z.zone, t)).join("")}</span>`;
}

function mahjongLine(mj) {
  if (!mj) return "";
  const weak = mj.uncertain && mj.uncertain.length
    ? ` <span class="check">scored on a weak reading: check tile(s) ${mj.uncertain.map((i) => "#" + i).join(", ")}</span>` : "";
  return `<p class="mj">Mah Jongg: <b>${esc(mj.hand)}</b>, ${esc(String(mj.value))} points${mj.jokerless ? " (jokerless)" : ""}${weak}</p>`;
}

function editsLine(r) {
  const added = r.tiles.filter((t) => t.added).length, removed = r.removed || [];
  if (!added && !removed.length) return "";
  const parts = [added ? `added ${added} tile(s)` : "", removed.length ? `took out ${removed.map(esc).join(" ")}` : ""].filter(Boolean);
  return `<p class="small edits">You ${parts.join(" and ")}. <button class="restore" data-zone="${esc(r.zone)}">Restore the camera's tiles</button></p>`;
}

function renderRacks(s) {
  $("racks").innerHTML = s.racks.map((r) => {
    const viable = r.viable ? `<details><summary>${r.viable.length} card hands still possible</summary><ul>${r.viable.map((h) => `<li>${esc(h.name || h.hand)}${h.missing !== undefined ? ` <span class="small">(${h.missing} missing)</span>` : ""}</li>`).join("")}</ul></details>` : "";
    return `<article class="card rack ${r.status}" data-zone="${esc(r.zone)}">
      <h3>${esc(r.zone)} ${r.player != null ? `<span class="small">player ${r.player}</span>` : ""} <span class="badge ${r.status}">${r.status}</span></h3>
      <div class="tiles">${zoneTiles(r) || '<span class="small">no exposures</span>'}<button class="add-tile" data-zone="${esc(r.zone)}" data-index="${r.tiles.length - 1}" title="add a tile the camera missed, to the last exposure or as a new one">+ tile</button></div>
      ${editsLine(r)}${mahjongLine(r.mahjong)}${r.face_down ? `<p class="small">${r.face_down} face down</p>` : ""}${viable}</article>`;
  }).join("");
  $("discards").innerHTML = s.discards.map((d) => `<div><b>${esc(d.zone)}</b> <span class="tiles">${d.tiles.map((t) => tileHtml(d.zone, t)).join("")}</span></div>`).join("") || '<span class="small">none yet</span>';
}

function renderFlags(s) {
  $("flags").innerHTML = s.flags.filter((f) => f.status !== "dismissed").map((f) => `
    <div class="flag ${f.status} ${f.active ? "active" : ""}" data-flag="${f.id}" data-kind="${esc(f.kind)}">
      <time>${hhmmss(f.t)}</time> <b>${esc(f.kind.replace("_", " "))}</b> ${f.zone ? `on ${esc(f.zone)}` : ""}: ${esc(f.message)}
      ${f.status === "open" ? `<button data-status="confirmed">Confirm</button><button data-status="dismissed">Dismiss</button>` : `<em>${f.status}</em>`}
    </div>`).join("");
}

function renderScores(s) {
  const players = new Set(Object.keys(s.scores));
  s.racks.forEach((r) => { if (r.player != null) players.add(String(r.player)); });
  const games = s.session_games || [];
  games.forEach((g) => Object.keys(g.scores).forEach((p) => players.add(p)));
  const ps = [...players].sort();
  const total = (p) => games.filter((g) => g.id !== s.game).reduce((a, g) => a + (g.scores[p] || 0), 0) + (s.scores[p] || 0);
  $("scoreboard").innerHTML = `<tr><th></th>${ps.map((p) => `<th>player ${esc(p)}</th>`).join("")}</tr>
    <tr><td>game ${games.length || 1}</td>${ps.map((p) => `<td>${s.scores[p] || 0}</td>`).join("")}</tr>
    <tr><td>session</td>${ps.map((p) => `<td>${total(p)}</td>`).join("")}</tr>` +
    (s.last_settlement ? `<tr><td colspan="${ps.length + 1}" id="settlement">Session ${s.last_settlement.session} settled: ${
      (s.last_settlement.payments || []).map((x) => `${esc(x.from)} pays ${esc(x.to)} ${x.amount}`).join(", ") || "no payments"}</td></tr>` : "");
}

function render(s) {
  $("warnings").innerHTML = (s.warnings || []).map((w) => `<div class="warning">${esc(w)}</div>`).join("");
  const st = s.status || {};
  $("status").textContent = `${st.source || ""} | ${st.motion || ""} | ${st.fps || 0} fps | homography ${s.homography}${st.source_error ? " | " + st.source_error : ""}`;
  renderFlags(s);
  renderRacks(s);
  renderScores(s);
  $("log").innerHTML = s.events.map((e) => `<li data-kind="${esc(e.kind)}"><time>${hhmmss(e.t)}</time> ${esc(e.message)}</li>`).join("");
  document.body.dataset.seq = s.seq;
}

async function post(url, body) {
  const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body || {})});
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function connect() {
  const es = new EventSource("/api/events");
  es.addEventListener("state", (ev) => render(JSON.parse(ev.data)));
  es.onerror = () => { $("status").textContent = "reconnecting..."; };
}

document.addEventListener("click", async (ev) => {
  const tile = ev.target.closest("button.tile, button.add-tile");
  if (tile) {
    const plus = tile.classList.contains("add-tile");
    pending = {zone: tile.dataset.zone, index: Number(tile.dataset.index), plus};
    $("correct-what").textContent = plus ? "" : `${tile.dataset.code} (${pending.zone} #${pending.index + 1})`;
    $("correct-prompt").textContent = plus ? `Add a tile the camera missed to ${pending.zone}:` : "Correct";
    $("correct-to").hidden = plus;
    ["correct-ok", "correct-add", "correct-add-new", "correct-remove"].forEach((id) => { $(id).hidden = plus; });
    ["correct-plus", "correct-plus-new"].forEach((id) => { $(id).hidden = !plus; });
    $("correct-code").value = "";
    $("correct-error").textContent = "";
    $("correct-dialog").showModal();
    return;
  }
  const restore = ev.target.closest("button.restore");
  if (restore) {
    await post("/api/correct", {zone: restore.dataset.zone, action: "restore"});
    return;
  }
  const fb = ev.target.closest(".flag button");
  if (fb) {
    await post(`/api/flags/${fb.closest(".flag").dataset.flag}`, {status: fb.dataset.status});
  }
});

$("correct-form").addEventListener("submit", async (ev) => {
  const how = ev.submitter ? ev.submitter.value : "ok";
  if (how === "cancel") return;
  ev.preventDefault();
  // Enter in the code box submits as the first button, "Correct", hidden when adding to a rack
  const action = pending.plus && how === "ok" ? "add" : {ok: "correct", add: "add", add_new: "add_new", remove: "remove"}[how];
  try {
    await post("/api/correct", {zone: pending.zone, index: pending.index, action, code: $("correct-code").value});
    $("correct-dialog").close();
  } catch (e) { $("correct-error").textContent = e.message; }
});
$("new-game").addEventListener("click", () => post("/api/game/new"));
$("finish-session").addEventListener("click", () => { if (confirm("Finish the session and settle?")) post("/api/session/finish"); });
connect();
