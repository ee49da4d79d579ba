"""A mock of the GitHub REST API endpoints Cordon's `github-rest` host uses, for its tests: the
simulated GitHub's data file as the state, Python's own http.server on 127.0.0.1, every request
written down (method, path, headers, body) as a line of JSON in the --log file before it answers.
Requests without `Authorization: Bearer TOKEN` are answered 401, as GitHub answers them.

    python3 github.py --data github.json --token TOKEN --log FILE    prints its port, then serves

Endpoints: GET /user; GET /repos/O/N; GET /user/repos?visibility=public|private;
GET /orgs/O/repos?type=internal (for a member; internal repositories are "private" with
"visibility": "internal", as GitHub answers them);
GET /repos/O/N/contents/PATH (with Accept: application/vnd.github.raw); GET /repos/O/N/issues
?state=all; GET /search/code?q=...; POST /repos/O/N/issues; POST /repos/O/N/issues/K/comments.
"""

import argparse
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def visibility(r):
    return "internal" if r.get("internal") else "private" if r["private"] else "public"


def repo_json(r):
    return {
        "name": r["name"],
        "full_name": f"{r['owner']}/{r['name']}",
        "owner": {"login": r["owner"]},
        "private": visibility(r) != "public",
        "visibility": visibility(r),
    }


def issue_json(i):
    return {
        "number": i["number"],
        "title": i["title"],
        "body": i["body"] or None,
        "user": {"login": i["author"]},
        "state": "open" if i["open"] else "closed",
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def handle_one(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        record = {"method": self.command, "path": self.path, "headers": [[k.lower(), v] for k, v in self.headers.items()], "body": body}
        with LOCK:
            with open(self.server.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
            if self.headers.get("Authorization") != f"Bearer {self.server.token}":
                return self.json(401, {"message": "Requires authentication"})
            self.route(urllib.parse.urlsplit(self.path), body)

    def visible(self, r):
        data = self.server.data
        if r.get("internal"):
            return any(o["name"] == r["owner"] and data["user"] in o["members"] for o in data.get("orgs", []))
        return not r["private"] or r["owner"] == data["user"]

    def find(self, owner, name):
        for r in self.server.data["repos"]:
            if r["owner"] == owner and r["name"] == name and self.visible(r):
                return r
        return None

    def route(self, url, body):
        data = self.server.data
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        query = dict(urllib.parse.parse_qsl(url.query))
        if self.command == "GET" and parts == ["user"]:
            return self.json(200, {"login": data["user"]})
        if self.command == "GET" and parts == ["user", "repos"]:
            want = query.get("visibility", "all")
            mine = [r for r in data["repos"] if r["owner"] == data["user"]]
            chosen = [r for r in mine if want == "all" or (want == "private") == r["private"]]
            return self.json(200, [repo_json(r) for r in chosen])
        if self.command == "GET" and len(parts) == 3 and parts[0] == "orgs" and parts[2] == "repos":
            want = query.get("type", "all")
            theirs = [r for r in data["repos"] if r["owner"] == parts[1] and self.visible(r)]
            chosen = [r for r in theirs if want == "all" or visibility(r) == want]
            return self.json(200, [repo_json(r) for r in chosen])
        if self.command == "GET" and parts == ["search", "code"]:
            q = query.get("q", "").lower().replace(f"user:{data['user']}", "").strip()
            items = []
            for r in data["repos"]:
                if r["owner"] != data["user"]:
                    continue
                for f in r.get("files", []):
                    hits = [line for line in f["content"].splitlines() if q and q in line.lower()]
                    if hits:
                        items.append({"path": f["path"], "repository": repo_json(r), "text_matches": [{"fragment": h} for h in hits]})
            return self.json(200, {"total_count": len(items), "items": items})
        if len(parts) >= 3 and parts[0] == "repos":
            r = self.find(parts[1], parts[2])
            if r is None:
                return self.json(404, {"message": "Not Found"})
            rest = parts[3:]
            if self.command == "GET" and rest == []:
                return self.json(200, repo_json(r))
            if self.command == "GET" and rest[:1] == ["contents"]:
                path = "/".join(rest[1:])
                for f in r.get("files", []):
                    if f["path"] == path:
                        return self.raw(200, f["content"])
                return self.json(404, {"message": "Not Found"})
            if self.command == "GET" and rest == ["issues"]:
                issues = sorted(r.get("issues", []), key=lambda i: i["number"])
                return self.json(200, [issue_json(i) for i in issues])
            if self.command == "POST" and rest == ["issues"]:
                fields = json.loads(body or "{}")
                number = 1 + max([i["number"] for i in r.get("issues", [])] or [0])
                issue = {"number": number, "title": fields.get("title", ""), "body": fields.get("body", ""), "author": data["user"], "open": True, "comments": []}
                r.setdefault("issues", []).append(issue)
                return self.json(201, issue_json(issue))
            if self.command == "POST" and len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments":
                for i in r.get("issues", []):
                    if str(i["number"]) == rest[1]:
                        i["comments"].append({"author": data["user"], "body": json.loads(body or "{}").get("body", "")})
                        return self.json(201, {"id": len(i["comments"])})
                return self.json(404, {"message": "Not Found"})
        return self.json(404, {"message": "Not Found"})

    def json(self, code, value):
        self.answer(code, json.dumps(value).encode(), "application/json; charset=utf-8")

    def raw(self, code, text):
        self.answer(code, text.encode(), "application/vnd.github.raw; charset=utf-8")

    def answer(self, code, body, content_type):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = handle_one


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.log_path = args.log
    server.token = args.token
    with open(args.data, encoding="utf-8") as f:
        server.data = json.load(f)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
