"""agent.json (the ACP registry manifest) and the registry's auth check; docs/editors.md matches the code."""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import sys
from xml.etree import ElementTree

from jsonschema import Draft7Validator

import zcode_acp
from zcode_acp.cli import editors
from tests.cli.helpers import BIN, ROOT, ZCODE_ACP

MANIFEST = json.loads((ROOT / "agent.json").read_text())
# The registry's agent.schema.json, the parts that apply to a uvx entry.
REQUIRED = {"id", "name", "version", "description", "distribution"}
OPTIONAL = {"repository", "website", "authors", "license", "license_url", "icon"}
PACKAGE_KEYS = {"package", "args", "env"}


def setup_cfg() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def test_the_manifest_has_the_registry_shape():
    assert set(MANIFEST) >= REQUIRED and set(MANIFEST) <= REQUIRED | OPTIONAL
    assert re.fullmatch(r"[a-z][a-z0-9-]*", MANIFEST["id"])
    assert re.fullmatch(r"\d+\.\d+\.\d+", MANIFEST["version"])
    assert all(isinstance(MANIFEST[key], str) and MANIFEST[key] for key in ("name", "description"))
    assert set(MANIFEST["distribution"]) == {"uvx"}
    assert set(MANIFEST["distribution"]["uvx"]) <= PACKAGE_KEYS


REGISTRY_SCHEMA = json.loads((ROOT / "schemas" / "registry" / "agent.schema.json").read_text())
# Ids the registry already holds for other projects: "zcode-acp" is another ZCode adapter's.
TAKEN_IDS = {"zcode-acp"}


def registry_findings(manifest: dict) -> list[str]:
    validator = Draft7Validator(REGISTRY_SCHEMA, format_checker=Draft7Validator.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(manifest)]


def test_the_manifest_passes_the_registry_schema():
    assert registry_findings(MANIFEST) == []
    assert MANIFEST["id"] not in TAKEN_IDS
    assert MANIFEST["id"] == zcode_acp.DIST_NAME  # the entry's folder, named like what it installs


def test_the_registry_schema_refuses_what_the_registry_refuses():
    uvx = MANIFEST["distribution"]["uvx"]
    for broken in ({**MANIFEST, "id": "ZCode"}, {**MANIFEST, "version": "one"},
                   {**MANIFEST, "distribution": {"uvx": {**uvx, "cmd": "zcode-acp"}}},
                   {**MANIFEST, "distribution": {"pip": uvx}},
                   {key: value for key, value in MANIFEST.items() if key != "description"}):
        assert registry_findings(broken), broken


def test_the_icon_is_what_the_registry_accepts():
    """CONTRIBUTING.md's icon check: 16x16, square, monochrome (currentColor, none or inherit)."""
    svg = ElementTree.fromstring((ROOT / "icon.svg").read_text())
    assert svg.tag.endswith("svg")
    assert (svg.get("width"), svg.get("height"), svg.get("viewBox")) == ("16", "16", "0 0 16 16")
    for element in svg.iter():
        for attribute in ("fill", "stroke"):
            assert element.get(attribute) in (None, "currentColor", "none", "inherit"), element.attrib


def test_the_manifest_installs_this_version_of_this_distribution_and_its_command_exists():
    metadata = setup_cfg()["metadata"]
    assert MANIFEST["version"] == metadata["version"] == zcode_acp.version()
    assert MANIFEST["license"] == metadata["license"]
    assert MANIFEST["distribution"]["uvx"]["package"] == f"{zcode_acp.DIST_NAME}=={MANIFEST['version']}"
    assert metadata["name"] == zcode_acp.DIST_NAME
    # `uvx <package>` runs the command named like the distribution.
    scripts = setup_cfg()["options.entry_points"]["console_scripts"]
    assert f"{zcode_acp.DIST_NAME} = zcode_acp.cli.main:main" in scripts


REGISTRY_INITIALIZE = {
    "protocolVersion": 1,
    "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
    "clientCapabilities": {"terminal": True, "fs": {"readTextFile": True, "writeTextFile": True},
                           "_meta": {"terminal_output": True, "terminal-auth": True}},
}


def test_the_registry_auth_check_passes_with_an_empty_home_and_no_cli(tmp_path):
    """What the registry's verifier does: a bare environment, initialize, an auth method of type agent/terminal."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb"}
    alias = str(BIN / zcode_acp.DIST_NAME)
    proc = subprocess.Popen([alias], cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": REGISTRY_INITIALIZE}
        out, _ = proc.communicate((json.dumps(request) + "\n").encode(), timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    first = out.splitlines()[0]
    answer = json.loads(first)  # stdout carries JSON only
    methods = answer["result"]["authMethods"]
    kinds = [method.get("type") or "agent" for method in methods]  # no type means "agent" to the registry
    assert any(kind in ("agent", "terminal") for kind in kinds)
    # The answer is the schema's, and it names the version the manifest installs.
    from acp.schema import InitializeResponse

    InitializeResponse.model_validate(answer["result"])
    assert answer["result"]["agentInfo"]["version"] == MANIFEST["version"]
    assert answer["result"]["agentInfo"]["title"] == MANIFEST["name"]
    assert not (tmp_path / ".zcode").exists()  # initialize alone starts nothing and writes nothing


def test_docs_editors_shows_exactly_what_doctor_prints():
    text = (ROOT / "docs" / "editors.md").read_text()
    launch = editors.Launch("/home/you/zcode-acp/.venv/bin/zcode-acp", (), (("ZCODE_BIN", "zcode"),))
    for title, where, language, snippet in editors.render_all(launch):
        assert f"## {title}\n\nWhere: {where}.\n\n```{language}\n{snippet}\n```" in text, title
    # The acpx commands (doctor prints them too; tests/clients/test_acpx.py runs each one).
    assert f"```json\n{editors.acpx(launch)}\n```\n\n```sh\n{editors.acpx_commands(launch)}\n```" in text
    for _, _, language, snippet in editors.render_all(launch):
        if language == "json":
            json.loads(snippet)


def test_this_install_is_an_absolute_command():
    launch = editors.this_install()
    assert launch.command.startswith("/") and launch.command in (ZCODE_ACP, sys.executable)
