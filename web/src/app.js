// The Weft web client: a sidebar of the daemon's threads, one thread's transcript, a
// composer and the approval dialogs (docs/web.md). Agent messages are markdown, rendered
// through a sanitiser (markdown.js); every other text the model or a command wrote is put on
// the page with textContent, never parsed as HTML.

import { renderMarkdown } from "./markdown.js";
import { Rpc } from "./rpc.js";
import {
  applyNotification,
  emptyTranscript,
  groupByCwd,
  prependTurns,
  statusWord,
  steerFoundNoTurn,
  textInput,
  threadToReopen,
  visibleItems,
} from "./state.js";

/** The largest image the composer attaches (the daemon's message limit is 4 MiB). */
const MAX_IMAGE_BYTES = 3 * 1024 * 1024;

/** Items a transcript shows at first; "Show earlier items" adds as many again. */
const WINDOW = 200;

// The sign-in token has been exchanged for the session cookie: drop it from the address bar.
if (location.search) history.replaceState(null, "", location.pathname + location.hash);

/** The thread named in the address (`#thread=<id>`), so a reload reopens it. */
function threadInAddress() {
  const match = /^#thread=(.+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "onclick") node.addEventListener("click", value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

const app = {
  rpc: null,
  threads: [],
  statuses: new Map(),
  view: null,
  olderCursor: null,
  approvals: new Map(),
  frame: 0,
  window: WINDOW,
  /** Connections made so far, and the one a thread was last opened on. */
  connections: 0,
  openedOn: 0,
  /** Images attached to the next message, as data URLs. */
  attachments: [],
  /** Each shown item's node and the version it was drawn at: only changed items redraw. */
  drawn: new WeakMap(),
};

/**
 * Draw on the next animation frame: the transcript always, the sidebar only when something it
 * shows changed (a streaming delta leaves it alone).
 */
function scheduleRender({ sidebar = true } = {}) {
  app.sidebarStale = app.sidebarStale || sidebar;
  if (app.frame) return;
  app.frame = requestAnimationFrame(() => {
    app.frame = 0;
    if (app.sidebarStale) {
      app.sidebarStale = false;
      renderSidebar();
    }
    renderTranscript();
  });
}

function setConnection(state) {
  $("connection").textContent = state === "open" ? "connected" : "reconnecting…";
  $("connection").dataset.state = state;
  if (state === "closed") {
    setTimeout(connect, app.rpc.backoff());
  }
}

async function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  app.rpc = app.rpc || new Rpc(`${scheme}://${location.host}/`, {
    onNotification,
    onRequest,
    onState: setConnection,
  });
  try {
    await app.rpc.connect();
  } catch {
    return; // onState("closed") schedules the next attempt.
  }
  const connection = (app.connections += 1);
  await loadThreads();
  await loadModels();
  const open = threadToReopen({
    connection,
    openedOn: app.openedOn,
    shown: app.view && app.view.threadId,
    address: threadInAddress(),
  });
  if (open) await openThread(open);
}

async function loadThreads() {
  // Only the latest listing counts: an older one answered late is dropped.
  const asked = (app.listings = (app.listings || 0) + 1);
  const params = { limit: 100, sortKey: $("sort").value };
  const search = $("search").value.trim();
  if (search) params.searchTerm = search;
  const cwd = $("cwd-filter").value.trim();
  if (cwd) params.cwd = cwd;
  if ($("archived").checked) params.archived = true;
  const page = await app.rpc.request("thread/list", params);
  if (asked !== app.listings) return;
  app.threads = page.data;
  for (const thread of page.data) app.statuses.set(thread.id, thread.status);
  scheduleRender();
}

async function loadModels() {
  const select = $("new-model");
  if (select.options.length > 1) return;
  const models = await app.rpc.request("model/list", {});
  for (const model of models.data) {
    select.append(el("option", { value: model.model }, model.displayName || model.model));
  }
}

