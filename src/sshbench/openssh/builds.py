"""Client and server builds (`--ssh PATH[,PATH...]`, `--sshd PATH[,PATH...]`): which program each path is,
its version label, and for an OpenSSH 9.8+ sshd the helper programs it runs sessions with.

A build sweep is one more axis of the matrix (`Combination.ssh_build`, `Combination.sshd_build`: the label
of each build, "" when that side is not swept), so every pairing is measured in the same interleaved
rounds. Labels come from the version string (`ssh -V`, `sshd -V`; the server's banner says the same), made
unique when two paths print the same one.

Everything here runs before any server starts: a path that does not exist, is not executable or is not
OpenSSH's is refused with one line (exit 2).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sshbench.errors import UsageError

# OpenSSH 9.8 moved the session into sshd-session, 10.0 authentication into sshd-auth; sshd execs them from
# the compiled-in path (SshdSessionPath / SshdAuthPath), so an extracted or self-built tree has to name its own.
HELPERS = {"sshd-session": "SshdSessionPath", "sshd-auth": "SshdAuthPath"}
# Where a tree keeps them, relative to the directory holding sshd: Debian/Ubuntu's libexecdir (an extracted
# .deb: DIR/usr/sbin/sshd, DIR/usr/lib/openssh/), the portable default (PREFIX/sbin, PREFIX/libexec), and a
# build directory (everything side by side).
HELPER_DIRS = ("../lib/openssh", "../libexec/openssh", "../libexec", ".")
VERSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Build:
    """One ssh or sshd program."""

    side: str  # "ssh" | "sshd"
    given: str  # as the user wrote it
    path: str  # absolute
    version: str  # the first line of `-V`, e.g. "OpenSSH_10.0p2 Debian-7~bpo12+1, OpenSSL 3.0.19 27 Jan 2026"
    label: str  # unique within its side, e.g. "OpenSSH_10.0p2"
    # sshd 9.8+: option -> path of its helper (sshd-session, sshd-auth) to write into the private sshd_config
    helpers: tuple[tuple[str, str], ...] = ()

    @property
    def family(self) -> str:
        """ "hpn-ssh" (HPN-SSH says so in its version: OpenSSH_9.7p1-hpn18.4.0) or "openssh"."""
        return "hpn-ssh" if is_hpn(self.version) else "openssh"

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "version": self.version,
            "label": self.label,
            "family": self.family,
            **({"helpers": dict(self.helpers)} if self.helpers else {}),
        }


def is_hpn(version: str) -> bool:
    return "hpn" in version.lower()


# Where HPN-SSH is looked for when no --ssh/--sshd names it (--remedies): $SSHBENCH_HPN_DIR, the prefix
# scripts/build-hpnssh.sh builds into, then the PATH (a package's /usr/bin/hpnssh, /usr/sbin/hpnsshd).
HPN_CACHE_GLOB = "sshbench/hpn-ssh-*"


def find_hpn() -> tuple[str, str] | None:
    """(hpnssh, hpnsshd), both executable, or None: HPN-SSH as a user has it installed or built."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    prefixes = [Path(d) for d in [os.environ.get("SSHBENCH_HPN_DIR")] if d]
    prefixes += sorted(cache.glob(HPN_CACHE_GLOB), reverse=True)  # the newest version first
    for prefix in prefixes:
        ssh, sshd = prefix / "bin/hpnssh", prefix / "sbin/hpnsshd"
        if os.access(ssh, os.X_OK) and os.access(sshd, os.X_OK):
            return str(ssh), str(sshd)
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    ssh_found, sshd_found = shutil.which("hpnssh", path=search), shutil.which("hpnsshd", path=search)
    return (ssh_found, sshd_found) if ssh_found and sshd_found else None


def split_paths(text: str | None) -> list[str]:
    return list(dict.fromkeys(p.strip() for p in (text or "").split(",") if p.strip()))


def version_label(version: str) -> str:
    """The software version of a version line or banner: `OpenSSH_10.0p2 Debian-7~bpo12+1, OpenSSL ...` ->
    `OpenSSH_10.0p2`; `SSH-2.0-OpenSSH_9.2p1 Debian-2` -> `OpenSSH_9.2p1`."""
    text = version.strip().removeprefix("SSH-2.0-")
    return re.split(r"[\s,]", text, maxsplit=1)[0] or text


