#!/usr/bin/env python3
"""A fault-injecting HTTP proxy in front of a Kinto server, for the sync fault tests.

Usage: fault_proxy.py TARGET_PORT [LISTEN_PORT]. Listens on 127.0.0.1 (a free port unless
given), prints "PORT <n>", forwards every request to 127.0.0.1:TARGET_PORT and stops when its
standard input closes. Rules, set with POST /__fault__ (JSON), apply to the next requests
whose path contains "match" (every request when it is empty):

  {"status": 503, "retry_after": 1, "count": 2, "match": "/batch"}  answer 503 instead
  {"strip_tombstones": true, "match": "/records"}  remove tombstones from listings, as
                                          `kinto purge-deleted` does on a database
  {"delay": 0.5, "match": "/batch"}       forward each matching request after half a second
  {"die_after": 3, "match": "/records"}   forward 3 more matching requests, then exit at once
                                          (the server "stops": connections are refused)
GET /__fault__/count answers how many requests were forwarded; DELETE /__fault__ drops every
rule.
"""
import http.client
import http.server
import json
import os
import sys
import threading
import time

TARGET = int(sys.argv[1])
LOCK = threading.Lock()
RULES = []
FORWARDED = [0]


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else None

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        data = self.body()
        if self.path.startswith("/__fault__"):
            if self.command == "POST":
                with LOCK:
                    RULES.append(json.loads(data or b"{}"))
                return self.answer(204)
            if self.command == "DELETE":
                with LOCK:
                    RULES.clear()
                return self.answer(204)
            with LOCK:
                count = FORWARDED[0]
            return self.answer(200, json.dumps({"forwarded": count}).encode())
        die = False
        strip = False
        delay = 0
        with LOCK:
            for rule in RULES:
                if rule.get("match", "") not in self.path:
                    continue
                if "status" in rule and rule.get("count", 1) > 0:
                    rule["count"] = rule.get("count", 1) - 1
                    headers = [("Content-Type", "application/json")]
                    if "retry_after" in rule:
                        headers.append(("Retry-After", str(rule["retry_after"])))
                    body = json.dumps({"code": rule["status"], "error": "injected"}).encode()
                    return self.answer(rule["status"], body, headers)
                if "delay" in rule:
                    delay = max(delay, rule["delay"])
                if rule.get("strip_tombstones"):
                    strip = True
                if "die_after" in rule:
                    if rule["die_after"] <= 0:
                        os._exit(0)
                    rule["die_after"] -= 1
                    die = rule["die_after"] <= 0
        if delay:
            time.sleep(delay)
        connection = http.client.HTTPConnection("127.0.0.1", TARGET, timeout=60)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        connection.request(self.command, self.path, body=data, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        with LOCK:
            FORWARDED[0] += 1
        if die:
            # The answer is lost with the server: the client sees the connection drop.
            os._exit(0)
        if strip and self.command == "GET":
            try:
                listing = json.loads(payload)
                listing["data"] = [r for r in listing["data"] if not r.get("deleted")]
                payload = json.dumps(listing).encode()
            except (ValueError, KeyError, TypeError, AttributeError):
                pass
        skip = ("transfer-encoding", "connection", "content-length")
        self.answer(response.status, payload, [(k, v) for k, v in response.getheaders() if k.lower() not in skip])
        connection.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any


class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    server = Server(("127.0.0.1", port), Proxy)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
