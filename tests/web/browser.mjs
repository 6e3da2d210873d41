// Drives Debian's chromium through playwright-core (pinned in tests/web/package-lock.json,
// installed by tests/web/install.sh) against a real Weft daemon, one scenario per run:
//
//   node tests/web/browser.mjs SCENARIO
//
// with WEFT_SIGN_IN_URL (the daemon's sign-in URL), WEFT_WEB_NODE_MODULES (where
// playwright-core is), and per scenario WEFT_THREAD (a thread the test made) and the ports
// of the origins scenario. The Rust test (tests/suite/web/browser.rs) scripts the mock model
// and the daemon; the two meet at "ask NAME" lines: this script prints one and waits for a
// line on stdin before it goes on. A failed expectation throws: exit 1, the reason on stderr.
// WEFT_WEB_SCREENSHOTS, when set, is a folder the main views are saved into.

import http from "node:http";
import path from "node:path";
import readline from "node:readline";
import { pathToFileURL } from "node:url";

const env = process.env;
const modules = env.WEFT_WEB_NODE_MODULES;
const { chromium } = await import(
  pathToFileURL(path.join(modules, "playwright-core", "index.mjs")).href
);

const signInUrl = env.WEFT_SIGN_IN_URL;
const daemonOrigin = new URL(signInUrl).origin;
const token = new URL(signInUrl).searchParams.get("token");
const thread = env.WEFT_THREAD;
const TIMEOUT = 30000;

const input = readline.createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();

/** Tell the test we reached `name`, and wait until it says go on. */
async function ask(name) {
  console.log(`ask ${name}`);
  const { value, done } = await lines.next();
  if (done || value.trim() !== "ok") throw new Error(`the test did not answer ${name}`);
}

function expect(condition, what) {
  if (!condition) throw new Error(`expected ${what}`);
}

async function shot(page, name) {
  if (env.WEFT_WEB_SCREENSHOTS) {
    await page.screenshot({ path: path.join(env.WEFT_WEB_SCREENSHOTS, `${name}.png`) });
  }
}

// --- the client's pages ------------------------------------------------------------------

/** A new tab whose script errors and console messages go to stderr (a failure's story). */
async function newPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on("pageerror", (err) => console.error(`page error: ${err.message}`));
  page.on("console", (message) => console.error(`console ${message.type()}: ${message.text()}`));
  return page;
}

async function signIn(context) {
  const page = await newPage(context);
  // Record the page's WebSockets, so that a scenario can drop them.
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    window.__weftSockets = [];
    window.WebSocket = class extends Native {
      constructor(...args) {
        super(...args);
        window.__weftSockets.push(this);
      }
    };
  });
  await page.goto(signInUrl);
  await page.waitForSelector('#connection[data-state="open"]');
  expect(!page.url().includes("token="), `the token gone from the address bar, not ${page.url()}`);
  return page;
}

/** A signed-in tab with the test's thread open. */
async function onThread(context) {
  const page = await signIn(context);
  await openThread(page, thread);
  return page;
}

async function openThread(page, id) {
  await page.click(`[data-thread="${id}"]`);
  await page.waitForSelector(`[data-thread="${id}"][aria-current="true"]`);
}

async function send(page, text) {
  await page.fill("#message", text);
  await page.press("#message", "Enter");
}

/** Wait until some element matching `selector` has exactly `text` (or contains it). */
async function waitText(page, selector, text, { exact = false } = {}) {
  await page.waitForFunction(
    ([selector, text, exact]) =>
      [...document.querySelectorAll(selector)].some((node) =>
        exact ? node.textContent === text : node.textContent.includes(text),
      ),
    [selector, text, exact],
    { timeout: TIMEOUT },
  );
}

/** Wait until the page shows each `[selector, text]` of `expected`. */
async function shows(page, expected) {
  for (const [selector, text] of expected) await waitText(page, selector, text);
}

async function agentTexts(page) {
  return page.$$eval(".item.agent p", (nodes) => nodes.map((node) => node.textContent));
}

// --- scenarios ---------------------------------------------------------------------------

/** A scenario: send `message` on the test's thread, see each of `expected`, save the view. */
function sendAndSee(message, expected, view) {
  return async (context) => {
    const page = await onThread(context);
    await send(page, message);
    await shows(page, expected);
    await shot(page, view);
  };
}

