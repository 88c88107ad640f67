# huge_reply.py PORT N: an OpenAI-compatible chat endpoint on 127.0.0.1:PORT whose every
# completion has N bytes of content ("999..."), streamed; for the memory figures of
# docs/PERFORMANCE.md, "Memory at the input limits". Loopback only.
import sys, http.server, json
N = int(sys.argv[2])
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(200); b=b'{"data":[{"id":"x","object":"model"}]}'; self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0)); self.rfile.read(n)
        head = b'{"id":"h","object":"chat.completion","created":0,"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"'
        tail = b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(head)+N+len(tail))); self.end_headers()
        try:
            self.wfile.write(head); chunk = b"9"*(1<<20)
            for _ in range(N >> 20): self.wfile.write(chunk)
            self.wfile.write(b"9"*(N - (N>>20<<20))); self.wfile.write(tail)
        except Exception: pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