def openssh_release(version: str) -> tuple[int, int] | None:
    """(major, minor) of an OpenSSH version line, None for anything else."""
    found = re.search(r"OpenSSH_(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _resolve(given: str, option: str) -> str:
    path = shutil.which(given) if "/" not in given else given
    if not path or not os.path.exists(path):
        package = "openssh-server" if option == "--sshd" else "openssh-client"
        raise UsageError(f"{option} {given}: no such program (apt-get install {package}, or give the path of one)")
    if not os.path.isfile(path):
        raise UsageError(f"{option} {given} is not a program (a directory?); give the {option[2:]} binary")
    if not os.access(path, os.X_OK):
        raise UsageError(f"{option} {given} is not executable")
    return os.path.abspath(path)


def _version_output(path: str, option: str, given: str) -> str:
    try:
        done = subprocess.run(
            [path, "-V"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as err:
        raise UsageError(f"{option} {given} cannot be run: {err}") from None
    return (done.stderr + done.stdout).strip()


def inspect(given: str, side: str, session: str | None = None) -> Build:
    """The build at `given` (a path, or a name looked up in PATH); UsageError (one line) when it is not an
    OpenSSH `side` program, or is an sshd 9.8+ whose sshd-session cannot be found."""
    option = f"--{side}"
    path = _resolve(given, option)
    text = _version_output(path, option, given)
    lines = text.splitlines()
    version = next((line for line in lines if "OpenSSH" in line), "")
    if not version:
        first = lines[0] if lines else "no version output"
        if "dropbear" in text.lower():
            raise UsageError(
                f"{option} {given} is Dropbear ({first[:60]}): {option} sweeps OpenSSH builds; "
                "measure Dropbear with --server dropbear"
            )
        raise UsageError(f"{option} {given} is not OpenSSH's {side} (it says: {first[:80]})")
    # sshd -V of old releases prints the version inside its usage text: keep the version itself
    found = re.search(r"OpenSSH_\S+(?:[ ,].*)?", version)
    version = found.group(0).strip() if found else version.strip()
    helpers = sshd_helpers(path, version, given, session) if side == "sshd" else ()
    label = version_label(version)
    if side == "sshd":
        label = _portable_label(path, label)
    return Build(side=side, given=given, path=path, version=version, label=label, helpers=helpers)


def _portable_label(path: str, label: str) -> str:
    """Debian's `sshd -V` says `OpenSSH_9.2` where its banner (and `ssh -V`) say `OpenSSH_9.2p1`: the
    portable release, read from the binary's own bytes, so a server build is labelled like a client build."""
    if re.search(r"p\d+$", label):
        return label
    try:
        data = Path(path).read_bytes()
    except OSError:
        return label
    found = re.search(re.escape(label).encode() + rb"p\d+", data)
    return found.group(0).decode() if found else label


def sshd_helpers(path: str, version: str, given: str, session: str | None = None) -> tuple[tuple[str, str], ...]:
    """The sshd_config lines an sshd needs to find its helpers: () for sshd before 9.8, or one installed
    where it was compiled to look. `session` (--sshd-session) first, then its own tree's copy (next to it,
    see HELPER_DIRS), then the compiled-in path; an sshd-session found nowhere is a UsageError naming the
    file and the option."""
    release = openssh_release(version)
    if release is None or release < (9, 8):
        return ()
    if session is not None and not (os.path.isfile(session) and os.access(session, os.X_OK)):
        raise UsageError(f"--sshd-session {session}: not an executable file")
    compiled = _compiled_helper_paths(path)
    found: list[tuple[str, str]] = []
    for helper, option in HELPERS.items():
        named = helper_names(path, helper)
        here = [Path(path).parent / d / name for d in HELPER_DIRS for name in named]
        if session is not None:  # sshd-auth beside the given sshd-session, by its name or the session's stem
            beside = [Path(session).parent / name for name in helper_names(session.replace("-session", ""), helper)]
            here = [Path(session), *here] if helper == "sshd-session" else [*beside, *here]
        local = next((p for p in here if p.is_file() and os.access(p, os.X_OK)), None)
        if local is not None:
            found.append((option, str(local.resolve())))
            continue
        default = compiled.get(helper)
        if default and os.access(default, os.X_OK):
            continue  # where sshd looks anyway
        if helper == "sshd-auth" and not default:
            continue  # 9.8/9.9: no sshd-auth
        where = default or str(here[0].resolve())
        raise UsageError(
            f"--sshd {given}: its {helper} is missing ({where}, nor next to it); sshd {version_label(version)} "
            f"runs sessions from it ({option}): give its path with --sshd-session PATH"
        )
    return tuple(found)


def helper_names(sshd: str, helper: str) -> list[str]:
    """The file names an sshd's `helper` may have: a build that renames its programs renames its helpers alike
    (HPN-SSH: hpnsshd runs hpnsshd-session and hpnsshd-auth), then OpenSSH's own name."""
    stem = Path(sshd).name.removesuffix("sshd")
    return list(dict.fromkeys([f"{stem}{helper}", helper] if stem and stem != Path(sshd).name else [helper]))


def _compiled_helper_paths(path: str) -> dict[str, str]:
    """The helpers' compiled-in absolute paths, read from sshd's own bytes (no option prints them without a
    host key)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return {}
    paths: dict[str, str] = {}
    # OpenSSH's own (PREFIX/libexec/sshd-session) and a renamed build's (HPN-SSH: PREFIX/libexec/hpnsshd-session)
    for match in re.finditer(rb"(/[A-Za-z0-9_./+-]*/[A-Za-z0-9_.+-]*?(sshd-session|sshd-auth))\0", data):
        name = match.group(2).decode()
        candidate = match.group(1).decode()
        if not candidate.startswith("/.."):
            paths.setdefault(name, candidate)
    return paths


def inspect_all(text: str | None, side: str, session: str | None = None) -> list[Build]:
    """Every build of `--ssh`/`--sshd` (a comma list), labels made unique (`OpenSSH_9.2p1`, `OpenSSH_9.2p1#2`)."""
    builds = [inspect(given, side, session) for given in split_paths(text)]
    unique = relabel(builds, [b.label for b in builds])
    paths = [b.path for b in unique]
    if len(set(paths)) < len(paths):
        duplicate = next(p for p in paths if paths.count(p) > 1)
        raise UsageError(f"--{side} names {duplicate} twice")
    return unique


def relabel(builds: list[Build], labels: list[str]) -> list[Build]:
    """The builds with these labels (e.g. from the servers' banners), made unique (`X`, `X#2`)."""
    seen: dict[str, int] = {}
    out = []
    for build, label in zip(builds, labels, strict=True):
        seen[label] = seen.get(label, 0) + 1
        unique = label if seen[label] == 1 else f"{label}#{seen[label]}"
        out.append(Build(build.side, build.given, build.path, build.version, unique, build.helpers))
    return out


def sweeps(text: str | None) -> bool:
    """Whether an --ssh/--sshd value names more than one build (the side is then an axis of the matrix)."""
    return len(split_paths(text)) > 1


__all__ = ["Build", "find_hpn", "inspect", "inspect_all", "is_hpn", "split_paths", "sweeps", "version_label"]
