"use strict";
// Streams the phone's camera to the companion: a JPEG every ~100 ms, POSTed to /api/phone/frame.
const $ = (id) => document.getElementById(id);
let timer = null;
let busy = false;

async function start() {
  if (!navigator.mediaDevices) { $("cam-status").textContent = "camera needs HTTPS: start serve with --https"; return; }
  const stream = await navigator.mediaDevices.getUserMedia({video: {facingMode: "environment", width: {ideal: 1920}, height: {ideal: 1080}}});
  const video = $("cam");
  video.srcObject = stream;
  await video.play();
  const canvas = $("grab");
  let sent = 0;
  timer = setInterval(() => {
    if (busy || !video.videoWidth) return;
    canvas.width = video.videoWidth; canvas.height = video.videoHeight;
    canvas.getContext("2d").drawImage(video, 0, 0);
    busy = true;
    canvas.toBlob(async (blob) => {
      try {
        const r = await fetch("/api/phone/frame", {method: "POST", body: blob, headers: {"Content-Type": "image/jpeg"}});
        $("cam-status").textContent = r.ok ? `sent ${++sent} frames` : `server said ${r.status}`;
      } catch (e) { $("cam-status").textContent = String(e); }
      busy = false;
    }, "image/jpeg", 0.8);
  }, 100);
}
function stop() {
  clearInterval(timer);
  const v = $("cam");
  if (v.srcObject) v.srcObject.getTracks().forEach((t) => t.stop());
}
$("cam-start").addEventListener("click", () => start().catch((e) => { $("cam-status").textContent = String(e); }));
$("cam-stop").addEventListener("click", stop);
