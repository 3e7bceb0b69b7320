#!/usr/bin/env python3
"""A small REST server for CipherCaskSync's tests, on 127.0.0.1 only.

Resource /users (objects with an "id"), enveloped as {"result": ..., "next": ...}:
GET /users[?page=N] (2 per page), GET/PUT/DELETE /users/<id>, POST /users.
Every request needs "Authorization: Bearer test-token". ETags are "v<N>"; If-Match must
match when given (412 with the current object otherwise). POST of an existing id is a 409.
An Idempotency-Key seen before replays the first answer without applying the change again.
"X-Drop-Response: 1" applies the change and then closes the connection without answering.
Also: /log (the applied changes in order), /slow (answers after 60 s), /bad (malformed JSON),
/die (promises 1000 bytes, sends 10, closes), /status/<code>, POST /reset, and
PUT /admin/users/<id> (changes an object behind the client's back). For the cask tool's tests:
PUT /files/<name> keeps the body as it is and GET /files/<name> serves it (both need the
token), and /echo answers 400 with the request's headers (a server that echoes a token).
/redirect/<code>?to=<URL> answers <code> with Location: <URL> (no token needed); /seen lists
the Authorization header (or null) of every request before it, to show where a token went.
/token-error answers 401 naming the credential of the Authorization header (not the whole
value); /basic-error answers 401 naming the user and password of a Basic one, decoded. /pages/endless?page=N always has a next page, each with a new object; /pages/wrap?page=N
has three pages and then starts over (both with next links and page numbers; no token needed).
Prints "PORT <n>" once listening. With --until-stdin-closes it stops when its standard input
reaches end of file (the process that started it went away or let it go); otherwise it stops
by itself after 10 minutes.
"""
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE_LOCK = threading.Lock()
USERS = {}
VERSIONS = {}
LOG = []
SEEN = {}
FILES = {}
AUTHORIZATIONS = []
PAGE_SIZE = 2