async function openThread(threadId) {
  app.openedOn = app.connections;
  const resumed = await app.rpc.request("thread/resume", { threadId, excludeTurns: true });
  history.replaceState(null, "", `/#thread=${encodeURIComponent(threadId)}`);
  app.statuses.set(threadId, resumed.thread.status);
  // A thread the list does not show (a sub-agent's, opened from its parent) joins it.
  if (!app.threads.some((t) => t.id === threadId)) app.threads.unshift(resumed.thread);
  app.view = emptyTranscript(threadId);
  app.window = WINDOW;
  app.view.cwd = resumed.cwd;
  app.view.model = resumed.model;
  $("mode").value = (resumed.collaborationMode && resumed.collaborationMode.mode) || "default";
  app.olderCursor = null;
  await loadOlder();
  scheduleRender();
}

async function loadOlder() {
  const view = app.view;
  if (!view || app.loadingOlder === view) return;
  app.loadingOlder = view;
  try {
    await loadOlderPage(view);
  } finally {
    if (app.loadingOlder === view) app.loadingOlder = null;
  }
}

/** Older turns load by themselves once the top of the transcript comes into view. */
const olderInView = new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) loadOlder();
});

async function loadOlderPage(view) {
  const params = { threadId: view.threadId, limit: 20, itemsView: "full" };
  if (app.olderCursor) params.cursor = app.olderCursor;
  let page;
  try {
    page = await app.rpc.request("thread/turns/list", params);
  } catch (err) {
    // A thread nobody has written to yet has no stored turns to page through.
    if (!/not materialized/.test(err.message)) throw err;
    page = { data: [], nextCursor: null };
  }
  if (app.view !== view) return;
  prependTurns(view, page.data.slice().reverse());
  app.olderCursor = page.nextCursor || null;
  scheduleRender();
}

/** What a notification changes in the sidebar's list; whether it changed anything. */
function updateList(method, params) {
  switch (method) {
    case "thread/status/changed":
      app.statuses.set(params.threadId, params.status);
      return true;
    case "thread/started":
      if (app.threads.some((t) => t.id === params.thread.id)) return false;
      app.threads.unshift(params.thread);
      app.statuses.set(params.thread.id, params.thread.status);
      return true;
    case "thread/name/updated": {
      const thread = app.threads.find((t) => t.id === params.threadId);
      if (thread) thread.name = params.threadName || null;
      return true;
    }
    case "thread/archived":
      if ($("archived").checked) return false;
      app.threads = app.threads.filter((t) => t.id !== params.threadId);
      if (app.view && app.view.threadId === params.threadId) closeThread();
      return true;
    case "item/started": {
      // A new thread's first message becomes its title in the sidebar, as in the list.
      const thread = app.threads.find((t) => t.id === params.threadId);
      const text = (params.item.content || []).find((part) => part.type === "text");
      if (params.item.type !== "userMessage" || !thread || thread.preview || !text) return false;
      thread.preview = text.text;
      return true;
    }
    default:
      return false;
  }
}

function onNotification(method, params) {
  if (!params || !params.threadId) return;
  if (method === "serverRequest/resolved") closeApproval(params.requestId);
  const listed = updateList(method, params);
  const shown = app.view ? applyNotification(app.view, method, params) : false;
  if (listed || shown) scheduleRender({ sidebar: listed });
}

// --- approvals -------------------------------------------------------------------------

const DECISIONS = {
  "item/commandExecution/requestApproval": ["accept", "acceptForSession", "decline", "cancel"],
  "item/fileChange/requestApproval": ["accept", "acceptForSession", "decline", "cancel"],
};

/** What each decision's button says. */
const DECISION_LABELS = {
  accept: "Yes, once",
  acceptForSession: "Yes, for this session",
  decline: "No, go on without it",
  cancel: "No, and stop the turn",
};

