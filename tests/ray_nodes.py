"""A real multi-node Ray cluster on this machine, for tests: ``ray start --head`` plus worker nodes.

Each node is its own ``ray start --block`` process (own session group, so killing it kills that
node's raylet and workers and nothing else), with its own temporary folder, resources, ports and
node-local score cache (``STEREOSET_EVAL_NODE_CACHE`` in its environment). Nodes are started with
``--node-ip-address=127.0.0.1`` (Ray maps it to this machine's own address: all traffic stays on
the machine); token authentication is off (``RAY_AUTH_MODE=disabled``: Ray reads
the driver's mode when it is imported, and a test process may have imported it already).
:meth:`LocalCluster.stop` always tears every node down (SIGKILL of each node's process tree).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

LOOPBACK = "127.0.0.1"
#: fast node-death detection (defaults take ~15-30 s); the GCS reads these at start
FAST_FAILURE_ENV = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3",
                    "RAY_health_check_initial_delay_ms": "0", "RAY_health_check_timeout_ms": "1000"}


def clean_environ() -> dict[str, str]:
    """This process's environment without what an earlier ``ray.init`` here put in it
    (``RAY_AUTH_MODE``, ``RAY_ADDRESS``, ``PYTHONBREAKPOINT`` …): a node or driver started from a
    test must not depend on which Ray tests ran before it in the same pytest process."""
    return {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "PYTHONBREAKPOINT"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _ray_bin() -> str:
    """The ``ray`` command of this interpreter's environment (else the one on PATH)."""
    beside = Path(sys.executable).with_name("ray")
    return str(beside) if beside.exists() else (shutil.which("ray") or "ray")


@dataclass
class Node:
    name: str
    proc: subprocess.Popen
    temp_dir: Path
    cache_dir: Path
    log: Path
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL the node: ``ray start``, its raylet and every worker it started."""
        self.killed = True
        kill_tree(self.proc.pid)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass

    def stop(self) -> None:
        """Tear the node down now (a test cluster keeps nothing worth a graceful drain)."""
        self.kill()


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it (workers are the raylet's children but not always
    in its process group, so the tree is walked first), then its process group; waits for them.
    Usable from any process (the fault test's driver kills a node it did not start)."""
    import psutil

    try:
        tree = [psutil.Process(pid)]
        tree += tree[0].children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    for p in tree:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    if _group_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    psutil.wait_procs(tree, timeout=30)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


@dataclass
class LocalCluster:
    """Nodes started by :meth:`add_node`; ``address`` is the head's GCS address."""

    root: Path
    address: str = ""
    client_address: str = ""  # ray://127.0.0.1:PORT, the head's Ray Client server
    nodes: list[Node] = field(default_factory=list)

    def add_node(self, name: str, *, num_cpus: int = 1, resources: dict[str, float] | None = None,
                 head: bool = False, env: dict[str, str] | None = None, node_name: str | None = None) -> Node:
        """Start a node; ``node_name`` (default ``name``) is its ``STEREOSET_EVAL_NODE_NAME``, the key a
        study's ``[models.paths]`` uses for it."""
        temp_dir = self.root / f"ray-{name}"  # short: Ray's socket paths must stay < 108 bytes
        cache_dir = self.root / f"cache-{name}"
        temp_dir.mkdir(parents=True, exist_ok=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        ports = {"--node-manager-port": free_port(), "--object-manager-port": free_port(),
                 "--dashboard-agent-listen-port": free_port(), "--dashboard-agent-grpc-port": free_port(),
                 "--runtime-env-agent-port": free_port(), "--metrics-export-port": free_port()}
        cmd = [_ray_bin(), "start", "--block", f"--node-ip-address={LOOPBACK}", f"--num-cpus={num_cpus}",
               "--num-gpus=0", f"--temp-dir={temp_dir}", "--disable-usage-stats",
               f"--resources={json.dumps(resources or {})}", "--object-store-memory=100000000",
               "--include-log-monitor=false"]
        cmd += [f"{k}={v}" for k, v in ports.items()]
        if head:
            port = free_port()
            client_port = free_port()
            cmd += ["--head", f"--port={port}", "--include-dashboard=false", f"--ray-client-server-port={client_port}"]
            self.address = f"{LOOPBACK}:{port}"
            self.client_address = f"ray://{LOOPBACK}:{client_port}"
        else:
            cmd += [f"--address={self.address}"]
        node_env = {**clean_environ(), **FAST_FAILURE_ENV, **(env or {}), "STEREOSET_EVAL_NODE_CACHE": str(cache_dir),
                    "STEREOSET_EVAL_NODE_NAME": node_name or name, "RAY_USAGE_STATS_ENABLED": "0",
                    "RAY_AUTH_MODE": "disabled",
                    # the head's Ray Client proxy gives each client's own server 30 s to start; a
                    # loaded 2-core machine needs longer (seen: grpc.FutureTimeoutError at 30 s)
                    "RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S": "180"}
        node_env.pop("STEREOSET_EVAL_CACHE", None)
        log = self.root / f"{name}.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=node_env, start_new_session=True)
        node = Node(name, proc, temp_dir, cache_dir, log)
        self.nodes.append(node)
        return node

    def wait_for_head(self, *, timeout: float = 120) -> None:
        """Until the head's GCS port accepts connections (the head must have been added first)."""
        host, port = self.address.rsplit(":", 1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            head = self.nodes[0]
            if head.proc.poll() is not None:
                raise RuntimeError(f"ray head exited: {head.log.read_text()[-2000:]}")
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise TimeoutError(f"the Ray head at {self.address} is not up after {timeout} s")

    def wait_for_nodes(self, n: int, *, timeout: float = 120) -> None:
        """Until ``n`` nodes are alive in the cluster (asks the GCS through ``ray.nodes`` of a driver)."""
        import ray

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node in self.nodes:
                if not node.killed and node.proc.poll() is not None:
                    raise RuntimeError(f"ray node {node.name} exited: {node.log.read_text()[-2000:]}")
            alive = [nd for nd in ray.nodes() if nd.get("Alive")]
            if len(alive) >= n:
                return
            time.sleep(0.5)
        raise TimeoutError(f"{n} Ray nodes not up after {timeout} s")

    def stop(self) -> None:
        for node in reversed(self.nodes):  # workers first, the head last
            node.stop()
