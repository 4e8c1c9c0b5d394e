'use strict';
/**
 * A round-robin TCP balancer in front of one service's replicas, as a Kubernetes Service puts them behind
 * one address: each new connection goes to the next replica; a replica that refuses the connection (killed,
 * restarting) is skipped for that connection. Connections are kept as they are (keep-alive survives), so
 * a client spreads its load as it opens connections. Used by launcher.js for the images replicas.
 */
const net = require('node:net');

/** Listens on 127.0.0.1 (an ephemeral port) in front of the replicas ({ port }); resolves to { url, close() }. */
function startBalancer(replicas) {
  const ports = replicas.map((r) => r.port);
  let next = 0;
  const open = new Set();
  const track = (socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    client.pause();
    let upstream;
    client.on('error', () => upstream && upstream.destroy());
    client.once('close', () => upstream && upstream.destroy());
    const connect = (tries) => {
      const port = ports[next++ % ports.length];
      let connected = false;
      upstream = net.connect(port, '127.0.0.1');
      track(upstream);
      upstream.once('connect', () => {
        connected = true;
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      upstream.on('error', () => {
        if (!connected && tries + 1 < ports.length && !client.destroyed) connect(tries + 1);
        else client.destroy();
      });
      upstream.once('close', () => connected && client.destroy());
    };
    connect(0);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            for (const s of open) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

module.exports = { startBalancer };
