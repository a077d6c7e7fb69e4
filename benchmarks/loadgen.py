"""A lean HTTP/1.1 load generator, run as its own process so the client does not steal the server's
interpreter (it still shares the machine's cores; its CPU time is reported beside the results).

It speaks just enough HTTP/1.1 over keep-alive asyncio streams: pre-encoded requests, status line,
``Content-Length`` or chunked bodies. That costs a few tens of microseconds per request, an order of
magnitude less than a general-purpose client, so the numbers describe the server.

Protocol: ``python -m benchmarks.loadgen`` reads one JSON :class:`Phase` spec on stdin and prints one
JSON result on stdout.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

COUNTER = "__N__"
"""Replaced in a body template by the request's sequence number (keeps every event distinct)."""


@dataclass
class Phase:
    """One measured run: ``requests`` requests spread over ``concurrency`` keep-alive connections.

    Connection ``i`` sends ``bodies[i % len(bodies)]`` (with :data:`COUNTER` substituted); no
    bodies means a GET. ``warmup`` requests per connection are sent first and not measured.
    """

    host: str
    port: int
    path: str
    requests: int
    concurrency: int
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    bodies: list[str] = field(default_factory=list)
    expect_status: int = 200
    warmup: int = 2


@dataclass
class PhaseResult:
    """Counts, wall time, per-request latencies (ms, sorted) and the load process's own CPU seconds."""

    requests: int
    errors: int
    elapsed_s: float
    latencies_ms: list[float]
    client_cpu_s: float
    first_error: str | None = None


def _encode(phase: Phase, body: str | None) -> bytes:
    lines = [f"{phase.method} {phase.path} HTTP/1.1", f"Host: {phase.host}:{phase.port}"]
    lines += [f"{k}: {v}" for k, v in phase.headers.items()]
    payload = body.encode("utf-8") if body is not None else b""
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                return status, bytes(body)
            body += chunk[:-2]
    raise RuntimeError(f"response without a length: {status_line}")


class _Run:
    def __init__(self, phase: Phase) -> None:
        self.phase = phase
        self.next_n = 0
        self.latencies: list[float] = []
        self.errors = 0
        self.first_error: str | None = None

    def _request(self, worker: int) -> bytes:
        n = self.next_n
        self.next_n += 1
        bodies = self.phase.bodies
        body = bodies[worker % len(bodies)].replace(COUNTER, str(n)) if bodies else None
        return _encode(self.phase, body)

    async def _one(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, worker: int
    ) -> tuple[float, int, bytes]:
        request = self._request(worker)
        started = time.perf_counter()
        writer.write(request)
        status, body = await _read_response(reader)
        return (time.perf_counter() - started) * 1000, status, body

    async def worker(self, worker: int, quota: int, go: asyncio.Event, ready: list[int]) -> None:
        reader, writer = await asyncio.open_connection(self.phase.host, self.phase.port)
        try:
            for _ in range(self.phase.warmup):
                await self._one(reader, writer, worker)
            ready.append(worker)
            await go.wait()
            for _ in range(quota):
                ms, status, body = await self._one(reader, writer, worker)
                self.latencies.append(ms)
                if status != self.phase.expect_status:
                    self.errors += 1
                    self.first_error = self.first_error or f"{status}: {body[:300]!r}"
        finally:
            writer.close()


async def run_phase(phase: Phase) -> PhaseResult:
    """Warm every connection up, then release them together and time the measured requests."""
    run = _Run(phase)
    go = asyncio.Event()
    ready: list[int] = []
    quotas = [
        phase.requests // phase.concurrency + (i < phase.requests % phase.concurrency) for i in range(phase.concurrency)
    ]
    tasks = [asyncio.create_task(run.worker(i, q, go, ready)) for i, q in enumerate(quotas)]
    while len(ready) < phase.concurrency:
        if any(t.done() for t in tasks):
            await asyncio.gather(*tasks)  # surfaces a connection error
        await asyncio.sleep(0.005)
    cpu_before = _cpu()
    started = time.perf_counter()
    go.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    return PhaseResult(
        requests=len(run.latencies),
        errors=run.errors,
        elapsed_s=elapsed,
        latencies_ms=sorted(run.latencies),
        client_cpu_s=_cpu() - cpu_before,
        first_error=run.first_error,
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """stdin: a Phase as JSON → stdout: a PhaseResult as JSON."""
    spec: dict[str, Any] = json.load(sys.stdin)
    result = asyncio.run(run_phase(Phase(**spec)))
    json.dump(asdict(result), sys.stdout)


if __name__ == "__main__":
    main()
