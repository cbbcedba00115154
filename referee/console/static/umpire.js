// The umpire console: the live summary (common.js) and every umpire input, each POSTed as JSON with the token
// as a Bearer header. The token comes from the URL fragment (#token=...) or the token field and stays in
// sessionStorage; it is never put in a query string.
import {
  RoundClock, byTestId, drawTable, el, followState, loadTable, playerName, renderCall, renderPlayers,
  renderSummary, sameSpot, showConnection, whenChanged,
} from "./common.js";

const TOKEN_KEY = "umpire-token";
const BY_KEY = "umpire-by";
const clock = new RoundClock(byTestId("round-clock"));
let latest = null;
let table = null;
let draft = null; // the table being corrected: {target, balls, edited}

// ------------------------------------------------------------------------- token, name, sending

function takeTokenFromFragment() {
  const token = new URLSearchParams(location.hash.slice(1)).get("token");
  if (token === null) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  history.replaceState(null, "", location.pathname); // out of the address bar and the history
}

function showTokenState() {
  byTestId("token-state").textContent = sessionStorage.getItem(TOKEN_KEY) ? "token set" : "no token yet: enter it";
}

document.getElementById("identity").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = byTestId("token-input");
  if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value);
  input.value = "";
  showTokenState();
});
const byInput = byTestId("by-input");
byInput.value = sessionStorage.getItem(BY_KEY) ?? "";
byInput.addEventListener("change", () => sessionStorage.setItem(BY_KEY, byInput.value.trim()));

/** POSTs one umpire input and shows the answer; resolves to true when it was accepted. */
async function send(what, path, body) {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? "";
  const headers = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
  say(what, "pending", "sending…");
  let answer;
  try {
    answer = await fetch(`/api/umpire/${path}`, {
      method: "POST", headers, body: JSON.stringify({ ...body, by: byInput.value.trim() || "umpire" }),
    });
  } catch (error) {
    say(what, "error", `could not reach the server (${error.message})`);
    return false;
  }
  const data = await answer.json().catch(() => ({}));
  const [outcome, text] = describe(answer.status, data);
  say(what, outcome, text);
  return outcome === "accepted";
}

function describe(status, data) {
  if (status === 200 && data.accepted) {
    return ["accepted", data.event_id ? `accepted (event ${data.event_id})` : "accepted"];
  }
  if (status === 202) return ["pending", "sent; the referee has not answered yet"];
  if (status === 409 || data.accepted === false) return ["refused", `refused: ${data.reason}`];
  if (status === 401) return ["error", "401 wrong token: nothing was recorded; enter the umpire token"];
  return ["error", `${status} ${data.message ?? detailText(data.detail) ?? "error"}: nothing was recorded`];
}

/** FastAPI's 422 detail is a list of {loc, msg} (the server also sends it as one `message`); others a string. */
function detailText(detail) {
  if (!Array.isArray(detail)) return detail;
  return detail.map((d) => `${(d.loc ?? []).filter((part) => part !== "body").join(".")}: ${d.msg}`).join("; ");
}

function say(what, outcome, text) {
  const message = byTestId("umpire-message");
  message.dataset.outcome = outcome;
  message.textContent = `${new Date().toLocaleTimeString()} · ${what}: ${text}`;
}

const reason = (id) => byTestId(id).value.trim();

// ------------------------------------------------------------------------- match set-up

const PLACES = {
  side: { label: "Side", values: [["right", "right"], ["left", "left"]] },
  seat: { label: "Seat", values: [[0, "0 (south)"], [1, "1 (west)"], [2, "2 (north)"], [3, "3 (east)"]] },
};
const SETUPS = {
  starcluster: {
    place: "side", players: [["red", "right"], ["blue", "left"]], max: 2,
    options: [["round_seconds", "round length (s)"], ["rounds_per_game", "rounds per game"],
      ["best_of", "best of (games)"], ["balls_per_player", "balls per player"]],
  },
  piratenbillard: {
    place: "seat", players: [["red", 0], ["green", 1], ["blue", 2], ["yellow", 3]], max: 4,
    options: [["target_points", "target points"], ["balls_per_player", "balls per player"]],
  },
};
const DISPLAY_COLOURS = {
  red: "#d03030", blue: "#3070e0", green: "#20a040", yellow: "#e0c020", black: "#202020", white: "#f0f0f0",
};

function buildSetup(game) {
  const setup = SETUPS[game];
  const rows = document.getElementById("setup-players");
  const add = byTestId("setup-add-player");
  const refresh = () => { add.hidden = rows.children.length >= setup.max; };
  rows.replaceChildren(...setup.players.map((p) => playerRow(setup, p, refresh)));
  add.onclick = () => {
    rows.append(playerRow(setup, ["", setup.players[rows.children.length][1]], refresh));
    refresh();
  };
  refresh();
  document.getElementById("setup-rules").replaceChildren(el("legend", { text: "Rules options (blank: the default)" }),
    ...setup.options.map(([key, label]) => el("label", {}, `${label} `,
      el("input", { type: "number", min: "0", step: "any", name: key }))));
  byTestId("setup-form").onsubmit = (event) => {
    event.preventDefault();
    submitSetup(setup);
  };
  fillTables();
}

