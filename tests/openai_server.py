"""A local HTTP server speaking the OpenAI chat-completions API, replaying scripted answers and faults.

The real `openai` client talks real HTTP to it. In tests: `FakeOpenAI(responder)` in a thread.
Standalone (e.g. on a GPU machine, to drive `harness run --base-url`):

    python -m tests.openai_server --port 8011 --solutions solutions/reference --broken-first-turn

answers each problem (found by its id in the first user message) with a kernel that does not compile
on turn 1 and with solutions/<id>.py on later turns.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Reply:
    """What the server does with one request."""

    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None        # sent as the body instead of a completion (malformed JSON, ...)
    delay_s: float = 0.0            # stall before answering
    drop: bool = False              # close the connection without answering
    tool_calls: list[tuple[str, dict]] = field(default_factory=list)  # (name, arguments): calls instead of an answer


Responder = Callable[[dict], "Reply | str"]


class FakeOpenAI:
    def __init__(self, responder: Responder, host: str = "127.0.0.1", port: int = 0, key: str | None = None,
                 models: tuple[str, ...] = ("scripted",)):
        self.responder = responder
        self.key, self.models = key, models  # key: GET /models answers 401 to any other Authorization
        self.received: list[dict] = []       # every request body, attempts included
        self.answered: list[dict] = []       # bodies of requests that got a completion
        self.authorization: list[str] = []   # Authorization headers seen
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with server.lock:
                    server.authorization.append(self.headers.get("Authorization", ""))
                if not self.path.endswith("/models"):
                    return self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                if server.key is not None and self.headers.get("Authorization") != f"Bearer {server.key}":
                    return self._send(401, json.dumps({"error": {"message": "invalid api key"}}).encode())
                data = [{"id": m, "object": "model", "owned_by": "tests"} for m in server.models]
                self._send(200, json.dumps({"object": "list", "data": data}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server.lock:
                    server.received.append(body)
                    server.authorization.append(self.headers.get("Authorization", ""))
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
                reply = server.responder(body)
                reply = Reply(content=reply) if isinstance(reply, str) else reply
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if reply.raw is not None:
                    return self._send(reply.status, reply.raw, reply.headers)
                if reply.status != 200:
                    payload = {"error": {"message": reply.content or f"scripted HTTP {reply.status}"}}
                    return self._send(reply.status, json.dumps(payload).encode(), reply.headers)
                prompt_tokens = len(json.dumps(body.get("messages", []))) // 4
                message: dict = {"role": "assistant", "content": reply.content}
                if reply.tool_calls:
                    message["tool_calls"] = [
                        {"id": f"call_{len(server.received)}_{i}", "type": "function",
                         "function": {"name": name, "arguments": json.dumps(arguments)}}
                        for i, (name, arguments) in enumerate(reply.tool_calls)]
                payload = {
                    "id": f"chatcmpl-{len(server.received)}", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if reply.tool_calls else reply.finish_reason}],
                    "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(reply.content) // 4 + 1,
                              "total_tokens": prompt_tokens + len(reply.content) // 4 + 1},
                }
                with server.lock:
                    server.answered.append(body)
                self._send(200, json.dumps(payload).encode(), reply.headers)

            def _send(self, status: int, data: bytes, headers: dict[str, str] | None = None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def problem_of(body: dict) -> str:
    """The problem id the harness names in its first user message ("Problem `cpu/relu`...")."""
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    match = re.search(r"Problem `([^`]+)`", first_user)
    return match.group(1) if match else ""


def turn_of(body: dict) -> int:
    return 1 + sum(m["role"] == "assistant" for m in body["messages"])


def fenced(source: str, prose: str = "Here is my solution.") -> str:
    return f"{prose}\n\n```python\n{source.rstrip()}\n```\n"


BROKEN = '''import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
torch::Tensor forward_impl(torch::Tensor x) {
    auto out = torch::empty_like(x)   // missing semicolon: a compile error
    return out;
}
"""
_ext = load_inline(name="broken_first_try", cpp_sources=SOURCE, functions=["forward_impl"])


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, *inputs):
        return _ext.forward_impl(inputs[0])
'''


def solutions_responder(solutions: Path, broken_first_turn: bool) -> Responder:
    def respond(body: dict) -> Reply | str:
        path = solutions / f"{problem_of(body)}.py"
        if broken_first_turn and turn_of(body) == 1:
            return fenced(BROKEN, "<think>A first draft.</think>Here is a first version.")
        if not path.is_file():
            return "I have no solution for this problem."
        return fenced(path.read_text(), "The build error was a missing semicolon; here is the fixed file.")
    return respond


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--solutions", type=Path, default=Path("solutions/reference"))
    parser.add_argument("--broken-first-turn", action="store_true")
    args = parser.parse_args()
    with FakeOpenAI(solutions_responder(args.solutions, args.broken_first_turn), args.host, args.port) as server:
        print(f"serving {server.base_url}", flush=True)
        try:
            server.thread.join()
        except KeyboardInterrupt:
            pass
        print(f"{len(server.received)} requests, {len(server.answered)} answered", flush=True)


if __name__ == "__main__":
    main()
