"""The ``elephantasm`` command line."""
