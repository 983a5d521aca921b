"""Every suite env as a service over OpenEnv's protocol, and remote envs as suite envs.

* :func:`~agentgym_suite.serving.app.build_app` / ``agentgym serve ENV_ID`` — a registered id
  behind OpenEnv's own server (``openenv`` package: ``create_app``, ``/ws`` sessions,
  ``/health``, ``/schema``, ``/metadata``), one env per session;
* :class:`~agentgym_suite.serving.remote_env.RemoteTextEnv` (``gym.make("Remote-v0", url=...)``)
  — a suite env backed by any OpenEnv server, ours or someone else's;
* :class:`~agentgym_suite.rollout.workers.openenv_servers.OpenEnvServers` — the
  ``env_workers: "openenv://host:port,..."`` executor that spreads a pool over several servers.

The server side needs the optional extra ``agentgym-suite[serve]`` (OpenEnv's ``openenv``
package); the client side needs only ``websockets`` and ``pydantic``, which it brings too.
"""
