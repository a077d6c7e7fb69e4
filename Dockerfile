# Image for the API and dreamer processes (compose.yaml). Postgres runs in its own container.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY elephantasm ./elephantasm
COPY api ./api
COPY dreamer ./dreamer
COPY alembic ./alembic
# The SDK is its own distribution; the MCP server at /mcp calls the API through it.
COPY sdk ./sdk
RUN pip install --no-cache-dir . ./sdk
ENV ELEPHANTASM_HOST=0.0.0.0
EXPOSE 8000
CMD ["elephantasm", "serve", "--no-dreamer"]
