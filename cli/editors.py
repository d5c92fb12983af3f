"""Ready-to-paste editor configurations for launching this bridge.

``zcode-acp doctor`` prints them with the absolute path of the running
install; docs/editors.md shows the same text with an example path (a test
keeps the two in step). Every editor launches the same thing: the command,
no arguments, ACP on stdio.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass

from zcode_acp.protocol.i18n import EN, t


@dataclass(frozen=True)
class Launch:
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def argv(self) -> list[str]:
        return [self.command, *self.args]


def this_install() -> Launch:
    """How an editor starts the bridge of the running interpreter (absolute path)."""
    script = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "zcode-acp")
    if os.path.exists(script):
        return Launch(script)
    return Launch(os.path.abspath(sys.executable), ("-m", "zcode_acp"))


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid Lua string literal


def _lua_list(items: list[str]) -> str:
    return "{ " + ", ".join(_lua_string(item) for item in items) + " }"


def _lua_env(env: tuple[tuple[str, str], ...]) -> str:
    return "{ " + ", ".join(f"{name} = {_lua_string(value)}" for name, value in env) + " }"


def _elisp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def zed(launch: Launch) -> str:
    entry = {"type": "custom", "command": launch.command, "args": list(launch.args), "env": dict(launch.env)}
    return json.dumps({"agent_servers": {"ZCode": entry}}, indent=2)


def jetbrains(launch: Launch) -> str:
    entry = {"command": launch.command, "args": list(launch.args), "env": dict(launch.env)}
    return json.dumps({"agent_servers": {"ZCode": entry}}, indent=2)


def codecompanion(launch: Launch) -> str:
    return "\n".join([
        'require("codecompanion").setup({',
        "  adapters = {",
        "    acp = {",
        "      zcode = function()",
        '        return require("codecompanion.adapters").extend("gemini_cli", {',
        '          name = "zcode",',
        '          formatted_name = "ZCode",',
        f"          commands = {{ default = {_lua_list(launch.argv())} }},",
        '          defaults = { auth_method = "zcode-credentials", mcpServers = {}, timeout = 20000 },',
        f"          env = {_lua_env(launch.env)},",
        "        })",
        "      end,",
        "    },",
        "  },",
        '  interactions = { chat = { adapter = "zcode" } },',
        "})",
    ])


def avante(launch: Launch) -> str:
    return "\n".join([
        'require("avante").setup({',
        '  provider = "zcode",',
        "  acp_providers = {",
        '    ["zcode"] = {',
        f"      command = {_lua_string(launch.command)},",
        f"      args = {_lua_list(list(launch.args))},",
        f"      env = {_lua_env(launch.env)},",
        '      auth_method = "zcode-credentials",',
        "    },",
        "  },",
        "})",
    ])


def agent_shell(launch: Launch) -> str:
    params = " ".join(_elisp_string(arg) for arg in launch.args)
    env = " ".join(f"{_elisp_string(name)} {_elisp_string(value)}" for name, value in launch.env)
    return "\n".join([
        "(require 'agent-shell)",
        "",
        "(defun zcode-agent-config ()",
        "  (agent-shell-make-agent-config",
        "   :identifier 'zcode",
        '   :mode-line-name "ZCode"',
        '   :buffer-name "ZCode"',
        '   :shell-prompt "ZCode> "',
        '   :shell-prompt-regexp "ZCode> "',
        "   :client-maker (lambda (buffer)",
        "                   (agent-shell--make-acp-client",
        f"                    :command {_elisp_string(launch.command)}",
        f"                    :command-params '({params})",
        "                    :environment-variables (agent-shell-make-environment-variables",
        f"                                            {env}{' ' if env else ''}:inherit-env t)",
        "                    :context-buffer buffer))))",
        "",
        "(defun zcode ()",
        '  "Start a ZCode shell."',
        "  (interactive)",
        "  (agent-shell-start :config (zcode-agent-config)))",
    ])


def acpx(launch: Launch) -> str:
    env = "".join(f"{name}={value} " for name, value in launch.env)
    command = f"env {env}{' '.join(launch.argv())}" if env else " ".join(launch.argv())
    return json.dumps({"agents": {"zcode": {"command": command}}}, indent=2)


def acpx_commands(launch: Launch, lang: str = EN) -> str:
    """The acpx commands to use the bridge (acpx 0.19), each under a comment saying what it does
    (in ``lang``: doctor's; docs/editors.md shows the English).

    ``tests/clients/test_acpx.py`` runs every command, in order, in a project folder.
    """
    env = "".join(f"{name}={value} " for name, value in launch.env)
    agent = shlex.quote(f"env {env}{' '.join(launch.argv())}" if env else " ".join(launch.argv()))
    prompt = shlex.quote(t(lang, "editors.acpx.prompt"))
    steps = [
        ("editors.acpx.exec", f"acpx zcode exec {prompt}"),
        ("editors.acpx.kept", "acpx zcode sessions new"),
        (None, f"acpx zcode {prompt}"),
        ("editors.acpx.close", "acpx zcode sessions close"),
        ("editors.acpx.approve_all", f"acpx --approve-all zcode exec {prompt}"),
        ("editors.acpx.no_config", f"acpx --agent {agent} exec {prompt}"),
    ]
    return "\n".join((f"# {t(lang, comment)}\n" if comment else "") + command for comment, command in steps)


# (title: the editor's own name, where it goes: a catalog key, language of the block, renderer)
EDITORS = (
    ("Zed", "editors.where.zed", "json", zed),
    ("JetBrains IDEs", "editors.where.jetbrains", "json", jetbrains),
    ("Neovim: CodeCompanion", "editors.where.codecompanion", "lua", codecompanion),
    ("Neovim: avante.nvim", "editors.where.avante", "lua", avante),
    ("Emacs: agent-shell", "editors.where.agent_shell", "elisp", agent_shell),
    ("acpx", "editors.where.acpx", "json", acpx),
)


def render_all(launch: Launch, lang: str = EN) -> list[tuple[str, str, str, str]]:
    """``(title, where, language, text)`` for every editor (``where`` in ``lang``)."""
    return [(title, t(lang, where), language, render(launch)) for title, where, language, render in EDITORS]
