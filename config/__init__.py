"""The bridge's settings: every environment variable it reads (``settings``) and the remote-access
file (``remote``). The runtime, the hub and the command line all read them; this package imports
only ``protocol``, so nothing below the command line depends on it (docs/architecture.md, "Layers")."""
