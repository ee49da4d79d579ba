"""A web server for Cordon's tests: Python's own http.server, on 127.0.0.1, answering as each
path says, and writing down every request it receives (method, path, headers, body) as a line
of JSON in the file given with --log, before it answers.

    python3 web.py --log FILE [--port N]    prints the port it listens on, then serves

Paths:
    /echo                  200, the request as JSON
    /status/N              status N, body "status N"
    /redirect?to=URL&code=N  status N (302) with Location: URL
    /loop                  302 to itself
    /big?bytes=N           N bytes of "x"
    /slow?ms=N             waits N ms, then 200 "slow"
    /binary                bytes that are not UTF-8
    /leak?header=NAME      200, the value of the request's header NAME in the body and in a header
    anything else          200 "hello from PATH"
"""

import argparse
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # the log file is the record; stderr stays quiet
        pass

    def handle_one(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        record = {
            "method": self.command,
            "path": self.path,
            "headers": [[k.lower(), v] for k, v in self.headers.items()],
            "body": body,
        }
        with LOCK, open(self.server.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        path = url.path
        if path == "/echo":
            self.answer(200, json.dumps(record).encode())
        elif path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            self.answer(code, f"status {code}".encode())
        elif path == "/redirect":
            self.answer(int(query.get("code", "302")), b"moved", [("Location", query.get("to", "/"))])
        elif path == "/loop":
            self.answer(302, b"again", [("Location", "/loop")])
        elif path == "/big":
            self.answer(200, b"x" * int(query.get("bytes", "0")))
        elif path == "/slow":
            time.sleep(int(query.get("ms", "1000")) / 1000)
            self.answer(200, b"slow")
        elif path == "/binary":
            self.answer(200, b"\xff\xfe\x00\x81 not text")
        elif path == "/leak":
            value = self.headers.get(query.get("header", "authorization"), "")
            self.answer(200, f"you sent me: {value}".encode(), [("X-Echo", value)])
        else:
            self.answer(200, f"hello from {path}".encode())

    def answer(self, code, body, headers=()):
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_one


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.log_path = args.log
    print(server.server_address[1], flush=True)
    # Ends when the test that started it closes our standard input.
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
