// Shared by the scoreboard (scoreboard.js) and the umpire console (umpire.js): the state stream, the
// player cards, the round clock, calls and the table diagram. Plain ES modules, nothing fetched from elsewhere.
//
// Stable data-testid attributes (for tests and venue tooling):
//   both pages   connection (data-state = "live" | "reconnecting"), status-line, round, round-clock
//                (data-paused = "true" | "false"), player-<id> (data-to-play), score-<id>, match-wins-<id>,
//                balls-<id>, to-play (data-player), review-count, table-diagram (an <svg>), place (one per slot
//                or cell, data-key), ball (the top ball of a place, data-owner), off-board, final-result
//   scoreboard   last-call (holding call-summary, call-rule, call-confidence, call-points, call-breakdown),
//                score-chart, video, camera-lost
//   umpire       umpire-message (data-outcome = "accepted" | "pending" | "refused" | "error"), token-input,
//                token-save, token-state, by-input, setup-form, setup-table, setup-player, setup-add-player,
//                setup-submit,
//                round-start, round-pause, round-resume, round-end, round-reason, choice, choice-<option>,
//                review-item (data-cause; holds review-reason, confirm, overturn), calls, call (data-kind,
//                data-cause; a foul call holds overturn), calls-reason, correction-reason, correction-submit,
//                correction-reset, correction-note, foul-player, foul-kind, foul-free-shot, foul-reason,
//                foul-submit, undo, undo-target, stop-reason, stop

const SVG = "http://www.w3.org/2000/svg";

// The top bar of both pages (round, clock, whose turn, status line, review count, connection), written here so
// its markup lives in one place: this module is evaluated before either page's script, so it is there for them.
document.querySelector("header.topbar").innerHTML = `
<div class="round-box">
  <span class="round-label" data-testid="round"></span>
  <div class="round-clock" data-testid="round-clock" data-paused="false">
    <span class="clock-time">--:--</span><span class="clock-paused">paused</span>
  </div>
</div>
<div class="status">
  <div class="to-play" data-testid="to-play"></div>
  <div class="status-line" data-testid="status-line"></div>
</div>
<div class="badges">
  <span class="review-badge" data-open="false">for review <b data-testid="review-count">0</b></span>
  <span class="connection" data-testid="connection" data-state="reconnecting">connecting…</span>
</div>
`;

