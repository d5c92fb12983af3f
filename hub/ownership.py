"""Before the proxy dials a bridge: does the registered port still belong to that bridge?

A registration only names a port. The bridge may have died since and something
else bound the port (another local user's squatter), or a token holder may
have registered a port that is not a bridge at all (some other local service
the hub would then relay a phone's bytes to). So before each proxied
connection the hub asks the port to prove it is the registered bridge: a
request proved with the token (``proofs.py``; the token itself is not sent)
carrying a fresh nonce, answered with ``HMAC(token, "owner|" nonce "|" id)``.
Only the bridge that knows the token and registered that id can answer.
"""

from __future__ import annotations

import http.client
import logging

import ujson

from zcode_acp.net import proofs

log = logging.getLogger("zcode_acp.hub")


def port_proves_owner(port: int, token: str, instance_id: str, timeout: float = 3.0) -> bool:
    host = f"127.0.0.1:{port}"
    nonce = proofs.new_nonce()
    # The challenge is under the request's MAC: nobody can replay this request with another.
    headers, request_nonce = proofs.request_headers(token, "GET", proofs.OWNER_PATH, host,
                                                    challenge=nonce)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", proofs.OWNER_PATH, headers={"Host": host, **dict(headers)})
        response = connection.getresponse()
        raw = response.read(4096)
        answered = response.getheader(proofs.ANSWER_HEADER)
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()
    if response.status != 200 or not proofs.answer_holds(token, request_nonce, answered):
        return False
    try:
        body = ujson.loads(raw)
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("instance") == instance_id and \
        proofs.owner_holds(token, nonce, instance_id, body.get("proof"))
