"""A local stand-in for the Anthropic and OpenAI APIs, scripted per test.

`FakeLLMServer` runs a `ThreadingHTTPServer` on 127.0.0.1 (ephemeral port) in a background
thread. Tests queue provider-neutral `Reply`s (optionally per model name, or through a
`responder` callable); each request takes the next one and gets it in the wire format and
streaming mode it asked for. Every request is recorded in `requests`.
"""

from __future__ import annotations

import json
import socket
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakellm import wire
from tests.fakellm.script import RecordedRequest, Reply

Responder = Callable[[RecordedRequest], "Reply | None"]


class FakeLLMServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str | None, deque[Reply]] = {None: deque()}
        self._served = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._numbers = 0
        self.requests: list[RecordedRequest] = []
        self.responder: Responder | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "the fake LLM server is not running"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    # -- scripting ------------------------------------------------------------------------
    def queue(self, *replies: Reply, model: str | None = None) -> FakeLLMServer:
        """Append replies; with `model`, only requests for that model take them (before the shared queue)."""
        with self._lock:
            self._queues.setdefault(model, deque()).extend(replies)
        return self

    def pending(self, model: str | None = None) -> int:
        with self._lock:
            return len(self._queues.get(model, ()))

    def reset(self) -> None:
        with self._lock:
            for q in self._queues.values():
                q.clear()
            self.requests.clear()
            self.responder = None

    def requests_for(self, model: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.model == model]

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            assert self.requests, "the fake LLM server has received no request"
            return self.requests[-1]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least `count` requests arrived (for tests driving the app from another thread)."""
        with self._served:
            if not self._served.wait_for(lambda: len(self.requests) >= count, timeout=timeout):
                raise TimeoutError(f"expected {count} requests, the fake LLM server got {len(self.requests)}")
            return list(self.requests)

    def env(self, *, provider: str = "anthropic", planning_model: str = "planner",
            coding_model: str = "coder", api_key: str = "test-key") -> dict[str, str]:
        """ANTON_* variables that point the app at this server."""
        variables = {
            "ANTON_PLANNING_PROVIDER": provider, "ANTON_PLANNING_MODEL": planning_model,
            "ANTON_CODING_PROVIDER": provider, "ANTON_CODING_MODEL": coding_model,
        }
        if provider == "anthropic":
            variables.update(ANTON_ANTHROPIC_API_KEY=api_key, ANTON_ANTHROPIC_BASE_URL=self.anthropic_base_url)
        else:
            variables.update(ANTON_OPENAI_API_KEY=api_key, ANTON_OPENAI_BASE_URL=self.openai_base_url)
        return variables

    def llm_client(self, *, provider: str = "anthropic", planning_model: str = "planner",
                   coding_model: str = "coder", max_tokens: int = 1024, api_key: str | None = "test-key") -> Any:
        """An `LLMClient` wired to this server, with retries that wait milliseconds instead of seconds."""
        from anton_tui.llm.anthropic_provider import AnthropicProvider
        from anton_tui.llm.client import LLMClient, ModelRole
        from anton_tui.llm.openai_provider import OpenAIProvider

        retry = fast_retry_policy()
        if provider == "anthropic":
            backend: Any = AnthropicProvider(api_key=api_key, base_url=self.anthropic_base_url, retry=retry, timeout=10)
        else:
            backend = OpenAIProvider(api_key=api_key, base_url=self.openai_base_url, retry=retry, timeout=10)
        return LLMClient(ModelRole(backend, planning_model, max_tokens), ModelRole(backend, coding_model, max_tokens))

    # -- used by the handler --------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> int:
        with self._served:
            self.requests.append(request)
            self._numbers += 1
            self._served.notify_all()
            return self._numbers

    def _next_reply(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            for key in (request.model, None):
                q = self._queues.get(key)
                if q:
                    return q.popleft()
            responder = self.responder
        return responder(request) if responder is not None else None

    def _sleep(self, seconds: float) -> bool:
        """Wait, unless the server is stopping; returns False when it is."""
        return not self._stopping.wait(seconds) if seconds > 0 else not self._stopping.is_set()


def fast_retry_policy() -> Any:
    """Retries that wait milliseconds, so failure tests stay fast."""
    from anton_tui.llm.provider import RetryPolicy

    return RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.05)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, OSError)):
            return  # clients hang up on purpose (cancelled turns, dropped streams)
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            models = sorted({m for m in self.fake._queues if m} | {"fake-model"})
            self._send_json(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]})
        else:
            self._send_json(404, {"error": {"message": f"no route for GET {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        self._current: RecordedRequest | None = None
        try:
            self._handle_post()
        except (ConnectionError, TimeoutError):
            self.close_connection = True
            if self._current is not None:
                self._current.outcome = "client hung up"
        except Exception as exc:  # a bug in the fake itself: say so instead of hanging up
            detail = "".join(traceback.format_exception_only(exc)).strip()
            self._send_json(500, {"error": {"type": "api_error", "message": f"fake LLM server crashed: {detail}"}},
                            {"x-should-retry": "false"})
            traceback.print_exc()

    def _handle_post(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        api = "unknown"
        if path.endswith("/messages"):
            api = "anthropic"
        elif path.endswith("/chat/completions"):
            api = "openai"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
            problem: str | None = f"the request body is not valid JSON: {exc}"
        else:
            problem = None
        request = RecordedRequest(api, path, body if isinstance(body, dict) else {"_body": body},
                                  {k.lower(): v for k, v in self.headers.items()})
        self._current = request
        number = self.fake._record(request)
        if api == "unknown":
            request.rejected, request.outcome = f"no route for POST {path}", "rejected"
            return self._send_json(404, {"error": {"message": request.rejected, "type": "not_found_error"}})
        problem = problem or (wire.validate_anthropic if api == "anthropic" else wire.validate_openai)(request.body)
        if problem:
            request.rejected, request.outcome = f"invalid request: {problem}", "rejected"
            return self._send_error(api, Reply(status=400, error_message=f"fake LLM: {request.rejected}",
                                               headers={"x-should-retry": "false"}))
        reply = self.fake._next_reply(request)
        if reply is None:
            request.outcome = "rejected"
            request.rejected = (f"fake LLM script ran out: no reply queued for model {request.model!r} "
                                f"(request #{number} to {path}); queue one with fake_llm.queue(Reply...)")
            return self._send_error(api, Reply(status=500, error_message=request.rejected,
                                               error_type="api_error", headers={"x-should-retry": "false"}))
        request.reply = reply
        if not self.fake._sleep(reply.delay):
            return self._hang_up()
        if reply.is_error:
            self._send_error(api, reply)
            request.outcome = "error"
        elif request.stream:
            events = (wire.anthropic_stream if api == "anthropic" else wire.openai_stream)(reply, request.body, number)
            request.outcome = "answered" if self._send_stream(events, reply) else "dropped"
        else:
            answer = wire.anthropic_message if api == "anthropic" else wire.openai_completion
            payload = answer(reply, request.body, number)
            self._send_json(200, payload, cut=reply.drop_after is not None)
            request.outcome = "dropped" if reply.drop_after is not None else "answered"

    # -- responses ------------------------------------------------------------------------
    def _send_error(self, api: str, reply: Reply) -> None:
        make = wire.anthropic_error if api == "anthropic" else wire.openai_error
        self._send_json(reply.status, make(reply.status, reply.error_message, reply.error_type), reply.headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None, cut: bool = False) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if cut:
            self.wfile.write(data[: len(data) // 2])
            return self._hang_up()
        self.wfile.write(data)

    def _send_stream(self, events: Iterable[wire.Event], reply: Reply) -> bool:
        """Stream the events; False when the script said to drop the connection part-way."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        sent_content = 0
        for data, is_content in events:
            if reply.drop_after is not None and is_content and sent_content >= reply.drop_after:
                self._hang_up()
                return False
            if is_content and sent_content and not self.fake._sleep(reply.chunk_delay):
                self._hang_up()  # the server is shutting down
                return False
            self._write_chunk(data)
            sent_content += is_content
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _hang_up(self) -> None:
        """Cut the connection without finishing the body, as a dropped network would."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

