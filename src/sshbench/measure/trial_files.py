"""Where each trial's bytes come from and go to: payload files per kind, download sources on the
server, sink files (removed after each trial), empty files for handshake trials, and the integrity
checks (size, SHA-256) of what arrived, made after the timed phase."""

from __future__ import annotations

import os
from pathlib import Path

from sshbench.host.cleanup import Cleanup, disk_dir
from sshbench.measure.payload import PayloadStore, sha256_of, zlib_ratio
from sshbench.results import Combination, Trial, TrialKind
from sshbench.settings import RunSettings
from sshbench.targets import Target
from sshbench.tools import TrialFiles


class TrialPaths:
    """Where each trial's data comes from and goes to: payload files per kind, download sources on
    the server, sink files (removed after each trial), empty files for handshakes, and integrity
    checks of what arrived."""

    def __init__(
        self, target: Target, cleanup: Cleanup, workdir: Path, combos: list[Combination], settings: RunSettings
    ) -> None:
        self.target = target
        self.cleanup = cleanup
        self.workdir = workdir
        self.settings = settings
        self.stores: dict[str, PayloadStore] = {
            str(kind): PayloadStore(workdir, kind, Path(settings.file) if kind == "file" and settings.file else None)
            for kind in settings.axes.payloads
        }
        self.payloads = next(iter(self.stores.values()))  # the raw TCP control's payload
        self.empty = workdir / "empty"
        self.empty.touch()
        self._server_dirs: dict[str, str] = {}
        self._local_dirs: dict[str, str] = {"tmpfs": str(workdir)}
        self._remote_sources: dict[tuple[str, int], str] = {}
        self._remote_empty: str | None = None
        self.zlib_ratios: dict[str, float] = {}
        self.needs_remote_copy = not target.shares_local_filesystem

    def verify_on(self, combo: Combination) -> bool:
        return self.settings.verify if self.settings.verify is not None else combo.sink != "null"

    def _server_dir(self, where: str) -> str:
        if where not in self._server_dirs:
            self._server_dirs[where] = self.target.make_scratch_dir(where, self.cleanup)
        return self._server_dirs[where]

    def _local_dir(self, where: str) -> str:
        if where not in self._local_dirs:
            self._local_dirs[where] = str(self.cleanup.make_temp_dir(base_dir=disk_dir()))
        return self._local_dirs[where]

    def payload(self, kind: str, size: int) -> Path:
        """The local payload file of this kind (`random`, `text`, ...) and size."""
        path = self.stores[kind].path_for(size)
        if kind not in self.zlib_ratios:
            self.zlib_ratios[kind] = zlib_ratio(path)
        return path

    def _remote_source(self, kind: str, size: int) -> str:
        local = self.payload(kind, size)
        if not self.needs_remote_copy:
            return str(local)  # the private server reads the same filesystem
        key = (kind, size)
        if key not in self._remote_sources:
            remote = f"{self._server_dir('tmpfs')}/source-{kind}-{size}"
            self.target.put_file(str(local), remote)
            self._remote_sources[key] = remote
        return self._remote_sources[key]

    def remote_payload(self, size: int) -> str:
        """The raw TCP control's payload (the first payload kind) on the server, for its download direction."""
        return self._remote_source(next(iter(self.stores)), size)

    def _remote_empty_file(self) -> str:
        if not self.needs_remote_copy:
            return str(self.empty)
        if self._remote_empty is None:
            self._remote_empty = f"{self._server_dir('tmpfs')}/empty"
            self.target.put_file(str(self.empty), self._remote_empty)
        return self._remote_empty

    def tail(self, kind: str, size: int) -> tuple[Path, int]:
        """A local payload of this kind and size as the tail of a bigger one (PayloadStore.tail_for)."""
        path, offset = self.stores[kind].tail_for(size)
        if kind not in self.zlib_ratios:
            self.zlib_ratios[kind] = zlib_ratio(path)
        return path, offset

    def for_trial(self, combo: Combination, kind: TrialKind, size: int, tail_ok: bool = False) -> TrialFiles:
        """`tail_ok`: the tool reads an upload's payload from its stdin (TransferTool.source_on_stdin), so the
        payload may be the tail of a bigger file (TrialFiles.local_source_offset)."""
        transfer = kind == TrialKind.TRANSFER
        down = combo.direction == "down"
        local_source, offset = str(self.empty), 0
        if transfer and not down:
            path, offset = self.tail(combo.payload, size) if tail_ok else (self.payload(combo.payload, size), 0)
            local_source = str(path)
        remote_source = None
        if down:
            remote_source = self._remote_source(combo.payload, size) if transfer else self._remote_empty_file()
        sink_name = f"sink-{combo.tool}"
        remote_sink = "/dev/null" if combo.sink == "null" else f"{self._server_dir(combo.sink)}/{sink_name}"
        local_sink = "/dev/null" if combo.sink == "null" else f"{self._local_dir(combo.sink)}/{sink_name}"
        return TrialFiles(
            local_source=local_source,
            remote_source=remote_source,
            remote_sink=remote_sink,
            local_sink=local_sink,
            streams=combo.streams,
            local_source_offset=offset,
        )

    def check_received(self, trial: Trial, files: TrialFiles) -> None:
        """After the timed phase: the sink file's size (and SHA-256 with --verify) against the payload's;
        then remove it. A mismatch makes the trial invalid."""
        combo = trial.combination
        if combo.sink == "null":
            return
        down = combo.direction == "down"
        sink = files.local_sink if down else files.remote_sink
        try:
            if not trial.valid:
                return
            expected = None
            if self.verify_on(combo):
                store = self.stores[combo.payload]
                if down:
                    expected = store.digest(self.payload(combo.payload, trial.payload_bytes))
                else:  # what was sent: the bytes from the offset the client started at
                    expected = store.digest(Path(files.local_source), files.local_source_offset, trial.payload_bytes)
            if down or not self.needs_remote_copy:
                if not os.path.exists(sink):
                    trial.valid, trial.invalid_reason = False, f"nothing arrived at {sink}"
                    return
                size = os.path.getsize(sink)
                digest = None
                if expected is not None:
                    digest = sha256_of(Path(sink))
            elif expected is not None:
                found = self.target.file_digest(sink)
                if found is None:
                    trial.valid, trial.invalid_reason = False, f"cannot read back {sink} on the server"
                    return
                size, digest = found
            else:
                return  # a remote file sink without --verify: the tool's exit status vouches for it
            if trial.received_bytes_at_sink is None:
                trial.received_bytes_at_sink = size
            if size != trial.payload_bytes:
                trial.valid = False
                trial.invalid_reason = f"{size} of {trial.payload_bytes} bytes arrived at {sink}"
            elif digest is not None:
                trial.verified = digest == expected
                if not trial.verified:
                    trial.valid = False
                    trial.invalid_reason = f"SHA-256 of what arrived at {sink} differs from the payload's"
        finally:
            if down or not self.needs_remote_copy:
                Path(sink).unlink(missing_ok=True)
            else:
                self.target.remove_file(sink)