/** The model's questions (`item/tool/requestUserInput`) as a form; answers keyed by id. */
function askUser(params, respond, id) {
  const fields = params.questions.map((question) => {
    const name = `q-${question.id}`;
    const choices = (question.options || []).map((option) =>
      el(
        "label",
        { class: "choice" },
        el("input", { type: "radio", name, value: option.label }),
        ` ${option.label} — ${option.description}`,
      ),
    );
    const other = question.isOther || !choices.length
      ? el("input", {
          type: question.isSecret ? "password" : "text",
          name: `${name}-other`,
          placeholder: choices.length ? "Other" : "Answer",
        })
      : null;
    return el("fieldset", {}, el("legend", {}, question.header), el("p", {}, question.question), choices, other);
  });
  const form = el("form", { method: "dialog" }, fields, el("button", { type: "submit" }, "Answer"));
  const dialog = el("dialog", { class: "user-input" }, form);
  form.addEventListener("submit", () => {
    const answers = {};
    for (const question of params.questions) {
      const picked = form.querySelector(`input[name="q-${question.id}"]:checked`);
      const typed = form.querySelector(`input[name="q-${question.id}-other"]`);
      const answer = (typed && typed.value.trim()) || (picked && picked.value);
      answers[question.id] = { answers: answer ? [answer] : [] };
    }
    respond({ answers });
    closeApproval(id);
  });
  app.approvals.set(id, dialog);
  document.body.append(dialog);
  dialog.showModal();
}

/** One field of an MCP server's form, from its JSON Schema property. */
function formField(name, property, required) {
  const label = property.title || name;
  const choices = property.enum || (property.oneOf || []).map((option) => option.const);
  let input;
  if (choices.length) {
    input = el("select", { name }, choices.map((value) => el("option", { value }, String(value))));
  } else if (property.type === "boolean") {
    input = el("input", { type: "checkbox", name });
  } else {
    const numeric = property.type === "number" || property.type === "integer";
    input = el("input", { type: numeric ? "number" : "text", name, required: required ? "" : null });
  }
  if (property.default !== undefined && input.type !== "checkbox") input.value = property.default;
  if (property.default === true) input.checked = true;
  return el("label", { class: "field" }, `${label} `, input, property.description ? el("small", {}, property.description) : null);
}

/** An MCP server's question (`mcpServer/elicitation/request`): a form, or a link to open. */
function elicit(params, respond, id) {
  const schema = params.requestedSchema || { properties: {} };
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, property]) =>
    formField(name, property, required.has(name)),
  );
  const answer = (action) => {
    let content = null;
    if (action === "accept" && params.mode !== "url") {
      content = {};
      for (const [name, property] of Object.entries(schema.properties || {})) {
        const input = form.elements[name];
        if (property.type === "boolean") content[name] = input.checked;
        else if (property.type === "number" || property.type === "integer") content[name] = Number(input.value);
        else content[name] = input.value;
      }
    }
    respond({ action, content, _meta: null });
    closeApproval(id);
  };
  const form = el(
    "form",
    {},
    el("h2", {}, `${params.serverName} asks`),
    el("p", {}, params.message || ""),
    params.mode === "url" && /^https?:/.test(params.url || "")
      ? el("a", { href: params.url, target: "_blank", rel: "noopener noreferrer" }, params.url)
      : null,
    fields,
    el(
      "div",
      { class: "choices" },
      el("button", { type: "submit", "data-action": "accept" }, "Submit"),
      el("button", { type: "button", "data-action": "decline", onclick: () => answer("decline") }, "Decline"),
      el("button", { type: "button", "data-action": "cancel", onclick: () => answer("cancel") }, "Cancel"),
    ),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    answer("accept");
  });
  const dialog = el("dialog", { class: "elicitation" }, form);
  app.approvals.set(id, dialog);
  document.body.append(dialog);
  dialog.showModal();
}

// A dialog is keyed by its request's JSON-RPC id, which `serverRequest/resolved` names.
function onRequest(method, params, respond, id) {
  if (method === "item/tool/requestUserInput") return askUser(params, respond, id);
  if (method === "mcpServer/elicitation/request") return elicit(params, respond, id);
  const choices = DECISIONS[method];
  if (!choices) return;
  const offered = (params.availableDecisions || choices).filter((d) => typeof d === "string");
  const dialog = el(
    "dialog",
    { class: "approval" },
    el("h2", {}, method.includes("fileChange") ? "Apply this change?" : "Run this command?"),
    params.command ? el("pre", { class: "command" }, params.command) : null,
    params.reason ? el("p", {}, params.reason) : null,
    el(
      "div",
      { class: "choices" },
      offered.map((decision) =>
        el("button", {
          "data-decision": decision,
          onclick: () => {
            respond({ decision });
            closeApproval(id);
          },
        }, DECISION_LABELS[decision] || decision),
      ),
    ),
  );
  app.approvals.set(id, dialog);
  document.body.append(dialog);
  dialog.showModal();
}

