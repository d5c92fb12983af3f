"""The bridge's runtime: pykka actors running as greenlets under gevent.

Import ``cli.runtime`` (which patches the standard library for gevent)
before anything else in an entry point; see ``cli/main.py``.
"""
