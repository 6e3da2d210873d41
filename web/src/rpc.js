// JSON-RPC over the daemon's WebSocket, one message per text frame (docs/web.md). The
// page's own socket is signed in by its session cookie; `token` is for a page served
// elsewhere (an origin in `[web] allowed_origins`), offered as the subprotocol
// `weft.token.<token>` beside `weft.jsonrpc`.

export class Rpc {
  constructor(url, { token = null, onNotification, onRequest, onState }) {
    this.url = url;
    this.token = token;
    this.onNotification = onNotification;
    this.onRequest = onRequest;
    this.onState = onState;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.retry = 0;
  }

  /** Open the socket and initialize; resolves once the daemon has answered `initialize`. */
  connect() {
    const protocols = ["weft.jsonrpc"];
    if (this.token) protocols.push(`weft.token.${this.token}`);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url, protocols);
      this.socket = socket;
      let opened = false;
      socket.onopen = async () => {
        opened = true;
        this.retry = 0;
        try {
          const result = await this.request("initialize", {
            clientInfo: { name: "weft-web", title: "Weft web client", version: "0.1.0" },
            // The collaboration modes and `request_user_input` are experimental upstream.
            capabilities: { experimentalApi: true },
          });
          this.notify("initialized", {});
          this.onState("open");
          resolve(result);
        } catch (err) {
          reject(err);
        }
      };
      socket.onmessage = (event) => this.receive(event.data);
      socket.onclose = () => {
        for (const { reject: fail } of this.pending.values()) fail(new Error("disconnected"));
        this.pending.clear();
        if (!opened) reject(new Error("the daemon refused the connection"));
        this.onState("closed");
      };
    });
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id);
      if (message.error) waiter.reject(Object.assign(new Error(message.error.message), message.error));
      else waiter.resolve(message.result);
    } else if (message.id !== undefined) {
      const respond = (result) => this.send({ jsonrpc: "2.0", id: message.id, result });
      this.onRequest(message.method, message.params, respond, message.id);
    } else if (message.method) {
      this.onNotification(message.method, message.params);
    }
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(JSON.stringify(message));
    }
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method, params) {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** The delay before the next reconnection attempt: 0.5 s doubling to 10 s. */
  backoff() {
    const ms = Math.min(10000, 500 * 2 ** this.retry);
    this.retry += 1;
    return ms;
  }
}
