"""A run's spec: its settings, checked once and frozen, with the parsed views everything below reads.

Made once per run, from the command line's options (cli/run_options.settings_from_args) or a stored run's settings
(--resume), before anything starts; nothing below the command line changes it. What the run then decides as it goes
(the data phase fitted to --budget, rounds) is the run's own state: the runner records it in the run's copy of the
settings (RunResult.settings), as the JSON and the store always had it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from sshbench.axis_values import MatrixSpec
from sshbench.baselines import aesni
from sshbench.host import environment
from sshbench.measure.remedies import with_hpn_builds
from sshbench.settings import RunSettings, TargetSpec
from sshbench.targets import check_spec as check_target_spec
from sshbench.tools import get_tool


def _draw_seed() -> int:
    return random.randrange(2**31)


@dataclass(frozen=True)
class RunSpec:
    """The settings of one run, every option checked. `settings.seed` is set: the order of every round can be
    replayed from the record."""

    settings: RunSettings

    @property
    def target(self) -> TargetSpec:
        """What starts the run's target(s) (make_target), parsed once with the settings."""
        return self.settings.target

    @property
    def axes(self) -> MatrixSpec:
        """The matrix's other axes, typed, parsed once with the settings."""
        return self.settings.axes

    @classmethod
    def check(cls, settings: RunSettings, draw_seed: Callable[[], int] = _draw_seed) -> RunSpec:
        """Every check of a run's options, in one place, before anything is started or stored: the settings'
        own (values, files, builds, the axes' names), the target registry's and each target kind's (options it
        cannot take), the tools' registry, and --no-aesni's (it must mask something on this CPU). One UsageError
        line for the first that fails. A seed is drawn where none was given; --remedies adds the HPN-SSH builds
        it found (measure.remedies.with_hpn_builds)."""
        settings.validate()
        check_target_spec(settings.target)
        for name in settings.axes.tools:
            get_tool(name)  # an unknown name: one line, with the known ones
        if settings.no_aesni:
            aesni.refuse_unless_applicable(settings.host, environment.cpu_info())
        settings = with_hpn_builds(settings)  # --remedies: HPN-SSH beside the user's builds, where found
        if settings.seed is None:  # recorded with the run (settings/JSON), so its order can be replayed
            settings = replace(settings, seed=draw_seed())
        return cls(settings)


__all__ = ["RunSpec"]
