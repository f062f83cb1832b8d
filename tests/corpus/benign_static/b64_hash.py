import base64
import hashlib
import hmac
import secrets
import uuid


def main(payload: str, key: str = "k") -> dict:
    raw = payload.encode("utf-8")
    return {
        "b64": base64.b64encode(raw).decode("ascii"),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "hmac": hmac.new(key.encode(), raw, hashlib.sha256).hexdigest(),
        "nonce": secrets.token_hex(8),
        "id": str(uuid.uuid4()),
    }


print(main("hello"))
