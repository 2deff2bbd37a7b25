// The enroll page: enroll a set from a photo, show what it was taught (each crop under its code, in
// the sheet's rows), enroll it again from its own kept photo with two tiles picked exchanged, and
// read with it from now on.
const form = document.getElementById("enroll-form");
const out = document.getElementById("enroll-result");
const taught = document.getElementById("enroll-taught");
let shown = null;  // the set shown below: GET /api/tilesets/NAME

function said(data) {  // what the enrollment did and asks to check, in words
  let text = `Enrolled ${data.name} in ${data.folder}.`;
  if (data.turned_degrees) {
    text += ` The photo was taken turned: read turned by ${data.turned_degrees} degrees.`;
  }
  for (const [a, b] of data.exchanged) {
    text += ` Exchanged as asked: the tile in ${a}'s place is enrolled as ${b}, the tile in ${b}'s place as ${a}.`;
  }
  for (const place of data.laid_right) {
    text += ` Laid right as you said: the tile in ${place}'s place is enrolled as ${place}.`;
  }
  for (const places of data.exchanged_read_otherwise) {
    text += ` Yet the tiles now in ${places.map((p) => `${p}'s`).join(" and ")} places read surely as each other's: look at them (framed in amber below); if they were laid right, exchange them back.`;
  }
  if (data.reordered.length) {
    const where = data.reordered.map((m) => `${m.tile} in ${m.place}'s place`).join(", ");
    text += ` ${data.reordered.length} tiles lay in each other's places: ${where}; each is enrolled as the tile it reads.`;
  }
  for (const [a, b] of data.maybe_swapped) {
    text += ` The tiles in ${a}'s and ${b}'s places may lie in each other's places (each reads likelier as the other's tile, though not surely): look at those two tiles on the cloth (framed in amber below); if they do, exchange them with the button here, or lay them right and enroll again.`;
  }
  text += ` The base classifier already reads ${Math.round(100 * data.base_agreement)}% of them as laid out.`;
  if (data.base_agreement < 0.3) {
    text += " Few tiles read as laid out: check that the tiles lie in the sheet's order.";
  }
  return text;
}

let busy = false;  // one enrollment at a time from this page: a second tap while one runs does nothing

async function submitEnroll(body) {
  if (busy) {
    return;
  }
  busy = true;
  try {
    await enrollWith(body);
  } finally {
    busy = false;
  }
}

async function enrollWith(body) {
  out.textContent = "enrolling...";
  out.className = "";
  const r = await fetch("/api/enroll", {method: "POST", body: body});
  const data = await r.json().catch(() => ({error: r.statusText}));
  if (!r.ok) {
    out.textContent = data.error;
    out.className = "error";
    taught.replaceChildren();
    for (const place of data.laid_twice || []) {  // the player's word that the tile there is its own
      out.append(" ", laidRightButton(body, place));
    }
    return;
  }
  out.textContent = said(data);
  listed(data.name);
  await showSet(data.name);
  for (const [a, b] of (shown && shown.name === data.name ? data.maybe_swapped : [])) {
    out.append(" ", exchangeControl(a, b));
  }
  const warn = data.base_agreement < 0.3 || data.maybe_swapped.length || data.exchanged_read_otherwise.length;
  out.className = warn ? "warn" : "ok";
}

function laidRightButton(body, place) {  // the same photo enrolled again, the tile in place taken as laid right
  const button = Object.assign(document.createElement("button"), {type: "button", className: "laid-right",
    textContent: `The tile in ${place}'s place is the ${place}: enroll it so`});
  button.addEventListener("click", () => {
    const again = new FormData();
    body.forEach((value, key) => again.append(key, value));
    again.append("laid_right", place);
    submitEnroll(again);
  });
  return button;
}

function withPair(a, b) {  // the pairs to exchange with a and b picked, or why they cannot be
  const pairs = shown.exchanged;
  const same = pairs.filter(([x, y]) => (x === a && y === b) || (x === b && y === a));
  if (same.length) {
    return pairs.filter((p) => !same.includes(p));  // picked again: exchanged back
  }
  for (const place of [a, b]) {
    if (shown.put_back.includes(place)) {
      return `${place} was put back in its place by the enrollment: to keep every tile where it lies, tick "keep every tile where it lies" and enroll again.`;
    }
    const pair = pairs.find((p) => p.includes(place));
    if (pair) {
      return `${place} is exchanged with ${pair[0] === place ? pair[1] : pair[0]} already: exchange those two back first.`;
    }
  }
  return [...pairs, [a, b]];
}

function exchangeControl(a, b) {  // a button that enrolls the set again from its photo, a and b exchanged
  const pairs = withPair(a, b);
  if (typeof pairs === "string") {
    return pairs;
  }
  const back = pairs.length < shown.exchanged.length;
  const button = Object.assign(document.createElement("button"), {type: "button", className: "exchange",
    textContent: `Exchange ${a} and ${b}${back ? " back" : ""} and enroll again`});
  button.addEventListener("click", () => {
    const body = new FormData();
    body.append("name", shown.name);
    body.append("layout", shown.layout);
    if (form.elements.as_laid.checked) {
      body.append("as_laid", "1");
    }
    for (const [x, y] of pairs) {
      body.append("swap", `${x},${y}`);
    }
    submitEnroll(body);
  });
  return button;
}

