"""The one module that imports ssh-audit: its algorithm database, read as plain data.

ssh-audit has no public API for its ratings; they live in the internal class
`ssh_audit.ssh2_kexdb.SSH2_KexDB` (`MASTER_DB[kind][name] = [[versions], [fails], [warnings], [infos]]`,
where fails/warnings/infos are the texts of the class's FAIL_*/WARN_*/INFO_* constants). That is why the
dependency is pinned exactly (pyproject.toml) and why this module checks the layout before trusting it: a
changed layout ends the command with one line naming the installed version, never with a wrong verdict.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import metadata

from sshbench.errors import RunError

PINNED_VERSION = "3.9.0"  # keep equal to the `ssh-audit==` pin in pyproject.toml (a test checks both)

# sshbench's kinds -> ssh-audit's MASTER_DB sections.
SECTIONS = {"cipher": "enc", "mac": "mac", "kex": "kex", "hostkey": "key"}
NOTE_PREFIXES = ("FAIL_", "WARN_", "INFO_")


class AuditLayoutError(RunError):
    """ssh-audit's internal database is not laid out as this adapter expects."""


@dataclass(frozen=True)
class AuditRating:
    """ssh-audit's opinion of one algorithm, with its notes as constant names (e.g. "FAIL_SHA1")."""

    name: str
    kind: str  # sshbench kind: cipher | mac | kex | hostkey
    known: bool  # False: not in ssh-audit's database at all
    fails: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    infos: tuple[str, ...] = ()
    texts: dict[str, str] = field(default_factory=dict, compare=False, hash=False)  # constant name -> text


@dataclass(frozen=True)
class AuditDatabase:
    version: str
    db: dict[str, dict[str, list]]
    names_by_text: dict[str, str]  # "using broken SHA-1 hash algorithm" -> "FAIL_SHA1"

    def rating(self, kind: str, name: str) -> AuditRating:
        section = SECTIONS.get(kind)
        entry = self.db.get(section, {}).get(name) if section else None
        if entry is None:
            return AuditRating(name=name, kind=kind, known=False)
        notes = [tuple(self._constant(text) for text in (entry[i] if len(entry) > i else [])) for i in (1, 2, 3)]
        texts = {self._constant(t): t for i in (1, 2, 3) if len(entry) > i for t in entry[i]}
        return AuditRating(
            name=name, kind=kind, known=True, fails=notes[0], warnings=notes[1], infos=notes[2], texts=texts
        )

    def constants(self, prefix: str) -> set[str]:
        return {name for name in self.names_by_text.values() if name.startswith(prefix)}

    def _constant(self, text: str) -> str:
        # A note that is not one of the class constants (should not happen in the pinned version) keeps its
        # text, so that verdicts treat it as an unknown note (conservatively).
        return self.names_by_text.get(text, text)


def installed_version() -> str:
    try:
        return metadata.version("ssh-audit")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def validate_layout(kexdb: object, version: str) -> AuditDatabase:
    """Check that `kexdb` (the SSH2_KexDB class) is laid out as expected and return its data.

    Raises AuditLayoutError with one line naming `version` otherwise.
    """

    def fail(what: str) -> AuditLayoutError:
        return AuditLayoutError(
            f"ssh-audit {version}: its internal SSH2_KexDB layout changed ({what}); sshbench reads it as in "
            f"ssh-audit {PINNED_VERSION}: pip install 'ssh-audit=={PINNED_VERSION}'"
        )

    master = getattr(kexdb, "MASTER_DB", None)
    if not isinstance(master, dict):
        raise fail("no MASTER_DB dict")
    for section in SECTIONS.values():
        entries = master.get(section)
        if not isinstance(entries, dict) or not entries:
            raise fail(f"no {section!r} section")
        for name, entry in entries.items():
            if not isinstance(name, str) or not isinstance(entry, list) or not 1 <= len(entry) <= 4:
                raise fail(f"{section}/{name} is not a list of 1-4 lists")
            if not all(isinstance(part, list) for part in entry):
                raise fail(f"{section}/{name} is not a list of lists")
            if not all(isinstance(note, str) for part in entry[1:] for note in part):
                raise fail(f"{section}/{name} has notes that are not text")
    names_by_text = {
        value: attr for attr, value in vars(kexdb).items() if attr.startswith(NOTE_PREFIXES) and isinstance(value, str)
    }
    if not any(n.startswith("FAIL_") for n in names_by_text.values()):
        raise fail("no FAIL_* constants")
    for section in SECTIONS.values():
        for name, entry in master[section].items():
            for note in (n for part in entry[1:] for n in part):
                if note not in names_by_text:
                    raise fail(f"{section}/{name} note {note!r} is not a FAIL_/WARN_/INFO_ constant")
    return AuditDatabase(version=version, db=master, names_by_text=names_by_text)


@functools.cache
def load() -> AuditDatabase:
    """ssh-audit's database, checked once per process."""
    version = installed_version()
    try:
        from ssh_audit.ssh2_kexdb import SSH2_KexDB
    except ImportError as err:
        raise AuditLayoutError(
            f"ssh-audit {version}: cannot import ssh_audit.ssh2_kexdb.SSH2_KexDB ({err}); "
            f"pip install 'ssh-audit=={PINNED_VERSION}'"
        ) from None
    return validate_layout(SSH2_KexDB, version)
