// Preloaded into each service process by the launcher (`node --require`): services bind 0.0.0.0 in
// distributed mode (containers); on a test machine they must stay on loopback, so a listen() on the
// wildcard address is narrowed to 127.0.0.1.
'use strict';
const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function loopbackListen(...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    if (args.length === 1 || typeof args[1] === 'function') args.splice(1, 0, '127.0.0.1');
    else if (args[1] === '0.0.0.0' || args[1] === '::' || args[1] === undefined) args[1] = '127.0.0.1';
  } else if (
    args[0] &&
    typeof args[0] === 'object' &&
    !Array.isArray(args[0]) &&
    args[0].port !== undefined
  ) {
    const h = args[0].host;
    if (h === undefined || h === '0.0.0.0' || h === '::') args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
