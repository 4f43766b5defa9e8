// Child process of scripts/registry-check/verdaccio.mjs: runs Verdaccio with the config file
// given as the only argument, listening on 127.0.0.1 on a port the system picks, and prints
// {"port": N} on a line of stdout once it accepts connections. Verdaccio's own log goes to the
// file that the config's `log` names.
import { runServer } from 'verdaccio';

const configPath = process.argv[2];
if (!configPath) {
  console.error('usage: node verdaccio-server.mjs CONFIG.yaml');
  process.exit(2);
}
const server = await runServer(configPath);
server.on('error', (error) => {
  console.error(`verdaccio could not listen on 127.0.0.1: ${error.message}`);
  process.exit(1);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
const close = () => {
  server.close(() => process.exit(0));
  // A client that keeps its connection open must not keep the registry alive.
  setTimeout(() => process.exit(0), 2000).unref();
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
