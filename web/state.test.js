// Unit tests of the client's state handling: `node --test web/state.test.js` (the e2e suite runs them,
// tests/suite/web.rs).
import assert from "node:assert/strict";
import test from "node:test";

import * as state from "./src/state.js";

/** Apply one delta notification per part to item `itemId` of turn u1 of thread t1. */
function deltas(view, method, itemId, parts) {
  for (const delta of parts) {
    state.applyNotification(view, method, { threadId: "t1", turnId: "u1", itemId, delta });
  }
}

test("status words for the sidebar badge", () => {
  assert.equal(state.statusWord(undefined), "notLoaded");
  assert.equal(state.statusWord({ type: "idle" }), "idle");
  assert.equal(state.statusWord({ type: "active", activeFlags: [] }), "running");
  assert.equal(state.statusWord({ type: "active", activeFlags: ["waitingOnApproval"] }), "waiting");
  assert.equal(state.statusWord({ type: "systemError" }), "systemError");
});

test("a connection reopens the shown thread, unless one was opened on it already", () => {
  // A reconnect: the thread shown on the old connection is opened on the new one.
  assert.equal(state.threadToReopen({ connection: 2, openedOn: 1, shown: "a", address: "a" }), "a");
  // A reload: the address names the thread.
  assert.equal(state.threadToReopen({ connection: 1, openedOn: 0, shown: null, address: "b" }), "b");
  assert.equal(state.threadToReopen({ connection: 1, openedOn: 0, shown: null, address: null }), null);
  // Clicked while the first lists loaded (its resume may not have answered yet): left alone.
  assert.equal(state.threadToReopen({ connection: 1, openedOn: 1, shown: "a", address: "a" }), null);
  assert.equal(state.threadToReopen({ connection: 1, openedOn: 1, shown: null, address: null }), null);
});

test("a steer that found its turn ended is told from other errors", () => {
  const error = (code, message) => Object.assign(new Error(message), { code, message });
  assert.equal(state.steerFoundNoTurn(error(-32600, "no active turn to steer")), true);
  assert.equal(
    state.steerFoundNoTurn(error(-32600, "expected active turn id `a` but found `b`")),
    false,
  );
  assert.equal(state.steerFoundNoTurn(error(-32603, "no active turn to steer")), false);
  assert.equal(state.steerFoundNoTurn(new Error("disconnected")), false);
});

test("threads are grouped by directory, newest first", () => {
  const groups = state.groupByCwd([
    { id: "a", cwd: "/x", updatedAt: 1 },
    { id: "b", cwd: "/y", updatedAt: 5 },
    { id: "c", cwd: "/x", updatedAt: 3 },
  ]);
  assert.deepEqual(
    groups.map((g) => [g.cwd, g.threads.map((t) => t.id)]),
    [
      ["/y", ["b"]],
      ["/x", ["c", "a"]],
    ],
  );
});

test("a streamed turn builds its items, and a repeated notification changes nothing twice", () => {
  const view = state.emptyTranscript("t1");
  const started = { threadId: "t1", turn: { id: "u1", status: "inProgress" } };
  assert.equal(state.applyNotification(view, "turn/started", started), true);
  assert.equal(view.running, "u1");
  const item = { type: "agentMessage", id: "i1", text: "" };
  state.applyNotification(view, "item/started", { threadId: "t1", turnId: "u1", item });
  state.applyNotification(view, "item/started", { threadId: "t1", turnId: "u1", item });
  deltas(view, "item/agentMessage/delta", "i1", ["Hel", "lo"]);
  assert.equal(view.turns[0].items.length, 1);
  assert.equal(view.turns[0].items[0].text, "Hello");
  const done = { type: "agentMessage", id: "i1", text: "Hello!" };
  state.applyNotification(view, "item/completed", { threadId: "t1", turnId: "u1", item: done });
  assert.equal(view.turns[0].items[0].text, "Hello!", "the daemon's copy wins");
  const completed = { threadId: "t1", turn: { id: "u1", status: "completed" } };
  state.applyNotification(view, "turn/completed", completed);
  assert.equal(view.running, null);
  assert.equal(view.turns[0].status, "completed");
});

test("threads can be ordered by creation instead", () => {
  const groups = state.groupByCwd(
    [
      { id: "a", cwd: "/x", createdAt: 9, updatedAt: 1 },
      { id: "b", cwd: "/x", createdAt: 2, updatedAt: 5 },
    ],
    "createdAt",
  );
  assert.deepEqual(groups[0].threads.map((t) => t.id), ["a", "b"]);
});