function pick(fig) {  // two tiles picked: the player's word that they lie in each other's places
  fig.classList.toggle("picked");
  const picked = [...taught.querySelectorAll("figure.picked")].map((f) => f.dataset.code);
  const actions = document.getElementById("taught-actions");
  actions.replaceChildren(picked.length === 2 ? exchangeControl(...picked) : picked.length > 2 ? "Pick two tiles only." : "");
}

function figure(code, src) {
  const fig = Object.assign(document.createElement("figure"), {className: `taught ${shown.marks[code] || ""}`});
  fig.dataset.code = code;
  fig.append(Object.assign(document.createElement("img"), {alt: code, src: src}),
    Object.assign(document.createElement("figcaption"), {textContent: code}));
  if (shown.photo) {
    fig.classList.add("pickable");
    fig.addEventListener("click", () => pick(fig));
  }
  return fig;
}

async function showSet(name) {  // what the set was taught, its places to check framed
  const r = await fetch(`/api/tilesets/${encodeURIComponent(name)}`);
  const data = await r.json().catch(() => ({error: r.statusText}));
  taught.replaceChildren();
  if (!r.ok) {
    taught.textContent = data.error;
    taught.className = "error";
    return;
  }
  shown = data;
  taught.className = "";
  const base = `/api/tilesets/${encodeURIComponent(name)}`;
  const head = `${name}: each tile under the code it is enrolled as, laid out as the sheet lays them. A tile under another tile's code lay in the wrong place`;
  taught.append(Object.assign(document.createElement("p"), {textContent: head + (data.photo
    ? ": pick it and the tile that lay in its place, and exchange the two."
    : ". (Its photo is not kept: enroll it again from the photo to exchange tiles here.)")}));
  const stamp = Date.now();
  let k = 0;
  for (const length of data.rows) {
    const row = Object.assign(document.createElement("div"), {className: "taught-row"});
    for (let c = 0; c < length; c += 1, k += 1) {
      row.append(figure(data.codes[k], `${base}/crops/${k}.png?v=${stamp}`));
    }
    taught.append(row);
  }
  const use = Object.assign(document.createElement("button"), {type: "button", id: "use-shown",
    textContent: "Read with this set"});
  const used = document.createElement("span");
  use.addEventListener("click", () => useSet(name, used));
  taught.append(Object.assign(document.createElement("p"), {id: "taught-actions"}), use, " ", used, " ",
    Object.assign(document.createElement("a"), {textContent: "the same as one picture", href: `${base}/check.png`}));
}

function listed(name) {  // a set just enrolled joins "Enrolled sets", with its buttons
  const list = document.getElementById("enrolled");
  if (list.querySelector(`button.show-set[data-set="${CSS.escape(name)}"]`)) {
    return;
  }
  list.querySelectorAll("li.small").forEach((li) => li.remove());  // "none yet"
  const show = Object.assign(document.createElement("button"), {type: "button", className: "show-set",
    textContent: "show its tiles"});
  const use = Object.assign(document.createElement("button"), {type: "button", className: "use-set",
    textContent: "read with this set"});
  show.dataset.set = use.dataset.set = name;
  show.addEventListener("click", () => showSet(name));
  use.addEventListener("click", () => useSet(name, document.getElementById("use-result")));
  const item = document.createElement("li");
  item.append(`${name} `, show, " ", use);
  list.append(item);
}

async function useSet(name, where) {  // read with the set from now on (kept for the next start)
  where.textContent = "loading...";
  const r = await fetch("/api/settings", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({tileset: name})});
  const data = await r.json().catch(() => ({error: r.statusText}));
  where.textContent = r.ok ? `Now reading with ${data.tileset}.` : data.error;
  where.className = r.ok ? "ok" : "error";
}

const LONG_SIDE = 3000;  // pixels: a phone photo's tiles stay 150 px or more across, and it uploads in a breath

async function shrunk(file) {  // a large photo (a phone's 12 megapixels and more) made smaller before upload
  if (!(file instanceof File) || !file.type.startsWith("image/") || file.size < 1500000) {
    return file;
  }
  try {
    const bitmap = await createImageBitmap(file, {imageOrientation: "from-image"});
    const scale = Math.min(1, LONG_SIDE / Math.max(bitmap.width, bitmap.height));
    const canvas = Object.assign(document.createElement("canvas"),
      {width: Math.round(bitmap.width * scale), height: Math.round(bitmap.height * scale)});
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise((done) => canvas.toBlob(done, "image/jpeg", 0.92));
    return blob && blob.size < file.size ? new File([blob], "enroll.jpg", {type: "image/jpeg"}) : file;
  } catch (err) {  // a format this browser cannot draw: sent as it is, and the server names it
    return file;
  }
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const body = new FormData(form);
  out.textContent = "reading the photo...";
  body.set("photo", await shrunk(body.get("photo")));
  submitEnroll(body);
});
document.querySelectorAll("button.show-set").forEach((b) => b.addEventListener("click", () => showSet(b.dataset.set)));
document.querySelectorAll("button.use-set").forEach((b) => b.addEventListener("click", () => useSet(b.dataset.set, document.getElementById("use-result"))));