/** An element with its children; props become attributes, but for `dataset`, `text` and `on<event>` handlers. */
export function el(tag, props = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** The element with this data-testid. */
export function byTestId(id) {
  return document.querySelector(`[data-testid="${id}"]`);
}

/** Runs `render` only when `value` differs from the last one seen under `key`: lists are not rebuilt every second. */
const seen = new Map();
export function whenChanged(key, value, render) {
  const text = JSON.stringify(value);
  if (seen.get(key) === text) return;
  seen.set(key, text);
  render(value);
}

/** Follows the server's state stream: `onState(state)` on each version, `onConnection("live" | "reconnecting")`. */
export function followState(onState, onConnection) {
  let source;
  const open = () => {
    source = new EventSource("/api/stream");
    source.addEventListener("state", (message) => onState(JSON.parse(message.data)));
    source.onopen = () => onConnection("live");
    source.onerror = () => {
      onConnection("reconnecting");
      if (source.readyState === EventSource.CLOSED) setTimeout(open, 2000); // the browser gave up: start over
    };
  };
  open();
}

/** Shows the stream's health in the element with data-testid="connection". */
export function showConnection(health) {
  const node = byTestId("connection");
  node.dataset.state = health;
  node.textContent = health === "live" ? "live" : "reconnecting…";
}

export async function loadTable() {
  const answer = await fetch("/api/table");
  if (!answer.ok) throw new Error(`GET /api/table answered ${answer.status}`);
  return answer.json();
}

export function playerName(player) {
  return player.name || player.id;
}

function playerPlace(player) {
  if (player.side) return `${player.side} side`;
  if (player.seat !== null && player.seat !== undefined) return `seat ${player.seat}`;
  return "";
}

function colourOf(state, id) {
  return state.players.find((p) => p.id === id)?.colour ?? "#888";
}

function swatch(colour) {
  return el("span", { class: "swatch", style: `background:${colour}` });
}

/** The player cards: colour, name, score, match wins, balls to play; the player to play highlighted. */
export function renderPlayers(container, state) {
  container.replaceChildren(...state.players.map((p) => el("div", {
    class: "player", "data-testid": `player-${p.id}`, dataset: { toPlay: String(state.to_play === p.id) },
  },
  swatch(p.colour),
  el("div", { class: "player-name" }, el("span", { text: playerName(p) }),
    el("small", { text: [p.name ? p.id : "", playerPlace(p)].filter(Boolean).join(" · ") })),
  el("div", { class: "player-score", "data-testid": `score-${p.id}`, text: String(p.score) }),
  el("div", { class: "player-detail" },
    el("span", {}, "games ", el("b", { "data-testid": `match-wins-${p.id}`, text: String(p.match_wins) })),
    el("span", {}, "in hand ", el("b", { "data-testid": `balls-${p.id}`, text: String(p.balls_to_play) }))))));
  const toPlay = byTestId("to-play");
  const player = state.players.find((p) => p.id === state.to_play);
  toPlay.dataset.player = state.to_play ?? "";
  toPlay.replaceChildren(...(player ? [swatch(player.colour), `${playerName(player)} to play`] : []));
}

/** Status line, round label, review badge and final result: the small parts both pages show. */
export function renderSummary(state) {
  byTestId("status-line").textContent = state.status_line;
  const round = state.round; // null until the match is set up
  byTestId("round").textContent = round?.number == null ? ""
    : `${round.tiebreak ? "Tie-break round" : "Round"} ${round.number}`;
  byTestId("review-count").textContent = String(state.review.length);
  byTestId("review-count").closest(".review-badge").dataset.open = String(state.review.length > 0);
  const result = byTestId("final-result");
  result.hidden = !(state.complete || state.phase === "stopped");
  result.textContent = state.phase === "stopped" && !state.complete ? "Refereeing stopped" : resultText(state);
}

function resultText(state) {
  const names = state.winners.map((id) => playerName(state.players.find((p) => p.id === id) ?? { id }));
  if (names.length === 0) return "Match over";
  return names.length === 1 ? `Match over: ${names[0]} wins` : `Match over: shared by ${names.join(" and ")}`;
}

/**
 * The round clock, ticking locally between versions. `published_wall` dates the version; the lag behind it is
 * taken at most 1.5 s (a version is at most a second old while the clock runs), so a phone whose clock is off
 * shows the right time within that.
 */
export class RoundClock {
  constructor(node) {
    this.node = node;
    this.base = null;
    setInterval(() => this.show(), 250);
  }

  update(state) {
    const round = state.round; // null until the match is set up
    const lag = Math.min(Math.max(Date.now() / 1000 - state.published_wall, 0), 1.5);
    const running = state.phase === "running" && state.source.status === "live" && !round?.paused;
    this.base = round?.clock_s == null ? null
      : { clock: round.clock_s, lag, at: performance.now(), sign: round.counts_down ? -1 : 1, running };
    this.node.dataset.paused = String(Boolean(round?.paused));
    this.show();
  }

  show() {
    const clock = this.node.querySelector(".clock-time");
    if (this.base === null) {
      clock.textContent = "--:--";
      return;
    }
    const { clock: start, lag, at, sign, running } = this.base;
    const elapsed = running ? lag + (performance.now() - at) / 1000 : 0;
    clock.textContent = minutesSeconds(Math.max(start + sign * elapsed, 0)); // whole seconds, as the status line
  }
}

export function minutesSeconds(seconds) {
  const whole = Math.floor(seconds);
  return `${String(Math.floor(whole / 60)).padStart(2, "0")}:${String(whole % 60).padStart(2, "0")}`;
}

/** One call: summary, rule clause, confidence, points and their breakdown. */
export function renderCall(call, state) {
  const flagged = call.flagged || call.confidence < 0.6;
  return el("div", { class: "call", "data-testid": "call", dataset: { kind: call.kind, cause: call.cause ?? "" } },
    el("div", { class: "call-head" },
      call.player ? swatch(colourOf(state, call.player)) : null,
      el("span", { class: "call-summary", "data-testid": "call-summary", text: call.summary })),
    el("div", { class: "call-meta" },
      el("span", { class: "call-time", text: `${call.t.toFixed(1)} s` }),
      call.rule ? el("span", { class: "rule", "data-testid": "call-rule", text: call.rule }) : null,
      el("span", { class: "confidence", "data-testid": "call-confidence", dataset: { low: String(flagged) },
        text: `${Math.round(call.confidence * 100)} % sure` }),
      call.points === undefined ? null
        : el("span", { class: "points", "data-testid": "call-points", text: signed(call.points) })),
    call.breakdown ? el("ul", { class: "breakdown", "data-testid": "call-breakdown" }, call.breakdown.map(
      (item) => el("li", {}, el("span", { text: item.label }), el("b", { text: signed(item.points) })))) : null);
}

function signed(points) {
  return `${points >= 0 ? "+" : ""}${points}`;
}

// ------------------------------------------------------------------------- the table diagram

/** A ball's or a place's identity: a slot by position and slot, a cell by row and column. */
function spot(item) {
  return `${item.place}:${item.position ?? item.row}:${item.slot ?? item.col}`;
}

export function sameSpot(a, b) {
  return spot(a) === spot(b);
}

function onPlace(ball) {
  return ball.place === "slot" || ball.place === "cell";
}

/**
 * Draws the table (outline, its areas, Play Line, slots or cells) and the balls at rest, coloured by owner, into `svg`.
 * Board y grows away from the players (north), so it is flipped for the screen. `onClick(place)` makes every
 * slot or cell clickable (the umpire's correction); that diagram is framed on the slots or cells, so they are
 * big enough to hit. Balls not in a slot or cell are counted below, in `offBoard`.
 */
export function drawTable(svg, offBoard, table, balls, state, onClick = null) {
  const ys = table.outline_mm.map((p) => p[1]);
  const flip = (y) => Math.max(...ys) - y + Math.min(...ys);
  const slotRadius = drawnSlotRadius(table.places);
  const frame = bounds(onClick
    ? table.places.flatMap((p) => {
      const r = p.place === "slot" ? slotRadius(p) : p.size_mm / 2;
      return [[p.x_mm - r, flip(p.y_mm) - r], [p.x_mm + r, flip(p.y_mm) + r]];
    })
    : table.outline_mm.map(([x, y]) => [x, flip(y)]));
  const size = Math.max(frame.width, frame.height);
  const pad = size * (onClick ? 0.12 : 0.03);
  svg.style.setProperty("--label-size", `${size * (onClick ? 0.045 : 0.03)}px`);
  svg.setAttribute("viewBox", `${frame.x - pad} ${frame.y - pad} ${frame.width + 2 * pad} ${frame.height + 2 * pad}`);
  const at = new Map();
  for (const ball of balls.filter(onPlace)) at.set(spot(ball), [...(at.get(spot(ball)) ?? []), ball]);
  const parts = [el("svg:polygon", { class: "table-outline",
    points: table.outline_mm.map(([x, y]) => `${x},${flip(y)}`).join(" ") })];
  for (const area of table.areas ?? []) { // play area, board, gutters, where the server names them
    parts.push(el("svg:rect", { class: `area area-${area.kind}`, x: area.x_min, y: flip(area.y_max),
      width: area.x_max - area.x_min, height: area.y_max - area.y_min }));
  }
  if (table.play_line_mm) {
    const [[ax, ay], [bx, by]] = table.play_line_mm;
    parts.push(el("svg:line", { class: "play-line", x1: ax, y1: flip(ay), x2: bx, y2: flip(by) }),
      el("svg:text", { class: "diagram-label", x: (ax + bx) / 2, y: flip(ay) + size * 0.04, "text-anchor": "middle",
        text: "Play Line" }));
  }
  parts.push(...positionLabels(table, flip));
  for (const place of table.places) {
    parts.push(drawPlace(place, flip(place.y_mm), at.get(spot(place)) ?? [], state, slotRadius, onClick));
  }
  svg.replaceChildren(...parts);
  svg.classList.toggle("clickable", Boolean(onClick));
  showOffBoard(offBoard, balls.filter((b) => !onPlace(b)), state);
}

function bounds(points) {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [x, y] = [Math.min(...xs), Math.min(...ys)];
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

/** Slots are drawn as large as their spacing allows (true size is hard to see on a whole-table diagram). */
function drawnSlotRadius(places) {
  const slots = places.filter((p) => p.place === "slot");
  let nearest = Infinity;
  for (const a of slots) {
    for (const b of slots) {
      if (a !== b) nearest = Math.min(nearest, Math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm));
    }
  }
  return (place) => Math.max(place.r_mm, Number.isFinite(nearest) ? nearest * 0.45 : 0);
}

function drawPlace(place, y, here, state, slotRadius, onClick) {
  const x = place.x_mm;
  const shape = place.place === "slot"
    ? el("svg:circle", { class: "place-shape", cx: x, cy: y, r: slotRadius(place) })
    : el("svg:rect", { class: "place-shape", x: x - place.size_mm / 2, y: y - place.size_mm / 2,
      width: place.size_mm, height: place.size_mm, rx: place.size_mm * 0.12 });
  const radius = place.place === "slot" ? slotRadius(place) * 0.82 : place.size_mm * 0.36;
  // a stack (Piratenbillard) shows its top ball and how many balls are there
  const top = here.at(-1);
  const ball = top ? el("svg:circle", { class: "ball", "data-testid": "ball", dataset: { owner: top.owner },
    cx: x, cy: y, r: radius, fill: colourOf(state, top.owner) }) : null;
  const count = here.length > 1 ? el("svg:text", { class: "stack-count", x, y: y + radius * 0.45,
    "text-anchor": "middle", "font-size": radius * 1.3, text: String(here.length) }) : null;
  return el("svg:g", { class: "place", "data-testid": "place", dataset: { key: place.key },
    onclick: onClick ? () => onClick(place) : null },
  el("svg:title", { text: `${place.key}${here.length ? `: ${here.map((b) => b.owner).join(", ")}` : ""}` }),
  shape, ball, count);
}

/** "P1", "P2", ... beside each Astrolabe Position's row of slots (no labels for a grid of cells). */
function positionLabels(table, flip) {
  const rows = new Map();
  for (const place of table.places.filter((p) => p.place === "slot")) {
    rows.set(place.position, [...(rows.get(place.position) ?? []), place]);
  }
  return [...rows].map(([position, slots]) => {
    const first = slots.reduce((a, b) => (a.x_mm < b.x_mm ? a : b));
    return el("svg:text", { class: "diagram-label", x: first.x_mm - first.r_mm * 2.5, y: flip(first.y_mm) + first.r_mm,
      "text-anchor": "end", text: `P${position}` });
  });
}

function showOffBoard(node, balls, state) {
  const counts = new Map();
  for (const ball of balls) {
    const key = `${ball.place}\u0000${ball.owner}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  node.replaceChildren(...[...counts].map(([key, n]) => {
    const [place, owner] = key.split("\u0000");
    return el("span", { class: "off-board-item" }, swatch(colourOf(state, owner)), `${n} ${place.replace("_", " ")}`);
  }));
}
