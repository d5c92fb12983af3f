// The ACP client side of one WebSocket (ACP v1 over JSON-RPC 2.0; the method
// list is in docs/web-client.md). `ready` fires after every successful
// `initialize`, so the session view can (re)load its session after a drop.

import { RpcSocket, RpcError } from "./rpc.js";

export const PROTOCOL_VERSION = 1;

/** What the page can show: forms (ACP's `elicitation.form: {}`) and streamed terminal output. */
export const CLIENT_CAPABILITIES = Object.freeze({
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
  elicitation: { form: {} },
  // The plan's quota as `quota_update` (the ACP "Quotas and Limits" RFD; docs/quota.md).
  session: { quota: {} },
  _meta: { terminal_output: true },
});

export const CLIENT_INFO = Object.freeze({ name: "zcode-acp-web", title: "ZCode web client", version: "0.1.0" });

const REQUEST_CANCELLED = -32800;
const METHOD_NOT_FOUND = -32601;

export class AcpClient extends EventTarget {
  /** @param {(attempt: number) => Promise<string>} urlProvider */
  constructor(urlProvider) {
    super();
    this.openRequests = new Set(); // ids of the agent's requests we have on screen
    this.agent = null;
    this.rpc = new RpcSocket(urlProvider, {
      onRequest: (msg) => this.onRequest(msg),
      onNotification: (msg) => this.onNotification(msg),
    });
    this.rpc.addEventListener("state", (event) => this.dispatchEvent(new CustomEvent("state", { detail: event.detail })));
    this.rpc.addEventListener("open", () => this.initialize());
    this.rpc.addEventListener("close", () => {
      // Dialogs belong to the socket that carried them; the bridge asks again after a reload.
      const ids = [...this.openRequests];
      this.openRequests.clear();
      for (const id of ids) this.emit("withdrawn", { requestId: id });
    });
  }

  start() { this.rpc.start(); }
  stop() { this.rpc.stop(); }

  emit(name, detail) {
    this.dispatchEvent(new CustomEvent(name, { detail }));
  }

  async initialize() {
    try {
      const result = await this.rpc.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: CLIENT_CAPABILITIES,
        clientInfo: CLIENT_INFO,
      });
      this.agent = result;
      this.emit("ready", result);
    } catch (error) {
      if (error instanceof RpcError) this.emit("failure", { message: `initialize failed: ${error.message}` });
      // ConnectionLost: the socket's own retry takes over.
    }
  }

  onRequest(msg) {
    if (msg.method === "session/request_permission") {
      this.openRequests.add(msg.id);
      this.emit("permission", { id: msg.id, params: msg.params || {} });
    } else if (msg.method === "elicitation/create") {
      if (msg.params && msg.params.mode === "form") {
        this.openRequests.add(msg.id);
        this.emit("elicitation", { id: msg.id, params: msg.params });
      } else {
        this.rpc.respond(msg.id, { action: "decline" }); // only forms were declared
      }
    } else {
      this.rpc.respondError(msg.id, METHOD_NOT_FOUND, `the web client does not support ${msg.method}`);
    }
  }

  onNotification(msg) {
    if (msg.method === "session/update") {
      this.emit("update", msg.params || {});
    } else if (msg.method === "$/cancel_request") {
      const requestId = msg.params ? msg.params.requestId : undefined;
      if (this.openRequests.delete(requestId)) {
        // Answered elsewhere (or withdrawn): close the dialog and say so, as JSON-RPC cancellation asks.
        this.rpc.respondError(requestId, REQUEST_CANCELLED, "request cancelled");
        this.emit("withdrawn", { requestId });
      }
    }
  }

  answerPermission(id, optionId) {
    if (!this.openRequests.delete(id)) return;
    this.rpc.respond(id, { outcome: optionId ? { outcome: "selected", optionId } : { outcome: "cancelled" } });
  }

  /** @param {{action: "accept" | "decline" | "cancel", content?: object}} result */
  answerElicitation(id, result) {
    if (!this.openRequests.delete(id)) return;
    this.rpc.respond(id, result);
  }

  newSession(cwd) {
    return this.rpc.request("session/new", { cwd, mcpServers: [] });
  }

  loadSession(sessionId, cwd) {
    return this.rpc.request("session/load", { sessionId, cwd, mcpServers: [] });
  }

  prompt(sessionId, text) {
    return this.rpc.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  }

  cancel(sessionId) {
    this.rpc.notify("session/cancel", { sessionId });
  }

  setConfigOption(sessionId, configId, value) {
    const params = { sessionId, configId, value };
    if (typeof value === "boolean") params.type = "boolean";
    return this.rpc.request("session/set_config_option", params);
  }

  setMode(sessionId, modeId) {
    return this.rpc.request("session/set_mode", { sessionId, modeId });
  }

  /** The agent advertised the quota RFD's `quota/read` (its `agentCapabilities.quota`). */
  get hasQuota() {
    const capabilities = this.agent && this.agent.agentCapabilities;
    return !!capabilities && typeof capabilities.quota === "object" && capabilities.quota !== null;
  }

  readQuota(sessionId) {
    return this.rpc.request("quota/read", { sessionId });
  }

  /** The project's files, read-only (the bridge's `_zcode/files/*`, docs/web-client.md "Files"). */
  listFiles(sessionId, path) {
    return this.rpc.request("_zcode/files/list", path ? { sessionId, path } : { sessionId });
  }

  readFile(sessionId, path) {
    return this.rpc.request("_zcode/files/read", { sessionId, path });
  }

  fileChanges(sessionId) {
    return this.rpc.request("_zcode/files/changes", { sessionId });
  }

  // ACP has no rename: the bridge's extension method (docs/protocol-mapping.md), answered {title}.
  renameSession(sessionId, title) {
    return this.rpc.request("_session/rename", { sessionId, title });
  }

  // The AIR set's archive (docs/protocol-mapping.md): the session leaves the lists, its history kept.
  archiveSession(sessionId) {
    return this.rpc.request("_session/archive", { sessionId });
  }

  // Final: the bridge forgets the session and the engine's is closed (or deleted, on v4).
  deleteSession(sessionId) {
    return this.rpc.request("session/delete", { sessionId });
  }
}
