// The hub's HTTP API (docs/web-client.md, "What the hub serves") and the token,
// kept in this browser's localStorage.

const TOKEN_KEY = "zcode-acp.token";

export class Unauthorized extends Error {
  constructor(message) {
    super(message || "the hub refused the token");
  }
}

export function loadToken() {
  try { return localStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}

export function saveToken(token) {
  try { localStorage.setItem(TOKEN_KEY, token); } catch { /* private mode: kept for this page only */ }
}

export function forgetToken() {
  try { localStorage.removeItem(TOKEN_KEY); } catch { /* nothing stored */ }
}

async function call(token, method, path, body) {
  const response = await fetch(path, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  let payload = null;
  try { payload = await response.json(); } catch { /* not JSON: the status says enough */ }
  if (response.status === 401) throw new Unauthorized(payload && (payload.error || payload.message));
  if (!response.ok) {
    const detail = payload && (payload.error || payload.message);
    throw new Error(detail ? `${response.status}: ${detail}` : `the hub answered ${response.status}`);
  }
  return payload;
}

/** Every live bridge and its sessions (the hub answers a bare JSON array: docs/hub.md). */
export async function listInstances(token) {
  const payload = await call(token, "GET", "/api/instances");
  if (Array.isArray(payload)) return payload;
  return Array.isArray(payload && payload.instances) ? payload.instances : [];
}

/** Start a headless bridge for a project folder; answers the new instance. */
export function startInstance(token, cwd) {
  return call(token, "POST", "/api/instances", { cwd });
}

/** The token as a WebSocket subprotocol: base64url without padding, a valid HTTP token whatever it holds. */
export function tokenSubprotocol(token) {
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return "zcode-acp.token." + btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Where to open one instance's WebSocket. Browsers cannot set headers on a WebSocket, and a URL
 * is kept by proxies, tunnels and histories, so the token rides in the subprotocol list next to
 * "zcode-acp" (the hub answers with that one only): never in the URL (docs/security.md).
 */
export function acpUrl(instanceId, token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const query = new URLSearchParams({ instance: instanceId });
  return { url: `${scheme}//${location.host}/acp?${query}`, protocols: ["zcode-acp", tokenSubprotocol(token)] };
}
