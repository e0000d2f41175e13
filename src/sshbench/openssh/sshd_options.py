"""The sshd_config every sshd that sshbench starts shares, written once: the private sshd on 127.0.0.1
(targets/private_openssh.py) and each namespace host's (links/nshost_config.py). Plain data, at the bottom of
the layers, so that neither copy can drift from the other."""

from __future__ import annotations

# Logins by our own throwaway key only, nothing of the user's run (no ~/.ssh/rc, no environment, no agent or X11
# forwarding), no lookups or banners in the measured path, and room for a benchmark's many connections.
HARDENING = {
    "PermitRootLogin": "prohibit-password",
    "PubkeyAuthentication": "yes",
    "PasswordAuthentication": "no",
    "KbdInteractiveAuthentication": "no",
    "UsePAM": "no",
    "StrictModes": "no",  # keys live under /tmp, which fails sshd's ownership checks of the path
    "PermitUserEnvironment": "no",
    "X11Forwarding": "no",
    "AllowAgentForwarding": "no",
    "PrintMotd": "no",
    "PrintLastLog": "no",
    "UseDNS": "no",
    "MaxStartups": "1000",
    "MaxSessions": "100",
    "LoginGraceTime": "30",
    "Subsystem": "sftp internal-sftp",
    "LogLevel": "INFO",
}

# Options that only some sshd versions know: a config for a build not known in advance drops each one its
# `sshd -t` rejects (targets/private_openssh.py); the namespace hosts run the system's sshd, which has both
# or refuses to start with one line.
OPTIONAL = {
    "PerSourcePenalties": "no",  # 9.8+: would throttle a benchmark's many connections
    "PermitUserRC": "no",  # never run the user's ~/.ssh/rc
    "SetEnv": "SHLVL=1",  # 8.7+: see session_env
}


def session_env(path: str | None) -> str:
    """SetEnv's value for our own sshd: every session's command runs without the user's shell start-up files,
    and finds the tools this process finds.

    sshd runs each command as `$SHELL -c COMMAND`, and Debian's bash then reads ~/.bashrc whenever SSH_CLIENT
    is set and it is a top-level shell, SHLVL unset (bash's SSH_SOURCE_BASHRC). A .bashrc that loads pyenv (this development VM's)
    made every connection 80-85 ms slower (`ssh host true`: 280 against 200 ms), a tenth of each trial's wall
    time on a default run, and one that prints anything would break scp's and rsync's protocols. With SHLVL=1
    bash is not a top-level shell and reads nothing. PATH is ours (the private sshd is this machine and this
    user) rather than sshd's compiled default, so that a remote rsync or scp is the one the client finds;
    left out when it cannot be quoted in sshd_config."""
    value = OPTIONAL["SetEnv"]
    if path and not any(c in path for c in '"\\\n'):
        value += f' "PATH={path}"'
    return value


def base_options(host_key: str, authorized_keys: str, user: str) -> dict[str, str]:
    """The lines of a private sshd before its listening address, algorithms and extras."""
    return {
        "PidFile": "none",  # the compiled default would clobber the system's /run/sshd.pid
        "HostKey": host_key,
        "AuthorizedKeysFile": authorized_keys,
        "AllowUsers": user,
        **HARDENING,
    }