function closeApproval(id) {
  for (const [key, dialog] of app.approvals) {
    if (key === id) {
      dialog.close();
      dialog.remove();
      app.approvals.delete(key);
    }
  }
}

// --- rendering -------------------------------------------------------------------------

function renderSidebar() {
  const list = $("threads");
  list.replaceChildren(
    ...groupByCwd(app.threads, $("sort").value === "created_at" ? "createdAt" : "updatedAt").map((group) =>
      el(
        "section",
        { class: "group" },
        el("h3", { title: group.cwd }, group.cwd || "(no directory)"),
        group.threads.map((thread) => {
          const word = statusWord(app.statuses.get(thread.id) || thread.status);
          return el(
            "button",
            {
              class: "thread",
              "data-thread": thread.id,
              "aria-current": app.view && app.view.threadId === thread.id ? "true" : null,
              onclick: () => openThread(thread.id),
            },
            el("span", { class: "title" }, thread.name || thread.preview || "(new thread)"),
            el("span", { class: `badge ${word}` }, word),
          );
        }),
      ),
    ),
  );
}

/** An item's node, drawn again only when the item changed since. */
function drawnItem(item) {
  const known = app.drawn.get(item);
  if (known && known.version === item.version) return known.node;
  const node = renderItem(item);
  app.drawn.set(item, { version: item.version, node });
  return node;
}

function renderItem(item) {
  switch (item.type) {
    case "userMessage":
      return el(
        "div",
        { class: "item user" },
        (item.content || []).map((part) => {
          if (part.type === "text") return el("p", {}, part.text);
          // Only an inline image is drawn; any other address stays a label.
          if (part.type === "image" && /^data:image\//.test(part.url || "")) {
            return el("img", { class: "attached", src: part.url, alt: "attached image" });
          }
          return el("span", { class: "attached" }, `[${part.type}]`);
        }),
      );
    case "agentMessage": {
      const body = el("div", { class: "markdown" });
      // Sanitised by renderMarkdown: raw HTML in the text stays text.
      body.innerHTML = renderMarkdown(item.text);
      return el("div", { class: "item agent" }, body);
    }
    case "reasoning":
      return el(
        "details",
        { class: "item reasoning" },
        el("summary", {}, "Reasoning"),
        (item.summary || []).map((text) => el("p", {}, text)),
      );
    case "commandExecution":
      return el(
        "div",
        { class: `item command ${item.status}` },
        el("pre", { class: "command" }, `$ ${item.command}`),
        el("pre", { class: "output" }, item.aggregatedOutput || ""),
        item.exitCode === null || item.exitCode === undefined
          ? null
          : el("span", { class: "exit" }, `exit ${item.exitCode}`),
      );
    case "fileChange":
      return el(
        "div",
        { class: `item patch ${item.status}` },
        (item.changes || []).map((change) =>
          el("div", { class: "file" }, el("h4", {}, change.path), el("pre", { class: "diff" }, change.diff || "")),
        ),
      );
    case "plan":
      return el("div", { class: "item plan" }, el("pre", {}, item.text || ""));
    case "mcpToolCall":
      return el(
        "div",
        { class: `item tool ${item.status}` },
        el("h4", {}, `${item.server} › ${item.tool}`),
        el("pre", { class: "arguments" }, JSON.stringify(item.arguments, null, 2)),
        item.result ? el("pre", { class: "result" }, toolResultText(item.result)) : null,
        item.error ? el("p", { class: "error" }, item.error.message) : null,
      );
    case "dynamicToolCall":
      return el(
        "div",
        { class: `item tool ${item.status}` },
        el("h4", {}, item.namespace ? `${item.namespace} › ${item.tool}` : item.tool),
        el("pre", { class: "arguments" }, JSON.stringify(item.arguments, null, 2)),
      );
    case "collabAgentToolCall":
      return el(
        "div",
        { class: `item agents ${item.status}` },
        el("h4", {}, `agents: ${item.tool}`),
        item.prompt ? el("p", {}, item.prompt) : null,
        (item.receiverThreadIds || []).map(threadLink),
      );
    case "subAgentActivity":
      return el(
        "div",
        { class: "item agents" },
        el("span", {}, `${item.kind}: ${item.agentPath} `),
        threadLink(item.agentThreadId),
      );
    case "contextCompaction":
      return el("div", { class: "item compaction" }, el("span", {}, "Context compacted"));
    default:
      return el("div", { class: `item other ${item.type}` }, el("span", {}, item.type));
  }
}

