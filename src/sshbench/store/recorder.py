"""`sshbench run` into the store: the run row first, each trial as it finishes, the status last."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from sshbench.errors import SshbenchError, UsageError
from sshbench.results import RunResult, Trial
from sshbench.settings import RunSettings
from sshbench.store import resume
from sshbench.store.sqlite import Store, open_store
from sshbench.store.unsaved import UnsavedRun

# `run` options that are not measurement settings (allowed with --resume).
_NOT_SETTINGS = {
    *("command", "handler", "verbose", "json", "db", "resume", "preset", "seeds", "argv", "wide", "quiet"),
    *("no_wait", "measures"),
}


class RunRecorder:
    """Keeps a run in the store as it happens: the run row once it measures, each trial as it finishes, the status last."""

    def __init__(self, store: Store, resume_ref: str | None = None) -> None:
        self.store = store
        # Set once the store fails mid-run: the run goes on into this file instead (store/unsaved.py)
        self.unsaved: UnsavedRun | None = None
        self.warn: Callable[[str], None] = lambda _line: None  # one line on the terminal (cli/run.py sets it)
        self.resume_from: RunResult | None = None
        self.planned = False
        self.resumed_status = "interrupted"
        if resume_ref is not None:
            stored = self.store.load_result(resume_ref)
            self.resumed_status = stored.status
            self.resume_from = resume.prepare(stored)

    @classmethod
    def for_run(cls, db: str | None, resume_ref: str | None, typed: set[str]) -> RunRecorder:
        """`run --db/--resume`: with --resume, no measurement option may be typed (`typed`: the options typed on
        the command line by their settings' names, even when equal to the default, as an explicit `--runs auto`)."""
        if resume_ref is not None:
            measuring = sorted(name for name in typed if name not in _NOT_SETTINGS)
            if measuring:
                raise UsageError(f"--resume uses the stored run's settings; drop --{measuring[0].replace('_', '-')}")
        return cls(open_store(db), resume_ref)

    def runner_hooks(
        self, result_of: Callable[[], RunResult]
    ) -> tuple[Callable[[int], None], Callable[[int, int, Trial], None]]:
        """on_plan and on_trial callbacks for a Runner whose result `result_of()` returns."""
        return (
            lambda _total: self.on_plan(result_of()),
            lambda _index, _total, trial: self.on_trial(result_of(), trial),
        )

    @property
    def settings(self) -> RunSettings | None:
        return self.resume_from.settings if self.resume_from else None

    def started(self, result: RunResult) -> None:
        """A resumed run is claimed now; a new run gets its row only once it starts measuring (on_plan),
        so a run refused before its first trial (a typo, a host that does not resolve) stores nothing."""
        if self.resume_from is not None:
            assert result.run_id is not None
            self.store.claim_run(result.run_id)

    def on_plan(self, result: RunResult) -> None:
        """The environment and the matrix are known now, before the first trial."""
        self.planned = True

        def write() -> None:
            if self.resume_from is None and result.run_id is None:
                self.store.create_run(result)
            self.store.update_run(result)

        self._keep(result, write)

    def on_trial(self, result: RunResult, trial: Trial) -> None:
        self._keep(result, lambda: self.store.add_trial(result.run_id or 0, len(result.trials) - 1, trial))

    def _keep(self, result: RunResult, write: Callable[[], None]) -> None:
        """Into the store while it takes the run; from its first failure on, into the unsaved file instead (whole,
        after every trial), so that the run goes on and loses nothing. One line says so, once."""
        if self.unsaved is None:
            try:
                write()
                return
            except SshbenchError as err:
                self.unsaved = UnsavedRun(self.store.path, str(err))
        first = self.unsaved.path is None and self.unsaved.last_error is None
        path = self.unsaved.save(result)
        if first:
            where = f"into {path}" if path else f"nowhere: no file could be written either ({self.unsaved.last_error})"
            self.warn(f"the results store stopped taking the run ({self.unsaved.why}); its trials go on {where}")

    def finished(self, result: RunResult, err: Console) -> bool:
        """Final status and trials; False (after one line on stderr) when the store could not take them."""
        if self.unsaved is not None:
            return self._unsaved_end(result, err)
        try:
            if self.resume_from is not None and not self.planned:
                # Refused before measuring (e.g. another OpenSSH): the stored run stays as it was.
                assert result.run_id is not None
                self.store.release_run(result.run_id, self.resumed_status)
            elif result.run_id is None:
                return True  # never started measuring: nothing to keep
            else:
                self.store.finish_run(result)
            err.print(f"sshbench: run {result.run_id} saved in {self.store.path}", highlight=False, markup=False)
            return True
        except SshbenchError as e:  # the last write: the whole run into the unsaved file instead
            self.unsaved = UnsavedRun(self.store.path, str(e))
            return self._unsaved_end(result, err)
        finally:
            self.store.close()

    def _unsaved_end(self, result: RunResult, err: Console) -> bool:
        """The run as it ended into its unsaved file (with its answer), and one line naming the file and the import."""
        assert self.unsaved is not None
        try:
            path = self.unsaved.save(result, final=True)
        finally:
            self.store.close()
        trials = len(result.trials)
        if path is None:
            line = f"and no file could be written either ({self.unsaved.last_error}): only the report above has them"
        else:
            line = f"all {trials} trials are in {path}: `sshbench import {path}` adds them once the store is writable"
        err.print(f"sshbench: error: results store: {self.unsaved.why}; {line}", highlight=False, markup=False)
        return False
