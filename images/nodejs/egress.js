'use strict';
// egress.js - a networked job's HTTP clients go through sandgate's egress
// proxy (README, "Network"). The runner loads this after the job arrived and
// only when the job's run-time policy grants network: the sandbox has no
// resolver and no route out, so every connection is a CONNECT through the
// proxy, which decides by host against the job's allow-list.
//  - `http` / `https` (and what uses their global agents: axios,
//    follow-redirects): global agents whose connections are CONNECT tunnels;
//  - `fetch`: undici's ProxyAgent as the global dispatcher.
// A refused CONNECT fails the request at once with an error naming the host.
const net = require('net');
const tls = require('tls');
const http = require('http');
const https = require('https');

const HEAD_MAX = 8192;
const CONNECT_TIMEOUT_MS = 10000;

function tunnel(proxy, host, port, cb) {
  const hp = net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
  const sock = net.connect(proxy.port, proxy.host);
  let head = Buffer.alloc(0);
  let done = false;
  const finish = (err, s) => {
    if (done) return;
    done = true;
    sock.setTimeout(0);
    sock.removeListener('data', onData);
    if (err) sock.destroy();
    cb(err, s);
  };
  function onData(chunk) {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > HEAD_MAX) finish(new Error('sandgate egress: oversized proxy answer'));
      return;
    }
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, end));
    if (m && m[1] === '200') {
      const rest = head.subarray(end + 4);
      if (rest.length) sock.unshift(rest);
      finish(null, sock);
      return;
    }
    const e = new Error(`sandgate egress: the connection to ${hp} was refused `
      + `(proxy answered ${m ? m[1] : 'garbage'}): it is not in this job's network allow-list`);
    e.code = 'ECONNREFUSED';
    finish(e);
  }
  sock.on('data', onData);
  sock.once('error', (e) => finish(e));
  sock.setTimeout(CONNECT_TIMEOUT_MS, () => finish(new Error('sandgate egress: CONNECT timed out')));
  sock.once('connect', () => sock.write(`CONNECT ${hp} HTTP/1.1\r\nHost: ${hp}\r\n\r\n`));
}

// Loads what install() needs (undici among it) before the job arrives.
function prepare(proxyUrl, load) {
  const undici = load('undici');
  return { install: () => install(proxyUrl, undici) };
}

function install(proxyUrl, undici) {
  const u = new URL(proxyUrl);
  const proxy = { host: u.hostname, port: Number(u.port) || 3128 };
  class TunnelAgent extends http.Agent {
    createConnection(o, cb) { tunnel(proxy, o.host, o.port || 80, cb); }
  }
  class TunnelTlsAgent extends https.Agent {
    createConnection(o, cb) {
      tunnel(proxy, o.host, o.port || 443, (err, s) => {
        if (err) { cb(err); return; }
        const servername = o.servername || (net.isIP(o.host) ? undefined : o.host);
        cb(null, tls.connect({ ...o, socket: s, servername }));
      });
    }
  }
  http.globalAgent = new TunnelAgent({ keepAlive: false });
  https.globalAgent = new TunnelTlsAgent({ keepAlive: false });
  undici.setGlobalDispatcher(new undici.ProxyAgent(proxyUrl));
}

module.exports = { prepare };
