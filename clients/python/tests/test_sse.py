"""The SSE parser, with no server: frames split anywhere, line endings,
multi-line data, heartbeats and comments, bounds."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
from sandgate import SSEError, SSEEvent, SSEParser  # noqa: E402

STREAM = (b'event: stdout\ndata: {"text":"first\\n"}\n\n'
          b': hb\n\n'
          b'event: stderr\r\ndata: {"text":"caf\xc3\xa9 \xe2\x82\xac"}\r\n\r\n'
          b'event: result\ndata: {"status":"success",\ndata: "x":1}\n\n')
EXPECTED = [SSEEvent("stdout", '{"text":"first\\n"}'),
            SSEEvent("stderr", '{"text":"café €"}'),
            SSEEvent("result", '{"status":"success",\n"x":1}')]


def parse(pieces, **kw):
    p = SSEParser(**kw)
    out = []
    for piece in pieces:
        out += p.feed(piece)
    return out


class SSEParserTest(unittest.TestCase):
    def test_whole_stream(self):
        self.assertEqual(parse([STREAM]), EXPECTED)

    def test_split_at_every_byte(self):
        for i in range(len(STREAM) + 1):
            self.assertEqual(parse([STREAM[:i], STREAM[i:]]), EXPECTED, f"split at {i}")

    def test_one_byte_at_a_time(self):
        self.assertEqual(parse([STREAM[i:i + 1] for i in range(len(STREAM))]), EXPECTED)

    def test_crlf_split_between_pieces_is_one_line_end(self):
        self.assertEqual(parse([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]),
                         [SSEEvent("message", "a\nb")])

    def test_lone_cr_ends_lines(self):
        self.assertEqual(parse([b"event: x\rdata: 1\r\r"]), [SSEEvent("x", "1")])

    def test_multi_line_data_is_joined_with_newlines(self):
        self.assertEqual(parse([b"data: one\ndata:two\ndata\ndata:  four\n\n"]),
                         [SSEEvent("message", "one\ntwo\n\n four")])

    def test_heartbeats_and_comments_between_and_inside_events(self):
        s = b": hb\n\n:\nevent: stdout\n: hb\ndata: {}\n: x\n\n: hb\n\n"
        self.assertEqual(parse([s]), [SSEEvent("stdout", "{}")])

    def test_event_without_data_is_not_dispatched_and_name_resets(self):
        self.assertEqual(parse([b"event: a\n\ndata: 1\n\n"]), [SSEEvent("message", "1")])

    def test_incomplete_event_at_the_end_is_dropped(self):
        self.assertEqual(parse([b"data: 1\n\ndata: 2\n"]), [SSEEvent("message", "1")])

    def test_bom_and_unknown_fields(self):
        self.assertEqual(parse([b"\xef\xbb\xbfretry: 5\nfoo: bar\nid: 7\ndata: x\n\n"]),
                         [SSEEvent("message", "x", "7")])

    def test_utf8_split_inside_a_character(self):
        s = "data: €uro\n\n".encode()
        self.assertEqual(parse([s[:7], s[7:8], s[8:]]), [SSEEvent("message", "€uro")])

    def test_a_line_over_the_cap_is_an_error(self):
        p = SSEParser(max_event_bytes=100)
        p.feed(b"data: " + b"x" * 50)
        with self.assertRaises(SSEError):
            p.feed(b"x" * 60)

    def test_an_event_over_the_cap_is_an_error(self):
        p = SSEParser(max_event_bytes=100)
        with self.assertRaises(SSEError):
            p.feed(b"data: 0123456789\n" * 10)

    def test_the_cap_counts_per_event(self):
        p = SSEParser(max_event_bytes=100)
        for _ in range(20):
            self.assertEqual(len(p.feed(b"data: 0123456789\n\n")), 1)


if __name__ == "__main__":
    unittest.main()
