"""Test-wide setup: gevent patching first, exactly as the entry points do."""

from gevent import monkey

monkey.patch_all()
