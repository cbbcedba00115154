// The read-only scoreboard: everything it shows comes from the state stream (common.js) and /api/table.
import {
  RoundClock, byTestId, drawTable, el, followState, loadTable, minutesSeconds, renderCall, renderPlayers,
  renderSummary, showConnection, whenChanged,
} from "./common.js";

const clock = new RoundClock(byTestId("round-clock"));
const video = byTestId("video");
let table = null;
let latest = null;
let sourceStatus = null;

function onState(state) {
  latest = state;
  renderPlayers(document.getElementById("players"), state);
  renderSummary(state);
  clock.update(state);
  whenChanged("last-call", state.last_call, (call) => byTestId("last-call").replaceChildren(
    call ? renderCall(call, state) : el("p", { class: "empty", text: "no call yet" })));
  whenChanged("chart", [state.history, state.players, Math.floor(state.t)],
    () => drawChart(byTestId("score-chart"), state));
  if (table) whenChanged("table", [state.table, state.players], () => drawDiagram(state));
  whenChanged("table-geometry", state.phase === "waiting_for_setup", fetchTable); // set-up may choose the table
  byTestId("camera-lost").hidden = state.source.status !== "lost";
  if (sourceStatus === "lost" && state.source.status === "live") reloadVideo(); // the camera is back
  sourceStatus = state.source.status;
}

function drawDiagram(state) {
  drawTable(byTestId("table-diagram"), byTestId("off-board"), table, state.table.balls, state);
}

let videoTries = 0;
function reloadVideo() {
  videoTries += 1;
  video.src = `/api/video.mjpg?try=${videoTries}`;
}
video.addEventListener("error", () => setTimeout(reloadVideo, 2000));
// started once the page has loaded: a stream that has no frame yet must not hold the page's load event
window.addEventListener("load", () => { video.src = "/api/video.mjpg"; });

function onConnection(health) {
  if (health === "live" && byTestId("connection").dataset.state === "reconnecting" && latest) reloadVideo();
  showConnection(health);
}

async function fetchTable() {
  try {
    table = await loadTable();
    if (latest) drawDiagram(latest);
  } catch {
    setTimeout(fetchTable, 2000); // the server is starting or restarting
  }
}

// ------------------------------------------------------------------------- score over time

const CHART = { width: 800, height: 260, left: 44, right: 60, top: 12, bottom: 30 };

/** One step line per player from state.history (a point per change of the totals), drawn up to now. */
function drawChart(svg, state) {
  const history = state.history;
  const tEnd = Math.max(state.t, history.at(-1)?.t ?? 0, 1);
  const top = Math.max(5, ...history.flatMap((h) => Object.values(h.scores)));
  const step = niceStep(top);
  const yMax = Math.ceil(top / step) * step;
  const x = (t) => CHART.left + (t / tEnd) * (CHART.width - CHART.left - CHART.right);
  const y = (s) => CHART.height - CHART.bottom - (s / yMax) * (CHART.height - CHART.top - CHART.bottom);
  const parts = [];
  for (let s = 0; s <= yMax; s += step) {
    parts.push(el("svg:line", { class: "grid", x1: CHART.left, x2: CHART.width - CHART.right, y1: y(s), y2: y(s) }),
      el("svg:text", { class: "axis", x: CHART.left - 8, y: y(s) + 5, "text-anchor": "end", text: String(s) }));
  }
  for (const t of new Set([0, tEnd / 2, tEnd].map(Math.floor))) {
    parts.push(el("svg:text", { class: "axis", x: x(t), y: CHART.height - 8, "text-anchor": "middle",
      text: minutesSeconds(t) }));
  }
  for (const player of state.players) {
    const points = history.filter((h) => player.id in h.scores);
    if (points.length === 0) continue;
    const path = points.map((h, i) => `${i === 0 ? `M${x(h.t)},` : `H${x(h.t)}V`}${y(h.scores[player.id])}`);
    const last = points.at(-1).scores[player.id];
    parts.push(el("svg:path", { class: "series", d: `${path.join("")}H${x(tEnd)}`, stroke: player.colour,
      dataset: { player: player.id } }),
      el("svg:text", { class: "series-end", x: x(tEnd) + 8, y: y(last) + 6, fill: player.colour, text: String(last) }));
  }
  svg.replaceChildren(...parts);
}

function niceStep(top) {
  return [1, 2, 5, 10, 20, 50, 100].find((s) => top / s <= 6) ?? Math.ceil(top / 6);
}

followState(onState, onConnection);
