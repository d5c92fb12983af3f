"""The bridge's runtime: pykka actors running as greenlets under gevent.

Import ``actors.runtime`` (which calls ``gevent.monkey.patch_all()``) before
anything else in an entry point; see ``actors/cli.py``.
"""
