// An independent MCP client (the reference TypeScript SDK's Client and
// StreamableHTTPClientTransport) against sandgate's /mcp. Run by
// tests/integration/test_mcp.py from the directory it installed the SDK in:
//   node mcp_client.mjs <url> <token>
// Prints one JSON document with what the SDK saw; exits non-zero on an error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'sandgate-interop', version: '1.0.0' });
await client.connect(transport);
const out = {
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  server: client.getServerVersion(),
};
await client.ping();
out.tools = (await client.listTools()).tools.map((t) => ({
  name: t.name, required: t.inputSchema.required ?? [],
}));
out.run = await client.callTool({
  name: 'run_code',
  arguments: { language: 'python', code: 'def main(n):\n    return n * 2\n', arguments: { n: 21 } },
});
// With onprogress the SDK sends a progressToken: the run's output comes as
// notifications/progress on an SSE answer, then the result.
out.progress = [];
out.progressRun = await client.callTool(
  { name: 'run_code', arguments: { language: 'python', code: 'def main():\n    print("x")\n' } },
  undefined,
  { onprogress: (p) => out.progress.push(p) },
);
out.rejected = await client.callTool({
  name: 'run_code',
  arguments: { language: 'python', code: 'import os\ndef main():\n    return os.getcwd()\n' },
});
out.check = await client.callTool({
  name: 'check_code', arguments: { language: 'nodejs', code: 'eval("1")' },
});
out.runtimes = await client.callTool({ name: 'list_runtimes', arguments: {} });
// a session: open, a cell, a file up and back, close (issue #14: agents keep state between calls)
out.created = await client.callTool({ name: 'session_create', arguments: {} });
const sessionId = /session_id: (py-[0-9a-f-]+)/.exec(out.created.content[0].text)?.[1] ?? '';
out.cell = await client.callTool({
  name: 'session_exec', arguments: { session_id: sessionId, code: 'x = 21' },
});
out.uploaded = await client.callTool({
  name: 'session_upload',
  arguments: { session_id: sessionId, name: 'data.csv', content_b64: btoa('a,b\n1,2\n') },
});
out.downloaded = await client.callTool({
  name: 'session_download', arguments: { session_id: sessionId, name: 'data.csv' },
});
out.closed = await client.callTool({ name: 'session_close', arguments: { session_id: sessionId } });
try {
  await client.callTool({ name: 'no_such_tool', arguments: {} });
  out.unknownTool = 'no error';
} catch (e) {
  out.unknownTool = { code: e.code ?? null, message: String(e.message) };
}
await transport.terminateSession();
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
