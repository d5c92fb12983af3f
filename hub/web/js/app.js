// Entry point: routing between the list and an open session, keyed by the URL
// hash (#/, #/s/<instance>/<session>, #/new/<instance>) so a phone's back button
// and a reload both work. Overview: docs/web-client.md.

import { ListView } from "./list-view.js";
import { t } from "./i18n.js";
import { SessionView } from "./session-view.js";
import { listInstances, startInstance, loadToken, saveToken, forgetToken, Unauthorized } from "./hub-api.js";

const LIST_REFRESH_MS = 10_000;
const root = document.getElementById("app");
let token = loadToken();
let instances = [];
let current = null; // the SessionView on screen, if any
let refreshTimer = 0;
const gone = new Set(); // sessions archived or deleted from this page

const list = new ListView({
  onToken: (value) => { token = value; saveToken(value); refreshList(); },
  onForget: () => { forgetToken(); token = ""; list.tokenInput.value = ""; list.showTokenForm(); },
  onRefresh: () => refreshList(),
  onOpen: (instance, sessionId) => navigate(`#/s/${encodeURIComponent(instance.id)}/${encodeURIComponent(sessionId)}`),
  onNew: (instance) => navigate(`#/new/${encodeURIComponent(instance.id)}`),
  onStartSession: async (cwd) => {
    try {
      const started = await startInstance(token, cwd);
      instances = await listInstances(token);
      navigate(`#/new/${encodeURIComponent(started.id)}`); // session/new with the folder's cwd
      return true;
    } catch (error) {
      if (error instanceof Unauthorized) list.showTokenForm(error.message);
      else list.showMessage(t("app.start_failed", { message: error.message }));
      return false;
    }
  },
  onStart: async (cwd) => {
    try {
      await startInstance(token, cwd);
      await refreshList();
      return true;
    } catch (error) {
      if (error instanceof Unauthorized) list.showTokenForm(error.message);
      else list.showMessage(t("app.start_failed", { message: error.message }));
      return false;
    }
  },
});

list.gone = gone;

function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

function show(el) {
  root.replaceChildren(el);
}

async function refreshList() {
  clearTimeout(refreshTimer);
  if (!token) { list.showTokenForm(); return; }
  try {
    instances = await listInstances(token);
    list.showInstances(instances);
  } catch (error) {
    if (error instanceof Unauthorized) { list.showTokenForm(t("app.wrong_token")); return; }
    list.showMessage(t("app.unreachable", { message: error.message }));
  }
  if (!current && !document.hidden) refreshTimer = setTimeout(refreshList, LIST_REFRESH_MS);
}

/** Where a session lives now: the same instance if it is still there, else whichever lists the session or shares the folder. */
async function findInstance(attempt, sessionId, previous) {
  instances = await listInstances(token);
  return instances.find((i) => i.id === previous.id)
    || instances.find((i) => sessionId && (i.sessions || []).some((s) => s.sessionId === sessionId))
    || instances.find((i) => i.workspace === previous.workspace)
    || previous;
}

async function openSession(instanceId, sessionId) {
  let instance = instances.find((i) => i.id === instanceId);
  if (!instance) {
    try {
      instances = await listInstances(token);
    } catch (error) {
      if (error instanceof Unauthorized) { navigate("#/"); return; }
    }
    instance = instances.find((i) => i.id === instanceId)
      || instances.find((i) => sessionId && (i.sessions || []).some((s) => s.sessionId === sessionId));
  }
  if (!instance) {
    list.showMessage(t("app.bridge_gone"));
    navigate("#/");
    return;
  }
  current = new SessionView({
    instance, sessionId, token, findInstance,
    onBack: () => navigate("#/"),
    onUnauthorized: () => navigate("#/"), // the list asks for the token again
    // A new session gets its id from the bridge: the URL follows without a new view.
    onSessionId: (inst, id) => history.replaceState(null, "", `#/s/${encodeURIComponent(inst.id)}/${encodeURIComponent(id)}`),
    // Archived or deleted: the hub lists it until the bridge's next heartbeat (10 s), the page no more.
    onRemoved: (inst, id) => { gone.add(id); navigate("#/"); },
  });
  show(current.el);
  current.start();
}

function route() {
  if (current) { current.destroy(); current = null; }
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (token && parts[0] === "s" && parts[1] && parts[2]) { openSession(parts[1], parts[2]); return; }
  if (token && parts[0] === "new" && parts[1]) { openSession(parts[1], null); return; }
  show(list.el);
  refreshList();
}

window.addEventListener("hashchange", route);
document.addEventListener("visibilitychange", () => { if (!document.hidden && !current) refreshList(); });
route();
