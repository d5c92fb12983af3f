"""Giving memory back to the system: every piece of it in one place (docs/architecture.md, Layout).

``allocator`` fixes glibc's mmap threshold at start and trims the heap; ``quiet_release``
runs a full collection and a trim once a burst of work is over. The collector's own tuning
at start (``cli/runtime.tune_gc``) stays with the start-up it belongs to.
"""
