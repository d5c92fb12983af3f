// JSON-RPC 2.0 over a WebSocket that reconnects by itself (docs/web-client.md,
// "Reconnecting"). One text frame carries one message. Requests still waiting
// when the socket drops are rejected with ConnectionLost: the session view
// reloads the session after the next `open`, which replays what was missed.

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000];
const STABLE_MS = 10_000; // a connection that lived this long resets the backoff

export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export class ConnectionLost extends Error {
  constructor() {
    super("connection lost");
  }
}

export class RpcSocket extends EventTarget {
  /**
   * @param {() => Promise<string>} urlProvider gives the URL for each attempt
   * @param {{onRequest: (msg: any) => void, onNotification: (msg: any) => void}} handlers
   */
  constructor(urlProvider, handlers) {
    super();
    this.urlProvider = urlProvider;
    this.handlers = handlers;
    this.nextId = 1;
    this.pending = new Map();
    this.socket = null;
    this.state = "idle";
    this.attempt = 0;
    this.timer = null;
    this.openedAt = 0;
    this.stopped = false;
    // Back online, or the phone's screen back on: retry now instead of waiting out the backoff.
    this.retryNow = () => { if (this.state === "waiting" && !document.hidden) this.connect(); };
    window.addEventListener("online", this.retryNow);
    document.addEventListener("visibilitychange", this.retryNow);
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  /** Close for good (leaving the session view): no reconnect. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this.retryNow);
    document.removeEventListener("visibilitychange", this.retryNow);
    if (this.socket) this.socket.close(1000, "closed by user");
    this.socket = null;
    this.failPending();
    this.setState("closed");
  }

  setState(state, detail = {}) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, attempt: this.attempt, ...detail } }));
  }

  async connect() {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.setState("connecting");
    let target;
    try {
      target = await this.urlProvider(this.attempt);
    } catch (error) {
      this.scheduleRetry(String(error.message || error));
      return;
    }
    if (this.stopped) return;
    // A URL, or {url, protocols} (the token travels as a subprotocol: hub-api.js acpUrl).
    const socket = typeof target === "string" ? new WebSocket(target) : new WebSocket(target.url, target.protocols);
    this.socket = socket;
    socket.addEventListener("open", () => {
      if (socket !== this.socket) return;
      this.openedAt = Date.now();
      this.setState("open");
      this.dispatchEvent(new Event("open"));
    });
    socket.addEventListener("message", (event) => {
      if (socket === this.socket) this.receive(event.data);
    });
    socket.addEventListener("close", (event) => {
      if (socket !== this.socket) return;
      this.socket = null;
      this.failPending();
      if (this.openedAt && Date.now() - this.openedAt >= STABLE_MS) this.attempt = 0;
      this.openedAt = 0;
      this.dispatchEvent(new CustomEvent("close", { detail: { code: event.code, reason: event.reason } }));
      if (!this.stopped) this.scheduleRetry(event.reason || `closed (${event.code})`);
    });
  }

  scheduleRetry(reason) {
    if (this.stopped) return;
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    const delay = Math.round(base * (0.8 + Math.random() * 0.4)); // jitter: clients do not retry in step
    this.attempt += 1;
    this.setState("waiting", { delayMs: delay, reason });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  failPending() {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const { reject } of pending) reject(new ConnectionLost());
  }

  receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      console.warn("unparseable frame ignored");
      return;
    }
    if (!msg || typeof msg !== "object" || Array.isArray(msg)) return;
    if (typeof msg.method === "string") {
      if (msg.id !== undefined && msg.id !== null) this.handlers.onRequest(msg);
      else this.handlers.onNotification(msg);
      return;
    }
    const waiting = this.pending.get(msg.id);
    if (!waiting) return; // an answer we gave up on
    this.pending.delete(msg.id);
    if (msg.error) waiting.reject(new RpcError(msg.error.code, msg.error.message || "error", msg.error.data));
    else waiting.resolve(msg.result);
  }

  send(message) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) throw new ConnectionLost();
    this.socket.send(JSON.stringify({ jsonrpc: "2.0", ...message }));
  }

  /** Send a request; resolves with its result, rejects with RpcError or ConnectionLost. */
  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.send({ id, method, params });
      } catch (error) {
        reject(error);
        return;
      }
      this.pending.set(id, { resolve, reject, method });
    });
  }

  notify(method, params) {
    this.send({ method, params });
  }

  respond(id, result) {
    try { this.send({ id, result }); } catch { /* the socket is gone; the dialog died with it */ }
  }

  respondError(id, code, message) {
    try { this.send({ id, error: { code, message } }); } catch { /* as above */ }
  }
}
