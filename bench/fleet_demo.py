"""Demo (not a test): `sshbench fleet` over three namespace hosts on one bridged LAN (the test fleet), for
the figures of a closing note: each progress line with its time since the start, the summary, `runs`,
`compare --fleet`, `compare --fleet --pairs`, `recommend --fleet`, then what is left (nothing expected).

    .venv/bin/python bench/fleet_demo.py --pairs all -- --ciphers aes128-gcm@openssh.com,aes128-ctr \\
        --size 2M --runs 2 --warmup 0 --no-baselines

Arguments go to `sshbench fleet` after `-i INVENTORY`. Root only (namespaces); needs ansible-core. The store,
inventory and the hosts' working directories live in a temp dir removed at the end; the dependency
wheels are cached where the fleet tests cache them (~/.cache/sshbench-tests). The inventory is a plain one (address, user, key file;
no ansible_python_interpreter) and every host has a broken pyenv-style `python3.13` first on its PATH.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sshbench.links import nshost_config
from sshbench.links.nshost import NamespaceHost, NamespaceLan

NAMES = ("web1", "web2", "db1")


def sshbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "sshbench", *args]


def main(fleet_args: list[str]) -> int:
    base = Path(tempfile.mkdtemp(prefix="sshbench-fleet-demo-"))
    work = base / "hosts"
    work.mkdir()
    env = dict(
        os.environ,
        TMPDIR=str(base),
        SSHBENCH_DB=str(base / "results.db"),
        SSHBENCH_RUNTIME_DIR=str(base / "runtime"),
        XDG_CACHE_HOME=str(Path.home() / ".cache" / "sshbench-tests"),
        COLUMNS="200",
    )
    try:
        with contextlib.ExitStack() as stack:
            lan = stack.enter_context(NamespaceLan())
            # every host as people have them: a broken pyenv-style python3.13 first on its sessions' PATH
            shims = base / "shims"
            shims.mkdir()
            path_first = nshost_config.broken_shim(shims)
            hosts = {name: stack.enter_context(NamespaceHost(lan=lan, sshd_options=path_first)) for name in NAMES}
            # a plain inventory (address, user, key file; no ansible_python_interpreter), the host keys in a
            # known_hosts file as a user's ~/.ssh/known_hosts holds them
            known_hosts = base / "known_hosts"
            known_hosts.write_text("".join(Path(str(h.known_hosts)).read_text() for h in hosts.values()))
            env["ANSIBLE_SSH_COMMON_ARGS"] = f"-o UserKnownHostsFile={known_hosts} -o GlobalKnownHostsFile=/dev/null"
            inventory = base / "hosts.ini"
            inventory.write_text(
                "[bench]\n"
                + "".join(
                    h.inventory_line(
                        name,
                        sshbench_work_base=work,
                        sshbench_pair_address=h.lan_address,
                        sshbench_authorized_keys_file=f"{h.dir}/authorized_keys",
                    )
                    for name, h in hosts.items()
                )
            )
            print(f"$ cat hosts.ini\n{inventory.read_text()}")
            print(f"each host's PATH starts with {shims} (python3.13 there exits 127, as a pyenv shim does)\n")
            keys = {name: (Path(str(h.dir)) / "authorized_keys").read_text() for name, h in hosts.items()}
            started = time.monotonic()
            proc = subprocess.Popen(
                sshbench("fleet", "-i", str(inventory), *fleet_args),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                stdin=subprocess.DEVNULL,
            )
            assert proc.stdout is not None and proc.stderr is not None
            for line in proc.stderr:
                print(f"[{time.monotonic() - started:6.1f} s] {line.rstrip()}", flush=True)
            print(proc.stdout.read(), end="")
            rc = proc.wait()
            print(f"exit {rc}, wall {time.monotonic() - started:.1f} s\n")
            for args in (["runs"], ["compare", "--fleet", "latest"], ["compare", "--fleet", "latest", "--pairs"]):
                done = subprocess.run(sshbench(*args), capture_output=True, text=True, env=env, timeout=120)
                print(f"$ sshbench {' '.join(args)}\n{done.stdout}{done.stderr}")
            done = subprocess.run(sshbench("recommend", "--fleet", "latest"), capture_output=True, text=True, env=env)
            print(f"$ sshbench recommend --fleet latest\n{done.stdout}{done.stderr}")
            unchanged = all((Path(str(h.dir)) / "authorized_keys").read_text() == keys[n] for n, h in hosts.items())
            print(f"authorized_keys as before on every host: {unchanged}")
            print(f"left in the hosts' working base: {sorted(p.name for p in work.iterdir()) or 'nothing'}")
            for name, h in hosts.items():
                pids = subprocess.run(["ip", "netns", "pids", h.name], capture_output=True, text=True).stdout.split()
                print(f"processes in {name}'s namespace: {len(pids)} (its sshd)")
        return rc
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
