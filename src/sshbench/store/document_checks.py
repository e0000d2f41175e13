"""The types an imported document's `environment` and `target` keys must have (those docs/results-json.md
documents and the reports read): the first that is wrong is a BadField, so that `import` refuses the document with
one line rather than a report failing on it later.
"""

from __future__ import annotations

import typing

from sshbench.store.record_json import BadField, describe, matches

# The `environment` keys docs/results-json.md documents, with their types (others are kept as they are).
ENVIRONMENT_TYPES: dict[str, object] = {
    **{k: str | None for k in ("hostname", "cpu_model", "machine", "kernel", "os", "python", "client_ssh_version")},
    **{k: str | None for k in ("client_crypto_library", "openssl_version", "server_ssh_version", "target")},
    **{k: str | None for k in ("payload_kind", "payload_size")},
    "cores": int | None,
    "aes_ni": bool | None,
    "server_strict_kex": bool | None,
    "client_strict_kex": bool | None,
    "crypto_flags": dict[str, bool] | None,
    "payload_zlib_ratio": dict[str, float] | None,
    "servers": dict | None,
    "steady_omit_s": float | None,
    "steady_window_capped": bool | None,
    "rekeys_counted": bool | None,
    "conclusion_config_checked": str | None,
    "conclusion_config_checked_lines": list[str] | None,
    "builds": dict | None,
}

# A build sweep's `environment.builds`: its lists' entries and the keys the reports read from each.
BUILD_LISTS: dict[str, dict[str, object]] = {
    "ssh": {"label": str, "path": str},
    "sshd": {"label": str, "path": str},
    "pairings": {"ssh_build": str | None, "sshd_build": str | None, "negotiated": dict | None},
}


# The `target` keys the reports read (a server's kind decides which verdicts apply), with their types.
TARGET_TYPES: dict[str, object] = {
    "kind": str | None,
    "label": str | None,
    "servers": dict | None,
    "machine": dict | None,
}


def check_target(target: dict) -> None:
    """BadField for the first `target` key the reports read whose value has the wrong type (each of
    several `--server`s' entries included)."""
    entries = [("target", target)] + [
        (f"target.servers.{name}", entry) for name, entry in (target.get("servers") or {}).items()
    ]
    for where, entry in entries:
        if not isinstance(entry, dict):
            raise BadField(where, "an object", entry)
        for key, hint in TARGET_TYPES.items():
            if key in entry and not matches(entry[key], hint):
                raise BadField(f"{where}.{key}", describe(hint), entry[key])


def _check_builds(builds: dict) -> None:
    for name, fields in BUILD_LISTS.items():
        entries = builds.get(name)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise BadField(f"environment.builds.{name}", "a list", entries)
        for index, entry in enumerate(entries):
            where = f"environment.builds.{name}[{index}]"
            if not isinstance(entry, dict):
                raise BadField(where, "an object", entry)
            for key, hint in fields.items():
                if not matches(entry.get(key), hint):
                    raise BadField(f"{where}.{key}", describe(hint), entry.get(key))


def check_environment(env: dict) -> None:
    """BadField for the first documented environment key whose value has the wrong type."""
    if isinstance(env.get("builds"), dict):
        _check_builds(env["builds"])
    for key, hint in ENVIRONMENT_TYPES.items():
        if key not in env:
            continue
        value = env[key]
        if not matches(value, hint):
            raise BadField(f"environment.{key}", describe(hint), value)
        args = typing.get_args(next((a for a in typing.get_args(hint) if typing.get_origin(a) is dict), dict))
        if args and isinstance(value, dict):
            for name, item in value.items():
                if not matches(item, args[1]):
                    raise BadField(f"environment.{key}.{name}", describe(args[1]), item)
        item_args = typing.get_args(next((a for a in typing.get_args(hint) if typing.get_origin(a) is list), list))
        if item_args and isinstance(value, list):
            for index, item in enumerate(value):
                if not matches(item, item_args[0]):
                    raise BadField(f"environment.{key}[{index}]", describe(item_args[0]), item)
