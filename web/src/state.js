// The web client's state, kept apart from the page so it can be tested without a browser
// (`node --test web/`). Everything here is plain data: the daemon owns the threads; this
// holds what one tab has been told about them.

/** A thread's live status as a short word for the sidebar badge. */
export function statusWord(status) {
  if (!status) return "notLoaded";
  if (status.type === "active") {
    const flags = status.activeFlags || [];
    return flags.includes("waitingOnApproval") || flags.includes("waitingOnUserInput")
      ? "waiting"
      : "running";
  }
  return status.type;
}

/** Group threads by working directory, groups and threads newest first by `key`. */
export function groupByCwd(threads, key = "updatedAt") {
  const groups = new Map();
  for (const thread of threads) {
    const key = thread.cwd || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(thread);
  }
  const newest = (list) => Math.max(...list.map((t) => t[key] || 0));
  return [...groups.entries()]
    .map(([cwd, list]) => ({
      cwd,
      threads: list.slice().sort((a, b) => (b[key] || 0) - (a[key] || 0)),
    }))
    .sort((a, b) => newest(b.threads) - newest(a.threads));
}

/**
 * The thread to open once connection number `connection` has loaded its lists: the one shown
 * (a reconnect subscribes to it again), else the one in the address (a reload). None when a
 * thread was opened on this connection already (`openedOn`), say clicked while the lists
 * loaded: opening it again would drop what its view has heard since (a turn's plan).
 */
export function threadToReopen({ connection, openedOn, shown, address }) {
  if (openedOn === connection) return null;
  return shown || address || null;
}

/** An empty transcript of one thread. */
export function emptyTranscript(threadId) {
  return { threadId, turns: [], running: null, tokenUsage: null, notices: [] };
}

function turnOf(view, turnId) {
  let turn = view.turns.find((t) => t.id === turnId);
  if (!turn) {
    turn = { id: turnId, status: "inProgress", items: [], error: null };
    view.turns.push(turn);
  }
  return turn;
}

/** The item `itemId` of `turn`, marked changed (its version moves on) for the renderer. */
function itemOf(turn, itemId) {
  const item = turn.items.find((candidate) => candidate.id === itemId);
  if (item) item.version = (item.version || 0) + 1;
  return item;
}

/**
 * The newest `limit` items of a transcript, by turn (oldest first), and how many older ones
 * are left out: the page shows a bounded number of items however long the thread is.
 */
export function visibleItems(view, limit) {
  const shown = [];
  let left = limit;
  for (let at = view.turns.length - 1; at >= 0; at -= 1) {
    const turn = view.turns[at];
    const items = left > 0 ? turn.items.slice(Math.max(0, turn.items.length - left)) : [];
    left -= items.length;
    if (items.length || left > 0) shown.unshift({ turn, items });
  }
  const total = view.turns.reduce((sum, turn) => sum + turn.items.length, 0);
  return { turns: shown, hidden: total - Math.min(total, limit) };
}

/** Put stored turns (from `thread/turns/list`, oldest first) before what is already shown. */
export function prependTurns(view, turns) {
  const known = new Map(view.turns.map((t) => [t.id, t]));
  // A turn already shown (its notifications came first) keeps what they built, with the
  // stored items it had not heard of put first.
  for (const stored of turns) {
    const shown = known.get(stored.id);
    if (!shown) continue;
    const ids = new Set(shown.items.map((item) => item.id));
    shown.items = (stored.items || []).filter((item) => !ids.has(item.id)).concat(shown.items);
  }
  const older = turns
    .filter((t) => !known.has(t.id))
    .map((t) => ({ id: t.id, status: t.status, items: t.items || [], error: t.error || null }));
  view.turns = older.concat(view.turns);
  const last = view.turns[view.turns.length - 1];
  view.running = last && last.status === "inProgress" ? last.id : view.running;
}

/**
 * Apply one server notification to a transcript; returns whether it was about this thread.
 * An item is replaced whole by `item/started` and `item/completed` (the daemon's copy wins),
 * and grows by its deltas in between, so a notification seen twice changes nothing twice.
 */
export function applyNotification(view, method, params) {
  if (!params || params.threadId !== view.threadId) return false;
  switch (method) {
    case "turn/started": {
      const turn = turnOf(view, params.turn.id);
      turn.status = "inProgress";
      view.running = turn.id;
      break;
    }
    case "turn/completed": {
      const turn = turnOf(view, params.turn.id);
      turn.status = params.turn.status;
      turn.error = params.turn.error || null;
      if (view.running === turn.id) view.running = null;
      break;
    }
    case "item/started":
    case "item/completed": {
      const turn = turnOf(view, params.turnId);
      const index = turn.items.findIndex((item) => item.id === params.item.id);
      if (index >= 0) turn.items[index] = params.item;
      else turn.items.push(params.item);
      break;
    }
    case "item/agentMessage/delta": {
      const item = itemOf(turnOf(view, params.turnId), params.itemId);
      if (item) item.text = (item.text || "") + params.delta;
      break;
    }
    case "item/commandExecution/outputDelta": {
      const item = itemOf(turnOf(view, params.turnId), params.itemId);
      if (item) item.aggregatedOutput = (item.aggregatedOutput || "") + params.delta;
      break;
    }
    case "item/reasoning/summaryTextDelta": {
      const item = itemOf(turnOf(view, params.turnId), params.itemId);
      if (item) {
        const summary = item.summary || (item.summary = []);
        const at = params.summaryIndex || 0;
        while (summary.length <= at) summary.push("");
        summary[at] += params.delta;
      }
      break;
    }
    case "error":
      view.notices.push({
        kind: params.willRetry ? "retry" : "error",
        message: (params.error && params.error.message) || "error",
      });
      break;
    case "warning":
      view.notices.push({ kind: "warning", message: params.message });
      break;
    case "turn/plan/updated":
      turnOf(view, params.turnId).plan = {
        explanation: params.explanation || null,
        steps: params.plan || [],
      };
      break;
    case "thread/tokenUsage/updated":
      view.tokenUsage = params.tokenUsage;
      break;
    default:
      return false;
  }
  return true;
}

/**
 * Whether a `turn/steer` failed because the turn it meant had ended meanwhile (the composer
 * saw the turn running, the daemon finished it before the steer arrived): the message then
 * starts a turn of its own instead of being lost.
 */
export function steerFoundNoTurn(error) {
  return Boolean(error && error.code === -32600 && /^no active turn to steer/.test(error.message));
}

/** What a user typed and attached (images as data URLs), as `turn/start` and `turn/steer` take it. */
export function textInput(text, images = []) {
  const parts = text ? [{ type: "text", text, text_elements: [] }] : [];
  return parts.concat(images.map((url) => ({ type: "image", url })));
}
