"""Pure, synchronous core: scoring, presets, packing, rendering, fingerprints, temporal context.

No I/O, no clock, no environment: every input (``as_of``, weights, token counter) is an argument.
"""
