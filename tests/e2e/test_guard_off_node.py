"""The run-time promises for Node.js jobs with the in-process layer switched
OFF, end to end on dockerd + runsc with the real Node image: the executor
runs with its test-only --test-guard-off, so runner.js installs the kernel
filter but no policy require, no reduced process and no frozen prototypes;
the job has the real process, fs, child_process, net and v8. What still
holds rests on what the job cannot reach (images/nodejs/README.md): the
kernel filter (no process, no socket offline: the job is killed and the
parent reports it), the job's identity and file system view (uid 65534 with
no capability, its own PID namespace and /proc, no runner files, /etc cut
down to what node needs, writes only under /tmp and the workspace), and the
parent (memory is its own reading, a forged report cannot hide a kill).
Jobs and a multi-cell session.

The kernel filter also refuses new native code (file-backed executable
mappings: process.dlopen, crypto.setEngine), since runsc does not enforce
noexec for mmap(PROT_EXEC). Not claimed here, because only the in-process
layer keeps it (the table in policies/README.md says so): no code from
strings through binding('contextify'), and input files as data (a relative
require loads the file)."""
import json
import unittest

import sgguardoff
from sgguardoff import EITHER, KILLED, js


class NodeGuardOff(sgguardoff.GuardOff, unittest.TestCase):
    LANGUAGE = "nodejs"
    TENANT = "t.guardoff.node"

    # -- the switch

    def test_the_switch_is_on(self):
        # fs is not in the default policy's modules: the policy require would
        # refuse it; here nothing does, and the job has the real process.
        got = self.value(js("return [require('fs').readFileSync('/etc/passwd', 'utf8')"
                            ".includes('nobody:x:65534'), typeof process.binding,"
                            " typeof process.dlopen];"))
        self.assertEqual(got, [True, "function", "function"])

    # -- kernel filter, reported by the parent

    def test_child_process_is_killed_even_when_caught(self):
        self.killed(js("try { console.log('EFFECT', require('child_process')"
                       ".execFileSync('/usr/bin/id').toString()); }\n"
                       "catch (e) { return 'caught ' + e.code; }"))

    def test_offline_socket_is_killed_even_when_caught(self):
        self.killed(js("try { const s = new (require('net').Socket)(); s.on('error', () => {});\n"
                       "  s.connect(9, '127.0.0.1'); } catch (e) { return 'caught'; }\n"
                       "await new Promise((r) => setTimeout(r, 200)); console.log('EFFECT');"))

    def test_socket_with_processes_allowed_is_reported_as_network(self):
        self.killed(js("const s = new (require('net').Socket)(); s.on('error', () => {});\n"
                       "s.connect(9, '127.0.0.1');\n"
                       "await new Promise((r) => setTimeout(r, 200)); console.log('EFFECT');"),
                    kind="network", runtime={"processes": True})

    def test_threads_and_unix_sockets_still_work(self):
        got = self.value(js(
            "const { Worker } = require('worker_threads');\n"
            "require('fs').writeFileSync('/tmp/w.js',"
            " 'require(\"worker_threads\").parentPort.postMessage(6 * 7);');\n"
            "const w = await new Promise((res, rej) => {\n"
            "  const t = new Worker('/tmp/w.js');\n"
            "  t.on('message', res); t.on('error', rej); });\n"
            "const net = require('net');\n"
            "const srv = net.createServer((c) => c.end('unix')).listen('/tmp/s.sock');\n"
            "await new Promise((r) => srv.on('listening', r));\n"
            "const got = await new Promise((res) => { let d = '';\n"
            "  net.connect('/tmp/s.sock').on('data', (x) => { d += x; }).on('end', () => res(d)); });\n"
            "srv.close();\n"
            "const h = require('crypto').pbkdf2Sync('a', 'b', 1000, 16, 'sha1').length;\n"
            "return [w, got, h];"))
        self.assertEqual(got, [42, "unix", 16])

    # -- no new native code (kernel filter)

    def test_no_new_native_code(self):
        # process.dlopen of an image library node never loaded, and of a copy
        # the job wrote to /tmp: the loader's executable mapping is refused
        # (before: "Module did not self-register", i.e. mapped and its
        # constructors run). V8's JIT keeps working (a hot loop, WebAssembly).
        got = self.value(js(
            "const fs = require('fs'); const out = {};\n"
            "fs.copyFileSync('/usr/lib/x86_64-linux-gnu/libjansson.so.4', '/tmp/x.so');\n"
            "for (const p of ['/usr/lib/x86_64-linux-gnu/libjansson.so.4', '/tmp/x.so']) {\n"
            "  try { process.dlopen({ exports: {} }, p); out[p] = 'LOADED'; }\n"
            "  catch (e) { out[p] = /failed to map segment/.test(e.message) ? 'refused' : e.message; } }\n"
            "try { require('crypto').setEngine('/tmp/x.so'); out.engine = 'LOADED'; }\n"
            "catch (e) { out.engine = 'refused'; }\n"
            "let x = 0; for (let i = 0; i < 5e6; i++) x = (x + i * 7) % 1000003;\n"
            "const wasm = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array([0, 97,\n"
            "  115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 6,\n"
            "  1, 4, 0, 65, 42, 11])));\n"
            "out.jit = [x > 0, wasm.exports.f()];\n"
            "return out;"))
        self.assertEqual(got, {"/usr/lib/x86_64-linux-gnu/libjansson.so.4": "refused",
                               "/tmp/x.so": "refused", "engine": "refused", "jit": [True, 42]})

    # -- identity and view

    def test_identity_without_capabilities(self):
        got = self.value(js(
            "const st = {};\n"
            "for (const l of require('fs').readFileSync('/proc/self/status', 'utf8').split('\\n')) {\n"
            "  const m = /^(Uid|Gid|Groups|CapInh|CapPrm|CapEff):\\s*(.*)$/.exec(l);\n"
            "  if (m) st[m[1]] = m[2].trim(); }\n"
            "return [process.getuid(), process.geteuid(), process.getgid(), process.getegid(), st];"))
        self.assertEqual(got[:4], [65534] * 4)
        st = got[4]
        self.assertEqual(st["Uid"].split(), ["65534"] * 4, st)
        self.assertEqual(st["Gid"].split(), ["65534"] * 4, st)
        self.assertIn(st["Groups"], ("", "65534"), st)
        for cap in ("CapInh", "CapPrm", "CapEff"):
            self.assertEqual(st[cap], "0" * 16, st)
        # and no way back
        got = self.value(js("try { process.setuid(0); return 'ROOT'; } catch (e) { return e.code; }"))
        self.assertEqual(got, "EPERM")

    def test_nothing_outside_the_view_is_readable(self):
        got = self.value(js(
            "const fs = require('fs'); const out = {};\n"
            "for (const p of ['/opt/sandgate/runner.js', '/opt/sandgate/runner.blob',\n"
            "    '/opt/sandgate/libsandgate_rt.so', '/opt/sandgate/sandgate-runner', '/opt/sandgate',\n"
            "    '/etc/shadow', '/etc/hostname', '/etc/hosts', '/etc/resolv.conf', '/root',\n"
            "    '/proc/1/mem']) {\n"
            "  try { fs.statSync(p).isDirectory() ? fs.readdirSync(p) : fs.readFileSync(p);\n"
            "    out[p] = 'READ'; } catch (e) { out[p] = e.code; } }\n"
            "return out;"))
        for path, what in got.items():
            self.assertIn(what, ("ENOENT", "EACCES"), (path, got))
        # what node needs is there
        got = self.value(js("return [require('os').userInfo().username,"
                            " new Date(0).toISOString()];"))
        self.assertEqual(got, ["nobody", "1970-01-01T00:00:00.000Z"])

    def test_the_runners_proc_is_out_of_reach(self):
        # gVisor shows any uid the environ and cmdline of another process;
        # in its own PID namespace the job has no name for the runner.
        got = self.value(js(
            "const fs = require('fs');\n"
            "return [process.pid, process.ppid, fs.readdirSync('/proc').filter((d) => /^\\d+$/.test(d)),\n"
            "  fs.readFileSync('/proc/1/cmdline', 'utf8').split('\\0')[0],\n"
            "  fs.readFileSync('/proc/1/environ', 'utf8').includes('SANDGATE_MAX')];"))
        self.assertEqual(got, [1, 0, ["1"], "node", False])

    def test_writes_only_under_tmp_and_workspace(self):
        got = self.value(js(
            "const fs = require('fs'); const out = {};\n"
            "for (const p of ['/usr/x', '/etc/x', '/x', '/opt/x', '/proc/x', '/mnt/x',\n"
            "    '/tmp/ok', '/workspace/ok']) {\n"
            "  try { fs.writeFileSync(p, 'EFFECT'); out[p] = 'WROTE'; } catch (e) { out[p] = e.code; } }\n"
            "return out;"))
        self.assertEqual((got.pop("/tmp/ok"), got.pop("/workspace/ok")), ("WROTE", "WROTE"))
        self.assertNotIn("WROTE", got.values(), got)

    def test_the_report_pipe_cannot_be_reopened(self):
        # The job holds its pipes by number (its own process's fds); after the
        # drop its /proc/self/fd entries are root's: no other route to them,
        # and the runner's own fds are in no /proc the job sees.
        got = self.value(js(
            "const fs = require('fs'); const out = [];\n"
            "for (const f of [1, 2, 3, 4]) {\n"
            "  try { fs.openSync(`/proc/self/fd/${f}`, 'w'); out.push('REOPENED'); }\n"
            "  catch (e) { out.push(e.code); } }\n"
            "return out;"))
        self.assertEqual(len(got), 4, got)
        self.assertLessEqual(set(got), {"EACCES", "EPERM"}, got)

    # -- the parent's observations

    def test_forged_report_does_not_set_memory(self):
        # The job finds its report token in its own heap (v8, allowed with
        # the guard off) and writes a report of its own with a made-up memory
        # figure: the line is accepted as the program's (its value), but the
        # memory is the parent's reading.
        body = self.job(js(
            "const chunks = [];\n"
            "for await (const c of require('v8').getHeapSnapshot()) chunks.push(c);\n"
            "const strings = JSON.parse(Buffer.concat(chunks).toString()).strings;\n"
            "const toks = strings.filter((s) => /^[0-9a-f]{32}$/.test(s));\n"
            "for (const t of toks) require('fs').writeSync(4, `${t} {\"outcome\":\"ok\","
            "\"present\":true,\"max_rss_kb\":999999,\"value_json\":\"7\"}\\n`);\n"
            "throw new Error('after forging ' + toks.length);"))
        self.assertNotEqual(body["memory_used_kb"], 999999, body)
        self.assertGreater(body["memory_used_kb"], 10 * 1024, body)
        self.assertLess(body["memory_used_kb"], 512 * 1024, body)

    def test_forged_success_then_killed_is_unauthorized(self):
        # Without the token a forged line is dropped; the kill that follows
        # is the parent's to report.
        body = self.killed(js(
            "require('fs').writeSync(4, '{\"outcome\":\"ok\",\"present\":true,"
            "\"value_json\":\"7\"}\\n');\n"
            "require('child_process').spawnSync('/usr/bin/id'); console.log('EFFECT');"))
        self.assertNotIn("7", json.dumps(body["result"]))

    # -- a session: one view and filter for all its cells

    def test_session_cells_share_the_view_and_the_filter(self):
        cell = self.session()

        first = cell("const fs = require('fs');\n"
                     "let seen; try { fs.readFileSync('/opt/sandgate/runner.js'); seen = true; }\n"
                     "catch (e) { seen = false; }\nconsole.log(process.getuid(), seen);\n")
        self.assertEqual((first["status"], first["stdout"]), ("success", "65534 false\n"), first)
        second = cell("try { require('child_process').execFileSync('/usr/bin/id'); }\n"
                      "catch (e) { }\nconsole.log('EFFECT');\n")
        self.assertEqual((second["status"], second["unauthorized_access_type"]),
                         ("unauthorized_access", EITHER), second)
        self.assertIn(KILLED, second["detail"])
        self.assertNotIn("EFFECT", second["stdout"])


if __name__ == "__main__":
    unittest.main()