const scenarios = {
  /** A streamed turn renders its reasoning, a command's output and exit code, and its text. */
  stream: sendAndSee(
    "run the command",
    [
      [".item.agent p", "All done: streamed answer"],
      [".item.reasoning p", "Thinking about the command"],
      [".item.command .output", "hello-from-command"],
      [".item.command .exit", "exit 0"],
      [".item.user p", "run the command"],
    ],
    "transcript",
  ),

  /** An agent message is markdown: emphasis, code, a safe link, highlighted code. */
  async markdown(context) {
    const page = await onThread(context);
    await send(page, "format it");
    await shows(page, [
      [".item.agent strong", "bold"],
      [".item.agent p code", "inline"],
      [".item.agent pre code .hljs-keyword", "fn"],
    ]);
    const link = await page.$eval(".item.agent a", (a) => [a.href, a.rel, a.target]);
    expect(
      link[0] === "https://example.com/" && link[1] === "noopener noreferrer" && link[2] === "_blank",
      `a safe link, not ${JSON.stringify(link)}`,
    );
    await shot(page, "markdown");
  },

  /** In Plan mode the model's question is a form; the answer goes back to it. */
  async plan_question(context) {
    const page = await onThread(context);
    await page.selectOption("#mode", "plan");
    await send(page, "plan the storage");
    await page.waitForSelector("dialog.user-input[open]");
    await waitText(page, "dialog.user-input legend", "Storage");
    await page.check('dialog.user-input input[value="SQLite (Recommended)"]');
    await shot(page, "question");
    await page.click('dialog.user-input button[type="submit"]');
    await page.waitForSelector("dialog.user-input", { state: "detached" });
    await waitText(page, ".item.agent p", "SQLite it is.");
  },

  /** 10,000 deltas are drawn in batches; 5,000 items are shown through a bounded window. */
  async long(context) {
    const page = await onThread(context);
    await send(page, "stream a lot");
    await waitText(page, ".item.agent p", "d10000");
    const renders = Number(await page.getAttribute("#transcript", "data-renders"));
    expect(renders < 5000, `10,000 deltas drawn in batches, not in ${renders} renders`);
    await page.waitForSelector("#stop[hidden]", { state: "attached" });
    await send(page, "many items");
    await waitText(page, ".item.agent p", "item 5000", { exact: true });
    const count = () => page.$$eval("#transcript .item", (nodes) => nodes.length);
    const first = await count();
    expect(first <= 201, `at most 200 items drawn at first, not ${first}`);
    await waitText(page, "#earlier", "earlier items");
    await page.click("#earlier");
    await page.waitForFunction((n) => document.querySelectorAll("#transcript .item").length > n, first);
    const more = await count();
    expect(more <= 401, `200 more items drawn, not ${more - first}`);
  },

  /** An image attached in the composer goes with the message and shows in it. */
  async image(context) {
    const page = await onThread(context);
    const dot = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await page.setInputFiles("#attach", {
      name: "dot.png",
      mimeType: "image/png",
      buffer: Buffer.from(dot, "base64"),
    });
    await waitText(page, "#attachments", "dot.png");
    await send(page, "what is this");
    await page.waitForSelector('.item.user img.attached[src^="data:image/png;base64,"]');
    await waitText(page, ".item.agent p", "a dot");
    await waitText(page, "#attachments", "", { exact: true });
  },

  /** An MCP server's question is a form; the answer goes back to the server. */
  async elicitation(context) {
    const page = await onThread(context);
    await send(page, "ask me");
    await page.waitForSelector("dialog.elicitation[open]");
    await waitText(page, "dialog.elicitation p", "Which colour?");
    await page.fill("dialog.elicitation input", "teal");
    await shot(page, "elicitation");
    await page.click('dialog.elicitation button[data-action="accept"]');
    await page.waitForSelector("dialog.elicitation", { state: "detached" });
    await waitText(page, ".item.agent p", "asked");
    await waitText(page, ".item.tool .result", "teal");
  },

  /** A failed turn shows its error. */
  failure: sendAndSee("fail please", [[".notice.error", "the model broke down"]], "failure"),

  /** A patch is shown as its file and diff. */
  patch: sendAndSee(
    "add the file",
    [
      [".item.patch h4", "hello.txt"],
      [".item.patch .diff", "hello from the patch"],
      [".item.agent p", "patched"],
    ],
    "patch",
  ),

  /** A command approval accepted, then one refused (its turn cancelled). */
  async approvals(context) {
    const page = await onThread(context);
    await send(page, "create the first file");
    await page.waitForSelector("dialog.approval[open]");
    await waitText(page, "dialog.approval .command", "touch first.txt");
    await shot(page, "approval");
    await page.click('dialog.approval button[data-decision="accept"]');
    await waitText(page, ".item.agent p", "first done");
    expect((await page.$$("dialog.approval")).length === 0, "the dialog gone once answered");
    await send(page, "create the second file");
    await page.waitForSelector("dialog.approval[open]");
    await page.click('dialog.approval button[data-decision="cancel"]');
    await page.waitForFunction(
      () => document.querySelectorAll("section.turn:not(.inProgress)").length === 2,
      null,
      { timeout: TIMEOUT },
    );
    expect((await page.$$("dialog.approval")).length === 0, "the second dialog gone");
  },

  /** The plan shows with its steps; a patch asks first (the thread's badge says it waits). */
  async plan_and_patch(context) {
    const page = await onThread(context);
    await send(page, "plan, then add the file");
    await waitText(page, ".plan-update li.inProgress", "Fix the bug");
    await page.waitForSelector("dialog.approval[open]");
    await waitText(page, "dialog.approval h2", "Apply this change?");
    await waitText(page, `[data-thread="${thread}"] .badge`, "waiting");
    await page.click('dialog.approval button[data-decision="accept"]');
    await waitText(page, ".item.agent p", "Patched.");
    await waitText(page, ".item.patch .diff", "hello from apply_patch");
    await waitText(page, `[data-thread="${thread}"] .badge`, "idle");
  },

  /** A sub-agent's spawn shows in the parent with a button that opens the child. */
  async subagent(context) {
    const page = await onThread(context);
    await send(page, "spawn a worker");
    await waitText(page, ".item.agents h4", "spawn");
    await waitText(page, ".item.agent p", "spawned");
    await page.click(".item.agents .thread-link");
    await page.waitForFunction(
      (id) => {
        const open = document.querySelector('.thread[aria-current="true"]');
        return open && open.dataset.thread !== id;
      },
      thread,
      { timeout: TIMEOUT },
    );
    await waitText(page, ".item.agent p", "hi from the child");
  },

  /** Esc stops the running turn. */
  async interrupt(context) {
    const page = await onThread(context);
    await send(page, "take your time");
    await page.waitForSelector("#stop:not([hidden])");
    await ask("running");
    await page.keyboard.press("Escape");
    await page.waitForSelector("section.turn.interrupted");
    await page.waitForSelector("#stop[hidden]", { state: "attached" });
  },

  /** Enter while a turn runs steers it. */
  async steer(context) {
    const page = await onThread(context);
    await send(page, "first request");
    await page.waitForSelector("#stop:not([hidden])");
    await ask("running");
    await send(page, "also this");
    // Both messages taken: the steer is in the running turn before the model is let go on.
    await page.waitForSelector('#composer[data-acknowledged="2"]');
    await ask("steered");
    await waitText(page, ".item.agent p", "after steer");
    await waitText(page, ".item.user p", "also this");
    const turns = await page.$$eval("section.turn", (nodes) => nodes.length);
    expect(turns === 1, `one turn, not ${turns}`);
  },

  /** A reload mid-turn reopens the thread and the turn goes on, its text neither lost nor doubled. */
  async reload(context) {
    const page = await onThread(context);
    await send(page, "stream slowly");
    await waitText(page, ".item.agent p", "w1 ");
    await page.reload();
    await page.waitForSelector('#connection[data-state="open"]');
    await page.waitForSelector(`[data-thread="${thread}"][aria-current="true"]`);
    // Reopened while the turn still runs (its message streams for ten seconds).
    await page.waitForSelector("#stop:not([hidden])");
    const words = Array.from({ length: 40 }, (_, n) => `w${n + 1}`).join(" ");
    await waitText(page, ".item.agent p", words, { exact: true });
    await page.waitForSelector("#stop[hidden]", { state: "attached" });
    const texts = await agentTexts(page);
    expect(texts.length === 1, `one agent message, not ${JSON.stringify(texts)}`);
  },

  /** A dropped connection comes back by itself, and the turn's stream goes on. */
  async drop(context) {
    const page = await onThread(context);
    await send(page, "stream slowly");
    await waitText(page, ".item.agent p", "w1 ");
    // The page's sockets (recorded by the init script below) are closed as a network drop
    // closes them; offline emulation would leave an open WebSocket alone.
    await page.evaluate(() => window.__weftSockets.forEach((socket) => socket.close()));
    await page.waitForSelector('#connection[data-state="closed"]');
    await page.waitForSelector('#connection[data-state="open"]');
    const words = Array.from({ length: 40 }, (_, n) => `w${n + 1}`).join(" ");
    await waitText(page, ".item.agent p", words, { exact: true });
    const texts = await agentTexts(page);
    expect(texts.length === 1, `one agent message, not ${JSON.stringify(texts)}`);
  },

  /** Two tabs on one thread: an approval answered in one closes in the other. */
  async two_tabs(context) {
    const first = await signIn(context);
    const second = await newPage(context);
    await second.goto(`${daemonOrigin}/`);
    await second.waitForSelector('#connection[data-state="open"]');
    await openThread(first, thread);
    await openThread(second, thread);
    await send(first, "create the file");
    await first.waitForSelector("dialog.approval[open]");
    await second.waitForSelector("dialog.approval[open]");
    await second.click('dialog.approval button[data-decision="accept"]');
    await first.waitForSelector("dialog.approval", { state: "detached" });
    await waitText(first, ".item.agent p", "created once");
    await waitText(second, ".item.agent p", "created once");
  },

  /** A stored thread opens on its newest page; older turns load on request. */
  async history(context) {
    const page = await onThread(context);
    await waitText(page, ".item.agent p", "answer 25", { exact: true });
    const before = await agentTexts(page);
    expect(!before.includes("answer 1"), "the oldest turns not loaded at first");
    await shot(page, "history");
    // Scrolled to the top, the older turns load by themselves.
    await page.$eval("#transcript", (transcript) => {
      transcript.scrollTop = 0;
    });
    await waitText(page, ".item.agent p", "answer 1", { exact: true });
    const after = await agentTexts(page);
    expect(after.length === 25, `25 answers, not ${after.length}`);
    expect(after[0] === "answer 1" && after[24] === "answer 25", "oldest first");
  },

  /** Markup in a model message renders as inert text. */
  async xss(context) {
    const page = await onThread(context);
    await send(page, "say something nasty");
    await waitText(page, ".item.agent p", "<script>");
    const found = await page.evaluate(() => ({
      ran: window.__weftXss,
      elements: document.querySelectorAll(
        "#transcript script, #transcript img, #transcript a, #transcript iframe",
      ).length,
      text: document.querySelector(".item.agent p").textContent,
    }));
    expect(found.ran === undefined, `no injected script ran, got ${found.ran}`);
    expect(found.elements === 0, `no element made from the message, got ${found.elements}`);
    for (const literal of ["<img src=x onerror=", "javascript:", "<!-- hidden -->"]) {
      expect(found.text.includes(literal), `the text to show ${literal}`);
    }
  },

  /** A new thread with its model, approvals and sandbox; rename, fork, archive; the keys. */
  async manage(context) {
    const page = await signIn(context);
    await page.fill("#new-cwd", env.WEFT_CWD);
    await page.waitForSelector('#new-model option:not([value=""])', { state: "attached" });
    const models = await page.$$eval("#new-model option", (options) =>
      options.map((option) => option.value).filter(Boolean),
    );
    expect(models.length > 0, "the daemon's models in the new thread's form");
    await page.selectOption("#new-model", models[0]);
    await page.selectOption("#new-approval", "never");
    await page.selectOption("#new-sandbox", "read-only");
    await page.click('#new-thread button[type="submit"]');
    await page.waitForSelector('.thread[aria-current="true"]');
    const original = await page.getAttribute('.thread[aria-current="true"]', "data-thread");
    await send(page, "hello");
    await waitText(page, ".item.agent p", "hi there");
    await waitText(page, "#tokens", "tokens");
    await page.fill("#rename-input", "Renamed thread");
    await page.click("#rename");
    await waitText(page, `[data-thread="${original}"] .title`, "Renamed thread");
    // The search, the directory filter and the order are the daemon's (thread/list's
    // searchTerm, cwd and sortKey).
    await page.fill("#search", "Renamed");
    await page.waitForSelector(`[data-thread="${original}"]`);
    await page.fill("#search", "no thread is called this");
    await page.waitForSelector(`[data-thread="${original}"]`, { state: "detached" });
    await page.fill("#search", "");
    await page.waitForSelector(`[data-thread="${original}"]`);
    await page.fill("#cwd-filter", "/nowhere");
    await page.press("#cwd-filter", "Enter");
    await page.waitForSelector(`[data-thread="${original}"]`, { state: "detached" });
    await page.fill("#cwd-filter", env.WEFT_CWD);
    await page.press("#cwd-filter", "Enter");
    await page.waitForSelector(`[data-thread="${original}"]`);
    await page.selectOption("#sort", "created_at");
    await page.waitForSelector(`[data-thread="${original}"]`);
    await page.click("#fork");
    await page.waitForFunction(
      (id) => {
        const open = document.querySelector('.thread[aria-current="true"]');
        return open && open.dataset.thread !== id;
      },
      original,
      { timeout: TIMEOUT },
    );
    await waitText(page, ".item.agent p", "hi there");
    const forked = await page.getAttribute('.thread[aria-current="true"]', "data-thread");
    await openThread(page, original);
    await page.click("#archive");
    await page.waitForSelector(`[data-thread="${original}"]`, { state: "detached" });
    await page.check("#archived");
    await page.waitForSelector(`[data-thread="${original}"]`);
    await page.uncheck("#archived");
    await page.waitForSelector(`[data-thread="${original}"]`, { state: "detached" });
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    await page.keyboard.press("?");
    await page.waitForSelector("#shortcuts[open]");
    await page.keyboard.press("Escape");
    // Dark when the system is.
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.emulateMedia({ colorScheme: "dark" });
    const dark = await background();
    expect(light !== dark && dark.startsWith("rgb(2"), `a dark background, not ${dark} (light ${light})`);
    // At a phone's width the sidebar sits above the transcript.
    await page.setViewportSize({ width: 390, height: 800 });
    await openThread(page, forked);
    const [sidebar, main] = await page.$$eval("#sidebar, main", (nodes) =>
      nodes.map((node) => node.getBoundingClientRect().top),
    );
    expect(main > sidebar, "the transcript below the sidebar on a narrow screen");
    await shot(page, "phone");
    console.log(`model ${models[0]}`);
    console.log(`original ${original}`);
    console.log(`forked ${forked}`);
  },

  /** A page on an allowed origin opens the socket with the token; a foreign one cannot. */
  async origins(context) {
    const socketUrl = `${daemonOrigin.replace("http", "ws")}/`;
    const page = `<!doctype html><title>probe</title><script>
      const socket = new WebSocket(${JSON.stringify(socketUrl)},
        ["weft.jsonrpc", "weft.token." + ${JSON.stringify(token)}]);
      socket.onopen = () => socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1,
        method: "initialize", params: { clientInfo: { name: "probe", version: "1" } } }));
      socket.onmessage = (event) => { document.title = JSON.parse(event.data).result ? "initialized" : "error"; };
      socket.onerror = () => { document.title = "refused"; };
    </script>`;
    const servers = [];
    for (const port of [env.WEFT_ALLOWED_PORT, env.WEFT_FOREIGN_PORT]) {
      const server = http.createServer((_, response) => {
        response.setHeader("content-type", "text/html");
        response.end(page);
      });
      await new Promise((resolve) => server.listen(Number(port), "127.0.0.1", resolve));
      servers.push(server);
    }
    try {
      for (const [url, title] of [
        [`http://localhost:${env.WEFT_ALLOWED_PORT}/`, "initialized"],
        [`http://127.0.0.1:${env.WEFT_FOREIGN_PORT}/`, "refused"],
      ]) {
        const probe = await context.newPage();
        await probe.goto(url);
        await probe.waitForFunction((t) => document.title === t, title, { timeout: TIMEOUT });
        await probe.close();
      }
    } finally {
      for (const server of servers) server.close();
    }
  },
};

const name = process.argv[2];
const scenario = scenarios[name];
if (!scenario) {
  console.error(`unknown scenario ${name}; known: ${Object.keys(scenarios).join(", ")}`);
  process.exit(2);
}

const browser = await chromium.launch({
  executablePath: env.WEFT_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // No sandbox of chromium's own (it may run as root here); no calls home, which a closed
  // network would refuse.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
let failed = false;
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  await scenario(context);
  console.log("done");
} catch (err) {
  failed = true;
  console.error(err && err.stack ? err.stack : String(err));
  // What each tab showed when it failed.
  for (const context of browser.contexts()) {
    for (const page of context.pages()) {
      const shown = await page
        .evaluate(() => document.body.innerText)
        .catch((problem) => `(cannot read the page: ${problem.message})`);
      console.error(`--- ${page.url()} showed ---\n${shown}`);
    }
  }
} finally {
  await browser.close();
  input.close();
}
process.exit(failed ? 1 : 0);
