"""A fake forge: a real HTTP server on 127.0.0.1 in a thread, serving recorded REST answers.

Routes map a request path (with its query) to a list of replies, served in turn (the last one repeats).
A reply with an `etag` answers 304 to a request that names it in If-None-Match.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    status: int


class FakeForge:
    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        forge = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                replies = forge.routes.get(self.path)
                if not replies:
                    reply = Reply({"message": "Not Found"}, 404)
                else:
                    reply = replies.pop(0) if len(replies) > 1 else replies[0]
                status = reply.status
                if reply.etag and self.headers.get("If-None-Match") == reply.etag:
                    status = 304
                forge.seen.append(Seen(self.path, dict(self.headers), status))
                data = b"" if status == 304 else json.dumps(reply.body).encode()
                self.send_response(status)
                for key, value in reply.headers.items():
                    self.send_header(key, value.replace("{root}", forge.url))
                if reply.etag:
                    self.send_header("ETag", reply.etag)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def route(self, path: str, *replies: Reply) -> None:
        self.routes[path] = list(replies)

    def __enter__(self) -> FakeForge:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def paths(self) -> list[str]:
        return [s.path for s in self.seen]
