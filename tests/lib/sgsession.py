"""A session opened straight on an executor (POST /v1/sessions with the
tenant header the gateway would send), for the e2e suites that drive an
executor without a gateway: open_session() returns a function that runs one cell."""
import sgtest


def open_session(test, url, language, tenant, runtime, timeout_ms=30000):
    """Opens a session on the executor at url (closed at the test's end) and
    returns cell(code) -> the cell's result body (asserting a 200)."""
    headers = {"X-Sandgate-Tenant": tenant}
    body = {"language": language, "runtime": runtime, "limits": {"timeout_ms": timeout_ms}}
    status, _, s = sgtest.http("POST", url + "/v1/sessions", body, headers=headers, timeout=90)
    test.assertEqual(status, 201, s)
    sid = s["session_id"]
    test.addCleanup(sgtest.http, "DELETE", f"{url}/v1/sessions/{sid}", None, headers=headers,
                    timeout=30)

    def cell(code):
        st, _, b = sgtest.http("POST", f"{url}/v1/sessions/{sid}/exec", {"code": code},
                               headers=headers, timeout=90)
        test.assertEqual(st, 200, b)
        return b
    return cell
