"""The bridge's memory while its webhook answers 400 MiB (issue 29): ``python -m bench.webhook_answer``.

A receiver on 127.0.0.1 (its own process) answers every POST with ``--mib`` MiB; this process
patches the standard library exactly as the bridge does (``cli/runtime.py``), posts one notice
through ``actors/webhook_post.post`` (or, with ``--urllib``, the stdlib's ``urlopen(...).read()``
that the bridge used before), and prints its RSS before and its peak (``ru_maxrss``) after.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

RECEIVER = r"""
import http.server, sys
size = int(sys.argv[1]) << 20
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200); self.send_header("Content-Length", str(size)); self.end_headers()
        piece, left = b"x" * (1 << 20), size
        try:
            while left > 0:
                self.wfile.write(piece[:left]); left -= len(piece)
        except OSError:
            pass
    def log_message(self, *a): pass
server = http.server.HTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=400)
    parser.add_argument("--urllib", action="store_true", help="the bridge's old read: urlopen().read()")
    args = parser.parse_args()
    import zcode_acp.cli.runtime  # noqa: F401  (the bridge's patching)
    from zcode_acp.actors.webhook_post import post
    from zcode_acp.protocol.notifications import Post

    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER, str(args.mib)], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        url = f"http://127.0.0.1:{receiver.stdout.readline().strip()}/hook"
        body = Post(b'{"event": "turn_ended"}', {"Content-Type": "application/json"})
        before = rss_mib()
        began = time.monotonic()
        if args.urllib:
            import urllib.request

            with urllib.request.urlopen(urllib.request.Request(url, data=body.body, headers=body.headers,
                                                               method="POST"), timeout=60) as answer:
                answer.read()
        else:
            post(url, body, 60.0)
        took = time.monotonic() - began
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{'urllib read()' if args.urllib else 'webhook_post.post'}: {args.mib} MiB answer, "
              f"RSS before {before:.0f} MiB, peak {peak:.0f} MiB, {took:.2f} s")
    finally:
        receiver.kill()
        receiver.wait()


if __name__ == "__main__":
    main()