/** The tables the server offers (its --tables folder, and the table it was started with, first). */
async function fillTables() {
  const answer = await fetch("/api/tables");
  const { tables } = await answer.json();
  byTestId("setup-table").replaceChildren(...tables.map((name) => el("option", { value: name, text: name })));
}

function playerRow(setup, [id, place], onRemove) {
  const colour = el("input", { type: "color", name: "colour", value: DISPLAY_COLOURS[id] ?? "#888888" });
  const ownColour = el("input", { type: "checkbox", name: "own-colour" });
  colour.addEventListener("input", () => { ownColour.checked = true; });
  const where = PLACES[setup.place];
  const row = el("div", { class: "setup-player", "data-testid": "setup-player" },
    el("label", {}, "Colour id ", el("input", { name: "id", value: id, required: true, placeholder: "red" })),
    el("label", {}, "Name ", el("input", { name: "name", placeholder: "optional" })),
    el("label", {}, `${where.label} `, el("select", { name: "place" },
      where.values.map(([value, text]) => el("option", { value, selected: value === place, text })))),
    el("label", { class: "check" }, ownColour, " own display colour ", colour),
    el("button", { type: "button", text: "remove", onclick: () => { row.remove(); onRemove(); } }));
  return row;
}

function submitSetup(setup) {
  const players = [...document.querySelectorAll(".setup-player")].map((row) => {
    const field = (name) => row.querySelector(`[name="${name}"]`);
    const place = field("place").value;
    return {
      id: field("id").value.trim(), name: field("name").value.trim(),
      side: setup.place === "side" ? place : null, seat: setup.place === "seat" ? Number(place) : null,
      colour: field("own-colour").checked ? field("colour").value : null,
    };
  });
  const rules = {};
  for (const input of document.querySelectorAll("#setup-rules input")) {
    if (input.value !== "") rules[input.name] = Number(input.value);
  }
  const more = document.getElementById("setup-more").value.trim();
  if (more) {
    try {
      Object.assign(rules, JSON.parse(more));
    } catch (error) {
      say("set-up", "error", `the more options field is not JSON (${error.message}); nothing was sent`);
      return;
    }
  }
  const table = byTestId("setup-table").value || null;
  send("match set-up", "setup", { players, rules: Object.keys(rules).length ? rules : null, table });
}

// ------------------------------------------------------------------------- round, choice, review, calls

for (const button of document.querySelectorAll("[data-action]")) {
  button.addEventListener("click", () => send(`round ${button.dataset.action}`, "round",
    { action: button.dataset.action, reason: reason("round-reason") }));
}

const CHOICE_LABELS = { bank: "Bank", final_sequence: "Final Sequence" };

function renderChoice(choice, state) {
  byTestId("choice").hidden = !choice;
  if (!choice) return;
  const player = state.players.find((p) => p.id === choice.player) ?? { id: choice.player };
  document.getElementById("choice-text").textContent = `${playerName(player)} chooses. ${choice.reason ?? ""}`;
  document.getElementById("choice-buttons").replaceChildren(...choice.options.map((option) => el("button", {
    class: "primary", "data-testid": `choice-${option}`, text: CHOICE_LABELS[option] ?? option,
    onclick: () => send(`${CHOICE_LABELS[option] ?? option} for ${choice.player}`, "choice",
      { player: choice.player, choice: option }),
  })));
}

function renderReview(review) {
  const list = document.getElementById("review-list");
  if (review.length === 0) {
    list.replaceChildren(el("p", { class: "empty", text: "nothing to review" }));
    return;
  }
  list.replaceChildren(...review.map((flag) => {
    const why = el("input", { "data-testid": "review-reason", placeholder: "reason" });
    const verdict = (name) => el("button", {
      "data-testid": name, class: name === "overturn" ? "danger" : "primary", text: name,
      onclick: () => send(`${name} ${flag.cause}`, "review",
        { target: flag.cause, verdict: name, reason: why.value.trim() }),
    });
    return el("div", { class: "review-item", "data-testid": "review-item", dataset: { cause: flag.cause ?? "" } },
      el("p", {}, el("b", { text: `${flag.t.toFixed(1)} s ` }), flag.message,
        flag.cause ? ` (event ${flag.cause})` : ""),
      flag.cause ? el("div", { class: "button-row" }, why, verdict("confirm"), verdict("overturn"))
        : el("p", { class: "empty", text: "no event to confirm or overturn: look at the video" }));
  }));
}

/** The calls, newest first; a foul can be overturned from here even when it was not flagged. */
function renderCalls(calls, state) {
  byTestId("calls").replaceChildren(...[...calls].reverse().map((call) => {
    const item = renderCall(call, state);
    if (call.kind === "foul" && call.cause) {
      item.append(el("button", { "data-testid": "overturn", class: "danger", text: `overturn ${call.cause}`,
        onclick: () => send(`overturn ${call.cause}`, "review",
          { target: call.cause, verdict: "overturn", reason: reason("calls-reason") }) }));
    }
    return item;
  }));
}

