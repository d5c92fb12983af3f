// The page's message catalog (issue 24): English and Chinese, one key per string a person reads.
// The language is the one chosen with the switch (remembered in localStorage), else the first of
// navigator.languages the page has (any zh-* is zh-CN), else English. Messages are plain text:
// they go into the page through textContent only (dom.js), never parsed as markup.

const STORAGE_KEY = "zcode-acp.lang";
export const LANGUAGES = Object.freeze(["en", "zh-CN"]);

const MESSAGES = {
  en: {
    "lang.switch": "中文",
    "lang.switch.label": "切换到中文",
    "list.token.label": "Access token",
    "list.token.hint": "The token the hub was started with. It stays in this browser.",
    "list.token.connect": "Connect",
    "list.open.label": "Open a project",
    "list.open.start": "Start",
    "list.open.session": "New session",
    "list.forget": "Forget the token on this device",
    "list.refresh": "Refresh",
    "list.no_bridge": "No bridge is running. Open a project below, or start ZCode in your editor.",
    "list.origin.editor": "editor",
    "list.origin.service": "service",
    "list.untitled": "Untitled session",
    "list.no_sessions": "No sessions yet.",
    "list.new_session": "+ New session",
    "app.start_failed": "Could not start a bridge there: {message}",
    "app.wrong_token": "Wrong token: the hub said no. Check it and try again.",
    "app.unreachable": "The hub cannot be reached: {message}",
    "app.bridge_gone": "That bridge is gone. Pick a session from the list.",
    "session.placeholder": "Message ZCode…",
    "session.prompt": "Prompt",
    "session.send": "Send",
    "session.stop": "Stop",
    "session.stop.label": "Cancel the running turn",
    "session.back": "Back to the list",
    "session.rename.label": "Rename the session",
    "session.rename.title": "Rename",
    "session.rename.input": "New title",
    "session.rename.save": "Save",
    "session.rename.cancel": "Cancel",
    "session.rename.failed": "Rename failed: {message}",
    "session.menu.label": "Archive or delete the session",
    "session.archive": "Archive",
    "session.delete": "Delete…",
    "session.delete.question": "Delete this session? Its history is gone for good.",
    "session.delete.confirm": "Delete",
    "session.delete.keep": "Keep it",
    "session.archive.failed": "Archive failed: {message}",
    "session.delete.failed": "Delete failed: {message}",
    "session.title": "Session",
    "session.new": "New session",
    "session.error": "error",
    "session.working": "working…",
    "session.cancelling": "cancelling…",
    "session.offline": "offline · retry in {seconds} s",
    "session.reconnected": "Reconnected. History reloaded.",
    "session.open_failed": "Could not open the session: {message}",
    "session.lost_during_turn": "Connection lost during the turn; it goes on at the bridge. Reconnecting…",
    "session.cancel_not_sent": "Not connected: the cancel was not sent.",
    "session.change_failed": "Could not change {what}: {message}",
    "session.plan": "Plan {done}/{total}",
    "session.last_turn": "last turn: {input} in · {output} out",
    "session.state.connecting": "connecting…",
    "session.state.loading": "loading…",
    "session.state.live": "live",
    "session.state.closed": "closed",
    "session.usage.title": "context: {used} of {size} tokens",
    "files.open": "Project files",
    "files.title": "Project files (read-only)",
    "files.close": "Close the files",
    "files.tab.files": "Files",
    "files.tab.changes": "Changes",
    "files.loading": "loading…",
    "files.back": "‹ Folder",
    "files.truncated": "Only the first part is shown.",
    "files.unopenable": "Not opened here: outside the project or not a regular file",
    "files.changes.title": "Changes in the working tree",
    "files.changes.no_git": "This folder is not in a git repository.",
    "files.changes.none": "No changes.",
    "files.changes.untracked": "Untracked files",
    "quota.summary": "{label} · {window}: {percent}%",
    "quota.used": "{percent}% used",
    "quota.resets": "resets {time}",
    "stop.cancelled": "Cancelled.",
    "stop.max_tokens": "Stopped: the answer reached its token limit.",
    "stop.max_turn_requests": "Stopped: too many model requests in one turn.",
    "stop.refusal": "The agent refused to continue.",
    "config.mode": "Mode",
    "dialog.permission.label": "Permission request",
    "dialog.permission.kicker": "Permission needed",
    "dialog.permission.title": "The agent asks for permission",
    "dialog.form.label": "Question from the agent",
    "dialog.form.kicker": "Question",
    "dialog.submit": "Submit",
    "dialog.decline": "Decline",
    "dialog.needs_answer": "“{title}” needs an answer.",
    "dialog.pick_at_least": "Pick at least {count} for “{title}”.",
    "dialog.pick_at_most": "Pick at most {count} for “{title}”.",
    "dialog.whole_number": "“{title}” must be a whole number.",
    "dialog.number": "“{title}” must be a number.",
    "dialog.at_least": "“{title}” must be at least {value}.",
    "dialog.at_most": "“{title}” must be at most {value}.",
    "dialog.min_length": "“{title}” needs at least {count} characters.",
    "dialog.pattern": "“{title}” does not have the expected form.",
    "dialog.unsupported": "(“{title}”: a field type this page cannot show)",
    "dialog.cannot_answer": "“{title}” cannot be answered here.",
    "transcript.thinking": "Thinking",
    "tool.title": "Tool",
    "tool.new_file": "new file",
    "tool.status.pending": "pending",
    "tool.status.in_progress": "running",
    "tool.status.completed": "done",
    "tool.status.failed": "failed",
    "tool.badge.background": "background",
    "diff.unchanged.one": "{count} unchanged line",
    "diff.unchanged.many": "{count} unchanged lines",
    "time.just_now": "just now",
    "time.minutes_ago": "{minutes} min ago",
  },
  "zh-CN": {
    "lang.switch": "English",
    "lang.switch.label": "Switch to English",
    "list.token.label": "访问令牌",
    "list.token.hint": "启动 hub 时使用的令牌，只保存在这个浏览器里。",
    "list.token.connect": "连接",
    "list.open.label": "打开项目",
    "list.open.start": "启动",
    "list.open.session": "新会话",
    "list.forget": "在这台设备上忘记令牌",
    "list.refresh": "刷新",
    "list.no_bridge": "当前没有运行中的桥接。可以在下面打开一个项目，或者在编辑器里启动 ZCode。",
    "list.origin.editor": "编辑器",
    "list.origin.service": "服务",
    "list.untitled": "未命名会话",
    "list.no_sessions": "还没有会话。",
    "list.new_session": "+ 新建会话",
    "app.start_failed": "无法在该目录启动桥接：{message}",
    "app.wrong_token": "令牌不正确，hub 拒绝了连接。请检查后重试。",
    "app.unreachable": "无法连接到 hub：{message}",
    "app.bridge_gone": "该桥接已经不在了，请从列表中选择一个会话。",
    "session.placeholder": "给 ZCode 发消息…",
    "session.prompt": "消息",
    "session.send": "发送",
    "session.stop": "停止",
    "session.stop.label": "取消正在进行的这一轮",
    "session.back": "返回列表",
    "session.rename.label": "重命名会话",
    "session.rename.title": "重命名",
    "session.rename.input": "新标题",
    "session.rename.save": "保存",
    "session.rename.cancel": "取消",
    "session.rename.failed": "重命名失败：{message}",
    "session.menu.label": "归档或删除会话",
    "session.archive": "归档",
    "session.delete": "删除…",
    "session.delete.question": "删除这个会话？它的历史将永久消失。",
    "session.delete.confirm": "删除",
    "session.delete.keep": "保留",
    "session.archive.failed": "归档失败：{message}",
    "session.delete.failed": "删除失败：{message}",
    "session.title": "会话",
    "session.new": "新会话",
    "session.error": "出错",
    "session.working": "处理中…",
    "session.cancelling": "正在取消…",
    "session.offline": "已离线 · {seconds} 秒后重试",
    "session.reconnected": "已重新连接，历史记录已重新加载。",
    "session.open_failed": "无法打开会话：{message}",
    "session.lost_during_turn": "这一轮进行中连接断开了；它会在桥接那边继续运行。正在重新连接…",
    "session.cancel_not_sent": "未连接：取消请求没有发出。",
    "session.change_failed": "无法修改{what}：{message}",
    "session.plan": "计划 {done}/{total}",
    "session.last_turn": "上一轮：输入 {input} · 输出 {output}",
    "session.state.connecting": "连接中…",
    "session.state.loading": "加载中…",
    "session.state.live": "已连接",
    "session.state.closed": "已关闭",
    "session.usage.title": "上下文：已用 {used} / 共 {size} 个 token",
    "files.open": "项目文件",
    "files.title": "项目文件（只读）",
    "files.close": "关闭文件",
    "files.tab.files": "文件",
    "files.tab.changes": "改动",
    "files.loading": "加载中…",
    "files.back": "‹ 文件夹",
    "files.truncated": "只显示了前一部分。",
    "files.unopenable": "不在此打开：位于项目之外或不是普通文件",
    "files.changes.title": "工作区中的改动",
    "files.changes.no_git": "此文件夹不在 git 仓库中。",
    "files.changes.none": "没有改动。",
    "files.changes.untracked": "未跟踪的文件",
    "quota.summary": "{label} · {window}已用 {percent}%",
    "quota.used": "已用 {percent}%",
    "quota.resets": "{time} 重置",
    "stop.cancelled": "已取消。",
    "stop.max_tokens": "已停止：回答达到了 token 上限。",
    "stop.max_turn_requests": "已停止：这一轮的模型请求次数过多。",
    "stop.refusal": "智能体拒绝继续。",
    "config.mode": "模式",
    "dialog.permission.label": "权限请求",
    "dialog.permission.kicker": "需要授权",
    "dialog.permission.title": "智能体请求授权",
    "dialog.form.label": "智能体的提问",
    "dialog.form.kicker": "提问",
    "dialog.submit": "提交",
    "dialog.decline": "拒绝",
    "dialog.needs_answer": "“{title}”需要回答。",
    "dialog.pick_at_least": "“{title}”至少要选 {count} 项。",
    "dialog.pick_at_most": "“{title}”最多只能选 {count} 项。",
    "dialog.whole_number": "“{title}”必须是整数。",
    "dialog.number": "“{title}”必须是数字。",
    "dialog.at_least": "“{title}”不能小于 {value}。",
    "dialog.at_most": "“{title}”不能大于 {value}。",
    "dialog.min_length": "“{title}”至少需要 {count} 个字符。",
    "dialog.pattern": "“{title}”的格式不符合要求。",
    "dialog.unsupported": "（“{title}”：这个页面无法显示该类型的字段）",
    "dialog.cannot_answer": "“{title}”无法在这里回答。",
    "transcript.thinking": "思考过程",
    "tool.title": "工具",
    "tool.new_file": "新文件",
    "tool.status.pending": "等待中",
    "tool.status.in_progress": "运行中",
    "tool.status.completed": "完成",
    "tool.status.failed": "失败",
    "tool.badge.background": "后台",
    "diff.unchanged.one": "{count} 行未改动",
    "diff.unchanged.many": "{count} 行未改动",
    "time.just_now": "刚刚",
    "time.minutes_ago": "{minutes} 分钟前",
  },
};

