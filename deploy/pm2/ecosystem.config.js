// pm2 process file for a miner and a validator on one host (docs/gpu-hosts.md).
//   make install && pm2 start deploy/pm2/ecosystem.config.js && pm2 save
// Run it from the checkout: paths are relative to it. Edit the wallets, netuid, ports and devices;
// start only one of the two with `pm2 start deploy/pm2/ecosystem.config.js --only audionet-miner`.
// Each `args` list is one line of JSON (tests/deploy parses it with the neurons' own flag parsers).
module.exports = {
  apps: [
    {
      name: "audionet-miner",
      script: ".venv/bin/audionet-miner",
      interpreter: "none",
      args: ["--netuid", "16", "--subtensor.network", "finney", "--wallet.name", "my_cold", "--wallet.hotkey", "my_miner", "--axon.port", "8091", "--axon.external_ip", "203.0.113.7", "--pool.devices", "auto", "--pool.parallel", "1", "--tts.model", "kokoro:", "--vc.model", "kokoro-clone:", "--music.model", "hf:musicgen", "--music.preset", "balanced"],
      env: { PYTHONUNBUFFERED: "1" },
      autorestart: true,
      restart_delay: 10000,
      max_restarts: 20,
      // SIGTERM first: the miner flushes its timing log; models take a while to unload on a GPU
      kill_timeout: 30000,
    },
    {
      name: "audionet-validator",
      script: ".venv/bin/audionet-validator",
      interpreter: "none",
      args: ["--netuid", "16", "--subtensor.network", "finney", "--wallet.name", "my_cold", "--wallet.hotkey", "my_validator", "--eval.devices", "cuda:0"],
      env: { PYTHONUNBUFFERED: "1" },
      autorestart: true,
      restart_delay: 10000,
      max_restarts: 20,
      kill_timeout: 30000,
    },
  ],
};
