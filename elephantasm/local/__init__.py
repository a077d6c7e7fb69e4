"""Local GGUF models through llama-cpp-python (the optional ``local`` extra): the engine adapter,
the snapshot store and model lookup. Importing this package never imports ``llama_cpp``."""