/** A turn's latest plan (`turn/plan/updated`): its steps with their statuses. */
function planOf(plan) {
  return el(
    "div",
    { class: "plan-update" },
    plan.explanation ? el("p", {}, plan.explanation) : null,
    el(
      "ol",
      {},
      plan.steps.map((step) => el("li", { class: step.status }, step.step)),
    ),
  );
}

/** A button that opens another thread (a sub-agent's). */
function threadLink(threadId) {
  return el("button", { class: "thread-link", onclick: () => openThread(threadId) }, `open ${threadId}`);
}

/** The text parts of an MCP tool result. */
function toolResultText(result) {
  const parts = (result.content || []).map((part) => (part.type === "text" ? part.text : `[${part.type}]`));
  return parts.join("\n");
}

function renderTranscript() {
  const view = app.view;
  const transcript = $("transcript");
  if (!view) {
    transcript.replaceChildren(el("p", { class: "empty" }, "Open a thread or start a new one."));
    return;
  }
  const atBottom = transcript.scrollTop + transcript.clientHeight >= transcript.scrollHeight - 8;
  const shown = visibleItems(view, app.window);
  const earlier = () => {
    app.window += WINDOW;
    scheduleRender();
  };
  const older = shown.hidden
    ? [el("button", { id: "earlier", onclick: earlier }, `Show ${shown.hidden} earlier items`)]
    : app.olderCursor
      ? [el("button", { id: "older", onclick: loadOlder }, "Load older turns")]
      : [];
  transcript.dataset.renders = String(Number(transcript.dataset.renders || 0) + 1);
  transcript.replaceChildren(
    ...older,
    ...shown.turns.map(({ turn, items }) =>
      el(
        "section",
        { class: `turn ${turn.status}`, "data-turn": turn.id },
        turn.plan ? planOf(turn.plan) : null,
        items.map(drawnItem),
        turn.error ? el("p", { class: "error" }, turn.error.message || "the turn failed") : null,
      ),
    ),
    ...view.notices.map((notice) => el("p", { class: `notice ${notice.kind}` }, notice.message)),
  );
  if (atBottom) transcript.scrollTop = transcript.scrollHeight;
  olderInView.disconnect();
  if ($("older")) olderInView.observe($("older"));
  $("stop").hidden = !view.running;
  $("thread-tools").hidden = false;
  const thread = app.threads.find((t) => t.id === view.threadId);
  $("thread-title").textContent = (thread && thread.name) || view.cwd || "";
  $("tokens").textContent = tokenMeter(view.tokenUsage);
}

// --- composer --------------------------------------------------------------------------

/** Read the chosen files into the next message's attachments. */
async function attach() {
  for (const file of $("attach").files) {
    if (file.size > MAX_IMAGE_BYTES) {
      if (app.view) app.view.notices.push({ kind: "warning", message: `${file.name} is over 3 MiB` });
      continue;
    }
    const url = await new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => resolve(reader.result);
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
    app.attachments.push({ name: file.name, url });
  }
  $("attach").value = "";
  $("attachments").textContent = app.attachments.map((a) => a.name).join(", ");
  scheduleRender();
}