// ------------------------------------------------------------------------- correcting the settled table

function followTable(state) {
  if (!draft || !draft.edited) draft = { target: state.table.event, balls: state.table.balls, edited: false };
  const note = byTestId("correction-note");
  note.textContent = !draft.target ? "No settled table read yet."
    : draft.edited && draft.target !== state.table.event
      ? `The table was read again (${state.table.event}) since you began correcting ${draft.target}; `
        + "reset to correct the new read."
      : `Correcting the read of ${draft.target}${state.table.t === null ? "" : ` at ${state.table.t.toFixed(1)} s`}.`;
  byTestId("correction-submit").disabled = !draft.target || !draft.edited;
}

function drawDraft() {
  if (table && draft) {
    drawTable(byTestId("table-diagram"), byTestId("off-board"), table, draft.balls, latest, cycleOwner);
  }
}

/** A click on a slot or cell: its ball goes to the next player (empty, player 1, player 2, ..., empty). */
function cycleOwner(place) {
  const here = draft.balls.filter((ball) => sameSpot(ball, place));
  const order = [null, ...latest.players.map((p) => p.id)];
  const next = order[(order.indexOf(here.at(-1)?.owner ?? null) + 1) % order.length];
  const where = place.place === "slot" ? { position: place.position, slot: place.slot }
    : { row: place.row, col: place.col };
  draft = { ...draft, edited: true, balls: [...draft.balls.filter((ball) => !sameSpot(ball, place)),
    ...(next ? [{ owner: next, place: place.place, ...where }] : [])] };
  followTable(latest);
  drawDraft();
}

byTestId("correction-submit").addEventListener("click", async () => {
  const { target, balls } = draft;
  if (await send(`correction of ${target}`, "correction", { target, balls, reason: reason("correction-reason") })) {
    resetDraft();
  }
});
byTestId("correction-reset").addEventListener("click", resetDraft);

function resetDraft() {
  draft = null;
  followTable(latest);
  drawDraft();
}

// ------------------------------------------------------------------------- foul, undo, stop

function renderFoulPlayers(players) {
  const select = byTestId("foul-player");
  const chosen = select.value;
  select.replaceChildren(...players.map((p) => el("option",
    { value: p.id, selected: p.id === chosen, text: playerName(p) })));
}

document.getElementById("foul-form").addEventListener("submit", (event) => {
  event.preventDefault();
  send(`foul by ${byTestId("foul-player").value}`, "foul", {
    player: byTestId("foul-player").value, foul: byTestId("foul-kind").value,
    free_shot: byTestId("foul-free-shot").checked, reason: reason("foul-reason"),
  });
});

/** The input an undo takes back: the last one of this match that is not its game_start. */
function undoable(state) {
  return state.umpire_inputs.filter((input) => input.type !== "game_start").at(-1) ?? null;
}

function renderUndo(input) {
  byTestId("undo-target").textContent = input
    ? `${input.type.replaceAll("_", " ")} (${input.id}) at ${input.t.toFixed(1)} s${input.by ? ` by ${input.by}` : ""}`
    : "none";
  byTestId("undo").disabled = !input;
}

byTestId("undo").addEventListener("click", () => send(`undo ${undoable(latest)?.id}`, "undo", {}));

byTestId("stop").addEventListener("click", () => {
  if (window.confirm("Stop refereeing this match? The record is closed as a stopped run.")) {
    send("stop the match", "stop", { reason: reason("stop-reason") });
  }
});

// ------------------------------------------------------------------------- the state stream

function onState(state) {
  latest = state;
  const settingUp = state.phase === "waiting_for_setup";
  document.getElementById("setup").hidden = !settingUp;
  document.getElementById("controls").hidden = settingUp;
  if (settingUp) whenChanged("setup", state.game, buildSetup);
  whenChanged("table-geometry", settingUp, fetchTable); // the set-up may choose another table
  renderPlayers(document.getElementById("players"), state);
  renderSummary(state);
  clock.update(state);
  byTestId("round-pause").disabled = Boolean(state.round?.paused);
  byTestId("round-resume").disabled = !state.round?.paused;
  whenChanged("choice", state.pending_choice, (choice) => renderChoice(choice, state));
  whenChanged("review", state.review, renderReview);
  whenChanged("calls", [state.calls, state.players], () => renderCalls(state.calls, state));
  whenChanged("foul-players", state.players.map((p) => [p.id, p.name]), () => renderFoulPlayers(state.players));
  whenChanged("undo", undoable(state), renderUndo);
  whenChanged("table", [state.table, state.players], () => {
    followTable(state);
    drawDraft();
  });
}

async function fetchTable() {
  try {
    table = await loadTable();
    drawDraft();
  } catch {
    setTimeout(fetchTable, 2000); // the server is starting or restarting
  }
}

takeTokenFromFragment();
showTokenState();
followState(onState, showConnection);
