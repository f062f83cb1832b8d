"""A session opened straight on an executor (POST /v1/sessions with the
tenant header the gateway would send), for the e2e suites that drive an
executor without a gateway."""
import sgtest


class Session:
    """One session: call it with a cell's code for the cell's result body;
    upload() puts a file in its workspace; close() ends it (also done at the
    test's end)."""

    def __init__(self, test, url, language, tenant, runtime, timeout_ms=30000):
        self.test, self.url = test, url
        self.headers = {"X-Sandgate-Tenant": tenant}
        body = {"language": language, "runtime": runtime, "limits": {"timeout_ms": timeout_ms}}
        status, _, s = sgtest.http("POST", url + "/v1/sessions", body, headers=self.headers,
                                   timeout=90)
        test.assertEqual(status, 201, s)
        self.id = s["session_id"]
        test.addCleanup(self.close)

    def __call__(self, code):
        st, _, b = sgtest.http("POST", f"{self.url}/v1/sessions/{self.id}/exec", {"code": code},
                               headers=self.headers, timeout=90)
        self.test.assertEqual(st, 200, b)
        return b

    def upload(self, name, data):
        st, _, b = sgtest.http("PUT", f"{self.url}/v1/sessions/{self.id}/files/{name}", data,
                               headers=self.headers, timeout=30)
        self.test.assertEqual(st, 204, (name, b))

    def close(self):
        sgtest.http("DELETE", f"{self.url}/v1/sessions/{self.id}", None, headers=self.headers,
                    timeout=30)


def open_session(test, url, language, tenant, runtime, timeout_ms=30000):
    """Opens a session on the executor at url (closed at the test's end);
    returns it: session(code) runs one cell and returns its result body."""
    return Session(test, url, language, tenant, runtime, timeout_ms)