def reset():
    USERS.clear()
    VERSIONS.clear()
    LOG.clear()
    SEEN.clear()
    FILES.clear()
    for index in range(1, 6):
        uid = "u%d" % index
        USERS[uid] = {"id": uid, "email": "%s@example.com" % uid, "first": "First%d" % index,
                      "last": "Last%d" % index,
                      "address": {"street": "%d Main St" % index, "city": "Springfield", "state": "IL",
                                  "zip": "6270%d" % index}}
        VERSIONS[uid] = 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: with Nagle's algorithm the body would wait for
    # the client's delayed ACK of the headers, about 40 ms per request on Linux.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, status, body=None, etag=None):
        data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(data)
        return status, data, etag

    def body(self):
        return json.loads(self.raw_body) if self.raw_body else None

    def authorized(self):
        if self.headers.get("Authorization") != "Bearer test-token":
            self.answer(401, {"error": "unauthorized"})
            return False
        return True

    def route(self, method):
        # Read the whole body first, whatever the answer: on a kept-alive connection an
        # unread body would be taken for the next request.
        length = int(self.headers.get("Content-Length") or 0)
        self.raw_body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        parts = [p for p in path.split("/") if p]
        if parts == ["seen"]:
            with STATE_LOCK:
                return self.answer(200, list(AUTHORIZATIONS))
        with STATE_LOCK:
            AUTHORIZATIONS.append(self.headers.get("Authorization"))
        if len(parts) == 2 and parts[0] == "redirect" and query.startswith("to="):
            self.send_response(int(parts[1]))
            self.send_header("Location", urllib.parse.unquote(query[3:]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if parts == ["reset"] and method == "POST":
            with STATE_LOCK:
                reset()
            return self.answer(204)
        if parts == ["log"]:
            with STATE_LOCK:
                return self.answer(200, list(LOG))
        if parts == ["slow"]:
            time.sleep(60)
            return self.answer(200, {"result": []})
        if parts == ["bad"]:
            return self.answer(200, b'{"result": [ {"id": ')
        if parts == ["die"]:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"result":')
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return None
        if len(parts) == 2 and parts[0] == "status":
            return self.answer(int(parts[1]), {"error": "status %s" % parts[1], "detail": "x" * 500})
        if parts == ["echo"]:
            return self.answer(400, {"headers": dict(self.headers.items())})
        if parts == ["basic-error"]:
            # A 401 that decodes "Authorization: Basic <base64>" and names the user and password.
            import base64
            encoded = (self.headers.get("Authorization") or "").partition(" ")[2]
            try:
                user, _, secret = base64.b64decode(encoded).decode("utf-8").partition(":")
            except Exception:
                user, secret = "", ""
            return self.answer(401, {"error": "user %s with password %s is not allowed" % (user, secret)})
        if parts == ["token-error"]:
            # Like many APIs' 401: names the credential of "Authorization: <scheme> <credential>".
            credential = (self.headers.get("Authorization") or "").partition(" ")[2]
            return self.answer(401, {"error": "the token %s has expired" % credential})
        if len(parts) == 2 and parts[0] == "pages" and method == "GET":
            # /pages/endless?page=N: a new object on every page and always a next page.
            # /pages/wrap?page=N: three pages of one object each; page 4 is page 1 again, ...
            page = 1
            for item in query.split("&"):
                if item.startswith("page="):
                    page = int(item[5:])
            number = page if parts[1] == "endless" else (page - 1) % 3 + 1
            user = {"id": "p%d" % number, "email": "p%d@example.com" % number, "first": "P", "last": "%d" % number}
            return self.answer(200, {"result": [user], "next": "/pages/%s?page=%d" % (parts[1], page + 1)})
        if not self.authorized():
            return None
        if len(parts) == 2 and parts[0] == "files" and method in ("PUT", "GET"):
            with STATE_LOCK:
                if method == "PUT":
                    FILES[parts[1]] = self.raw_body
                    return self.answer(204)
                data = FILES.get(parts[1])
            if data is None:
                return self.answer(404, {"error": "no such file"})
            return self.answer(200, data)
        if len(parts) == 3 and parts[:2] == ["admin", "users"] and method == "PUT":
            with STATE_LOCK:
                USERS[parts[2]] = self.body()
                VERSIONS[parts[2]] = VERSIONS.get(parts[2], 0) + 1
                return self.answer(200, {"result": USERS[parts[2]]}, "\"v%d\"" % VERSIONS[parts[2]])
        if not parts or parts[0] != "users":
            return self.answer(404, {"error": "no such resource"})
        key = self.headers.get("Idempotency-Key")
        drop = self.headers.get("X-Drop-Response") == "1"
        with STATE_LOCK:
            if key and key in SEEN:
                status, data, etag = SEEN[key]
                if drop:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                return self.answer(status, data, etag)
            result = self.apply(method, parts, query)
            if result is None:
                return None
            status, body, etag = result
            data = b"" if body is None else json.dumps(body).encode()
            if key and 200 <= status < 300:
                SEEN[key] = (status, data, etag)
        if drop:
            self.close_connection = True
            self.connection.shutdown(2)
            return None
        return self.answer(status, data, etag)

    def apply(self, method, parts, query):
        etag_of = lambda uid: "\"v%d\"" % VERSIONS[uid]
        if len(parts) == 1:
            if method == "GET":
                ids = sorted(USERS)
                page = 1
                for item in query.split("&"):
                    if item.startswith("page="):
                        page = int(item[5:])
                chunk = ids[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
                more = page * PAGE_SIZE < len(ids)
                return 200, {"result": [USERS[i] for i in chunk],
                             "next": ("/users?page=%d" % (page + 1)) if more else None}, None
            if method == "POST":
                obj = self.body()
                uid = obj.get("id")
                if uid in USERS:
                    return 409, {"result": USERS[uid]}, etag_of(uid)
                USERS[uid] = obj
                VERSIONS[uid] = 1
                LOG.append({"method": "POST", "id": uid})
                return 201, {"result": obj}, etag_of(uid)
            return 405, {"error": "method"}, None
        uid = parts[1]
        if method == "GET":
            if uid not in USERS:
                return 404, {"error": "not found"}, None
            return 200, {"result": USERS[uid]}, etag_of(uid)
        match = self.headers.get("If-Match")
        if method == "PUT":
            if uid not in USERS:
                return 404, {"error": "not found"}, None
            if match and match != etag_of(uid):
                return 412, {"result": USERS[uid]}, etag_of(uid)
            USERS[uid] = self.body()
            VERSIONS[uid] += 1
            LOG.append({"method": "PUT", "id": uid})
            return 200, {"result": USERS[uid]}, etag_of(uid)
        if method == "DELETE":
            if uid not in USERS:
                return 404, {"error": "not found"}, None
            if match and match != etag_of(uid):
                return 412, {"result": USERS[uid]}, etag_of(uid)
            del USERS[uid]
            LOG.append({"method": "DELETE", "id": uid})
            return 204, None, None
        return 405, {"error": "method"}, None

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")


def main():
    reset()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if "--until-stdin-closes" in sys.argv[1:]:
        # Prevents: a test run that was held up for minutes finding its servers gone (a fixed
        # lifetime cannot tell a slow run from an orphaned server; a closed pipe can).
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            server.shutdown()

        watcher = threading.Thread(target=watch_stdin, daemon=True)
    else:
        watcher = threading.Timer(600, server.shutdown)
        watcher.daemon = True
    watcher.start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