test("command output and reasoning summaries grow by their deltas", () => {
  const view = state.emptyTranscript("t1");
  const command = { type: "commandExecution", id: "c1", command: "ls", aggregatedOutput: null };
  state.applyNotification(view, "item/started", { threadId: "t1", turnId: "u1", item: command });
  deltas(view, "item/commandExecution/outputDelta", "c1", ["a\n", "b\n"]);
  assert.equal(view.turns[0].items[0].aggregatedOutput, "a\nb\n");
  const reasoning = { type: "reasoning", id: "r1", summary: [], content: [] };
  state.applyNotification(view, "item/started", { threadId: "t1", turnId: "u1", item: reasoning });
  state.applyNotification(view, "item/reasoning/summaryTextDelta", {
    threadId: "t1",
    turnId: "u1",
    itemId: "r1",
    summaryIndex: 1,
    delta: "second",
  });
  assert.deepEqual(view.turns[0].items[1].summary, ["", "second"]);
});

test("another thread's notifications are not applied", () => {
  const view = state.emptyTranscript("t1");
  const other = { threadId: "t2", turn: { id: "u9", status: "inProgress" } };
  assert.equal(state.applyNotification(view, "turn/started", other), false);
  assert.equal(view.turns.length, 0);
});

test("older pages go before what is shown, without repeating a turn", () => {
  const view = state.emptyTranscript("t1");
  state.applyNotification(view, "turn/started", { threadId: "t1", turn: { id: "u3" } });
  state.prependTurns(view, [
    { id: "u2", status: "completed", items: [] },
    { id: "u3", status: "inProgress", items: [] },
  ]);
  state.prependTurns(view, [{ id: "u1", status: "completed", items: [] }]);
  // The running turn was created by its notification; its stored items come in front.
  const stored = { type: "agentMessage", id: "i0", text: "before" };
  state.prependTurns(view, [{ id: "u3", status: "inProgress", items: [stored] }]);
  assert.deepEqual(view.turns[2].items, [stored]);
  assert.deepEqual(
    view.turns.map((t) => t.id),
    ["u1", "u2", "u3"],
  );
  assert.equal(view.running, "u3");
});

test("the latest plan of a turn is kept with it", () => {
  const view = state.emptyTranscript("t1");
  const plan = [{ step: "Fix the bug", status: "inProgress" }];
  state.applyNotification(view, "turn/plan/updated", { threadId: "t1", turnId: "u1", plan });
  assert.deepEqual(view.turns[0].plan, { explanation: null, steps: plan });
});

test("errors and warnings become notices", () => {
  const view = state.emptyTranscript("t1");
  const error = { message: "the model failed" };
  state.applyNotification(view, "error", { threadId: "t1", turnId: "u1", error, willRetry: true });
  state.applyNotification(view, "warning", { threadId: "t1", message: "careful" });
  assert.deepEqual(view.notices, [
    { kind: "retry", message: "the model failed" },
    { kind: "warning", message: "careful" },
  ]);
});

test("the newest items are shown, the older ones counted", () => {
  const view = state.emptyTranscript("t1");
  const item = (n) => ({ type: "agentMessage", id: `i${n}`, text: `${n}` });
  state.prependTurns(view, [
    { id: "u1", status: "completed", items: [item(1), item(2), item(3)] },
    { id: "u2", status: "completed", items: [item(4), item(5)] },
  ]);
  const few = state.visibleItems(view, 3);
  assert.equal(few.hidden, 2);
  assert.deepEqual(
    few.turns.map(({ turn, items }) => [turn.id, items.map((i) => i.id)]),
    [
      ["u1", ["i3"]],
      ["u2", ["i4", "i5"]],
    ],
  );
  assert.equal(state.visibleItems(view, 10).hidden, 0);
  assert.equal(state.visibleItems(view, 10).turns.length, 2);
});

test("a delta moves its item's version on, for the renderer", () => {
  const view = state.emptyTranscript("t1");
  const item = { type: "agentMessage", id: "i1", text: "" };
  state.applyNotification(view, "item/started", { threadId: "t1", turnId: "u1", item });
  deltas(view, "item/agentMessage/delta", "i1", ["a", "b"]);
  assert.equal(view.turns[0].items[0].version, 2);
});

test("typed text is one text input", () => {
  assert.deepEqual(state.textInput("hi"), [{ type: "text", text: "hi", text_elements: [] }]);
  assert.deepEqual(state.textInput("", ["data:image/png;base64,AA=="]), [
    { type: "image", url: "data:image/png;base64,AA==" },
  ]);
});
