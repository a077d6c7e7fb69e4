"""Pure pieces of model-level memory (DESIGN §9): snapshot keys and file format, memory-package
manifests and signatures, quality-certificate arithmetic, token-range maps of pack items."""
