"""A gevent plugin in an unpacked egg on ``sys.path`` (``name.egg/EGG-INFO/entry_points.txt``).

``importlib.metadata`` (what gevent's own lookup uses) finds such a distribution, so
``runtime.plugins_declared`` must say it may be declared, or the plugin never sees the patches.
"""

from __future__ import annotations

import sys
import textwrap
from importlib import metadata

import pytest

from zcode_acp.cli.runtime import PLUGIN_GROUPS, plugins_declared
from tests.cli.helpers import clean_env, run


def unpacked_egg(folder, group: str):
    egg = folder / "probe_plugin-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "probe_plugin.py").write_text(textwrap.dedent("""
        import os
        def saw(event):
            with open(os.environ["PLUGIN_SAW"], "a") as out:
                out.write(type(event).__name__ + " " + event.module_name + "\\n")
    """))
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: probe-plugin\nVersion: 1.0\n")
    (egg / "EGG-INFO" / "entry_points.txt").write_text(f"[{group}]\nprobe = probe_plugin:saw\n")
    return egg


@pytest.mark.parametrize("group", PLUGIN_GROUPS)
def test_plugins_declared_sees_what_importlib_metadata_sees_in_an_unpacked_egg(tmp_path, monkeypatch, group):
    egg = unpacked_egg(tmp_path, group)
    monkeypatch.setattr(sys, "path", [str(egg)])
    assert [entry.name for entry in metadata.entry_points(group=group)] == ["probe"]  # gevent would call it
    assert plugins_declared()


def test_a_plugin_in_an_unpacked_egg_still_sees_the_patches(tmp_path):
    egg = unpacked_egg(tmp_path, PLUGIN_GROUPS[1])
    saw = tmp_path / "saw.txt"
    env = clean_env(tmp_path, PYTHONPATH=str(egg), PLUGIN_SAW=str(saw))
    done = run([sys.executable, "-c", "from zcode_acp.cli import runtime"], env)
    assert done.returncode == 0, done.stderr
    assert saw.exists(), "the plugin was never called"