/** ``zh``, ``zh-TW``, ``zh-Hans-CN`` → ``zh-CN``; ``en-GB`` → ``en``; anything else → null. */
export function normalize(tag) {
  const base = String(tag || "").toLowerCase().split("-")[0];
  if (base === "zh") return "zh-CN";
  if (base === "en") return "en";
  return null;
}

function stored() {
  try { return normalize(localStorage.getItem(STORAGE_KEY)); } catch { return null; }
}

/** The page's language: the remembered choice, else the browser's first that the page has, else English. */
export function language() {
  const chosen = stored();
  if (chosen) return chosen;
  for (const tag of navigator.languages || [navigator.language]) {
    const found = normalize(tag);
    if (found) return found;
  }
  return "en";
}

let current = language();

/** The message ``key`` with ``{name}`` placeholders filled in (English when the language lacks it). */
export function t(key, params = {}) {
  const template = MESSAGES[current]?.[key] ?? MESSAGES.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

/** Remember a language and show the page in it (a reload: every view is built again in that language). */
export function setLanguage(lang) {
  const chosen = normalize(lang) || "en";
  try { localStorage.setItem(STORAGE_KEY, chosen); } catch { /* private mode: this visit only */ }
  current = chosen;
  document.documentElement.lang = chosen;
  location.reload();
}

/** The other language, for the switch. */
export function otherLanguage() {
  return current === "zh-CN" ? "en" : "zh-CN";
}

export function currentLanguage() {
  return current;
}

/** Every key of every language, for the test that none is missing. */
export const CATALOG = MESSAGES;

document.documentElement.lang = current;