async function send() {
  const box = $("message");
  const text = box.value.trim();
  const images = app.attachments.map((a) => a.url);
  if ((!text && !images.length) || !app.view) return;
  box.value = "";
  app.attachments = [];
  $("attachments").textContent = "";
  const view = app.view;
  let steered = false;
  if (view.running) {
    try {
      await app.rpc.request("turn/steer", {
        threadId: view.threadId,
        expectedTurnId: view.running,
        input: textInput(text, images),
      });
      steered = true;
    } catch (error) {
      // The turn ended before the steer arrived: the message starts the next one.
      if (!steerFoundNoTurn(error)) throw error;
    }
  }
  if (!steered) {
    const started = await app.rpc.request("turn/start", {
      threadId: view.threadId,
      input: textInput(text, images),
      // The mode is sticky on the thread; the mode's own instructions (null) apply.
      collaborationMode: {
        mode: $("mode").value,
        settings: { model: view.model, reasoning_effort: null, developer_instructions: null },
      },
    });
    if (app.view === view) {
      applyNotification(view, "turn/started", { threadId: view.threadId, turn: started.turn });
    }
  }
  // How many messages the daemon has taken from this composer (what a test waits on).
  const composer = $("composer");
  composer.dataset.acknowledged = String(Number(composer.dataset.acknowledged || 0) + 1);
  scheduleRender();
}

async function interrupt() {
  const view = app.view;
  if (view && view.running) {
    await app.rpc.request("turn/interrupt", { threadId: view.threadId, turnId: view.running });
  }
}

/** "12,345 tokens · 5% of the window" for the header. */
function tokenMeter(usage) {
  if (!usage || !usage.last) return "";
  const used = usage.last.totalTokens || 0;
  const window = usage.modelContextWindow;
  const share = window ? ` · ${Math.round((100 * used) / window)}% of the window` : "";
  return `${used.toLocaleString("en")} tokens${share}`;
}

function closeThread() {
  app.view = null;
  history.replaceState(null, "", "/");
  $("thread-tools").hidden = true;
  $("thread-title").textContent = "";
  $("tokens").textContent = "";
}

async function rename(event) {
  event.preventDefault();
  const name = $("rename-input").value.trim();
  if (!name || !app.view) return;
  await app.rpc.request("thread/name/set", { threadId: app.view.threadId, name });
  $("rename-input").value = "";
}

async function fork() {
  if (!app.view) return;
  const forked = await app.rpc.request("thread/fork", { threadId: app.view.threadId });
  if (!app.threads.some((t) => t.id === forked.thread.id)) app.threads.unshift(forked.thread);
  await openThread(forked.thread.id);
}

async function archive() {
  if (!app.view) return;
  const threadId = app.view.threadId;
  await app.rpc.request("thread/archive", { threadId });
  app.threads = app.threads.filter((t) => t.id !== threadId);
  closeThread();
  scheduleRender();
}

async function newThread(event) {
  event.preventDefault();
  const params = {};
  for (const [key, id] of [
    ["cwd", "new-cwd"],
    ["model", "new-model"],
    ["approvalPolicy", "new-approval"],
    ["sandbox", "new-sandbox"],
  ]) {
    const value = $(id).value.trim();
    if (value) params[key] = value;
  }
  const started = await app.rpc.request("thread/start", params);
  if (!app.threads.some((t) => t.id === started.thread.id)) app.threads.unshift(started.thread);
  await openThread(started.thread.id);
}

$("message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    send();
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !document.querySelector("dialog[open]")) interrupt();
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
  if (event.key === "?" && !typing && !$("shortcuts").open) $("shortcuts").showModal();
});
$("thread-tools").addEventListener("submit", rename);
$("fork").addEventListener("click", fork);
$("archive").addEventListener("click", archive);
$("send").addEventListener("click", send);
$("attach-button").addEventListener("click", () => $("attach").click());
$("attach").addEventListener("change", attach);
$("stop").addEventListener("click", interrupt);
$("new-thread").addEventListener("submit", newThread);
$("search").addEventListener("input", () => loadThreads());
$("archived").addEventListener("change", () => loadThreads());
$("sort").addEventListener("change", () => loadThreads());
$("cwd-filter").addEventListener("change", () => loadThreads());

connect();
scheduleRender();
