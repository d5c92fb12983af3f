"""A stand-in bridge for the hub's tests: a token-checked WebSocket endpoint that
answers ACP-ish requests, registered with the hub through the real HubClient.

Every JSON-RPC request is answered with ``{"instance", "method", "params"}``;
``test/notify`` first sends a notification; ``test/close`` closes with the code
in its params; ``test/raw`` answers with the text as received; text that is
not JSON comes back unchanged. ``READY <port> <instance id>`` on stdout once listening.
"""

from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402

from zcode_acp.net import websocket as ws  # noqa: E402

from zcode_acp.net import websocket_handshake as handshake  # noqa: E402
from zcode_acp.net.http_server import HttpExchange, HttpServer  # noqa: E402
from zcode_acp.net.hub_client import BridgeIdentity, HubClient  # noqa: E402
from zcode_acp.net import proofs  # noqa: E402
from zcode_acp.net.origin_policy import HostPolicy  # noqa: E402
from zcode_acp.net.tokens import RemoteAuth  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", nargs="?", default="editor")  # "serve" when the hub starts it
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--origin", default=None)
    parser.add_argument("--id", default=None)
    parser.add_argument("--session", action="append", default=[],
                        help="sessionId@updatedAt (epoch ms)")
    parser.add_argument("--version", default="0.1.0")
    parser.add_argument("--heartbeat", type=float, default=10.0)
    parser.add_argument("--ping-interval", type=float, default=30.0)
    parser.add_argument("--idle-exit", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    token = os.environ["ZCODE_ACP_REMOTE_TOKEN"]
    origin = args.origin or ("serve" if args.command == "serve" else "editor")
    clients: list[ws.WebSocket] = []

    identity_box: list[BridgeIdentity] = []

    def handle(exchange: HttpExchange) -> None:
        request = exchange.request
        if request.path == proofs.OWNER_PATH:  # the hub's check that this port is ours
            nonce = request.header(proofs.CHALLENGE_HEADER.lower())
            exchange.respond(200, {"instance": identity_box[0].instance_id,
                                   "proof": proofs.owner_proof(token, nonce, identity_box[0].instance_id)})
            return
        if request.path != "/acp":
            exchange.respond(404, "not found\n")
            return
        problem = handshake.handshake_problem(request.headers)
        if problem:
            exchange.respond(400, problem)
            return
        conn = handshake.accept(exchange.detach(), request.raw,
                         ws.WebSocketOptions(ping_interval=args.ping_interval), name="fake",
                         extra_headers=request.answer_headers)
        clients.append(conn)

        def on_message(text: str) -> None:
            try:
                frame = json.loads(text)
            except ValueError:
                conn.send_text(text)
                return
            method = frame.get("method")
            if method == "test/close":
                conn.close(frame["params"]["code"], "asked to")
                return
            if method == "test/raw":  # what arrived, byte for byte
                conn.send_text(json.dumps({"jsonrpc": "2.0", "id": frame["id"],
                                           "result": {"raw": text}}))
                return
            if method == "test/notify":
                conn.send_text(json.dumps({"jsonrpc": "2.0", "method": "session/update",
                                           "params": {"note": "before the answer"}}))
            if "id" in frame and method:
                conn.send_text(json.dumps({"jsonrpc": "2.0", "id": frame["id"], "result": {
                    "instance": identity_box[0].instance_id, "method": method,
                    "params": frame.get("params")}}))

        conn.start(on_message=on_message, on_close=lambda info: clients.remove(conn))

    # The bridge's own gate (Host/Origin, the token or a proof, on the head).
    auth = RemoteAuth(token, HostPolicy())
    server = HttpServer(("127.0.0.1", 0), handle, name="fake-bridge", admit=auth.admit).start()
    auth.bound_to(server.port)
    identity = BridgeIdentity(instance_id=args.id or f"fake-{os.getpid()}", port=server.port,
                              origin=origin, workspace=os.path.realpath(args.cwd),
                              version=args.version)
    identity_box.append(identity)
    sessions = []
    for spec in args.session:
        sid, _, updated = spec.partition("@")
        sessions.append({"sessionId": sid, "title": f"title of {sid}",
                         "updatedAt": int(updated or 0), "status": "idle"})
    hub_client = HubClient(identity, lambda: sessions, token=token,
                           hub_host=os.environ.get("ZCODE_ACP_HUB_HOST", "127.0.0.1"),
                           hub_port=int(os.environ["ZCODE_ACP_HUB_PORT"]),
                           autostart=os.environ.get("ZCODE_ACP_HUB_AUTOSTART", "0") != "0",
                           heartbeat=args.heartbeat).start()
    print(f"READY {server.port} {identity.instance_id}", flush=True)
    stop = gevent.event.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, stop.set)
    stop.wait()
    hub_client.stop()
    for conn in list(clients):
        conn.close(ws.CloseCode.GOING_AWAY, "bridge stopping")
    server.close()
    gevent.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
